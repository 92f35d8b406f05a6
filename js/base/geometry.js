// Hover geometry (pure): which drawn point is under the pointer, and where its read-out
// goes. The bqplot-specific reads are in bqplot_adapter.js.

import { formatCount, formatReadout, timeReadout } from "./format.js";

/** First index of `values` (points sorted by `.x`, ascending) whose x is >= `x`. */
export function bisectX(values, x) {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (values[mid].x < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The point of one drawn line nearest to the pointer (`px`, `py`, in the line's pixels), within
 * `radius` pixels, or null. `values` are the line's points ({x, y}, sorted by x, as bqplot keeps
 * them); `xPx` / `yPx` map data to pixels and `xData` pixels back to data (the line's own
 * scales, so the point found is the vertex drawn there). Non-finite pixels (NaN, a value <= 0
 * on a log axis) are not drawn and never found. Only the points within `radius` of `px` are
 * visited (a bisection on x), so a hover over 64 lanes of 2000 points stays cheap.
 */
export function nearestPoint(values, px, py, xPx, yPx, xData, radius) {
  if (!values || values.length === 0) return null;
  let best = null;
  for (let i = bisectX(values, xData(px - radius)); i < values.length; i++) {
    const v = values[i];
    const x = xPx(v.x);
    if (x > px + radius) break;
    const value = v.y;
    if (value === null || value === undefined) continue;
    const y = yPx(value);
    if (!Number.isFinite(x) || !Number.isFinite(y)) continue;
    const d = Math.hypot(x - px, y - py);
    if (d <= radius && (best === null || d < best.dist)) best = { index: i, dist: d, px: x, py: y };
  }
  return best;
}

/**
 * The drawn point nearest to the pointer (`clientX`, `clientY`, client pixels) over every line
 * of `lineSets` (what `bqplot.lineSets` returns: lines sharing scales and a coordinate frame,
 * with `toLocal` / `toClient` between client pixels and theirs), within `radius` pixels, or
 * null. Returns the line's `name` and `color`, the point's data `x`, `y`, and `at`, where the
 * point is drawn, in client pixels.
 */
export function nearestOnLines(lineSets, clientX, clientY, radius) {
  let best = null;
  for (const set of lineSets) {
    const p = set.toLocal(clientX, clientY);
    for (const line of set.lines) {
      const hit = nearestPoint(line.values, p.x, p.y, set.xPx, set.yPx, set.xData, radius);
      if (hit && (best === null || hit.dist < best.dist)) best = { ...hit, set, line };
    }
  }
  return readOut(best);
}

/**
 * Where no drawn point is near the pointer, the step nearest to it anywhere in the chart
 * (TensorBoard's snapping): over every line of `lineSets`, the point nearest to the pointer's
 * x (a bisection per line), the nearest step first and, at it, the line nearest the pointer's
 * y. Returns what `nearestOnLines` returns, or null where no line has a drawn point.
 */
export function nearestStep(lineSets, clientX, clientY) {
  let best = null;
  for (const set of lineSets) {
    const p = set.toLocal(clientX, clientY);
    const x = set.xData(p.x);
    for (const line of set.lines) {
      const values = line.values;
      if (!values || values.length === 0) continue;
      const i = bisectX(values, x);
      for (const j of [i - 1, i]) {
        if (j < 0 || j >= values.length) continue;
        const v = values[j];
        if (v.y === null || v.y === undefined) continue;
        const px = set.xPx(v.x);
        const py = set.yPx(v.y);
        if (!Number.isFinite(px) || !Number.isFinite(py)) continue;
        const dx = Math.abs(px - p.x);
        const dy = Math.abs(py - p.y);
        // (steps a pixel apart are one: a sweep's lanes decimated to their own buckets)
        const nearer = best === null || dx < best.dx - 1 || (dx <= best.dx + 1 && dy < best.dy);
        if (nearer) best = { dx, dy, set, line, index: j, px, py };
      }
    }
  }
  return readOut(best);
}

/** The read-out's lines for the point (`x`, `y`) of the line named `name` ("field · lane ·
 * run", as the figure labels its lines): the name, the step and the value. */
export function readoutLines(name, x, y, axis = null) {
  // On a time axis (`axis`: {mode, clocks}, see `timeReadout`) x is seconds: step and time.
  const where = axis && axis.mode && axis.mode !== "step" ? timeReadout(name, x, axis) : null;
  return [String(name ?? ""), where ?? `step ${formatCount(x)}`, `value ${formatReadout(y)}`];
}

/** Top-left corner of a `w` x `h` read-out for a point at (`x`, `y`), kept inside `area`
 * ({left, top, right, bottom}, the chart's box: never over the panel above the charts): beside
 * the point, right of it unless that runs past the area's right edge, above it unless that
 * runs past the area's top, else below it, and never past the bottom (a read-out taller than
 * the area starts at its top). */
export function readoutPlacement(x, y, w, h, area) {
  const { left: l, top: t, right: r, bottom: b } = area;
  const left = x + 12 + w <= r ? x + 12 : Math.max(l, x - 12 - w);
  const above = y - h - 8;
  const below = y + 12;
  let top = above;
  if (above < t) top = below + h <= b ? below : Math.max(t, b - h);
  return { left, top: Math.max(t, top) };
}

/**
 * Every line's point at step `x` (TensorBoard / W&B style: the chart's series at the step under
 * the pointer), over the lines of `lineSets` (one chart's): per line its point nearest to `x`
 * on the x axis, kept when drawn within `radius` pixels of where `x` is drawn (a line that ended
 * before `x`, or starts after it, has no point there). Returns `{name, color, x, y}` per line,
 * in the lines' order, and with the pointer's client point `at`, `dist`: the point's height
 * above or below it in pixels (what a read-out of many lanes keeps the nearest by).
 */
export function seriesAtStep(lineSets, x, radius, at = null) {
  const out = [];
  for (const set of lineSets) {
    const target = set.xPx(x);
    const local = at ? set.toLocal(at.x, at.y) : null;
    for (const line of set.lines) {
      const values = line.values;
      if (!values || values.length === 0) continue;
      const i = bisectX(values, x);
      let best = null;
      for (const j of [i - 1, i]) {
        if (j < 0 || j >= values.length) continue;
        const d = Math.abs(set.xPx(values[j].x) - target);
        if (Number.isFinite(d) && d <= radius && (best === null || d < best.d)) best = { j, d };
      }
      if (best === null) continue;
      const v = values[best.j];
      const s = { name: line.name, color: line.color, x: v.x, y: v.y };
      if (local) {
        const d = Math.abs(set.yPx(v.y) - local.y);
        s.dist = Number.isFinite(d) ? d : Infinity;
      }
      out.push(s);
    }
  }
  return out;
}

/** The read-out of the point `best` found (its line, its index in it, its pixels), or null. */
function readOut(best) {
  if (best === null) return null;
  const point = best.line.values[best.index];
  return {
    name: best.line.name,
    color: best.line.color,
    index: best.index,
    x: point.x,
    y: point.y,
    at: best.set.toClient(best.px, best.py),
  };
}
