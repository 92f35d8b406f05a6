// The hover read-out's DOM: a headline (`.jhw-hover`: the series under the pointer, its step and
// value, or smoothed and raw values), a marker on its point (`.jhw-hover-dot`) and, in a chart
// of several series, a table of every series at that step (`.jhw-hover-list`: one row each,
// sorted; readout.js makes the rows). Both boxes are placed inside the chart under the pointer,
// never over the panel above the charts.
//
// The read-out takes no pointer events (it cannot hide the line it describes) until it is
// pinned (a click on the chart, hover.js): then its sort toggle can be clicked.
//
// Stable hooks for tests: .jhw-hover[data-name][data-step][data-value][data-run] (its three
// lines), .jhw-hover-list[data-sort][data-series] with .jhw-hover-sort[data-sort]
// [aria-pressed] and rows .jhw-hover-row[data-series][data-run] (.jhw-hover-current: the one
// under the pointer) of .jhw-hover-name, .jhw-hover-value, .jhw-hover-raw, .jhw-hover-step.

import { element } from "../base/dom.js";
import { readoutPlacement } from "../base/geometry.js";
import { SORTS, headlineLines, readoutRows } from "../base/readout.js";

// Series listed at most (a chart of 64 lanes lists the nearest ones and counts the rest).
const READOUT_ROWS = 8;

/** The read-out's elements, hidden; `onSort(sort)` is called when a sort toggle is clicked. */
export function buildReadout(onSort) {
  const tip = element("div", "jhw-hover");
  tip.setAttribute("role", "tooltip");
  const list = element("div", "jhw-hover-list");
  const dot = element("div", "jhw-hover-dot");
  const head = element("div", "jhw-hover-head");
  const sorts = SORTS.map((sort) => {
    const button = element("button", "jhw-hover-sort", sort);
    button.type = "button";
    button.dataset.sort = sort;
    button.title = `Sort the rows by ${sort === "nearest" ? "distance to the pointer" : sort}`;
    button.addEventListener("click", () => onSort(sort));
    return button;
  });
  const hint = element("span", "jhw-hover-hint");
  head.append(element("span", "jhw-hover-by", "sort"), ...sorts, hint);
  const table = element("table", "jhw-hover-table");
  list.append(head, table);
  // A press on the read-out is not the start of a zoom (zoom.js listens on the whole box).
  list.addEventListener("mousedown", (event) => event.stopPropagation());
  const ui = { tip, list, dot, sorts, hint, table };
  hideReadout(ui);
  return ui;
}

export function hideReadout(ui) {
  ui.tip.hidden = true;
  ui.list.hidden = true;
  ui.dot.hidden = true;
  delete ui.tip.dataset.name;
  delete ui.tip.dataset.run;
}

function tableRows(rows, smoothing, time = false) {
  // (on a time axis its column holds each row's time, not a step)
  const where = time ? "time" : "step";
  const heads = ["", smoothing ? "smoothed" : "value", ...(smoothing ? ["raw"] : []), where];
  const header = element("tr", "jhw-hover-cols");
  header.append(...heads.map((text) => element("th", "", text)));
  const body = rows.map((row) => {
    const tr = element("tr", row.current ? "jhw-hover-row jhw-hover-current" : "jhw-hover-row");
    tr.dataset.series = row.key;
    tr.dataset.run = row.run;
    const swatch = element("span", "jhw-hover-swatch", "");
    swatch.style.background = row.color;
    const name = element("td", "jhw-hover-label");
    name.title = row.key;
    name.append(swatch, element("span", "jhw-hover-name", row.label));
    tr.append(name, element("td", "jhw-hover-value", row.value));
    if (smoothing) tr.append(element("td", "jhw-hover-raw", row.raw));
    tr.append(element("td", "jhw-hover-step", row.step));
    return tr;
  });
  return [header, ...body];
}

