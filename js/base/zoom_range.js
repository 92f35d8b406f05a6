// The zoom's arithmetic (pure): the steps a drag across a chart selects, where a shift+drag pans
// them, the selection rectangle's box, and the words the panel's zoom chip shows. The step axis
// comes from the bqplot adapter (`bqplot.stepAxis`): `toStep(clientX)` and the plot area in
// client pixels, frozen as drawn when it was read.

import { formatCount } from "./format.js";

/** A drag shorter than this (pixels) is a click, not a zoom (a double-click's two presses). */
export const MIN_DRAG_PX = 5;

/** Milliseconds a zoom may wait for the kernel before the panel says it waits (a free kernel
 * applies it within a frame or two; a normal cell holds it until the cell ends). */
export const PENDING_AFTER_MS = 250;

/** `x` (client pixels) held within the plot area `area` ({left, right, ...}). */
export function clampX(x, area) {
  return Math.min(Math.max(x, area.left), area.right);
}

/** Whether the client point `p` lies in the plot area `area`. */
export function inArea(p, area) {
  return p.x >= area.left && p.x <= area.right && p.y >= area.top && p.y <= area.bottom;
}

/** The steps `[lo, hi]` a drag from client x `x0` to `x1` selects: `x0` on the step axis
 * `from` as drawn when pressed, `x1` on `to` as drawn when let go (the same by default; each
 * {area, toStep}: a layout or a live run may move the axis meanwhile), each held within its
 * plot area. Whole steps around them, `lo >= 0`; null for a drag under `minPx` (a click) or on
 * an axis that maps to no step. */
export function dragRange(x0, x1, from, to = from, minPx = MIN_DRAG_PX) {
  const a = clampX(x0, from.area);
  const b = clampX(x1, to.area);
  if (!(Math.abs(b - a) >= minPx)) return null;
  const [s0, s1] = [from.toStep(a), to.toStep(b)];
  const lo = Math.max(0, Math.floor(Math.min(s0, s1)));
  const hi = Math.ceil(Math.max(s0, s1));
  return Number.isFinite(lo) && Number.isFinite(hi) && hi > lo ? [lo, hi] : null;
}

/** The steps the plot area `area` shows once its lines are dragged `dx` pixels to the right
 * (through `toStep`, the axis as drawn when the drag began): those that were `dx` pixels to the
 * left of its ends. Whole steps; a pan past step `floor` (0, or 1 on a log axis) stops there,
 * keeping the range's width. */
export function panRange(area, dx, toStep, floor = 0) {
  let lo = Math.round(toStep(area.left - dx));
  let hi = Math.round(toStep(area.right - dx));
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) return null;
  if (lo < floor) {
    hi += floor - lo;
    lo = floor;
  }
  return hi > lo ? [lo, hi] : null;
}

/** The selection rectangle from client x `x0` to `x1` over the plot area's height, in pixels
 * from the top left of `frame` (the box it is placed in: a DOMRect plus its border widths). */
export function selectionBox(x0, x1, area, frame) {
  const a = clampX(Math.min(x0, x1), area);
  const b = clampX(Math.max(x0, x1), area);
  const left = frame.left + (frame.clientLeft || 0);
  const top = frame.top + (frame.clientTop || 0);
  return { left: a - left, top: area.top - top, width: b - a, height: area.bottom - area.top };
}

/** A range of steps as the panel writes it: "1,200–2,200". */
export function rangeLabel(range) {
  return `${formatCount(range[0])}–${formatCount(range[1])}`;
}

/** Whether `a` and `b` are the same zoom: both none (null, undefined or []) or the same steps. */
export function sameRange(a, b) {
  const none = (r) => !Array.isArray(r) || r.length !== 2;
  if (none(a) || none(b)) return none(a) && none(b);
  return Number(a[0]) === Number(b[0]) && Number(a[1]) === Number(b[1]);
}

/** What the panel's zoom chip shows, from the kernel's `step_range` (`steps`: [] or [lo, hi])
 * and the view's zoom request still on its way (`pending`: {range} or null): the range to be
 * shown, whether it waits for the kernel, and whether a reset applies. Hidden when neither
 * zooms. */
export function zoomChip(steps, pending) {
  const waiting = Boolean(pending) && !sameRange(pending.range, steps);
  const target = waiting ? pending.range : steps;
  const zoomed = Array.isArray(target) && target.length === 2;
  if (!zoomed && !waiting) return { hidden: true, text: "", waiting: false, range: null };
  return {
    hidden: false,
    text: zoomed ? `steps ${rangeLabel(target)}` : "every step",
    waiting,
    range: zoomed ? [Number(target[0]), Number(target[1])] : null,
  };
}
