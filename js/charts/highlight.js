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
import { laneKey } from "../base/params.js";
import { runKey } from "../base/readout.js";

const COPY = "jhw-lit-copy";

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

/** Highlights the lines of run (or lane) `key` (readout.js's `runKey` of a line's name) in the
 * figure views `views`, or restores every line as bqplot drew it (`key` null, or no line of
 * `key` drawn: a sweep's lane that is no line, read out in its hyperparameter chart). A
 * hyperparameter chart's own lines (class `jhw-params`) are no run's: left as they are. */
export async function highlightRun(views, key) {
  const charts = views.filter((view) => !(view.el && view.el.classList.contains("jhw-params")));
  const all = await Promise.all(charts.map((view) => bqplot.lineMarks(view)));
  // (a lane is lit whatever roles its drawn line names: params.js's `laneKey`)
  const lane = laneKey(key);
  const isLit = (line) => key !== null && laneKey(runKey(line.name)) === lane;
  if (!all.some((marks) => marks.some((mark) => mark.lines.some(isLit)))) key = null;
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
