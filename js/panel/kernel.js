// The panel's link to its kernel: the controls (Stop as an interrupt or a message, Clear, log y,
// keep runs, the zoom, the run list's toggles and filter, the legend's lane toggles), the plot's
// width, and the watch that notices a dead or restarted kernel.
//
// The view tells the kernel what its user did with widget messages of its own (`model.send`),
// never by writing a trait: a trait write goes through ipywidgets' throttle, which sends a
// model's next write only once the kernel said "idle" for the previous one, and ipykernel 7
// handles a widget message that arrives while an async cell awaits without ever saying so. One
// trait write there (a Stop click, a width report) held every later click of that panel back
// for good. The kernel sets the traits (`LivePanel`), and every view follows them.

import { isRunning, kernelLostLabel, widthToReport } from "../base/format.js";
import { lastStepsValue } from "./runs.js";
import { sameRange } from "../base/zoom_range.js";

function kernelOf(model) {
  const manager = model.widget_manager;
  return manager && manager.kernel ? manager.kernel : null;
}

/** "interrupt" only where the kernel connection can be asked for one; else "message". */
export function stopMode(model) {
  const k = kernelOf(model);
  const canInterrupt = k !== null && typeof k.interrupt === "function";
  return model.get("stop_mode") === "interrupt" && canInterrupt ? "interrupt" : "message";
}

/** Sends the control `name` ("stop", "clear", "log_y", "keep_runs", "plot_width", "chart_log",
 * "smoothing", "ignore_outliers", "all_lanes", "run_hidden", "runs_hidden", "run_filter", "lane_hidden",
 * "log_x", "x_axis", "last_steps", "step_range", "download", "params_field", "params_best",
 * "lane_probe") with its
 * `value` to the kernel (see the top of this file for why not as a trait write). */
export function sendControl(model, name, value = null) {
  try {
    model.send({ jhw_control: name, value });
  } catch (e) {
    // The comm is gone with its kernel (the panel says so): nothing can reach it any more.
    console.warn(`jaxhist_widget: ${name} not sent, the kernel is gone`, e);
  }
}

/** Asks the kernel to zoom every chart's step axis to `range` ([lo, hi] steps) or back out
 * (null), unless that is what was last asked for (or, with none on its way, what is shown).
 * The request stays in `view.pendingZoom` until the kernel's `step_range` shows it (panel.js):
 * a normal cell holds every message until it ends, and the panel says meanwhile that the zoom
 * waits. Returns whether it was sent. */
export function requestZoom(model, view, range) {
  const last = view.pendingZoom ? view.pendingZoom.range : model.get("step_range");
  if (sameRange(range, last)) return false;
  view.pendingZoom = { range };
  sendControl(model, "step_range", range);
  return true;
}

/** Connects the controls of `ui` to the model. `view` is the view's own state; `refresh`
 * redraws at once. Returns a function that disconnects them. */
export function wireControls(ui, model, view, refresh) {
  const onStop = () => {
    if (view.kernelLost || !isRunning(model.get("status"))) return;
    // Stays set (the button disabled, "stopping…") until that run ended, so a second click
    // cannot turn into a second interrupt (which the kernel would take as "I insist": a
    // KeyboardInterrupt).
    view.stoppingRun = model.get("run_number");
    if (stopMode(model) === "interrupt") {
      // The cell holds the kernel: a widget message would wait until it ends. The interrupt
      // (SIGINT, like ■) reaches the running loop at its next chunk.
      Promise.resolve()
        .then(() => kernelOf(model).interrupt())
        .catch((e) => {
          console.warn("jaxhist_widget: kernel interrupt failed, sending a stop message", e);
          sendControl(model, "stop");
        });
    } else {
      sendControl(model, "stop");
    }
    refresh();
  };
  const onClear = () => sendControl(model, "clear");
  const onLogY = () => sendControl(model, "log_y", ui.logY.checked);
  const onLogX = () => sendControl(model, "log_x", ui.logX.checked);
  const onXAxis = () => sendControl(model, "x_axis", ui.xAxis.value);
  const onKeep = () => sendControl(model, "keep_runs", ui.keep.checked);
  // The weight is sent when the slider is let go (not at every pixel of a drag: each new
  // weight recomputes the smoothed lines in the kernel); its number follows the drag.
  const onSmoothing = () => {
    delete ui.smoothing.dataset.editing;
    sendControl(model, "smoothing", Number(ui.smoothing.value));
  };
  const onSmoothingInput = () => {
    ui.smoothing.dataset.editing = "true"; // until let go: a redraw keeps what is dragged
    refresh();
  };
  const onOutliers = () => sendControl(model, "ignore_outliers", ui.outliers.checked);
  const onAllLanes = () => sendControl(model, "all_lanes", ui.allLanes.checked);
  const onLastSteps = () => sendControl(model, "last_steps", lastStepsValue(ui.lastSteps.value));
  // Enter applies the number at once (a change event comes only when the field loses focus).
  const onLastStepsKey = (event) => {
    if (event.key === "Enter") onLastSteps();
  };
  ui.onRunToggle = (number, hidden) => sendControl(model, "run_hidden", [number, hidden]);
  ui.onLaneToggle = (number, lane, hidden) =>
    sendControl(model, "lane_hidden", [number, lane, hidden]);
  // The filter is sent once typing pauses (each one redraws every chart in the kernel), at
  // once on Enter; an invalid one too (the kernel keeps it as typed and applies none).
  let filterTimer = 0;
  const sendFilter = () => {
    clearTimeout(filterTimer);
    filterTimer = 0;
    if (ui.runFilter.value !== (model.get("run_filter") || "")) {
      sendControl(model, "run_filter", ui.runFilter.value);
    }
  };
  const onFilterInput = () => {
    refresh(); // its invalid mark follows the typing
    clearTimeout(filterTimer);
    filterTimer = setTimeout(sendFilter, 250);
  };
  const onFilterKey = (event) => {
    if (event.key === "Enter") sendFilter();
  };
  const onShowAll = () => sendControl(model, "runs_hidden", false);
  const onHideAll = () => sendControl(model, "runs_hidden", true);
  const onZoomReset = () => {
    if (requestZoom(model, view, null)) refresh();
  };
  const listeners = [
    [ui.stop, "click", onStop],
    [ui.clear, "click", onClear],
    [ui.logY, "change", onLogY],
    [ui.logX, "change", onLogX],
    [ui.xAxis, "change", onXAxis],
    [ui.keep, "change", onKeep],
    [ui.smoothing, "change", onSmoothing],
    [ui.smoothing, "input", onSmoothingInput],
    [ui.outliers, "change", onOutliers],
    [ui.allLanes, "change", onAllLanes],
    [ui.lastSteps, "change", onLastSteps],
    [ui.lastSteps, "keydown", onLastStepsKey],
    [ui.zoomReset, "click", onZoomReset],
    [ui.runFilter, "input", onFilterInput],
    [ui.runFilter, "keydown", onFilterKey],
    [ui.runFilter, "change", sendFilter],
    [ui.showAll, "click", onShowAll],
    [ui.hideAll, "click", onHideAll],
  ];
  for (const [node, type, fn] of listeners) node.addEventListener(type, fn);
  return () => {
    clearTimeout(filterTimer);
    for (const [node, type, fn] of listeners) node.removeEventListener(type, fn);
  };
}

