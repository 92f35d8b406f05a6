// Tests of the pure helpers of panel.js (run with `node --test js/`).
import assert from "node:assert/strict";
import { test } from "node:test";

import panel, {
  formatCount,
  formatDuration,
  formatProgress,
  formatRate,
  formatValue,
  isRunning,
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

test("formatCount groups thousands", () => {
  assert.equal(formatCount(0), "0");
  assert.equal(formatCount(999), "999");
  assert.equal(formatCount(1000), "1,000");
  assert.equal(formatCount(1234567), "1,234,567");
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

test("formatRate scales with suffixes", () => {
  assert.equal(formatRate(0), "– steps/s");
  assert.equal(formatRate(NaN), "– steps/s");
  assert.equal(formatRate(0.25), "0.25 steps/s");
  assert.equal(formatRate(7.26), "7.3 steps/s");
  assert.equal(formatRate(850.4), "850 steps/s");
  assert.equal(formatRate(12345), "12.3k steps/s");
  assert.equal(formatRate(4.1e6), "4.1M steps/s");
});
