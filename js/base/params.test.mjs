// Tests of the hyperparameter chart's read-out (run with `node --test js/`).
import assert from "node:assert/strict";
import { test } from "node:test";

import { laneKey, paramReadout } from "./params.js";

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