/** Makes the legend's lane entries of the LivePlot `box` toggles: a click (or Enter / space
 * on one focused) hides or shows that lane's line. The kernel writes each entry's run, lane and
 * state (`data-run`, `data-lane`, `data-hidden`); listening on the box keeps working however
 * often the legend's HTML is replaced. Returns a function that stops. */
export function wireLegend(model, box, view) {
  const toggle = (event) => {
    const entry = event.target instanceof Element
      ? event.target.closest(".jhw-legend-lane[data-lane]")
      : null;
    if (!entry || !box.contains(entry) || view.kernelLost) return;
    if (event.type === "keydown") {
      if (event.key !== "Enter" && event.key !== " ") return;
      event.preventDefault();
    }
    const hidden = entry.dataset.hidden !== "true";
    sendControl(model, "lane_hidden", [Number(entry.dataset.run), Number(entry.dataset.lane), hidden]);
  };
  box.addEventListener("click", toggle);
  box.addEventListener("keydown", toggle);
  return () => {
    box.removeEventListener("click", toggle);
    box.removeEventListener("keydown", toggle);
  };
}

/** Calls `onLost(label)` when the model's kernel dies or restarts (see `kernelLostLabel`).
 * A dead or restarted kernel takes the model's comm with it and sends nothing more, so
 * without this the panel would say "running" with Stop enabled forever. (The model's
 * comm_live flag is not exposed by anywidget's model proxy, and its change event does not
 * say which way it changed.) Returns a function that stops watching. */
export function watchKernel(model, onLost) {
  const kernel = kernelOf(model);
  const signal = kernel && kernel.statusChanged;
  if (!signal || typeof signal.connect !== "function") return () => {};
  const onStatus = (_sender, kernelStatus) => {
    const lost = kernelLostLabel(kernelStatus);
    if (lost) onLost(lost);
  };
  signal.connect(onStatus);
  onStatus(null, kernel.status);
  return () => {
    if (typeof signal.disconnect === "function") signal.disconnect(onStatus);
  };
}

/** Keeps the kernel told the width of the LivePlot box this panel is in (its figure spans it),
 * so the kernel chooses as many x ticks as the plot holds. Returns a function that stops. A
 * panel without a box (displayed on its own) reports nothing. */
export function reportWidth(model, el) {
  let observer = null;
  let waitBox = 0;
  let debounce = 0;
  let tries = 0;
  let disposed = false;
  const send = (box) => {
    debounce = 0;
    const w = widthToReport(model.get("plot_width"), box.clientWidth);
    if (!disposed && w !== null) sendControl(model, "plot_width", w);
  };
  const connect = () => {
    waitBox = 0;
    if (disposed) return;
    const box = el.closest(".jhw-liveplot");
    if (!box || typeof ResizeObserver !== "function") {
      if (box === null && ++tries < 40) waitBox = setTimeout(connect, 250);
      return;
    }
    // A resize drag fires many times: the width is sent once it settled.
    observer = new ResizeObserver(() => {
      clearTimeout(debounce);
      debounce = setTimeout(() => send(box), 250);
    });
    observer.observe(box);
  };
  connect();
  return () => {
    disposed = true;
    clearTimeout(waitBox);
    clearTimeout(debounce);
    if (observer) observer.disconnect();
  };
}
