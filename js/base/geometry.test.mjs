// Tests of the hover geometry (run with `node --test js/`).
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  bisectX,
  nearestOnLines,
  nearestPoint,
  nearestStep,
  readoutLines,
  readoutPlacement,
  seriesAtStep,
} from "./geometry.js";

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
    index: 1, // of the point in its line (a hyperparameter chart's lane: params.js)
    x: 1,
    y: 0,
    at: { x: 110, y: 300 },
  });
  assert.equal(nearestOnLines(sets, 110, 255, 12).name, "acc · run 1");
  assert.equal(nearestOnLines(sets, 110, 275, 12), null); // 25 px from both
  assert.equal(nearestOnLines([], 0, 0, 12), null);
});

test("readoutPlacement: beside the point, inside the chart's area, flipped below near its top", () => {
  const area = (right, bottom, top = 0) => ({ left: 0, top, right, bottom });
  assert.deepEqual(readoutPlacement(100, 100, 80, 40, area(500, 300)), { left: 112, top: 52 });
  // too close to the right edge: left of the point
  assert.deepEqual(readoutPlacement(450, 100, 80, 40, area(500, 300)), { left: 358, top: 52 });
  // near the top: below the point; an area narrower than the read-out: at its left edge
  assert.deepEqual(readoutPlacement(10, 20, 80, 40, area(60, 300)), { left: 0, top: 32 });
  // an area lower than the read-out: at its top
  assert.deepEqual(readoutPlacement(10, 20, 20, 40, area(200, 30)), { left: 22, top: 0 });
  // a chart under the panel (its area starts at 150): never above it
  assert.deepEqual(readoutPlacement(10, 170, 20, 40, area(200, 400, 150)), { left: 22, top: 182 });
  // no room below either: as low as the area lets it, not over the panel
  assert.deepEqual(readoutPlacement(10, 170, 20, 40, area(200, 200, 150)), { left: 22, top: 160 });
});

test("seriesAtStep: every line's point at the step, none for a line that ended before it", () => {
  const line = (name, n, y) => ({
    name,
    color: name,
    values: Array.from({ length: n }, (_, x) => ({ x, y: y(x) })),
  });
  const set = frame([line("a", 10, (x) => x), line("b", 10, (x) => -x), line("c", 3, () => 7)]);
  // xPx maps step 1 to 10 px: step 6 is 60 px; "c" ends at step 2 (20 px), 40 px away
  assert.deepEqual(seriesAtStep([set], 6, 12), [
    { name: "a", color: "a", x: 6, y: 6 },
    { name: "b", color: "b", x: 6, y: -6 },
  ]);
  assert.deepEqual(
    seriesAtStep([set], 2, 12).map((s) => s.name),
    ["a", "b", "c"],
  );
  assert.deepEqual(seriesAtStep([], 2, 12), []);
  // With the pointer (client (160, 150): line pixels (60, -50)): each point's height from it.
  const dists = seriesAtStep([set], 6, 12, { x: 160, y: 150 }).map((s) => s.dist);
  assert.deepEqual(dists, [90, 210]);
});

test("nearestStep: away from every vertex, the step nearest the pointer anywhere", () => {
  const low = { name: "loss · run 1", color: "red", values: [0, 4, 8].map((x) => ({ x, y: 1 })) };
  const high = { name: "loss · run 2", color: "blue", values: [0, 4, 8].map((x) => ({ x, y: 9 })) };
  const sets = [frame([low, high])];
  // (31, 40) in line pixels: far from every vertex (none within 12 px), step 4 is the nearest
  // step (x px 40, 9 px away); at it, run 2's point (y px 10) is 30 px off, run 1's (y px 90)
  // 50 px: run 2.
  assert.equal(nearestOnLines(sets, 131, 240, 12), null);
  const hit = nearestStep(sets, 131, 240);
  assert.equal(hit.name, "loss · run 2");
  assert.deepEqual([hit.x, hit.y, hit.index], [4, 9, 1]);
  assert.deepEqual(hit.at, { x: 140, y: 210 });
  // nearer the bottom, the lower line
  assert.equal(nearestStep(sets, 131, 285).name, "loss · run 1");
  // a line of no drawn point (NaN, a log axis's value <= 0) is passed over
  const gap = { name: "gap · run 3", color: "", values: [{ x: 4, y: NaN }] };
  assert.equal(nearestStep([frame([gap])], 131, 240), null);
  assert.equal(nearestStep([], 0, 0), null);
});

