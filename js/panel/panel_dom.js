// The panel's DOM: `buildPanel` makes it once, `panelState` reads what it shows from the model
// (plus the view's own state), `updatePanel` applies that state to it.

import { checkbox, element, showText } from "../base/dom.js";
import {
  badgeText,
  formatElapsed,
  formatLanes,
  formatProgress,
  formatRate,
  formatValue,
  isRunning,
  logYBox,
  progressClass,
  progressFraction,
  shownStatus,
  statusClass,
  statusTitle,
} from "../base/format.js";
import { stopMode } from "./kernel.js";
import {
  buildRunTools,
  buildViewOptions,
  updateRunList,
  updateRunName,
  updateRunTools,
  updateViewOptions,
} from "./runs.js";
import { zoomChip } from "../base/zoom_range.js";

/** The panel's DOM, made once; `updatePanel` fills it. Returns its nodes by role. */
export function buildPanel() {
  const ui = {
    root: element("div", "jhw-panel"),
    title: element("span", "jhw-title"),
    runName: element("span", "jhw-run-name jhw-header-run"),
    status: element("span", "jhw-status"),
    kernelNote: element("span", "jhw-kernel"),
    progress: element("div", "jhw-progress"),
    bar: element("div", "jhw-progress-bar"),
    step: element("span", "jhw-step"),
    rate: element("span", "jhw-rate jhw-muted"),
    elapsed: element("span", "jhw-elapsed jhw-muted"),
    lanes: element("span", "jhw-lanes jhw-muted"),
    laneStatus: element("span", "jhw-lane-status jhw-muted"),
    fields: element("div", "jhw-fields"),
    runs: element("div", "jhw-runs"),
    error: element("pre", "jhw-error"),
    stop: element("button", "jhw-stop", "■ Stop"),
    clear: element("button", "jhw-clear", "Clear"),
  };
  ui.kernelNote.hidden = true;
  ui.progress.setAttribute("role", "progressbar");
  ui.progress.setAttribute("aria-valuemin", "0");
  ui.progress.append(ui.bar);
  const head = element("div", "jhw-row");
  ui.runs.hidden = true;
  ui.runName.title = "the latest run";
  // Set by `wireControls`: a run's (or a sweep lane's) show/hide toggle was clicked.
  ui.onRunToggle = () => {};
  // Two groups that wrap as units (panel.css): what runs (title, run, badge) and how far it
  // is (bar and counters), so a narrow output never leaves a lone "elapsed" on a line.
  const ident = element("div", "jhw-head-ident");
  ident.append(ui.title, ui.runName, ui.status, ui.kernelNote);
  const counters = element("div", "jhw-head-counters");
  counters.append(ui.step, ui.rate, ui.elapsed, ui.lanes, ui.laneStatus);
  const progress = element("div", "jhw-head-progress");
  progress.append(ui.progress, counters);
  ui.progressGroup = progress;
  ui.onLaneToggle = () => {};
  Object.assign(ui, buildRunTools());
  head.classList.add("jhw-head");
  head.append(ident, progress);

  ui.stop.type = "button";
  ui.clear.type = "button";
  ui.clear.title = "Forget previous runs and clear the plot";
  const [logLabel, logY] = checkbox("jhw-logy", "log y");
  const [logXLabel, logX] = checkbox("jhw-logx", "log x");
  logXLabel.title = "A logarithmic step axis on every chart (step 0 is not drawn)";
  // short labels: the four controls fit one row down to ~300 px of output width
  const [keepLabel, keep] = checkbox("jhw-keep", "keep runs");
  keepLabel.title = "Keep previous runs on the plot, each in a colour of its own";
  Object.assign(ui, { logY, logX, keep }, buildViewOptions(), buildZoomChip());
  // The view options flow in the row where it is wide; in an output under 520 px (panel.css's
  // container query) they fold behind "view", so the controls take one row, not five.
  ui.more = element("button", "jhw-more", "view ▾");
  ui.more.type = "button";
  ui.more.title = "More view options: log x, smoothing, outliers, the last steps, the x axis";
  ui.more.setAttribute("aria-expanded", "false");
  ui.more.addEventListener("click", () => {
    const open = ui.root.dataset.more !== "open";
    ui.root.dataset.more = open ? "open" : "closed";
    ui.more.setAttribute("aria-expanded", String(open));
  });
  const options = element("div", "jhw-view-options");
  options.append(
    logXLabel, ui.smoothLabel, ui.outliersLabel, ui.allLanesLabel, ui.lastLabel, ui.xAxisLabel,
  );
  const controls = element("div", "jhw-row jhw-controls");
  controls.append(ui.stop, logLabel, keepLabel, ui.clear, ui.more, options, ui.zoom);

  ui.root.append(head, ui.fields, ui.runTools, ui.runs, ui.error, controls);
  return ui;
}

