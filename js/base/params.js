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
  return {
    key: `${name}${LANE_SEP}${entry.run}`,
    lines: [name, `${entry.param} ${formatReadout(x)}`, values],
  };
}
