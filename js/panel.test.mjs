// Tests of the pure helpers of panel.js (run with `node --test js/`).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import panel, {
  BqplotMismatch,
  bisectX,
  bqplot,
  formatCount,
  formatDuration,
  formatElapsed,
  formatLanes,
  formatLatest,
  formatNumber,
  formatProgress,
  formatReadout,
  formatRate,
  formatValue,
  isRunning,
  kernelLostLabel,
  laneSummary,
  nearestOnLines,
  nearestPoint,
  progressClass,
  progressFraction,
  readoutLines,
  readoutPlacement,
  STATUS_LABELS,
  shownStatus,
  statusClass,
  statusLabel,
  statusTitle,
  widthToReport,
} from "./panel.js";

test("default export is an anywidget module with render()", () => {
  assert.equal(typeof panel.render, "function");
});

test("statusLabel covers every Python status and passes unknown ones through", () => {
  for (const s of ["idle", "compiling", "running", "converged", "max_steps", "stopped", "error"]) {
    assert.ok(Object.hasOwn(STATUS_LABELS, s), s);
  }
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
  const js = readFileSync(new URL("./panel.js", import.meta.url), "utf8");
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

test("bisectX finds the first point at or after x (repeated x: the first of them)", () => {
  const values = [0, 1, 1, 1, 5, 9].map((x) => ({ x, y: 0 }));
  assert.equal(bisectX(values, -3), 0);
  assert.equal(bisectX(values, 1), 1);
  assert.equal(bisectX(values, 1.5), 4);
  assert.equal(bisectX(values, 9), 5);
  assert.equal(bisectX(values, 10), 6);
  assert.equal(bisectX([], 1), 0);
});

// Pixels = 10 per step in x, y upwards: y pixel = 100 - 10 * value.
const xPx = (x) => 10 * x;
const yPx = (y) => 100 - 10 * y;
const xData = (px) => px / 10;

test("nearestPoint: the vertex nearest to the pointer within the radius, else null", () => {
  const values = [0, 1, 2, 3, 4].map((x) => ({ x, y: x % 2 ? 5 : 0 }));
  const hit = nearestPoint(values, 21, 99, xPx, yPx, xData, 12);
  assert.equal(hit.index, 2);
  assert.equal(values[hit.index].x, 2);
  assert.ok(Math.abs(hit.dist - Math.hypot(1, 1)) < 1e-12);
  assert.deepEqual([hit.px, hit.py], [20, 100]);
  // Same x column, but the pointer is at the top: point 3 (value 5, y px 50) is nearer.
  assert.equal(nearestPoint(values, 28, 52, xPx, yPx, xData, 12).index, 3);
  // Far from every vertex.
  assert.equal(nearestPoint(values, 25, 0, xPx, yPx, xData, 12), null);
  assert.equal(nearestPoint(values, 200, 100, xPx, yPx, xData, 12), null);
  assert.equal(nearestPoint([], 0, 0, xPx, yPx, xData, 12), null);
});

test("nearestPoint skips points that are not drawn (NaN, null, <= 0 on a log axis)", () => {
  const values = [
    { x: 0, y: NaN },
    { x: 1, y: null },
    { x: 2, y: 1 },
  ];
  assert.equal(nearestPoint(values, 0, 100, xPx, yPx, xData, 30).index, 2);
  const logY = (y) => (y > 0 ? 100 - 10 * Math.log10(y) : NaN);
  const logValues = [
    { x: 0, y: 0 },
    { x: 1, y: 10 },
  ];
  assert.equal(nearestPoint(logValues, 0, 100, xPx, logY, xData, 30).index, 1);
});

test("nearestPoint visits only the points near the pointer in x", () => {
  let reads = 0;
  const values = Array.from({ length: 100_000 }, (_, k) => ({
    get x() {
      reads += 1;
      return k;
    },
    y: 0,
  }));
  assert.equal(nearestPoint(values, 50_000, 100, (x) => x, yPx, (p) => p, 3).index, 50_000);
  // a bisection (17 reads) and the 7 points within 3 px, plus the one that ends the walk
  assert.ok(reads <= 17 + 8, `${reads} points read`);
});

test("readoutLines: the line's name, the step and the value", () => {
  assert.deepEqual(readoutLines("loss · lr=0.010 · run 2", 12345, 0.000123456789), [
    "loss · lr=0.010 · run 2",
    "step 12,345",
    "value 0.000123457",
  ]);
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

// Two lines sharing one frame, client pixels = line pixels + (100, 200).
const frame = (lines) => ({
  lines,
  xPx,
  yPx,
  xData,
  toLocal: (x, y) => ({ x: x - 100, y: y - 200 }),
  toClient: (x, y) => ({ x: x + 100, y: y + 200 }),
});

test("nearestOnLines: the nearest drawn point over every line, in client pixels", () => {
  const flat = { name: "loss · run 1", color: "red", values: [0, 1, 2].map((x) => ({ x, y: 0 })) };
  const high = { name: "acc · run 1", color: "blue", values: [0, 1, 2].map((x) => ({ x, y: 5 })) };
  const sets = [frame([flat]), frame([high])];
  // (10, 95) in line pixels: step 1 of `flat` (y px 100) is 5 px away, of `high` 45 px.
  assert.deepEqual(nearestOnLines(sets, 110, 295, 12), {
    name: "loss · run 1",
    color: "red",
    x: 1,
    y: 0,
    at: { x: 110, y: 300 },
  });
  assert.equal(nearestOnLines(sets, 110, 255, 12).name, "acc · run 1");
  assert.equal(nearestOnLines(sets, 110, 275, 12), null); // 25 px from both
  assert.equal(nearestOnLines([], 0, 0, 12), null);
});

test("readoutPlacement: beside the point, inside the box", () => {
  assert.deepEqual(readoutPlacement(100, 100, 80, 40, 500, 300), { left: 112, top: 52 });
  // too close to the right edge: left of the point
  assert.deepEqual(readoutPlacement(450, 100, 80, 40, 500, 300), { left: 358, top: 52 });
  // near the top: not above the box; a box narrower than the read-out: at its left edge
  assert.deepEqual(readoutPlacement(10, 20, 80, 40, 60, 300), { left: 0, top: 0 });
  // a box lower than the read-out
  assert.deepEqual(readoutPlacement(10, 20, 20, 40, 200, 30), { left: 22, top: 0 });
});

// Fakes of bqplot's front end, shaped as bqplot 0.13.1 has them (see `bqplot` in panel.js).
function fakeScale(k, offset = 0) {
  const scale = (x) => k * x;
  scale.invert = (px) => px / k;
  return { scale, offset };
}
const identity = { a: 1, b: 0, c: 0, d: 1, e: 0, f: 0 };
function fakeMark({ scales, markData, ctm = identity, drawn = true } = {}) {
  const matrix = ctm && { ...ctm, inverse: () => ({ ...ctm, e: -ctm.e, f: -ctm.f }) };
  return {
    scales: scales === undefined ? { x: fakeScale(10, 5), y: fakeScale(-10, 100) } : scales,
    model: {
      mark_data: markData === undefined ? [{ name: "loss", index: 1, values: [{ x: 2, y: 3 }] }]
        : markData,
      get: (name) => (name === "colors" ? ["red", "green"] : undefined),
    },
    el: {
      getScreenCTM: () => matrix,
      querySelector: (sel) => (drawn && sel === "path.line" ? {} : null),
    },
  };
}
const fakeFigureView = (marks, drawn = true) => ({
  el: { querySelector: (sel) => (drawn && sel === "path.line" ? {} : null) },
  mark_views: marks && { views: marks.map((m) => Promise.resolve(m)) },
});

test("bqplot adapter: reads lines, scales and frame of a figure view", async () => {
  const translated = { ...identity, e: 100, f: 200 };
  const [set] = await bqplot.lineSets(fakeFigureView([fakeMark({ ctm: translated })]));
  assert.deepEqual(set.lines, [{ name: "loss", color: "green", values: [{ x: 2, y: 3 }] }]);
  assert.equal(set.xPx(2), 25); // scale + offset, as bqplot's Lines draws
  assert.equal(set.yPx(3), 70);
  assert.equal(set.xData(25), 2);
  assert.deepEqual(set.toLocal(125, 270), { x: 25, y: 70 });
  assert.deepEqual(set.toClient(25, 70), { x: 125, y: 270 });
  const hit = nearestOnLines([set], 126, 271, 12);
  assert.deepEqual([hit.name, hit.x, hit.y, hit.at], ["loss", 2, 3, { x: 125, y: 270 }]);
});

test("bqplot adapter: a figure still being drawn gives nothing, without an error", async () => {
  assert.deepEqual(await bqplot.lineSets(fakeFigureView(null, false)), []);
  const pending = fakeMark({ scales: null, drawn: false });
  const hidden = fakeMark({ ctm: null });
  assert.deepEqual(await bqplot.lineSets(fakeFigureView([pending, hidden])), []);
});

test("bqplot adapter: internals not as expected throw BqplotMismatch", async () => {
  const broken = {
    "drawn figure without mark_views": fakeFigureView(null, true),
    "mark_views without a views list": { el: fakeFigureView([]).el, mark_views: {} },
    "drawn mark without scales": fakeFigureView([fakeMark({ scales: null })]),
    "scale without invert": fakeFigureView([
      fakeMark({ scales: { x: { scale: (x) => x, offset: 0 }, y: fakeScale(1) } }),
    ]),
    "scale without offset": fakeFigureView([
      fakeMark({ scales: { x: { scale: fakeScale(1).scale }, y: fakeScale(1) } }),
    ]),
    "no mark_data": fakeFigureView([fakeMark({ markData: null })]),
    "points not {x, y}": fakeFigureView([fakeMark({ markData: [{ values: [[1, 2]] }] })]),
    "lines without values": fakeFigureView([fakeMark({ markData: [{ x: [1], y: [2] }] })]),
  };
  for (const [what, view] of Object.entries(broken)) {
    await assert.rejects(bqplot.lineSets(view), BqplotMismatch, what);
  }
});

test("bqplot adapter: finds the figure's view in the box", async () => {
  const inBox = { el: "in" };
  const elsewhere = { el: "out" };
  const box = { contains: (el) => el === "in" };
  const figure = { views: { a: Promise.resolve(elsewhere), b: Promise.resolve(inBox) } };
  const manager = { get_model: async (id) => (id === "f1" ? figure : undefined) };
  assert.equal(await bqplot.figureView(manager, "IPY_MODEL_f1", box), inBox);
  assert.equal(await bqplot.figureView(manager, "IPY_MODEL_gone", box), null);
  assert.equal(await bqplot.figureView(manager, null, box), null);
  assert.equal(await bqplot.figureView(undefined, "IPY_MODEL_f1", box), null);
  const noViews = { get_model: async () => ({}) };
  await assert.rejects(bqplot.figureView(noViews, "IPY_MODEL_f1", box), BqplotMismatch);
});

test("the styles are in panel.css, not in the module", () => {
  const css = readFileSync(new URL("./panel.css", import.meta.url), "utf8");
  const js = readFileSync(new URL("./panel.js", import.meta.url), "utf8");
  for (const selector of [".jhw-panel {", ".jhw-liveplot {", ".jhw-hover {", ".jhw-hover-dot {"]) {
    assert.ok(css.includes(selector), selector);
  }
  assert.equal(css.split("{").length, css.split("}").length, "unbalanced braces");
  assert.ok(!js.includes('element("style")') && !js.includes("border-radius"));
});
