// The panel's run list and its view options: one line per run the plot draws (its colour, name,
// status, steps, time and latest values, and a show/hide toggle; a sweep's lanes, each with a
// toggle, folded under it), shown once there are two or more, under the run tools: a filter
// (a regex over the names, TensorBoard's), show all and hide all; and the view options: the
// smoothing slider, "ignore outliers", "last N steps". The kernel holds the state (`runs`,
// `hidden_runs`, `run_filter`, `hidden_lanes`, `smoothing`, `ignore_outliers`, `last_steps`)
// and decides which runs the filter leaves out (each entry's `filtered`: Python's regex, one
// truth for the charts, the list and the picture); a control sends a message.
//
// Stable hooks for tests: .jhw-runs[data-count][data-shown],
// .jhw-run[data-run][data-name][data-hidden] with .jhw-run-toggle, .jhw-run-swatch,
// .jhw-run-name, .jhw-run-status, .jhw-run-steps, .jhw-run-time, .jhw-run-values, and under
// vmap .jhw-run-lanes .jhw-lane[data-lane][data-hidden] > .jhw-lane-toggle; the tools
// .jhw-run-tools with .jhw-run-filter[data-invalid], .jhw-runs-show-all, .jhw-runs-hide-all;
// .jhw-smoothing (a range input), .jhw-smoothing-value, .jhw-outliers, .jhw-all-lanes (shown
// for a sweep past LOOK.lead_lanes lanes), .jhw-last-steps;
// .jhw-run-name in the header (the latest run's name).

import { checkbox, element, showText } from "../base/dom.js";
import { LOOK } from "../base/look.js";
import {
  formatCount,
  formatDuration,
  formatValue,
  shownStatus,
  statusClass,
  statusLabel,
} from "../base/format.js";

/** The weight the slider shows, as text: "off" at 0, else two or three decimals. */
export function formatWeight(w) {
  const x = Number(w);
  if (!(x > 0)) return "off";
  return x >= 0.99 && x < 1 ? x.toFixed(3).replace(/0$/, "") : x.toFixed(2);
}

/** The texts of one run's line (`run` an entry of the `runs` trait): its status word and
 * badge class, steps, time and latest values ("loss 0.162 · lr 0.001"). */
export function runTexts(run) {
  const shown = shownStatus(run.status, run.diverged ? ["?"] : []);
  const steps = Number(run.max_steps) > 0
    ? `${formatCount(run.step)} / ${formatCount(run.max_steps)} steps`
    : `${formatCount(run.step)} steps`;
  const values = Object.entries(run.latest || {})
    .map(([name, v]) => `${name} ${formatValue(v)}`)
    .join(" · ");
  const lanes = Number(run.lanes) > 0 ? ` · ${formatCount(run.lanes)} lanes` : "";
  return {
    status: statusLabel(shown),
    statusClass: statusClass(shown),
    steps: steps + lanes,
    time: formatDuration(run.elapsed),
    values: run.lanes > 0 && values ? `median ${values}` : values,
  };
}

/** The view options' DOM (the smoothing slider, the outliers toggle), made once. */
export function buildViewOptions() {
  const smoothLabel = element("label", "jhw-smoothing-label");
  smoothLabel.title =
    "Smoothing: a debiased exponential moving average over each line (TensorBoard's); " +
    "the raw line stays, faint. 0: off";
  const smoothing = element("input", "jhw-smoothing");
  Object.assign(smoothing, { type: "range", min: "0", max: "0.99", step: "0.01", value: "0" });
  smoothing.setAttribute("aria-label", "smoothing");
  const smoothingValue = element("span", "jhw-smoothing-value", "off");
  smoothLabel.append(document.createTextNode("smooth"), smoothing, smoothingValue);
  const [outliersLabel, outliers] = checkbox("jhw-outliers", "ignore outliers");
  outliersLabel.title = "Fit each y axis to its points but those far outside their bulk (a spike)";
  // A sweep past LOOK.lead_lanes lanes: its band, median and named lanes lead, the rest faint.
  const [allLanesLabel, allLanes] = checkbox("jhw-all-lanes", "all lanes");
  allLanesLabel.title =
    "Draw every lane's line at full strength (off: the band, its median and the lanes named " +
    "best, median, worst lead; the others faint)";
  allLanesLabel.hidden = true;
  const lastLabel = element("label", "jhw-last-label");
  lastLabel.title = "Show only the last N steps (empty: every step)";
  const lastSteps = element("input", "jhw-last-steps");
  Object.assign(lastSteps, { type: "number", min: "0", step: "1", placeholder: "all" });
  lastSteps.setAttribute("aria-label", "last steps");
  lastLabel.append(document.createTextNode("last"), lastSteps, document.createTextNode("steps"));
  // The x axis, as TensorBoard's "horizontal axis": steps, relative time or the wall clock.
  const xAxisLabel = element("label", "jhw-x-axis-label");
  xAxisLabel.title = "The x axis: steps, seconds since each run's first row, or the time of day";
  const xAxis = element("select", "jhw-x-axis");
  xAxis.setAttribute("aria-label", "x axis");
  for (const [value, text] of X_AXIS_CHOICES) {
    const option = element("option", "", text);
    option.value = value;
    xAxis.append(option);
  }
  xAxisLabel.append(document.createTextNode("x"), xAxis);
  return {
    smoothLabel, smoothing, smoothingValue, outliersLabel, outliers, lastLabel, lastSteps,
    xAxisLabel, xAxis, allLanesLabel, allLanes,
  };
}

