// Tests of the hyperparameter chart's read-out (run with `node --test js/`).
import assert from "node:assert/strict";
import { test } from "node:test";

import { laneKey, laneLine, paramReadout, paramTools, readLaneLines } from "./params.js";

test("a lane is one whatever roles it is drawn for", () => {
  assert.equal(laneKey("lr=0.1 (best, median) · run 1"), "lr=0.1 · run 1");
  assert.equal(laneKey("lr=0.1 · run 1"), "lr=0.1 · run 1");
  assert.equal(laneKey("adam (2)"), "adam (2)"); // a run's own name keeps its parentheses
});

test("a point of a hyperparameter chart reads out its lane, parameter and values", () => {
  const lanes = {
    "loss vs lr": { run: "run 1", param: "lr", field: "loss", names: ["lr=0.01", "lr=0.1"] },
  };
  const out = paramReadout(lanes, "loss vs lr", 1, 0.1, 0.0042, 0.0031);
  assert.deepEqual(out, {
    key: "lr=0.1 · run 1",
    lines: ["lr=0.1", "lr 0.1", "loss last 0.0042 · best 0.0031"],
  });
  assert.equal(paramReadout(lanes, "loss vs lr", 2, 1, 1, 1), null); // no such point
  assert.equal(paramReadout({}, "loss vs lr", 0, 1, 1, 1), null);
});

test("a point's lane is named for the kernel to draw it while pointed at", () => {
  const lanes = {
    "loss vs lr": {
      run: "run 1", number: 3, param: "lr", field: "loss", names: ["lr=0.01", "lr=0.1"],
      lanes: [7, 2],
    },
  };
  assert.deepEqual(paramReadout(lanes, "loss vs lr", 1, 0.1, 1, 1).lane, [3, 2]);
  delete lanes["loss vs lr"].number; // an older kernel: no lane to ask for
  assert.equal(paramReadout(lanes, "loss vs lr", 1, 0.1, 1, 1).lane, undefined);
});

test("a hyperparameter chart's tools: the fields it may rank and its best toggle", () => {
  const lanes = { "acc vs lr": { field: "acc", fields: ["loss", "acc"], best: "max" } };
  const tools = paramTools(lanes, "acc vs lr");
  assert.deepEqual(tools.fields, ["loss", "acc"]);
  assert.equal(tools.field, "acc");
  assert.equal(tools.text, "best ↑");
  assert.equal(tools.next, "min");
  assert.match(tools.tip, /best acc is its highest/);
  lanes["acc vs lr"].best = "min";
  assert.equal(paramTools(lanes, "acc vs lr").text, "best ↓");
  assert.equal(paramTools(lanes, "acc vs lr").next, "max");
  assert.equal(paramTools(lanes, "loss"), null); // no hyperparameter chart
  assert.deepEqual(paramTools({ t: { field: "loss" } }, "t").fields, ["loss"]);
  // the goal is the plot's: its select and toggle on the first hyperparameter chart only
  assert.equal(paramTools({ t: { field: "loss", tools: false } }, "t"), null);
  assert.notEqual(paramTools({ t: { field: "loss", tools: true } }, "t"), null);
});

test("every lane's line, as the kernel sends it, read back one lane at a time", () => {
  const y = new Float32Array([1, 2, 3, 4, NaN, 6, 7, 8, 9, 10, 11, 12]); // 2 fields, 2 lanes, 3 rows
  const content = { jhw_lane_lines: 1, fields: ["loss", "r2"], charts: ["loss", "r2"], lanes: 2, x: [0, 5, 10] };
  const lines = readLaneLines(content, [new DataView(y.buffer)]);
  assert.equal(lines.number, 1);
  assert.deepEqual(laneLine(lines, 0, 1), [[0, 4], [10, 6]]); // its NaN (no row) left out
  assert.deepEqual(laneLine(lines, 1, 0), [[0, 7], [5, 8], [10, 9]]);
  assert.deepEqual(laneLine(lines, 0, 2), []); // no such lane
  assert.equal(readLaneLines({ jhw_lane_lines: 1, fields: [] }, []), null); // none to draw
  assert.equal(readLaneLines({ jhw_download: 1 }, []), null); // another message
});
