// Tests of the status words and number formats (run with `node --test js/`).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { LOOK } from "./look.js";

import {
  formatAxisTime,
  formatCount,
  formatDuration,
  formatElapsed,
  formatLanes,
  formatLatest,
  formatNumber,
  formatProgress,
  formatRate,
  formatReadout,
  formatValue,
  isRunning,
  kernelLostLabel,
  laneSummary,
  logButton,
  logYBox,
  progressClass,
  progressFraction,
  shownStatus,
  STATUS_LABELS,
  statusClass,
  statusLabel,
  statusTitle,
  stepAtTime,
  timeReadout,
  widthToReport,
} from "./format.js";

test("statusLabel covers every status the look table colours and passes unknown ones through", () => {
  // (tests/ui/look checks the table against Python's statuses, spelled once in _wire.STATUSES)
  const statuses = Object.keys(LOOK.status.badge_colors).filter((s) => s !== "unknown");
  assert.ok(statuses.length >= 9);
  for (const s of statuses) assert.ok(Object.hasOwn(STATUS_LABELS, s), s);
  assert.equal(statusLabel("max_steps"), "max steps");
  assert.equal(statusLabel("running"), "running");
  assert.equal(statusLabel("weird"), "weird");
  assert.equal(statusLabel(undefined), "");
});

test("a loop whose cond became False is 'finished', not 'converged'", () => {
  // cond == False may be a tolerance, a fixed schedule or a counter: the panel cannot know.
  assert.equal(statusLabel("converged"), "finished");
  assert.equal(statusLabel("compiling"), "compiling");
  assert.equal(statusTitle("converged", []), "The loop's condition became False");
});

test("shownStatus: NaN/inf latest values read 'diverged' (a warning), never over an error", () => {
  for (const s of ["running", "converged", "max_steps", "stopped"]) {
    assert.equal(shownStatus(s, ["loss"]), "diverged");
    assert.equal(shownStatus(s, []), s);
  }
  for (const s of ["error", "idle", "compiling"]) assert.equal(shownStatus(s, ["loss"]), s);
  assert.equal(shownStatus("converged", undefined), "converged");
  assert.equal(statusLabel("diverged"), "diverged");
  assert.equal(statusClass("diverged"), "jhw-status--diverged");
  assert.equal(progressClass("diverged"), "jhw-progress-bar jhw-progress-bar--diverged");
  assert.match(statusTitle("diverged", ["loss", "lr"]), /NaN or infinite: loss, lr$/);
});

test("statusClass maps to CSS-safe class names", () => {
  assert.equal(statusClass("max_steps"), "jhw-status--max-steps");
  assert.equal(statusClass("error"), "jhw-status--error");
  assert.equal(statusClass("toString"), "jhw-status--unknown"); // no prototype leaks
  assert.equal(statusClass(null), "jhw-status--unknown");
});

test("isRunning: only 'running' enables Stop", () => {
  assert.equal(isRunning("running"), true);
  const ended = ["idle", "compiling", "converged", "max_steps", "stopped", "error", undefined];
  for (const s of ended) {
    assert.equal(isRunning(s), false);
  }
});

test("progressFraction clamps and guards max_steps <= 0", () => {
  assert.equal(progressFraction(0, 10), 0);
  assert.equal(progressFraction(5, 10), 0.5);
  assert.equal(progressFraction(10, 10), 1);
  assert.equal(progressFraction(12, 10), 1);
  assert.equal(progressFraction(-1, 10), 0);
  assert.equal(progressFraction(5, 0), 0);
  assert.equal(progressFraction(NaN, 10), 0);
  assert.equal(progressFraction("3", "4"), 0.75);
});

test("progressFraction: a finished run is complete whatever its step", () => {
  assert.equal(progressFraction(320, 1000, "converged"), 1);
  assert.equal(progressFraction(320, 1000, "stopped"), 0.32);
  assert.equal(progressFraction(320, 1000, "running"), 0.32);
});

test("progressClass colours the bar by how the run ended", () => {
  assert.equal(progressClass("running"), "jhw-progress-bar jhw-progress-bar--running");
  assert.equal(progressClass("converged"), "jhw-progress-bar jhw-progress-bar--converged");
  assert.equal(progressClass("max_steps"), "jhw-progress-bar jhw-progress-bar--max-steps");
  assert.equal(progressClass("error"), "jhw-progress-bar jhw-progress-bar--error");
  assert.equal(progressClass("bogus"), "jhw-progress-bar jhw-progress-bar--unknown");
});