/** The x axis's choices: the `x_axis` trait's values and what the select shows. */
export const X_AXIS_CHOICES = [["step", "step"], ["relative", "relative"], ["wall", "wall"]];

/** The "last N steps" field's number: a whole number of steps >= 0, 0 for empty or invalid. */
export function lastStepsValue(text) {
  const n = Math.floor(Number(text));
  return Number.isFinite(n) && n > 0 ? n : 0;
}

/** Applies the smoothing weight, the outliers flag, the last N steps and the "all lanes"
 * toggle (`lanes`: the latest run's lane count and the flag; shown past `LOOK.lead_lanes`) to
 * the options' DOM (the slider is left alone while it is dragged: `data-editing`, set by its
 * input events; the steps field while it has the focus). */
export function updateViewOptions(
  ui, weight, ignoreOutliers, lost, lastSteps = 0, xAxis = "step", lanes = { count: 0, all: false },
) {
  if (ui.allLanes) {
    ui.allLanesLabel.hidden = !(Number(lanes.count) > LOOK.lead_lanes);
    ui.allLanes.checked = Boolean(lanes.all);
    ui.allLanes.disabled = lost;
  }
  if (document.activeElement !== ui.lastSteps) {
    ui.lastSteps.value = Number(lastSteps) > 0 ? String(lastSteps) : "";
  }
  // The last N steps are steps: a time axis shows every row (the kernel notes it under the
  // charts), so the field waits, disabled, for the step axis.
  const time = xAxis !== "step";
  ui.lastSteps.disabled = lost || time;
  ui.lastLabel.title = time
    ? "Last N steps applies to the step axis (the time axis shows every row)"
    : "Show only the last N steps (empty: every step)";
  if (ui.xAxis) {
    ui.xAxis.value = xAxis;
    ui.xAxis.disabled = lost;
  }
  if (ui.smoothing.dataset.editing !== "true") ui.smoothing.value = String(weight || 0);
  ui.smoothingValue.textContent = formatWeight(ui.smoothing.value);
  ui.outliers.checked = Boolean(ignoreOutliers);
  ui.smoothing.disabled = lost;
  ui.outliers.disabled = lost;
}

/** Why `text` is no run filter ("" when it is one, or empty): the browser's regex error. The
 * kernel applies the filter with Python's `re` and ignores an invalid one; this marks the field
 * at once as the user types (the two dialects agree on what a filter of run names uses). */
export function filterError(text) {
  if (!text) return "";
  try {
    new RegExp(text, "i");
    return "";
  } catch (e) {
    return e instanceof SyntaxError ? e.message : String(e);
  }
}

/** The run tools' DOM (the filter field, show all, hide all), made once. */
export function buildRunTools() {
  const runTools = element("div", "jhw-run-tools");
  runTools.hidden = true;
  const runFilter = element("input", "jhw-run-filter");
  Object.assign(runFilter, { type: "search", placeholder: "filter runs (regex)", spellcheck: false });
  runFilter.setAttribute("aria-label", "filter runs by a regular expression");
  const runCount = element("span", "jhw-run-count jhw-muted");
  const showAll = element("button", "jhw-runs-show-all", "show all");
  const hideAll = element("button", "jhw-runs-hide-all", "hide all");
  showAll.type = hideAll.type = "button";
  showAll.title = "Show every run the filter lists";
  hideAll.title = "Hide every run the filter lists";
  runTools.append(runFilter, runCount, showAll, hideAll);
  return { runTools, runFilter, runCount, showAll, hideAll };
}

/** Applies the runs (the trait) and the filter's text to the tools: shown with the list (two
 * runs or more), the field left alone while it has the focus, marked invalid with the error as
 * its title, "2 of 4" while the filter leaves runs out. */
