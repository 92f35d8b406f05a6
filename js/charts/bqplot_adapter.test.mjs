// Tests of the bqplot adapter against fakes of bqplot's front end (`node --test js/`).
import assert from "node:assert/strict";
import { test } from "node:test";

import { bqplot, BqplotMismatch } from "./bqplot_adapter.js";
import { nearestOnLines } from "../base/geometry.js";

// Fakes of bqplot's front end, shaped as bqplot 0.13.1 has them (see `bqplot` in bqplot_adapter.js).
function fakeScale(k, offset = 0) {
  const scale = (x) => k * x;
  scale.invert = (px) => px / k;
  return { scale, offset };
}
const identity = { a: 1, b: 0, c: 0, d: 1, e: 0, f: 0 };
function fakeMark({ scales, markData, ctm = identity, drawn = true, model = {} } = {}) {
  const matrix = ctm && { ...ctm, inverse: () => ({ ...ctm, e: -ctm.e, f: -ctm.f }) };
  const traits = { colors: ["red", "green"], _model_name: "LinesModel", fill: "none", ...model };
  return {
    scales: scales === undefined ? { x: fakeScale(10, 5), y: fakeScale(-10, 100) } : scales,
    model: {
      mark_data: markData === undefined ? [{ name: "loss", index: 1, values: [{ x: 2, y: 3 }] }]
        : markData,
      get: (name) => traits[name],
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

test("bqplot adapter: reads only plain lines: not a band, an image, dots or a path chart", async () => {
  const line = fakeMark();
  // Their data is not a list of sorted lines: read as lines, they would throw a mismatch.
  const band = fakeMark({ model: { fill: "inside" }, markData: [{ values: [[1, 2]] }] });
  const image = fakeMark({ model: { _model_name: "ImageModel" }, markData: { x: [0, 1] } });
  const dots = fakeMark({ model: { _model_name: "ScatterModel" }, markData: [{ x: 1, y: 2 }] });
  const sets = await bqplot.lineSets(fakeFigureView([band, image, line, dots]));
  assert.equal(sets.length, 1);
  assert.deepEqual(sets[0].lines.map((l) => l.name), ["loss"]);
  const path = fakeFigureView([line]);
  path.el.classList = { contains: (name) => name === "jhw-path" };
  assert.deepEqual(await bqplot.lineSets(path), []);
});

// A d3-like linear scale from `domain` to `range` (what bqscales' LinearScale view holds; like
// d3's, `domain(d)` changes it in place).
function d3Linear(domain, range) {
  const k = () => (range[1] - range[0]) / (domain[1] - domain[0]);
  const scale = (x) => range[0] + (x - domain[0]) * k();
  scale.invert = (px) => domain[0] + (px - range[0]) / k();
  scale.domain = (d) => {
    if (d === undefined) return domain.slice();
    domain = d.slice();
    return scale;
  };
  scale.range = () => range.slice();
  scale.copy = () => d3Linear(domain.slice(), range.slice());
  return scale;
}

test("bqplot adapter: the step axis maps a client x to a step, frozen as drawn", async () => {
  // steps 1000..3000 over 400 px, values over 300 px (bqplot's y range runs down), the mark's
  // element placed at client (100, 200)
  const x = { scale: d3Linear([1000, 3000], [0, 400]), offset: 0 };
  const y = { scale: d3Linear([0, 1], [300, 0]), offset: 0 };
  const mark = fakeMark({ scales: { x, y }, ctm: { ...identity, e: 100, f: 200 } });
  const axis = await bqplot.stepAxis(fakeFigureView([mark]));
  assert.deepEqual(axis.area, { left: 100, right: 500, top: 200, bottom: 500 });
  assert.deepEqual(axis.domain, [1000, 3000]);
  assert.equal(axis.toStep(300), 2000);
  x.scale.domain([0, 10]); // the kernel rescaled meanwhile: the copy stays
  assert.equal(axis.toStep(500), 3000);
  const path = fakeFigureView([mark]);
  path.el.classList = { contains: (name) => name === "jhw-path" };
  assert.equal(await bqplot.stepAxis(path), null); // its x is a series, not steps
  assert.equal(await bqplot.stepAxis(fakeFigureView(null, false)), null); // not drawn yet
  const old = fakeMark(); // a scale without copy / range / domain
  await assert.rejects(bqplot.stepAxis(fakeFigureView([old])), BqplotMismatch);
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