/**
 * Shows the read-out of `hit` (geometry.js's `nearestOnLines`) with `series`, its chart's
 * lines at its step (`seriesAtStep`), sorted by `sort`, `pinned` or not, inside `chartEl` (the
 * chart's element) in `box`, on the x axis `axis` ({mode, clocks}: a time axis; null: steps).
 * Returns the run key of the series under the pointer.
 */
export function showReadout(ui, box, chartEl, hit, series, sort, pinned, axis = null) {
  const { tip, list, dot, table } = ui;
  const { rows, smoothing, more } = readoutRows(series, hit.name, sort, READOUT_ROWS, axis);
  const current = rows.find((row) => row.current) || null;
  const lines = headlineLines(current, hit.name, hit.x, hit.y, axis);
  tip.replaceChildren(
    element("div", "jhw-hover-name", lines[0]),
    element("div", "jhw-hover-step", lines[1]),
    element("div", "jhw-hover-value", lines[2]),
  );
  Object.assign(tip.dataset, { name: lines[0], step: String(hit.x), value: String(hit.y) });
  tip.dataset.run = current ? current.run : "";
  const many = rows.length > 1;
  if (many) {
    const items = tableRows(rows, smoothing, Boolean(axis && axis.mode && axis.mode !== "step"));
    if (more) {
      const tr = element("tr", "jhw-hover-more");
      const td = element("td", "", more);
      td.colSpan = smoothing ? 4 : 3;
      tr.append(td);
      items.push(tr);
    }
    table.replaceChildren(...items);
    for (const button of ui.sorts) {
      button.setAttribute("aria-pressed", String(button.dataset.sort === sort));
    }
    ui.hint.textContent = pinned ? "click to unpin" : "click to pin";
    list.dataset.sort = sort;
  }
  list.dataset.series = String(series.length);
  list.classList.toggle("jhw-pinned", pinned);
  list.hidden = !many;
  placeReadout(ui, box, chartEl, hit);
  return current ? current.run : null;
}

/** Shows the read-out of a hyperparameter chart's point `hit` (`nearestOnLines`): its three
 * `lines` (params.js's `paramReadout`), no table, beside the point inside `chartEl`. */
export function showParamReadout(ui, box, chartEl, hit, lines) {
  const { tip, list } = ui;
  tip.replaceChildren(
    element("div", "jhw-hover-name", lines[0]),
    element("div", "jhw-hover-step", lines[1]),
    element("div", "jhw-hover-value", lines[2]),
  );
  Object.assign(tip.dataset, { name: lines[0], step: String(hit.x), value: String(hit.y) });
  list.hidden = true;
  placeReadout(ui, box, chartEl, hit);
}

/** The dot on the point, the headline and the table under it beside the point, inside the
 * chart's element (in the box's coordinates). */
function placeReadout(ui, box, chartEl, hit) {
  const { tip, list, dot } = ui;
  const r = box.getBoundingClientRect();
  const toBox = (cx, cy) => ({ x: cx - r.left - box.clientLeft, y: cy - r.top - box.clientTop });
  const { x, y } = toBox(hit.at.x, hit.at.y);
  dot.style.left = `${x}px`;
  dot.style.top = `${y}px`;
  dot.style.borderColor = hit.color || ""; // the line's own colour
  dot.hidden = false;
  tip.hidden = false;
  const c = chartEl ? chartEl.getBoundingClientRect() : r;
  const a = toBox(c.left, c.top);
  const b = toBox(c.right, c.bottom);
  const area = { left: a.x, top: a.y, right: b.x, bottom: b.y };
  const gap = list.hidden ? 0 : 2;
  const w = Math.max(tip.offsetWidth, list.hidden ? 0 : list.offsetWidth);
  const h = tip.offsetHeight + gap + (list.hidden ? 0 : list.offsetHeight);
  const { left, top } = readoutPlacement(x, y, w, h, area);
  tip.style.left = `${left}px`;
  tip.style.top = `${top}px`;
  list.style.left = `${left}px`;
  list.style.top = `${top + tip.offsetHeight + gap}px`;
}