test("formatNumber: one rule for counts and rates", () => {
  assert.equal(formatNumber(0), "0");
  assert.equal(formatNumber(1074.4), "1,074");
  assert.equal(formatNumber(11300), "11,300");
  assert.equal(formatNumber(20000), "20,000");
  assert.equal(formatNumber(999999), "999,999");
  assert.equal(formatNumber(999999.7), "1M"); // rounds up into the next unit
  assert.equal(formatNumber(1234567), "1.23M");
  assert.equal(formatNumber(45.6e9), "45.6B");
  assert.equal(formatNumber(4.26), "4.3");
  assert.equal(formatNumber(0.4217), "0.42");
  assert.equal(formatNumber(7), "7");
  assert.equal(formatNumber(-4200), "-4,200");
  assert.equal(formatNumber(NaN), "–");
});

test("elapsed time and rate are labelled; there is no ETA (the loop's end is its cond's)", () => {
  assert.equal(formatElapsed(0.0712), "elapsed 0.07 s");
  assert.equal(formatElapsed(125), "elapsed 2 m 05 s");
  assert.equal(formatRate(1074.4), "rate 1,074 steps/s");
  assert.equal(formatRate(0), "");
  const js = ["./format.js", "../panel/panel_dom.js"]
    .map((path) => readFileSync(new URL(path, import.meta.url), "utf8"))
    .join("\n");
  assert.ok(!js.includes("jhw-eta") && !js.includes(" left`"), "an ETA is back");
});

test("lanes and their latest values are labelled", () => {
  assert.deepEqual(formatLanes(6, {}), ["6 lanes", ""]);
  assert.deepEqual(formatLanes(64, { converged: 61, max_steps: 3 }), [
    "64 lanes:",
    "61 finished · 3 max steps",
  ]);
  assert.deepEqual(formatLanes(0, { converged: 1 }), ["", ""]);
  assert.equal(
    formatLatest(0.067, [0.0216, 0.2389]),
    "median 0.067 (min–max 0.0216 … 0.2389)",
  );
  assert.equal(formatLatest(0.067, undefined), "0.067");
});

test("widthToReport: the figure's width once laid out, not on every pixel of a resize", () => {
  assert.equal(widthToReport(0, 1398.6), 1399);
  assert.equal(widthToReport(1399, 1390), null); // under the step: no message
  assert.equal(widthToReport(1399, 600), 600);
  assert.equal(widthToReport(600, 0), null); // detached or display: none
  assert.equal(widthToReport(undefined, NaN), null);
});

test("laneSummary counts lanes per end status and names the few odd ones", () => {
  assert.equal(laneSummary({ converged: 5, max_steps: 1 }), "5 finished · 1 max steps");
  assert.equal(
    laneSummary({ max_steps: 1, converged: 5 }, { max_steps: ["lr=0.3"] }),
    "5 finished · 1 max steps (lr=0.3)",
  );
  assert.equal(laneSummary({ converged: 0, stopped: 2 }), "2 stopped");
  assert.equal(laneSummary({}), "");
  assert.equal(laneSummary(undefined), "");
});

test("kernelLostLabel: dead and restarted kernels are final, busy/idle are not", () => {
  assert.equal(kernelLostLabel("dead"), "kernel died");
  assert.equal(kernelLostLabel("autorestarting"), "kernel died");
  assert.equal(kernelLostLabel("restarting"), "kernel restarted");
  for (const s of ["idle", "busy", "starting", "unknown", undefined]) {
    assert.equal(kernelLostLabel(s), null);
  }
});

test("formatCount groups thousands", () => {
  assert.equal(formatCount(0), "0");
  assert.equal(formatCount(999), "999");
  assert.equal(formatCount(1000), "1,000");
  assert.equal(formatCount(123456), "123,456");
  assert.equal(formatCount(1234567), "1.23M");
  assert.equal(formatCount(-4200), "-4,200");
  assert.equal(formatCount(NaN), "–");
});

test("formatProgress shows step / max_steps", () => {
  assert.equal(formatProgress(1500, 100000), "1,500 / 100,000");
  assert.equal(formatProgress(3, 0), "3");
});

test("formatValue: compact, sign kept, non-finite spelled out", () => {
  assert.equal(formatValue(0), "0");
  assert.equal(formatValue(42), "42");
  assert.equal(formatValue(3.14159265), "3.142");
  assert.equal(formatValue(-0.5), "-0.5");
  assert.equal(formatValue(1234567), "1.235e6");
  assert.equal(formatValue(1e6), "1e6");
  assert.equal(formatValue(0.000123456), "1.235e-4");
  assert.equal(formatValue(-2.5e-7), "-2.5e-7");
  assert.equal(formatValue(NaN), "NaN");
  assert.equal(formatValue(Infinity), "∞");
  assert.equal(formatValue(-Infinity), "-∞");
  // what Python sends for non-finite values (JSON has none)
  assert.equal(formatValue("nan"), "NaN");
  assert.equal(formatValue("inf"), "∞");
  assert.equal(formatValue("-inf"), "-∞");
  assert.equal(formatValue(null), "–");
  assert.equal(formatValue(undefined), "–");
  assert.equal(formatValue(true), "true");
});