/** The zoom chip (`.jhw-zoom`): the steps shown while zoomed (or asked for and waiting for the
 * kernel), and a reset button; hidden when not zoomed. */
function buildZoomChip() {
  const zoom = element("span", "jhw-zoom");
  zoom.title = "Drag across a chart to zoom its steps; shift+drag pans; double-click zooms out";
  const zoomText = element("span", "jhw-zoom-text");
  const zoomWait = element("span", "jhw-zoom-wait jhw-muted", "waiting for the kernel");
  const zoomReset = element("button", "jhw-zoom-reset", "reset zoom");
  zoomReset.type = "button";
  zoom.append(zoomText, zoomWait, zoomReset);
  zoom.hidden = true;
  return { zoom, zoomText, zoomReset };
}

/** Applies the zoom chip's state `chip` (from `zoomChip`) to its DOM. */
function updateZoomChip(ui, chip, lost) {
  ui.zoom.hidden = chip.hidden;
  ui.zoom.dataset.waiting = String(chip.waiting);
  ui.zoom.dataset.lo = chip.range ? String(chip.range[0]) : "";
  ui.zoom.dataset.hi = chip.range ? String(chip.range[1]) : "";
  ui.zoomText.textContent = chip.text;
  ui.zoomReset.disabled = lost || !chip.range;
}

/** One `.jhw-field` of the latest values. Under vmap `value` is the median over lanes and
 * `span` its [min, max], both labelled (`formatLatest`). */
function fieldItem(name, value, span) {
  const item = element("span", "jhw-field");
  item.dataset.field = name;
  const shown = element("span", "jhw-field-value", formatValue(value));
  shown.dataset.value = String(value ?? "");
  const batched = Array.isArray(span) && span.length === 2;
  const label = element("span", "jhw-field-name", name);
  if (!batched) {
    item.append(label, shown);
    return item;
  }
  shown.title = "median over lanes";
  const text = ` (min–max ${formatValue(span[0])} … ${formatValue(span[1])})`;
  const spread = element("span", "jhw-field-range jhw-muted", text);
  spread.title = "min … max over lanes";
  item.append(label, element("span", "jhw-field-stat jhw-muted", "median "), shown, spread);
  return item;
}

/** What the panel shows, as plain data: the model's traits plus the view's own state
 * (`kernelLost`, `stopping`, and the `stopMode` this browser can do). */
export function panelState(model, view) {
  const get = (name) => model.get(name);
  return {
    status: get("status"),
    title: get("title") || "",
    step: get("step"),
    maxSteps: get("max_steps"),
    rate: get("rate"),
    elapsed: get("elapsed"),
    lanes: get("lanes"),
    diverged: get("diverged") || [],
    laneStatuses: get("lane_statuses"),
    laneNames: get("lane_names"),
    fields: get("fields") || [],
    latest: get("latest") || {},
    latestRange: get("latest_range") || {},
    error: get("error") || "",
    logY: Boolean(get("log_y")),
    logCharts: get("log_charts") || [],
    logHints: get("log_hints") || {},
    logX: Boolean(get("log_x")),
    keepRuns: Boolean(get("keep_runs")),
    runs: get("runs") || [],
    runFilter: get("run_filter") || "",
    smoothing: Number(get("smoothing")) || 0,
    ignoreOutliers: Boolean(get("ignore_outliers")),
    allLanes: Boolean(get("all_lanes")),
    lastSteps: Number(get("last_steps")) || 0,
    xAxis: get("x_axis") || "step",
    stepRange: get("step_range") || [],
    pendingZoom: view.pendingZoom || null,
    stopMode: stopMode(model),
    kernelLost: view.kernelLost,
    stopping: view.stoppingRun !== null,
  };
}

