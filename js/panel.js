// The LivePanel view (anywidget ES module): status, progress, rate, latest values, controls.
//
// All state lives in the model's traits (jaxhist_widget/ui/panel/_panel.py), so any view,
// opened at any time, renders the same thing. The view writes no trait: its controls are
// messages to the kernel (js/panel/kernel.js says why), which sets the traits every view then
// shows.
// Its styles are js/panel.css, served by anywidget as the `_css` trait.
//
// The front end is small ES modules, each one job, by concern; this one is the entry (`render`).
// base/: what every part uses (pure, or small DOM helpers)
//   look.js            the look table (jaxhist_widget/ui/look/look.json), shared with Python
//   format.js          status words and number formats (pure, from the look table)
//   geometry.js        hover geometry: the point under the pointer, the read-out's place (pure)
//   readout.js         the read-out's rows: one per series, sorted, the nearest lanes (pure)
//   download.js        a chart's downloads: the request, the answer read, the PNG's size (pure)
//   zoom_range.js      the zoom's arithmetic: a drag to steps, a pan, the chip's words (pure)
//   params.js          a sweep's hyperparameter chart read out: its point's lane (pure)
//   dom.js             small DOM helpers
// panel/: the panel itself and its link to the kernel
//   panel_dom.js       the panel's DOM: `buildPanel`, `panelState`, `updatePanel`
//   runs.js            the run list, its filter and the view options (smoothing, outliers)
//   kernel.js          the controls and the kernel watch
// charts/: what the panel does to the bqplot charts beside it
//   bqplot_adapter.js  the one place that reads bqplot's internals
//   readout_dom.js     the read-out's DOM and its place inside the chart
//   highlight.js       the run or lane under the pointer highlighted in every chart
//   chart_download.js  each chart's download menu: CSV, SVG, PNG saved in the page
//   chart_log.js       each chart's tools: its own log toggle and its download menu
//   hover.js           the hover (`attachHover`): the read-out, the highlight, the pin
//   zoom.js            the zoom: drag, double-click, shift+drag on the charts (`attachZoom`)
// Imports point one way: base/ <- panel/ <- charts/ (the charts send their controls through the
// panel's kernel link) <- this entry.
// anywidget loads one module, so Python joins them into one (jaxhist_widget/ui/panel/_esm.py:
// each file once, dependencies first, the relative imports dropped, the look table inlined);
// node's tests import the files.
//
// Stable hooks for tests: .jhw-panel[data-status], .jhw-status[data-status],
// .jhw-status[data-shown] (the word shown: "diverged" over a status, see `shownStatus`),
// .jhw-step[data-step][data-max-steps], .jhw-progress[aria-valuenow], .jhw-rate,
// .jhw-elapsed, .jhw-lane-status, .jhw-field[data-field] > .jhw-field-value[data-value],
// .jhw-error, .jhw-stop[data-mode], .jhw-logy, .jhw-logx, .jhw-keep, .jhw-clear, the run list
// and view options (js/panel/runs.js), the zoom chip .jhw-zoom[data-lo][data-hi][data-waiting]
// with .jhw-zoom-reset and the selection rectangle (js/charts/zoom.js), and
// .jhw-panel[data-kernel] ("alive", or "dead" once the view saw its kernel die or restart);
// in a LivePlot box, the hover read-out .jhw-hover[data-name][data-step][data-value] (hidden
// unless a drawn point is under the pointer), its marker .jhw-hover-dot and its table of
// series (js/charts/readout_dom.js), the highlighted lines' g.curve.jhw-lit / .jhw-dim, and
// each chart's .jhw-chart-tools: .jhw-chart-log and .jhw-download-button with its menu's
// .jhw-download-item[data-format] and its .jhw-download-note, and a hyperparameter chart's
// .jhw-params-field (a select) and .jhw-params-best[data-best].
//
// Stop: in a normal cell (`with live:`) the kernel handles no widget message until the cell
// ends, so a click there asks the kernel for an interrupt, exactly as the notebook's ■ does;
// the kernel turns that interrupt into a clean stop of the run. The runner says which applies
// through the `stop_mode` trait ("interrupt", or "message" for `run_async`).

import { isRunning } from "./base/format.js";
import { attachHover } from "./charts/hover.js";
import { reportWidth, watchKernel, wireControls, wireLegend } from "./panel/kernel.js";
import { buildPanel, panelState, updatePanel } from "./panel/panel_dom.js";
import { attachZoom } from "./charts/zoom.js";
import { sameRange } from "./base/zoom_range.js";

const TRAITS = [
  "status", "title", "step", "max_steps", "rate", "elapsed", "lanes", "diverged",
  "fields", "latest", "error", "log_y", "keep_runs", "stop_mode", "run_number",
  "lane_statuses", "lane_names", "latest_range", "runs", "smoothing", "ignore_outliers", "all_lanes", "log_x", "last_steps",
  "step_range", "x_axis", "run_filter", "log_charts", "log_hints",
];

function render({ model, el }) {
  const ui = buildPanel();
  el.append(ui.root);
  // The view's own state. kernelLost: set once the kernel died or restarted (the model's
  // comm is gone for good: nothing shown can change any more, no control can work).
  // stoppingRun: the run number a Stop was sent for. pendingZoom: the zoom asked for and not
  // yet shown by the kernel ({range}: [lo, hi] or null for every step; see `requestZoom`).
  const view = { kernelLost: null, stoppingRun: null, pendingZoom: null };
  let zoom = null; // the charts' zoom, once the LivePlot box is found
  let unwireLegend = () => {}; // the legend's lane toggles, once the box is found

  const refresh = () => {
    const run = model.get("run_number");
    const ended = !isRunning(model.get("status"));
    if (view.stoppingRun !== null && (view.stoppingRun !== run || ended)) view.stoppingRun = null;
    const pending = view.pendingZoom;
    if (view.kernelLost || (pending && sameRange(pending.range, model.get("step_range")))) {
      view.pendingZoom = null; // shown (or never to be)
    }
    updatePanel(ui, panelState(model, view));
    if (zoom) zoom.update();
  };
  // One message from Python changes several traits at once, and each fires its own event:
  // coalesce them into one redraw after the message is applied.
  let pending = false;
  let alive = true;
  const schedule = () => {
    if (pending) return;
    pending = true;
    queueMicrotask(() => {
      pending = false;
      if (alive) refresh();
    });
  };
  for (const name of TRAITS) model.on(`change:${name}`, schedule);

  const unwireControls = wireControls(ui, model, view, refresh);
  const unwatchKernel = watchKernel(model, (lost) => {
    // A crash shows as "restarting" then "autorestarting" (JupyterLab 4.6): let "kernel died"
    // replace "kernel restarted", never the other way.
    if (!view.kernelLost || (view.kernelLost !== lost && lost === "kernel died")) {
      view.kernelLost = lost;
      schedule();
    }
  });
  refresh();
  const removeHover = attachHover(model, el, (box, chartAt) => {
    zoom = attachZoom(model, box, chartAt, view, schedule);
    unwireLegend = wireLegend(model, box, view);
    return zoom;
  });
  const unreportWidth = reportWidth(model, el);

  return () => {
    alive = false;
    removeHover();
    unwireLegend();
    unreportWidth();
    for (const name of TRAITS) model.off(`change:${name}`, schedule);
    unwatchKernel();
    unwireControls();
    ui.root.remove();
  };
}

export default { render };
