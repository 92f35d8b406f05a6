// A sweep's hyperparameter chart ("loss vs lr": each lane's last and best value against its
// swept parameter) read out under the pointer (pure): which lane a point is, what the read-out
// says of it, and the key that lights that lane's lines in the other charts (highlight.js).
// The kernel lists each chart's lanes in the order of its points (the `param_lanes` trait).

import { formatReadout } from "./format.js";

const LANE_SEP = " · ";
// What a drawn lane's name adds for the roles it is drawn for: "lr=0.1 (best, median)".
const DRAWN_ROLES = /\s\((?:best|median|worst|diverged)(?:, (?:best|median|worst|diverged))*\)$/;

/** `key` (readout.js's `runKey` of a line's name, "lane · run") without the roles its lane is
 * drawn for, which come and go as the lanes are ranked anew: "lr=0.1 (best) · run 1" and
 * "lr=0.1 · run 1" are one lane. */
export function laneKey(key) {
  if (typeof key !== "string") return key;
  const parts = key.split(LANE_SEP);
  parts[0] = parts[0].replace(DRAWN_ROLES, "");
  return parts.join(LANE_SEP);
}

/**
 * The read-out of point `index` of the hyperparameter chart `title`, from `lanes` (the
 * `param_lanes` trait: per chart its `run`, `param`, `field` and each point's lane `names`),
 * the point's parameter value `x` and the lane's `last` and `best` values: its lines (the lane,
 * the parameter, the values) and the `key` that lights the lane; null when not known.
 */
export function paramReadout(lanes, title, index, x, last, best) {
  const entry = lanes && lanes[title];
  if (!entry || !Array.isArray(entry.names) || !(index >= 0 && index < entry.names.length)) {
    return null;
  }
  const name = String(entry.names[index]);
  const values = `${entry.field} last ${formatReadout(last)} · best ${formatReadout(best)}`;
  const out = {
    key: `${name}${LANE_SEP}${entry.run}`,
    lines: [name, `${entry.param} ${formatReadout(x)}`, values],
  };
  // the lane, for the kernel to draw its line while it is pointed at (a lane that is no line
  // of its own: only inside a sweep's band): [run number, lane index]
  const lane = Array.isArray(entry.lanes) ? entry.lanes[index] : undefined;
  if (Number.isInteger(entry.number) && Number.isInteger(lane)) out.lane = [entry.number, lane];
  return out;
}

/**
 * The tools of hyperparameter chart `title` (its corner, beside "log"), from `lanes` (the
 * `param_lanes` trait): the `fields` its select offers (the sweep's plotted fields), the one
 * it ranks (`field`), and its best toggle (`best` "min" or "max", the `text` and `tip` it
 * shows, the `next` value a click asks for); null for a chart that is no hyperparameter chart,
 * or one of the charts after the first (`tools` false: the goal is the plot's, one select).
 */
export function paramTools(lanes, title) {
  const entry = lanes && lanes[title];
  if (!entry || typeof entry.field !== "string" || entry.tools === false) return null;
  const fields = Array.isArray(entry.fields) && entry.fields.length ? entry.fields : [entry.field];
  const best = entry.best === "max" ? "max" : "min";
  const [word, other] = best === "max" ? ["highest", "lowest"] : ["lowest", "highest"];
  return {
    fields: fields.map(String),
    field: entry.field,
    best,
    text: best === "max" ? "best ↑" : "best ↓",
    tip: `a lane's best ${entry.field} is its ${word} value (click: its ${other})`,
    next: best === "max" ? "min" : "max",
  };
}

/**
 * The kernel's answer to a `lane_lines` request (a custom message's `content` and `buffers`):
 * every lane's line of run `number` (`fields`, each drawn on chart `charts[i]`; `x` the steps
 * of its points; `y` a Float32Array of (fields, lanes, x.length), NaN where a lane has no
 * row), or null for another message or a run without them.
 */
export function readLaneLines(content, buffers) {
  if (!content || content.jhw_lane_lines === undefined) return null;
  const fields = Array.isArray(content.fields) ? content.fields : [];
  const x = Array.isArray(content.x) ? content.x : [];
  const buffer = buffers && buffers.length ? buffers[0] : null;
  if (!fields.length || !x.length || !buffer || !Number.isInteger(content.lanes)) return null;
  const bytes = buffer instanceof ArrayBuffer ? buffer : buffer.buffer;
  const offset = buffer instanceof ArrayBuffer ? 0 : buffer.byteOffset;
  const y = new Float32Array(bytes.slice(offset, offset + fields.length * content.lanes * x.length * 4));
  if (y.length !== fields.length * content.lanes * x.length) return null;
  return { number: content.jhw_lane_lines, fields, charts: content.charts || fields, lanes: content.lanes, x, y };
}

/** The points of `lane`'s line of field `i` in `lines` (`readLaneLines`): [[x, y], ...] of
 * its rows (those with no row left out); [] for a lane it does not hold. */
export function laneLine(lines, i, lane) {
  if (!lines || !(lane >= 0 && lane < lines.lanes) || !(i >= 0 && i < lines.fields.length)) return [];
  const n = lines.x.length;
  const start = (i * lines.lanes + lane) * n;
  const out = [];
  for (let k = 0; k < n; k++) {
    const y = lines.y[start + k];
    if (!Number.isNaN(y)) out.push([lines.x[k], y]);
  }
  return out;
}
