// The highlight of the run (or lane) under the pointer, in every chart of a LivePlot at once:
// its lines drawn thicker and over the others, every other line dimmed; all as before once the
// pointer leaves. It is done here in the page, not by the kernel: it must follow the pointer at
// once, also while a cell keeps the kernel busy.
//
// Only the drawn SVG is touched: classes on a line's `g.curve` (jhw-lit / jhw-dim, styled by
// panel.css), the order of whole marks in their figure (a run's marks moved last, so drawn on
// top), and for a lane (one line among the many of its mark, which bqplot binds to its
// elements by position, so they must not move) a copy of its path drawn last in its mark.
// A kernel redraw can add marks or lines unstyled, or give a line's element another series:
// `highlightRun` is idempotent, and hover.js calls it again after each (on a timer while the
// pointer stays, and when the charts' elements change).

import { bqplot } from "./bqplot_adapter.js";
import { laneKey, laneLine } from "../base/params.js";
import { runKey } from "../base/readout.js";

const COPY = "jhw-lit-copy";
// A lane that is no line of its own (only inside a sweep's band), drawn lit from every lane's
// line the kernel sent (`drawLane`).
const LANE = "jhw-lane-line";

/** Puts the sibling elements `els` in this order, each right after the one before (the line
 * marks of a figure are contiguous: bands under them, flags over them are left in place).
 * Moves nothing when they already are, so that calling it again costs nothing. */
function keepOrder(els) {
  for (let i = 1; i < els.length; i++) {
    const [prev, el] = [els[i - 1], els[i]];
    if (prev.parentNode === el.parentNode && prev.nextElementSibling !== el) {
      prev.parentNode.insertBefore(el, prev.nextSibling);
    }
  }
}

/** The copy of `line`'s path drawn last in its mark `markEl` (null: none), its shape and look
 * kept the path's, or removed. */
function placeCopy(markEl, line) {
  let copy = markEl.querySelector(`:scope > path.${COPY}`);
  const path = line ? line.el.querySelector("path.line") : null;
  if (!path) {
    if (copy) copy.remove();
    return;
  }
  if (!copy) {
    copy = document.createElementNS("http://www.w3.org/2000/svg", "path");
    copy.setAttribute("class", COPY);
  }
  for (const name of ["d", "style"]) {
    const value = path.getAttribute(name) || "";
    if (copy.getAttribute(name) !== value) copy.setAttribute(name, value);
  }
  if (markEl.lastElementChild !== copy) markEl.append(copy);
}

/** Draws lane `lane.lane` of `lane.lines` (params.js's `readLaneLines`) over each step chart
 * of `charts` (figure views) that plots one of its fields, through the scales of the chart's
 * first line mark, or removes it (`lane` null). Returns whether a line was drawn. */
async function drawLane(charts, lane) {
  let drawn = false;
  for (const view of charts) {
    const title = view.model ? view.model.get("title") || "" : "";
    const i = lane ? lane.lines.charts.indexOf(title) : -1;
    const sets = i >= 0 ? await bqplot.lineSets(view) : [];
    const set = sets.find((s) => s.el);
    let path = view.el.querySelector(`path.${LANE}`);
    if (!set) {
      if (path) path.remove();
      continue;
    }
    let d = "";
    let pen = "M";
    for (const [x, y] of laneLine(lane.lines, i, lane.lane)) {
      const [px, py] = [set.xPx(x), set.yPx(y)];
      if (!Number.isFinite(px) || !Number.isFinite(py)) {
        pen = "M"; // (a value a log axis cannot place: a gap)
        continue;
      }
      d += `${pen}${px.toFixed(1)},${py.toFixed(1)}`;
      pen = "L";
    }
    if (!path) {
      path = document.createElementNS("http://www.w3.org/2000/svg", "path");
      path.setAttribute("class", LANE);
    }
    const clip = set.el.getAttribute("clip-path");
    if (clip && path.getAttribute("clip-path") !== clip) path.setAttribute("clip-path", clip);
    if (path.getAttribute("d") !== d) path.setAttribute("d", d);
    const parent = set.el.parentNode;
    if (parent && parent.lastElementChild !== path) parent.append(path); // over every mark
    drawn = drawn || d !== "";
  }
  return drawn;
}

/** Highlights the lines of run (or lane) `key` (readout.js's `runKey` of a line's name) in the
 * figure views `views`, or restores every line as bqplot drew it (`key` null, or no line of
 * `key` drawn: a sweep's lane that is no line, read out in its hyperparameter chart, unless
 * `laneLines` ({lines, lane}: `drawLane`) draw it). A hyperparameter chart's own lines (class
 * `jhw-params`) are no run's: left as they are. */
export async function highlightRun(views, key, laneLines = null) {
  const charts = views.filter((view) => !(view.el && view.el.classList.contains("jhw-params")));
  const all = await Promise.all(charts.map((view) => bqplot.lineMarks(view)));
  // (a lane is lit whatever roles its drawn line names: params.js's `laneKey`)
  const lane = laneKey(key);
  const isLit = (line) => key !== null && laneKey(runKey(line.name)) === lane;
  const lines = all.some((marks) => marks.some((mark) => mark.lines.some(isLit)));
  // a lane that is no line of its own: drawn from `laneLines` ({lines, lane}), lit
  const drawn = await drawLane(charts, key !== null && !lines ? laneLines : null);
  if (!lines && !drawn) key = null;
  for (const marks of all) {
    const lit = [];
    const rest = [];
    for (const mark of marks) {
      const on = mark.lines.filter(isLit);
      for (const line of mark.lines) {
        line.el.classList.toggle("jhw-lit", on.includes(line));
        line.el.classList.toggle("jhw-dim", key !== null && !on.includes(line));
      }
      // A lane drawn under other lanes of its mark: its copy goes over them.
      const last = mark.lines[mark.lines.length - 1];
      placeCopy(mark.el, on.length === 1 && on[0] !== last ? on[0] : null);
      (on.length ? lit : rest).push(mark.el);
    }
    keepOrder([...rest, ...lit]);
  }
}
