// The hover read-out of a LivePlot's charts: the drawn point nearest to the pointer and every
// series of that chart at its step, read from the points the charts' lines already hold (see
// `attachHover`). The panel's `figures` trait lists its LivePlot's bqplot figures (one per
// chart; `figure` is the first); the view finds their views in the same box.

import { BqplotMismatch, bqplot } from "./bqplot_adapter.js";
import { element } from "./dom.js";
import { sendControl } from "./kernel.js";
import {
  nearestOnLines,
  readoutLines,
  readoutPlacement,
  seriesAtStep,
  seriesReadout,
} from "./geometry.js";

// Pixels from the pointer within which a drawn point is read out.
const HOVER_RADIUS_PX = 12;

// Other series listed under one read-out (a chart of 64 lanes lists the first ones and counts the rest).
const HOVER_ROWS = 12;

// bqplot's internals were not as expected once on this page (one console error is enough).
let mismatchReported = false;

function reportMismatch(error) {
  if (mismatchReported) return;
  mismatchReported = true;
  const why = `written for ${bqplot.checkedAgainst}`;
  console.error(`jaxhist_widget: the hover read-out is turned off (${why}).`, error);
}

/** Shows `hit` (from `nearestOnLines`) in the read-out `tip` and marks its point with `dot`;
 * lists the chart's other series at that step (`others`, from `seriesAtStep`) in `list`, right
 * under the read-out; all placed in `box`. */
function showReadout(tip, list, dot, box, hit, others, axis = null) {
  const [name, stepText, valueText] = readoutLines(hit.name, hit.x, hit.y, axis);
  tip.replaceChildren(
    element("div", "jhw-hover-name", name),
    element("div", "jhw-hover-step", stepText),
    element("div", "jhw-hover-value", valueText),
  );
  tip.dataset.name = name;
  tip.dataset.step = String(hit.x);
  tip.dataset.value = String(hit.y);
  const { rows, more } = seriesReadout(hit.x, others, HOVER_ROWS);
  const items = rows.map((row) => {
    const swatch = element("span", "jhw-hover-swatch", "");
    swatch.style.background = row.color;
    const div = element("div", "jhw-hover-row", "");
    div.append(
      swatch,
      element("span", "jhw-hover-name", row.name),
      element("span", "jhw-hover-value", row.value),
    );
    return div;
  });
  if (more) items.push(element("div", "jhw-hover-more", more));
  list.replaceChildren(...items);
  list.dataset.series = String(others.length);
  list.hidden = items.length === 0;
  const r = box.getBoundingClientRect();
  const x = hit.at.x - r.left - box.clientLeft;
  const y = hit.at.y - r.top - box.clientTop;
  dot.style.left = `${x}px`;
  dot.style.top = `${y}px`;
  dot.style.borderColor = hit.color || ""; // the line's own colour
  dot.hidden = false;
  tip.hidden = false;
  const gap = list.hidden ? 0 : 2;
  const w = Math.max(tip.offsetWidth, list.hidden ? 0 : list.offsetWidth);
  const h = tip.offsetHeight + gap + (list.hidden ? 0 : list.offsetHeight);
  const { left, top } = readoutPlacement(x, y, w, h, box.clientWidth, box.clientHeight);
  tip.style.left = `${left}px`;
  tip.style.top = `${top}px`;
  list.style.left = `${left}px`;
  list.style.top = `${top + tip.offsetHeight + gap}px`;
}

/**
 * Each titled chart's own "log" toggle, in its top left corner: pressed while the chart's title
 * is in the `log_charts` trait; a click asks the kernel to flip it (a `chart_log` control,
 * never a trait write, see `kernel.js`). A chart's figure view can be made after the figures
 * changed: the toggles are placed again a few times until every chart has its own.
 * Returns a function that removes them.
 */
