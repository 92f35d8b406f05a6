// Tests of the run list's texts and the smoothing weight's label (run with `node --test js/`).
import assert from "node:assert/strict";
import { test } from "node:test";

import { filterError, formatWeight, lastStepsValue, runTexts } from "./runs.js";

test("a run's line says its status, steps, time and latest values as the panel does", () => {
  const run = {
    number: 2, name: "adam", color: "#3a78c4", status: "converged", diverged: false,
    step: 651, max_steps: 2000, elapsed: 1.234, lanes: 0, latest: { loss: 0.16234, lr: 0.001 },
    hidden: false,
  };
  assert.deepEqual(runTexts(run), {
    status: "finished",
    statusClass: "jhw-status--converged",
    steps: "651 / 2,000 steps",
    time: "1.23 s",
    values: "loss 0.1623 · lr 0.001",
  });
  const swept = { ...run, status: "running", diverged: true, lanes: 64, latest: { loss: "nan" } };
  const texts = runTexts(swept);
  assert.equal(texts.status, "diverged"); // a NaN latest value, as the badge says it
  assert.equal(texts.steps, "651 / 2,000 steps · 64 lanes");
  assert.equal(texts.values, "median loss NaN");
  assert.equal(runTexts({ ...run, status: "error", diverged: true }).status, "error");
});

test("the smoothing weight reads off at 0, else with its decimals", () => {
  assert.equal(formatWeight(0), "off");
  assert.equal(formatWeight("0"), "off");
  assert.equal(formatWeight(0.6), "0.60");
  assert.equal(formatWeight(0.99), "0.99");
  assert.equal(formatWeight(0.995), "0.995");
});

test("the last-steps field reads a whole number of steps, 0 for every step", () => {
  assert.equal(lastStepsValue("500"), 500);
  assert.equal(lastStepsValue("12.7"), 12);
  for (const text of ["", "0", "-3", "abc"]) assert.equal(lastStepsValue(text), 0, text);
});

test("the run filter is marked invalid only when it is no regular expression", () => {
  for (const text of ["", "adam", "^AD", "lr=0\\.1$", "adam|sgd", "(?:adam)"]) {
    assert.equal(filterError(text), "", text);
  }
  for (const text of ["adam(", "[lr", "*", "a{2,1}"]) assert.notEqual(filterError(text), "", text);
});