export function updateRunTools(ui, runs, filterText, lost) {
  const all = Array.isArray(runs) ? runs : [];
  ui.runTools.hidden = all.length < 2;
  if (document.activeElement !== ui.runFilter) ui.runFilter.value = filterText || "";
  const error = filterError(ui.runFilter.value);
  ui.runFilter.dataset.invalid = String(Boolean(error));
  ui.runFilter.title = error
    ? `Not a regular expression, not applied: ${error}`
    : "Show only the runs whose names match this regular expression (case-insensitive)";
  const listed = all.filter((run) => !run.filtered).length;
  showText(ui.runCount, listed < all.length ? `${listed} of ${all.length}` : "");
  for (const control of [ui.runFilter, ui.showAll, ui.hideAll]) control.disabled = lost;
  ui.showAll.disabled = lost || !all.some((run) => !run.filtered && run.hidden);
  ui.hideAll.disabled = lost || !all.some((run) => !run.filtered && !run.hidden);
}

/** A sweep's drawn lanes, each with a toggle, folded under its run's line (`open`: unfolded). */
function laneList(run, onLane, open) {
  const lanes = run.drawn;
  const off = lanes.filter((lane) => lane[2]).length;
  const box = element("details", "jhw-run-lanes");
  box.open = open;
  box.dataset.run = String(run.number);
  const more = Number(run.lanes) > lanes.length ? ` of ${formatCount(run.lanes)}` : "";
  const hidden = off ? ` · ${off} hidden` : "";
  const items = element("div", "jhw-lane-list");
  box.append(element("summary", "jhw-muted", `${lanes.length}${more} lanes drawn${hidden}`), items);
  for (const [lane, name, isHidden] of lanes) {
    const [label, toggle] = checkbox("jhw-lane-toggle", name);
    label.className = "jhw-lane";
    label.dataset.lane = String(lane);
    label.dataset.hidden = String(Boolean(isHidden));
    toggle.checked = !isHidden;
    toggle.title = isHidden ? `Show ${name}` : `Hide ${name}`;
    toggle.addEventListener("change", () => onLane(run.number, lane, !toggle.checked));
    items.append(label);
  }
  return box;
}

function runLine(run, onToggle) {
  const texts = runTexts(run);
  const row = element("div", "jhw-run");
  row.dataset.run = String(run.number);
  row.dataset.name = run.name;
  row.dataset.hidden = String(Boolean(run.hidden));
  const toggle = element("input", "jhw-run-toggle");
  toggle.type = "checkbox";
  toggle.checked = !run.hidden;
  toggle.title = run.hidden ? `Show ${run.name}` : `Hide ${run.name}`;
  toggle.setAttribute("aria-label", `show ${run.name}`);
  toggle.addEventListener("change", () => onToggle(run.number, !toggle.checked));
  const swatch = element("span", "jhw-run-swatch");
  swatch.style.background = run.color;
  const name = element("span", "jhw-run-name", run.name);
  name.title = run.name;
  const status = element("span", `jhw-run-status ${texts.statusClass}`, texts.status);
  row.append(
    toggle,
    swatch,
    name,
    status,
    element("span", "jhw-run-steps jhw-muted", texts.steps),
    element("span", "jhw-run-time jhw-muted", texts.time),
    element("span", "jhw-run-values", texts.values),
  );
  return row;
}

/** Fills the run list `list` with `runs` (the trait), hidden below two runs, listing those the
 * filter shows; `onToggle(number, hidden)` is called when a run's toggle is clicked,
 * `onLane(number, lane, hidden)` when a lane's. Rebuilt only when something it shows changed
 * (an update of the running run changes its line); a sweep's lanes stay unfolded across it. */
export function updateRunList(list, runs, onToggle, lost, onLane = () => {}) {
  const key = JSON.stringify([runs, lost]);
  if (list.dataset.key === key) return;
  list.dataset.key = key;
  const shown = Array.isArray(runs) && runs.length >= 2;
  const listed = shown ? runs.filter((run) => !run.filtered) : [];
  list.hidden = !shown;
  list.dataset.count = String(shown ? runs.length : 0);
  list.dataset.shown = String(listed.length);
  const open = new Set(
    [...list.querySelectorAll(".jhw-run-lanes[open]")].map((node) => node.dataset.run),
  );
  const rows = listed.map((run) => {
    const row = runLine(run, onToggle);
    if (Array.isArray(run.drawn) && run.drawn.length) {
      row.append(laneList(run, onLane, open.has(String(run.number))));
    }
    for (const toggle of row.querySelectorAll("input")) toggle.disabled = lost;
    return row;
  });
  list.replaceChildren(...rows);
}

/** The header's name of the latest run (`runs`' last entry), or nothing before a run. */
export function updateRunName(node, runs) {
  const last = Array.isArray(runs) && runs.length ? runs[runs.length - 1] : null;
  showText(node, last ? last.name : "");
  if (last) node.style.setProperty("--jhw-run-color", last.color);
}