function attachChartLogToggles(model, box) {
  let disposed = false;
  let retry = 0;
  let tries = 0;
  const toggles = new Map(); // chart title -> its button
  const watched = new Set(); // figure models whose title is watched
  async function place() {
    retry = 0;
    if (disposed) return;
    const refs = model.get("figures") || [];
    const titles = new Set();
    let missing = false;
    for (const ref of refs) {
      let view = null;
      try {
        view = await bqplot.figureView(model.widget_manager, ref, box);
      } catch (e) {
        view = null;
      }
      if (disposed) return;
      const title = view ? view.model.get("title") : "";
      if (!view) missing = true;
      // A chart can be titled after its view is made (a live run's first rows name it).
      if (view && !watched.has(view.model)) {
        watched.add(view.model);
        view.model.on("change:title", onFigures);
      }
      if (!title) continue;
      titles.add(title);
      let button = toggles.get(title);
      if (!button || button.parentNode !== view.el) {
        if (button) button.remove();
        button = element("button", "jhw-chart-log", "log");
        button.type = "button";
        button.title = `${title}: logarithmic y axis`;
        button.addEventListener("click", () => {
          const on = (model.get("log_charts") || []).includes(title);
          sendControl(model, "chart_log", [title, !on]);
        });
        if (getComputedStyle(view.el).position === "static") view.el.style.position = "relative";
        view.el.append(button);
        toggles.set(title, button);
      }
    }
    for (const [title, button] of toggles) {
      if (!titles.has(title)) {
        button.remove();
        toggles.delete(title);
      }
    }
    show();
    if (missing && ++tries < 20) retry = setTimeout(place, 250);
  }
  function show() {
    const logs = model.get("log_charts") || [];
    for (const [title, button] of toggles) {
      const on = logs.includes(title);
      button.setAttribute("aria-pressed", String(on));
      button.classList.toggle("jhw-on", on);
    }
  }
  const onFigures = () => {
    tries = 0;
    clearTimeout(retry);
    retry = setTimeout(place, 0);
  };
  model.on("change:figures", onFigures);
  model.on("change:log_charts", show);
  onFigures();
  return () => {
    disposed = true;
    clearTimeout(retry);
    model.off("change:figures", onFigures);
    model.off("change:log_charts", show);
    for (const figure of watched) figure.off("change:title", onFigures);
    for (const button of toggles.values()) button.remove();
  };
}

/**
 * The hover read-out of the LivePlot charts this panel belongs to (the `figures` trait): the
 * step, value, field, lane and run of the drawn point nearest to the pointer, and, in a chart
 * of several series, every series' value at that step. It is computed
 * here, in the browser, from the points the figure's lines already hold, so it costs no kernel
 * round trip (it works while a synchronous cell keeps the kernel busy) and no byte per update.
 * `onBox(box, chartAt)`, once the LivePlot box is found, attaches what else reads its charts
 * (the zoom: `chartAt(point)` resolves to the chart view under a client point); it returns
 * `{ remove, dragging }`, and no read-out shows while `dragging()`.
 * Returns a function that removes it.
 */