/** Applies the state `s` (from `panelState`) to the panel's DOM `ui` (from `buildPanel`). */
export function updatePanel(ui, s) {
  const lost = Boolean(s.kernelLost);
  ui.root.dataset.status = s.status;
  ui.root.dataset.kernel = lost ? "dead" : "alive";
  showText(ui.kernelNote, s.kernelLost || "");
  const shown = shownStatus(s.status, s.diverged);
  ui.status.textContent = badgeText(s.status, s.diverged);
  ui.status.className = `jhw-status ${statusClass(shown)}`;
  ui.status.dataset.status = s.status;
  ui.status.dataset.shown = shown;
  ui.status.title = statusTitle(shown, s.diverged);
  // No run (idle): no badge, bar or counters: nothing to say of a run that is not (the
  // legend row under the charts says what to do)
  const idle = s.status === "idle" && !s.error;
  ui.status.hidden = idle;
  ui.progressGroup.hidden = idle;
  showText(ui.title, s.title);
  updateRunName(ui.runName, s.runs);
  updateRunTools(ui, s.runs, s.runFilter, lost);
  const onLane = (number, lane, hidden) => ui.onLaneToggle(number, lane, hidden);
  updateRunList(ui.runs, s.runs, (number, hidden) => ui.onRunToggle(number, hidden), lost, onLane);
  const sweep = { count: s.lanes, all: s.allLanes };
  updateViewOptions(ui, s.smoothing, s.ignoreOutliers, lost, s.lastSteps, s.xAxis, sweep);
  updateZoomChip(ui, zoomChip(s.stepRange, s.pendingZoom), lost);

  ui.bar.style.width = `${(100 * progressFraction(s.step, s.maxSteps, s.status)).toFixed(2)}%`;
  ui.bar.className = progressClass(shown);
  ui.progress.setAttribute("aria-valuenow", String(s.step));
  ui.progress.setAttribute("aria-valuemax", String(s.maxSteps));
  ui.step.textContent = formatProgress(s.step, s.maxSteps);
  ui.step.dataset.step = String(s.step);
  ui.step.dataset.maxSteps = String(s.maxSteps);

  // A lost kernel sends no more updates: a rate would be stale.
  showText(ui.rate, lost ? "" : formatRate(s.rate));
  // Before a run (idle, compiling) there is no time to show.
  const started = s.status !== "idle" && s.status !== "compiling";
  showText(ui.elapsed, started ? formatElapsed(s.elapsed) : "");
  const [lanes, laneStatus] = formatLanes(s.lanes, s.laneStatuses, s.laneNames);
  showText(ui.lanes, lanes);
  showText(ui.laneStatus, laneStatus);

  ui.fields.replaceChildren(
    ...s.fields.map((name) => fieldItem(name, s.latest[name], s.latestRange[name])),
  );
  showText(ui.error, s.error);

  ui.stop.dataset.mode = s.stopMode;
  ui.stop.disabled = lost || !isRunning(s.status) || s.stopping;
  ui.stop.textContent = s.stopping ? "■ Stopping…" : "■ Stop";
  ui.stop.title = lost
    ? "The kernel is gone"
    : s.stopMode === "interrupt"
      ? "Stop the run after its current chunk (interrupts the kernel, like ■; " +
        "the partial history is kept)"
      : "Stop the run after its current chunk (the partial history is kept)";
  for (const control of [ui.logY, ui.logX, ui.keep, ui.clear]) control.disabled = lost;
  const box = logYBox(s.logY, s.logCharts);
  ui.logY.checked = box.checked;
  ui.logY.indeterminate = box.indeterminate;
  // one chart of every field (no log button of its own): "log y" is offered instead
  const hint = s.logHints[""] || 0;
  ui.logY.parentElement.classList.toggle("jhw-hint", hint > 0 && !s.logY);
  ui.logY.parentElement.title = hint > 0 ? `The values span ${hint} decades` : "";
  ui.logX.checked = s.logX;
  ui.keep.checked = s.keepRuns;
}
