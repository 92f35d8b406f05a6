// The hover read-out's rows (pure): the lines of one chart at the step under the pointer, one
// row per series (a raw line and its smoothed twin are one row), sorted, and at most a few of
// them (the nearest to the pointer) for a sweep of many lanes. The DOM is hover.js's.
//
// Lines are known by their names, as the figure labels them (jaxhist_widget/ui/figure:
// `RunMarks.labels`): "field · run", "field · lane · run", and " · smoothed" after a smoothed
// twin's. Nothing else on a drawn line says which run it is, and the names are what the
// read-out shows anyway.

import { formatAxisTime, formatCount, formatReadout, timeReadout } from "./format.js";
import { readoutLines } from "./geometry.js";

const SMOOTHED = " · smoothed";
const SEP = " · ";

/** The orders the rows can be sorted in: by value (highest first, as the lines lie on the
 * chart), by name, by distance to the pointer. */
export const SORTS = ["value", "name", "nearest"];

/** Whether the line named `name` is a smoothed twin. */
export function isSmoothedLine(name) {
  return String(name ?? "").endsWith(SMOOTHED);
}

/** The series a line draws: its name without a smoothed twin's suffix. */
export function seriesName(name) {
  const s = String(name ?? "");
  return s.endsWith(SMOOTHED) ? s.slice(0, -SMOOTHED.length) : s;
}

/** The run (and lane) a line belongs to, whatever its field: what the highlight follows from
 * chart to chart ("loss · lane 3 · run 2" and "lr · lane 3 · run 2" are one). */
export function runKey(name) {
  const parts = seriesName(name).split(SEP);
  return parts.length > 1 ? parts.slice(1).join(SEP) : parts[0];
}

const collator = new Intl.Collator(undefined, { numeric: true }); // "run 10" after "run 2"

/** How rows compare under `sort` (one of `SORTS`). A value that is not finite sorts last. */
function compareRows(sort) {
  if (sort === "name") return (a, b) => collator.compare(a.label, b.label);
  if (sort === "nearest") return (a, b) => a.dist - b.dist || collator.compare(a.label, b.label);
  const rank = (v) => (Number.isFinite(v) ? -v : Infinity);
  return (a, b) => rank(a.sortValue) - rank(b.sortValue) || collator.compare(a.label, b.label);
}

/** `series` (from geometry.js's `seriesAtStep`: name, color, x, y, and `dist`, pixels from the
 * pointer) grouped by series: per series its raw and smoothed points and colour (the raw
 * line's), in the lines' order. */
export function groupSeries(series) {
  const groups = new Map();
  for (const s of series) {
    const key = seriesName(s.name);
    let g = groups.get(key);
    if (!g) {
      g = { key, run: runKey(s.name), color: "", raw: null, smoothed: null, dist: Infinity };
      groups.set(key, g);
    }
    const point = { x: s.x, y: s.y };
    if (isSmoothedLine(s.name)) g.smoothed = point;
    else g.raw = point;
    if (!g.color || !isSmoothedLine(s.name)) g.color = s.color || g.color;
    const d = Number.isFinite(s.dist) ? s.dist : Infinity;
    g.dist = Math.min(g.dist, d);
  }
  return [...groups.values()];
}

/** A row's label: its series' name without the field every row shares (a chart of one field
 * lists "run 2", not "loss · run 2" again and again). */
function labeller(groups) {
  const field = (g) => g.key.split(SEP)[0];
  const shared = groups.length > 1 && groups.every((g) => g.key.includes(SEP))
    && groups.every((g) => field(g) === field(groups[0]));
  return (g) => (shared ? g.key.slice(field(g).length + SEP.length) : g.key);
}

/**
 * The read-out's rows for `series` (see `groupSeries`) with `current` the series under the
 * pointer (a line name, raw or smoothed): one row per series, each with its label, colour,
 * value (the smoothed one while smoothing shows), raw value and step, sorted by `sort`. Past
 * `most` series only the `most` nearest to the pointer are listed (the current one always),
 * and `more` counts the rest ("+ 56 more").
 */
export function readoutRows(series, current, sort = "value", most = 8, axis = null) {
  const groups = groupSeries(series);
  const smoothing = groups.some((g) => g.smoothed !== null);
  const currentKey = seriesName(current);
  let shown = groups;
  if (groups.length > most) {
    const near = [...groups].sort((a, b) => (a.key === currentKey ? -1 : b.key === currentKey ? 1 : a.dist - b.dist));
    shown = near.slice(0, most);
  }
  const label = labeller(groups);
  const rows = shown.map((g) => {
    const main = g.smoothed ?? g.raw;
    const step = (g.raw ?? g.smoothed).x;
    return {
      key: g.key,
      run: g.run,
      label: label(g),
      color: g.color,
      value: formatReadout(main.y),
      raw: smoothing ? (g.raw ? formatReadout(g.raw.y) : "–") : "",
      // On a time axis (`axis`: {mode, clocks}) x is seconds: its time (the headline has the
      // step too).
      step: onTime(axis) ? formatAxisTime(step, axis.mode) : formatCount(step),
      sortValue: main.y,
      rawValue: g.raw ? g.raw.y : null,
      dist: g.dist,
      current: g.key === currentKey,
    };
  });
  rows.sort(compareRows(SORTS.includes(sort) ? sort : "value"));
  const left = groups.length - shown.length;
  return { rows, smoothing, more: left > 0 ? `+ ${left} more` : "" };
}

/** The headline of the read-out (its first box): the series' name, the step, and its value,
 * or its smoothed and raw values side by side while smoothing shows. `row` is from
 * `readoutRows`, or null for the line alone (`name`, `x`, `y` of the point under the pointer). */
export function headlineLines(row, name, x, y, axis = null) {
  if (!row || !row.raw) return readoutLines(seriesName(name), x, y, axis);
  const where = onTime(axis) ? timeReadout(name, x, axis) : `step ${row.step}`;
  return [row.key, where, `smoothed ${row.value} · raw ${row.raw}`];
}

const onTime = (axis) => !!axis && !!axis.mode && axis.mode !== "step";