test("formatDuration picks a readable unit", () => {
  assert.equal(formatDuration(0), "0.00 s");
  assert.equal(formatDuration(0.4217), "0.42 s");
  assert.equal(formatDuration(12.34), "12.3 s");
  assert.equal(formatDuration(125), "2 m 05 s");
  assert.equal(formatDuration(3725), "1 h 02 m");
  assert.equal(formatDuration(-1), "–");
  assert.equal(formatDuration(NaN), "–");
});

test("formatRate: labelled, in the panel's number format; no rate shows nothing", () => {
  assert.equal(formatRate(0), ""); // a run that ended with zero steps: no "– steps/s"
  assert.equal(formatRate(NaN), "");
  assert.equal(formatRate(0.25), "rate 0.25 steps/s");
  assert.equal(formatRate(7.26), "rate 7.3 steps/s");
  assert.equal(formatRate(850.4), "rate 850 steps/s");
  assert.equal(formatRate(1074), "rate 1,074 steps/s");
  assert.equal(formatRate(12345), "rate 12,345 steps/s");
  assert.equal(formatRate(4.1e6), "rate 4.1M steps/s");
});

test("formatReadout: 6 significant digits, exponents outside [1e-4, 1e6)", () => {
  assert.equal(formatReadout(0.9755859375), "0.975586");
  assert.equal(formatReadout(1234.56789), "1234.57");
  assert.equal(formatReadout(-0.000123456789), "-0.000123457");
  assert.equal(formatReadout(1.5e-7), "1.5e-7");
  assert.equal(formatReadout(123456789), "1.23457e8");
  assert.equal(formatReadout(0), "0");
  assert.equal(formatReadout(NaN), "NaN");
  assert.equal(formatReadout(-Infinity), "-∞");
});

test("number formats: no negative zero, tiny values in exponent notation", () => {
  assert.equal(formatNumber(-0), "0");
  assert.equal(formatCount(-0.3), "0");
  assert.equal(formatDuration(-0), "0.00 s");
  assert.equal(formatNumber(4.5e-9), "4.5e-9");
  assert.equal(formatRate(2e-7), "rate 2e-7 steps/s");
  assert.equal(formatNumber(-1234567), "-1.23M");
  assert.equal(formatNumber(2.5e12), "2.5T");
  // whole numbers are shown whole; others take 4 significant digits, without grouping
  assert.equal(formatValue(12345), "12345");
  assert.equal(formatValue(12345.6), "12350");
  assert.equal(formatValue(99999.7), "100000");
  assert.equal(formatValue(-123456), "-1.235e5");
  assert.equal(formatReadout(999999.7), "1000000");
  assert.equal(formatDuration(59.96), "60.0 s");
  assert.equal(formatDuration(36_000), "10 h 00 m");
});

test("a time axis's read-out: step and time, by the run the line belongs to", () => {
  const clocks = { "run 1": [[0, 0.5, 2.0], [0, 100, 400]], "run 12": [[0, 1], [0, 10]] };
  assert.equal(stepAtTime(clocks, "loss · run 1", 1.25), 250);
  assert.equal(stepAtTime(clocks, "loss · lane 2 · run 12 · smoothed", 0.5), 5);
  assert.equal(stepAtTime(clocks, "loss · other", 1), null);
  assert.equal(timeReadout("loss · run 1", 2.0, { mode: "relative", clocks }), "step 400 · 2.00 s");
  assert.equal(timeReadout("loss · x", 75, { mode: "relative", clocks }), "time 1 m 15 s");
  assert.match(formatAxisTime(1700000000.25, "wall"), /^\d\d:\d\d:\d\d\.2$/);
});

test("a chart's log button is offered while its values span decades on a linear axis", () => {
  assert.deepEqual(logButton("loss", false, 14), {
    text: "log?",
    tip: "loss spans 14 decades: a logarithmic y axis shows them",
    hinted: true,
  });
  assert.equal(logButton("loss", true, 14).hinted, false); // already on
  assert.equal(logButton("loss", false, 0).text, "log");
});

test("the panel's log y box is never checked over a linear chart", () => {
  assert.deepEqual(logYBox(true, ["a", "b"]), { checked: true, indeterminate: false });
  assert.deepEqual(logYBox(false, ["a"]), { checked: false, indeterminate: true }); // a mix
  assert.deepEqual(logYBox(false, []), { checked: false, indeterminate: false });
});