export function attachHover(model, el, onBox = null) {
  let disposed = false;
  let box = null; // the .jhw-liveplot element holding this panel and its figure
  let figureViews = new Map(); // figure reference -> its view in `box`
  let pointer = null; // last {x, y} client position inside the box
  let frame = 0;
  let refresh = 0;
  let waitBox = 0;
  let tries = 0;
  let busy = false;
  let shownKey = ""; // what the read-out shows now: unchanged, the DOM is left alone
  let removeToggles = () => {};
  let attached = null; // what `onBox` attached
  const tip = element("div", "jhw-hover");
  tip.setAttribute("role", "tooltip");
  tip.hidden = true;
  // The chart's other series at the read-out's step (TensorBoard / W&B style), under it.
  const list = element("div", "jhw-hover-list");
  list.hidden = true;
  const dot = element("div", "jhw-hover-dot");
  dot.hidden = true;

  const hide = () => {
    tip.hidden = true;
    list.hidden = true;
    dot.hidden = true;
    delete tip.dataset.name;
    shownKey = "";
  };

  // The chart references: `figures` (one per chart), or the one `figure` of an older kernel.
  const refs = () => {
    const list = model.get("figures");
    if (Array.isArray(list) && list.length) return list;
    const one = model.get("figure");
    return typeof one === "string" ? [one] : [];
  };

  // The bqplot view of the chart under the client point `at`, in the same LivePlot box as this
  // panel (a LivePlot displayed twice has two boxes, each with its own figure views).
  async function chartAt(at) {
    for (const ref of refs()) {
      let view = figureViews.get(ref);
      if (!bqplot.isShownIn(view, box)) {
        view = await bqplot.figureView(model.widget_manager, ref, box);
        figureViews.set(ref, view);
      }
      if (!view || !at) continue;
      const r = view.el.getBoundingClientRect();
      if (at.x >= r.left && at.x <= r.right && at.y >= r.top && at.y <= r.bottom) return view;
    }
    return null;
  }

  async function lookup() {
    if (disposed || pointer === null || busy) return;
    busy = true;
    try {
      if (attached && attached.dragging()) {
        hide(); // a zoom's rectangle is being drawn
        return;
      }
      const view = await chartAt(pointer);
      const sets = view ? await bqplot.lineSets(view) : [];
      const hit = pointer && nearestOnLines(sets, pointer.x, pointer.y, HOVER_RADIUS_PX);
      if (!hit) {
        hide();
        return;
      }
      const series = seriesAtStep(sets, hit.x, HOVER_RADIUS_PX);
      // A still pointer over a still line (the refresh below): nothing to redo. (Placing the
      // box measures it, which makes the browser lay the page out.)
      const values = series.map((s) => s.y).join(",");
      const key = `${hit.name}|${hit.x}|${hit.y}|${hit.at.x}|${hit.at.y}|${values}`;
      if (key !== shownKey) {
        shownKey = key;
        const others = series.filter((s) => s.name !== hit.name);
        const axis = { mode: model.get("x_axis"), clocks: model.get("x_clocks") };
        showReadout(tip, list, dot, box, hit, others, axis);
      }
    } catch (e) {
      hide();
      // Anything but a mismatch is passing: a figure being rebuilt (log y toggled) may have no
      // views for a moment, or a mark was removed meanwhile.
      if (e instanceof BqplotMismatch) {
        reportMismatch(e);
        remove();
      }
    } finally {
      busy = false;
    }
  }

  const schedule = () => {
    if (frame || disposed) return;
    frame = requestAnimationFrame(() => {
      frame = 0;
      lookup();
    });
  };
  const onMove = (event) => {
    pointer = { x: event.clientX, y: event.clientY };
    schedule();
    // A live run moves the lines under a still pointer: read the point out again meanwhile.
    if (!refresh) refresh = setInterval(schedule, 250);
  };
  const onLeave = () => {
    pointer = null;
    clearInterval(refresh);
    refresh = 0;
    hide();
  };

  // The panel is rendered before it is attached to the page (and before its figure view is):
  // find the box once it is there.
  const connect = () => {
    waitBox = 0;
    if (disposed) return;
    box = el.closest(".jhw-liveplot");
    if (!box) {
      // A panel displayed on its own (no LivePlot box around it) has no figure to read out.
      if (++tries < 40) waitBox = setTimeout(connect, 250);
      return;
    }
    box.append(tip, list, dot);
    removeToggles = attachChartLogToggles(model, box);
    if (onBox) attached = onBox(box, chartAt);
    box.addEventListener("mousemove", onMove);
    box.addEventListener("mouseleave", onLeave);
  };
  const onFigure = () => {
    figureViews = new Map();
    if (box === null && !waitBox && refs().length) connect();
  };
  model.on("change:figure", onFigure);
  model.on("change:figures", onFigure);
  onFigure();

  function remove() {
    disposed = true;
    model.off("change:figure", onFigure);
    model.off("change:figures", onFigure);
    clearTimeout(waitBox);
    clearInterval(refresh);
    if (frame) cancelAnimationFrame(frame);
    if (box) {
      box.removeEventListener("mousemove", onMove);
      box.removeEventListener("mouseleave", onLeave);
    }
    removeToggles();
    if (attached) attached.remove();
    tip.remove();
    list.remove();
    dot.remove();
  }
  return remove;
}
