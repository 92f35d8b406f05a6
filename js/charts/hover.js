// The hover read-out of a LivePlot's charts: the drawn point nearest to the pointer and every
// series of that chart at its step, read from the points the charts' lines already hold (see
// `attachHover`). The panel's `figures` trait lists its LivePlot's bqplot figures (one per
// chart; `figure` is the first); the view finds their views in the same box.

import { BqplotMismatch, bqplot } from "./bqplot_adapter.js";
import { attachChartLogToggles } from "./chart_log.js";
import { nearestOnLines, nearestStep, seriesAtStep } from "../base/geometry.js";
import { highlightRun } from "./highlight.js";
import { paramReadout, readLaneLines } from "../base/params.js";
import { sendControl } from "../panel/kernel.js";
import { buildReadout, hideReadout, showParamReadout, showReadout } from "./readout_dom.js";

// Pixels from the pointer within which a drawn point is read out.
const HOVER_RADIUS_PX = 12;

// bqplot's internals were not as expected once on this page (one console error is enough).
let mismatchReported = false;

function reportMismatch(error) {
  if (mismatchReported) return;
  mismatchReported = true;
  const why = `written for ${bqplot.checkedAgainst}`;
  console.error(`jaxhist_widget: the hover read-out is turned off (${why}).`, error);
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
  let sort = "value"; // the rows' order (readout.js's SORTS), this view's own
  let pinned = false; // a click on the chart holds the read-out (its sort toggle can be clicked)
  let shown = null; // what the read-out shows: {view, hit, series}, to show it again re-sorted
  let downAt = null; // where the last press was (a click that ends a drag pins nothing)
  const ui = buildReadout((next) => {
    sort = next;
    if (shown) show(shown);
  });
  const { tip, list, dot } = ui;

  // The run (or lane) highlighted in every chart (`highlightRun`), null for none. It is
  // applied again after the charts are redrawn (`watch`, and each lookup while the pointer
  // stays), one application at a time, each with the latest key.
  let lit = null;
  let litApplied = null; // the key last applied (undefined: never); null: every line restored
  let highlighting = false;
  let highlightAgain = false;
  async function applyHighlight() {
    if (highlighting) {
      highlightAgain = true;
      return;
    }
    highlighting = true;
    try {
      do {
        highlightAgain = false;
        const key = lit;
        if (key === null && litApplied === null) continue; // restored already
        const local = probe && laneLines && laneLines.number === probe[0];
        await highlightRun(await chartViews(), key, local ? { lines: laneLines, lane: probe[1] } : null);
        litApplied = key;
      } while (highlightAgain && !disposed);
    } catch (e) {
      if (e instanceof BqplotMismatch) fail(e);
    } finally {
      highlighting = false;
    }
  }
  // The lane pointed at in a hyperparameter chart ([run number, lane]; null: none). A lane past
  // a sweep's drawn-lane limit is no line of its own (only inside the band): the page draws it
  // from every lane's line, which the kernel sends when asked (`lane_lines`, again once the
  // run moved on, at most once a second), at once (highlight.js); until they came, the kernel
  // draws it (`lane_probe`: asked for once per lane, none once the pointer leaves), a line
  // named as a lane's, lit as one when it is drawn (`watch`).
  let probe = null;
  let probeSent = "null";
  let laneLines = null; // params.js's `readLaneLines` of the kernel's latest answer
  let linesAsked = "";
  let linesAskedAt = -Infinity;
  const sendProbe = () => {
    const local = probe && laneLines && laneLines.number === probe[0];
    const want = JSON.stringify(local ? null : probe);
    if (want !== probeSent) {
      probeSent = want;
      sendControl(model, "lane_probe", local ? null : probe);
    }
    const fresh = probe ? `${probe[0]}|${model.get("step")}|${model.get("status")}` : linesAsked;
    if (fresh !== linesAsked && performance.now() - linesAskedAt > 1000) {
      linesAsked = fresh;
      linesAskedAt = performance.now();
      sendControl(model, "lane_lines", probe[0]);
    }
  };
  const onLaneLines = (content, buffers) => {
    if (!content || content.jhw_lane_lines === undefined) return;
    laneLines = readLaneLines(content, buffers);
    sendProbe();
    if (lit !== null) applyHighlight();
  };
  model.on("msg:custom", onLaneLines);
  const watch = new MutationObserver(() => {
    if (lit !== null) applyHighlight(); // marks or lines made anew come unstyled
  });

  const show = ({ view, hit, series, param }) => {
    shown = { view, hit, series, param };
    if (param) {
      // a hyperparameter chart's point: its lane, lit in every chart
      showParamReadout(ui, box, view.el, hit, param.lines);
      lit = param.key;
      probe = param.lane || null;
      sendProbe();
      applyHighlight();
      return;
    }
    const axis = { mode: model.get("x_axis"), clocks: model.get("x_clocks") };
    lit = showReadout(ui, box, view.el, hit, series, sort, pinned, axis);
    probe = null;
    sendProbe();
    applyHighlight();
  };
  const hide = () => {
    hideReadout(ui);
    shownKey = "";
    shown = null;
    pinned = false;
    lit = null;
    probe = null;
    sendProbe();
    applyHighlight();
  };

  // The chart references: `figures` (one per chart), or the one `figure` of an older kernel.
  const refs = () => {
    const list = model.get("figures");
    if (Array.isArray(list) && list.length) return list;
    const one = model.get("figure");
    return typeof one === "string" ? [one] : [];
  };

  // Every chart's bqplot view in the same LivePlot box as this panel (a LivePlot displayed
  // twice has two boxes, each with its own figure views).
  async function chartViews() {
    const views = [];
    for (const ref of refs()) {
      let view = figureViews.get(ref);
      if (!bqplot.isShownIn(view, box)) {
        view = await bqplot.figureView(model.widget_manager, ref, box);
        figureViews.set(ref, view);
      }
      if (view) views.push(view);
    }
    return views;
  }

  // The view of the chart under the client point `at`.
  async function chartAt(at) {
    for (const view of await chartViews()) {
      const r = view.el.getBoundingClientRect();
      if (at && at.x >= r.left && at.x <= r.right && at.y >= r.top && at.y <= r.bottom) return view;
    }
    return null;
  }

  async function lookup() {
    if (disposed || pointer === null || busy) return;
    if (pinned) {
      applyHighlight();
      return;
    }
    busy = true;
    try {
      if (attached && attached.dragging()) {
        hide(); // a zoom's rectangle is being drawn
        return;
      }
      const view = await chartAt(pointer);
      if (view && view.el.classList.contains("jhw-params")) {
        paramLookup(view);
        return;
      }
      const sets = view ? await bqplot.lineSets(view) : [];
      // a drawn point near the pointer, else (over the plot) the step nearest it anywhere
      const hit = pointer && (nearestOnLines(sets, pointer.x, pointer.y, HOVER_RADIUS_PX)
        || (overPlot(sets, pointer) && nearestStep(sets, pointer.x, pointer.y)));
      if (!hit) {
        hide();
        return;
      }
      const series = seriesAtStep(sets, hit.x, HOVER_RADIUS_PX, pointer);
      // A still pointer over a still line (the refresh below): nothing to redo. (Placing the
      // box measures it, which makes the browser lay the page out.)
      const values = series.map((s) => s.y).join(",");
      const key = `${hit.name}|${hit.x}|${hit.y}|${hit.at.x}|${hit.at.y}|${values}`;
      if (key !== shownKey) {
        shownKey = key;
        show({ view, hit, series });
      } else {
        applyHighlight(); // the lines may have been redrawn meanwhile
      }
    } catch (e) {
      hide();
      // Anything but a mismatch is passing: a figure being rebuilt (log y toggled) may have no
      // views for a moment, or a mark was removed meanwhile.
      if (e instanceof BqplotMismatch) fail(e);
    } finally {
      busy = false;
    }
  }

  // Whether the client point `at` is over the plot area of a chart's lines (not its axes,
  // its title or its legend).
  function overPlot(sets, at) {
    if (!sets.length) return false;
    const { left, right, top, bottom } = sets[0].axis().area;
    return at.x >= left && at.x <= right && at.y >= top && at.y <= bottom;
  }

  // The point of a hyperparameter chart under the pointer: its lane read out and lit.
  async function paramLookup(view) {
    const sets = await bqplot.paramSets(view);
    const hit = pointer && nearestOnLines(sets, pointer.x, pointer.y, HOVER_RADIUS_PX);
    const at = (k) => (sets[k] && sets[k].lines[0] ? sets[k].lines[0].values[hit.index] : null);
    const [last, best] = hit ? [at(0), at(1)] : [null, null];
    const title = view.model.get("title");
    const param =
      hit && paramReadout(model.get("param_lanes"), title, hit.index, hit.x, last?.y, best?.y);
    if (!param) {
      hide();
      return;
    }
    const key = `${title}|${hit.index}|${hit.y}|${hit.at.x}|${hit.at.y}`;
    if (key !== shownKey) {
      shownKey = key;
      show({ view, hit, series: [], param });
    } else {
      applyHighlight();
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
  const onDown = (event) => {
    downAt = { x: event.clientX, y: event.clientY };
  };
  // A click on a chart (not a drag: that zooms) pins the read-out shown, or lets it go.
  const onClick = (event) => {
    const target = event.target;
    const tool = target.closest && target.closest("button, .jhw-chart-tools");
    if (list.contains(target) || tool) return;
    const moved = downAt ? Math.hypot(event.clientX - downAt.x, event.clientY - downAt.y) : 0;
    if (moved > 4) return;
    if (pinned) {
      pinned = false;
      shownKey = "";
      schedule();
    } else if (shown) {
      pinned = true;
      show(shown);
    }
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
    box.addEventListener("mousedown", onDown, true);
    box.addEventListener("click", onClick);
    watch.observe(box, { childList: true, subtree: true });
  };
  const onFigure = () => {
    figureViews = new Map();
    if (box === null && !waitBox && refs().length) connect();
  };
  model.on("change:figure", onFigure);
  model.on("change:figures", onFigure);
  onFigure();
  // What the x axis counts, or its scale, changed: a read-out of the old axis is gone (its step
  // or its time read on another axis); the pointer's next move (or the refresh) reads anew.
  const AXIS_TRAITS = ["x_axis", "log_x", "step_range", "last_steps"];
  const onAxis = () => hide();
  for (const name of AXIS_TRAITS) model.on(`change:${name}`, onAxis);

  function fail(error) {
    reportMismatch(error);
    remove();
  }

  function remove() {
    disposed = true;
    model.off("change:figure", onFigure);
    model.off("change:figures", onFigure);
    for (const name of AXIS_TRAITS) model.off(`change:${name}`, onAxis);
    clearTimeout(waitBox);
    clearInterval(refresh);
    if (frame) cancelAnimationFrame(frame);
    watch.disconnect();
    if (box) {
      box.removeEventListener("mousemove", onMove);
      box.removeEventListener("mouseleave", onLeave);
      box.removeEventListener("mousedown", onDown, true);
      box.removeEventListener("click", onClick);
      if (litApplied !== null) chartViews().then((views) => highlightRun(views, null)).catch(() => {});
      probe = null;
      sendProbe();
    }
    model.off("msg:custom", onLaneLines);
    removeToggles();
    if (attached) attached.remove();
    tip.remove();
    list.remove();
    dot.remove();
  }
  return remove;
}
