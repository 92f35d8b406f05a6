// Tests of the zoom's arithmetic (run with `node --test js/`).
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  dragRange,
  inArea,
  panRange,
  rangeLabel,
  sameRange,
  selectionBox,
  zoomChip,
} from "./zoom_range.js";

// A plot area from client x 100 to 600 showing steps 0..100,000 (200 steps a pixel).
const area = { left: 100, right: 600, top: 50, bottom: 350 };
const linear = (x) => ((x - 100) / 500) * 100_000;
// The same area on a log axis from step 1 to 10^5 (a decade per 100 px).
const log = (x) => 10 ** ((x - 100) / 100);

test("a drag selects the whole steps under it, either way, held within the plot", () => {
  const axis = { area, toStep: linear };
  assert.deepEqual(dragRange(200, 300, axis), [20_000, 40_000]);
  assert.deepEqual(dragRange(300, 200, axis), [20_000, 40_000]); // right to left
  assert.deepEqual(dragRange(200.3, 250.1, axis), [20_060, 30_020]); // floored, ceiled
  assert.deepEqual(dragRange(550, 900, axis), [90_000, 100_000]); // past the right end
  assert.deepEqual(dragRange(20, 110, axis), [0, 2000]); // past the left end
  assert.deepEqual(dragRange(300, 400, { area, toStep: log }), [100, 1000]);
});

test("a drag's start reads the axis as pressed on, its end the axis as let go", () => {
  // The plot moved 8 px left meanwhile (a scrollbar came): the start keeps its step.
  const moved = { area: { ...area, left: 92, right: 592 }, toStep: (x) => linear(x + 8) };
  assert.deepEqual(dragRange(200, 300, { area, toStep: linear }, moved), [20_000, 41_600]);
  assert.equal(dragRange(200, 204, { area, toStep: linear }, moved), null); // 4 px: a click
});

test("a click or a drag of a few pixels is no zoom, nor one on an axis of no steps", () => {
  const axis = { area, toStep: linear };
  assert.equal(dragRange(200, 200, axis), null);
  assert.equal(dragRange(200, 204, axis), null); // a double-click's press
  assert.deepEqual(dragRange(200, 205, axis), [20_000, 21_000]);
  assert.equal(dragRange(650, 700, axis), null); // wholly right of the plot
  const few = (x) => (x - 100) / 1000; // half a step over the whole plot: one step at least
  assert.deepEqual(dragRange(120, 140, { area, toStep: few }), [0, 1]);
  assert.equal(dragRange(120, 140, { area, toStep: () => NaN }), null); // not drawn yet
});

test("a pan moves the shown steps by the pixels dragged, and stops at step 0", () => {
  // zoomed to 20,000..40,000 over 500 px: 40 steps a pixel
  const zoomed = (x) => 20_000 + ((x - 100) / 500) * 20_000;
  assert.deepEqual(panRange(area, -50, zoomed), [22_000, 42_000]); // lines dragged left: later
  assert.deepEqual(panRange(area, 50, zoomed), [18_000, 38_000]);
  assert.deepEqual(panRange(area, 1000, zoomed), [0, 20_000]); // past step 0: the width stays
  assert.deepEqual(panRange(area, 100, log, 1), [1, 10_001]); // a decade left, from step 1
  assert.equal(panRange(area, 0, () => NaN), null);
});

test("the selection rectangle spans the plot's height, placed in its box", () => {
  const frame = { left: 40, top: 10, clientLeft: 1, clientTop: 1 };
  assert.deepEqual(selectionBox(300, 200, area, frame), { left: 159, top: 39, width: 100, height: 300 });
  assert.deepEqual(selectionBox(50, 700, area, frame).width, 500);
  assert.ok(inArea({ x: 100, y: 350 }, area) && !inArea({ x: 99, y: 200 }, area));
});

test("the zoom chip says the steps shown, or those asked for while the kernel is busy", () => {
  assert.deepEqual(zoomChip([], null), { hidden: true, text: "", waiting: false, range: null });
  assert.deepEqual(zoomChip([1200, 2200], null), {
    hidden: false, text: "steps 1,200–2,200", waiting: false, range: [1200, 2200],
  });
  // asked for, not yet applied (a normal cell holds the kernel)
  const asked = zoomChip([], { range: [1200, 2200] });
  assert.equal(asked.text, "steps 1,200–2,200");
  assert.ok(asked.waiting);
  assert.ok(!zoomChip([1200, 2200], { range: [1200, 2200] }).waiting); // applied
  const out = zoomChip([1200, 2200], { range: null }); // a double-click on its way
  assert.deepEqual([out.text, out.waiting, out.hidden], ["every step", true, false]);
  assert.equal(rangeLabel([20_000, 40_000]), "20,000–40,000");
  assert.ok(sameRange([], null) && sameRange([1, 2], [1, 2]) && !sameRange([1, 2], [1, 3]));
  assert.ok(!sameRange([1, 2], null));
});
