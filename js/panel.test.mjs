// Tests of the pure helpers of panel.js (run with `node --test js/`).
import assert from "node:assert/strict";
import { test } from "node:test";

import panel, {
  etaSeconds,
  formatCount,
  formatDuration,
  formatEta,
  formatNumber,
  formatProgress,
  formatRate,
  formatValue,
  isRunning,
  kernelLostLabel,
  laneSummary,
  progressClass,
  progressFraction,
  STATUS_LABELS,
  statusClass,
  statusLabel,
} from "./panel.js";

test("default export is an anywidget module with render()", () => {
  assert.equal(typeof panel.render, "function");
});

test("statusLabel covers every Python status and passes unknown ones through", () => {
  for (const s of ["idle", "running", "converged", "max_steps", "stopped", "error"]) {
    assert.ok(Object.hasOwn(STATUS_LABELS, s), s);
  }
  assert.equal(statusLabel("max_steps"), "max steps");
  assert.equal(statusLabel("running"), "running");
  assert.equal(statusLabel("weird"), "weird");
  assert.equal(statusLabel(undefined), "");
});

test("statusClass maps to CSS-safe class names", () => {
  assert.equal(statusClass("max_steps"), "jhw-status--max-steps");
  assert.equal(statusClass("error"), "jhw-status--error");
  assert.equal(statusClass("toString"), "jhw-status--unknown"); // no prototype leaks
  assert.equal(statusClass(null), "jhw-status--unknown");
});

test("isRunning: only 'running' enables Stop", () => {
  assert.equal(isRunning("running"), true);
  for (const s of ["idle", "converged", "max_steps", "stopped", "error", undefined]) {
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

test("progressFraction: a converged run is complete whatever its step", () => {
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

test("etaSeconds: time to max_steps at the current rate, only while running", () => {
  assert.equal(etaSeconds(1000, 21000, 1000, "running"), 20);
  assert.equal(etaSeconds(1000, 21000, 1000, "converged"), null);
  assert.equal(etaSeconds(1000, 21000, 0, "running"), null);
  assert.equal(etaSeconds(1000, 0, 1000, "running"), null);
  assert.equal(etaSeconds(21000, 21000, 1000, "running"), null);
  assert.equal(formatEta(20), "≤ 20.0 s left");
  assert.equal(formatEta(125), "≤ 2 m 05 s left");
  assert.equal(formatEta(null), "");
});

test("laneSummary counts lanes per end status and names the few odd ones", () => {
  assert.equal(laneSummary({ converged: 5, max_steps: 1 }), "5 converged · 1 max steps");
  assert.equal(
    laneSummary({ max_steps: 1, converged: 5 }, { max_steps: ["lr=0.3"] }),
    "5 converged · 1 max steps (lr=0.3)",
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

test("formatRate uses the panel's number format; no rate shows nothing", () => {
  assert.equal(formatRate(0), ""); // a run that ended with zero steps: no "– steps/s"
  assert.equal(formatRate(NaN), "");
  assert.equal(formatRate(0.25), "0.25 steps/s");
  assert.equal(formatRate(7.26), "7.3 steps/s");
  assert.equal(formatRate(850.4), "850 steps/s");
  assert.equal(formatRate(1074), "1,074 steps/s");
  assert.equal(formatRate(12345), "12,345 steps/s");
  assert.equal(formatRate(4.1e6), "4.1M steps/s");
});
