// Tests of the read-out's rows (run with `node --test js/`).
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  groupSeries,
  headlineLines,
  isSmoothedLine,
  readoutRows,
  runKey,
  seriesName,
} from "./readout.js";

test("names: a smoothed twin is its series; the run key drops the field", () => {
  assert.equal(isSmoothedLine("loss · run 2 · smoothed"), true);
  assert.equal(isSmoothedLine("loss · run 2"), false);
  assert.equal(seriesName("loss · run 2 · smoothed"), "loss · run 2");
  assert.equal(runKey("loss · run 2 · smoothed"), "run 2");
  assert.equal(runKey("lr · lane 3 (best) · sgd lr=0.01"), "lane 3 (best) · sgd lr=0.01");
  assert.equal(runKey("value"), "value");
});

// Three runs with smoothing on: raw lines first, then their smoothed twins (the figure's order).
const threeRuns = [
  { name: "loss · run 1", color: "red", x: 100, y: 0.5, dist: 30 },
  { name: "loss · run 2", color: "blue", x: 100, y: 0.9, dist: 2 },
  { name: "loss · run 10", color: "green", x: 101, y: 0.2, dist: 50 },
  { name: "loss · run 1 · smoothed", color: "red", x: 98, y: 0.45, dist: 25 },
  { name: "loss · run 2 · smoothed", color: "blue", x: 98, y: 0.95, dist: 4 },
  { name: "loss · run 10 · smoothed", color: "green", x: 98, y: 0.25, dist: 45 },
];

test("groupSeries: a raw line and its smoothed twin are one series", () => {
  const groups = groupSeries(threeRuns);
  assert.equal(groups.length, 3);
  assert.deepEqual(groups[0], {
    key: "loss · run 1",
    run: "run 1",
    color: "red",
    raw: { x: 100, y: 0.5 },
    smoothed: { x: 98, y: 0.45 },
    dist: 25,
  });
});

test("readoutRows: one row per run, smoothed and raw side by side, by value, highest first", () => {
  const { rows, smoothing, more } = readoutRows(threeRuns, "loss · run 2 · smoothed");
  assert.equal(smoothing, true);
  assert.equal(more, "");
  assert.deepEqual(
    rows.map((r) => [r.label, r.value, r.raw, r.step, r.current]),
    [
      ["run 2", "0.95", "0.9", "100", true],
      ["run 1", "0.45", "0.5", "100", false],
      ["run 10", "0.25", "0.2", "101", false],
    ],
  );
});

test("readoutRows: sorted by name (numbers in names in order) or by distance to the pointer", () => {
  const byName = readoutRows(threeRuns, "loss · run 1", "name").rows.map((r) => r.label);
  assert.deepEqual(byName, ["run 1", "run 2", "run 10"]);
  const near = readoutRows(threeRuns, "loss · run 1", "nearest").rows.map((r) => r.label);
  assert.deepEqual(near, ["run 2", "run 1", "run 10"]);
});

test("readoutRows: without smoothing no raw column; a value that is not finite sorts last", () => {
  const series = [
    { name: "a · run 1", color: "red", x: 5, y: Number.NaN, dist: 1 },
    { name: "b · run 1", color: "blue", x: 5, y: -1, dist: 9 },
  ];
  const { rows, smoothing } = readoutRows(series, "a · run 1");
  assert.equal(smoothing, false);
  // Two fields: the field stays in the label.
  assert.deepEqual(rows.map((r) => [r.label, r.raw]), [["b · run 1", ""], ["a · run 1", ""]]);
});

test("readoutRows: 64 lanes list the nearest few (the one under the pointer always)", () => {
  const lanes = Array.from({ length: 64 }, (_, k) => ({
    name: `x · lane ${k} · run 1`,
    color: "#000",
    x: 7,
    y: k,
    dist: Math.abs(k - 40),
  }));
  const { rows, more } = readoutRows(lanes, "x · lane 3 · run 1", "value", 8);
  assert.equal(more, "+ 56 more");
  assert.equal(rows.length, 8);
  const labels = rows.map((r) => r.label);
  assert.ok(labels.includes("lane 3 · run 1"));
  assert.deepEqual(labels.slice(0, 3), ["lane 43 · run 1", "lane 42 · run 1", "lane 41 · run 1"]);
});

test("headlineLines: the value alone, or smoothed and raw marked as such", () => {
  assert.deepEqual(headlineLines(null, "saw · run 1", 12345, 0.25), [
    "saw · run 1",
    "step 12,345",
    "value 0.25",
  ]);
  const { rows } = readoutRows(threeRuns, "loss · run 1");
  const row = rows.find((r) => r.current);
  assert.deepEqual(headlineLines(row, "loss · run 1", 100, 0.5), [
    "loss · run 1",
    "step 100",
    "smoothed 0.45 · raw 0.5",
  ]);
});
