// Status words and number formats of the panel and its hover read-out (pure). The words and the
// formats' rules are the look table's (look.js), which the Python side reads too.

import { LOOK } from "./look.js";

// Status words. The kernel's "converged" only means that `cond` became False, whatever the
// condition encodes (a tolerance, a fixed schedule, a counter): the panel says "finished" and
// colours it neutrally. "diverged" is the panel's own word (see `shownStatus`).
export const STATUS_LABELS = LOOK.status.words;

/** Tooltip of a status badge: what the word means. */
const STATUS_TITLES = LOOK.status.titles;

/** Human label of a status; unknown statuses are shown as they are. */
export function statusLabel(status) {
  return Object.hasOwn(STATUS_LABELS, status) ? STATUS_LABELS[status] : String(status ?? "");
}

/** The status the badge shows: "diverged" while a plotted field's latest value is NaN or
 * infinite (`diverged`: those fields) in a run that is running or ended without an error (a
 * warning: the computation itself succeeded), else `status`. */
export function shownStatus(status, diverged) {
  const flagged = Array.isArray(diverged) && diverged.length > 0;
  const run = LOOK.status.can_diverge.includes(status);
  return flagged && run ? "diverged" : status;
}

/** The badge's text: the word of the status it shows (`shownStatus`), or, while the loop is
 * traced and compiled, what the panel waits for. */
export function badgeText(status, diverged) {
  if (status === "compiling") return LOOK.status.compiling_badge;
  return statusLabel(shownStatus(status, diverged));
}

/** Tooltip of the badge for `shown` (from `shownStatus`); `diverged` names the fields. */
export function statusTitle(shown, diverged) {
  const base = Object.hasOwn(STATUS_TITLES, shown) ? STATUS_TITLES[shown] : "";
  return shown === "diverged" && diverged && diverged.length
    ? `${base}: ${diverged.join(", ")}`
    : base;
}

/** CSS class of the status badge (unknown statuses share one class). */
export function statusClass(status) {
  const known = Object.hasOwn(STATUS_LABELS, status) ? status : "unknown";
  return `jhw-status--${known.replace(/_/g, "-")}`;
}

// ---- Number formats
//
// The locale is pinned: the panel reads the same in every browser, and a value keeps the "."
// and "e" that Python writes, so a number copied from the panel pastes back into code.
// Formatters are made once: making an Intl.NumberFormat costs far more than a format call.
// Intl rounds the shortest decimal that names a double (0.15 to 1 digit gives "0.2"), not the
// double's exact binary value as toPrecision does ("0.1"); the two differ only on such
// apparent ties.
const LOCALE = "en-US";
const nf = (options) => new Intl.NumberFormat(LOCALE, options);
const { value: VALUE_RULE, readout: READOUT_RULE, count: COUNT_RULE } = LOOK.numbers;
const COUNT = nf({ maximumFractionDigits: 0 }); // "1,074"
// "1.23M", "45.6B"
const COMPACT = nf({ notation: "compact", maximumSignificantDigits: COUNT_RULE.compact_digits });
const SMALL = nf({ maximumSignificantDigits: 2 }); // "4.3", "0.42"
const TINY = nf({ notation: "scientific", maximumSignificantDigits: 2 }); // "4.5e-9"
const significant = (rule) => [
  nf({ maximumSignificantDigits: rule.digits, useGrouping: false }), // "3.142"
  nf({ notation: "scientific", maximumSignificantDigits: rule.digits }), // "1.235e6"
];
const [VALUE, VALUE_EXP] = significant(VALUE_RULE);
const [READOUT, READOUT_EXP] = significant(READOUT_RULE); // "0.975586"
const SECONDS = [2, 1].map((d) => nf({ minimumFractionDigits: d, maximumFractionDigits: d }));
const TWO_DIGITS = nf({ minimumIntegerDigits: 2 }); // "05"

/** `x` in a scientific format, with Python's lower-case "e" ("1.235e6", "-2.5e-7"): Intl's
 * en-US exponent separator is "E". */
function scientific(format, x) {
  return format
    .formatToParts(x)
    .map((part) => (part.type === "exponentSeparator" ? "e" : part.value))
    .join("");
}

/** The one number format of the panel (steps, step counts, rate): thousands separators up to
 * a million ("1,074", "20,000"), then 3 significant digits with a suffix ("1.23M", "45.6B");
 * values below 10 that are not integers keep 2 significant digits ("4.2", "0.42"; "4.5e-9"
 * below a millionth). */
export function formatNumber(n) {
  const v = Number(n) + 0; // + 0 turns -0 into 0, which Intl would write "-0"
  if (!Number.isFinite(v)) return "–";
  const a = Math.abs(v);
  // The switch is on the rounded count, so 999,999.7 reads "1M", not "1,000,000".
  if (Math.round(a) >= COUNT_RULE.compact_from) return COMPACT.format(v);
  if (a < 10 && !Number.isInteger(v)) {
    return a < 1e-6 && a > 0 ? scientific(TINY, v) : SMALL.format(v);
  }
  return COUNT.format(v);
}

/** True while a run is in progress (the Stop button is enabled only then). */
export function isRunning(status) {
  return status === "running";
}

/** Fraction of max_steps done, clamped to [0, 1]; 0 when max_steps is unknown. A finished
 * run (its condition became False) is complete whatever its step: max_steps is only a cap, so
 * a loop that finished at 32 % of it must not look unfinished. */
export function progressFraction(step, maxSteps, status) {
  if (status === "converged") return 1;
  const s = Number(step);
  const m = Number(maxSteps);
  if (!Number.isFinite(s) || !Number.isFinite(m) || m <= 0) return 0;
  return Math.min(1, Math.max(0, s / m));
}

/** A step count, in the panel's one number format (`formatNumber`). */
export function formatCount(n) {
  return formatNumber(Math.round(Number(n)));
}

/** Text of a value that is not a finite number, or null for a finite number. Accepts the
 * strings "nan", "inf", "-inf" that Python sends for non-finite values. */
function nonFinite(v) {
  if (v === null || v === undefined) return "–";
  if (typeof v === "boolean") return v ? "true" : "false";
  if (typeof v === "string") {
    const s = v.toLowerCase();
    if (s === "nan") return "NaN";
    if (s === "inf" || s === "+inf" || s === "infinity") return "∞";
    if (s === "-inf" || s === "-infinity") return "-∞";
    return Number.isNaN(Number(v)) ? v : null;
  }
  const x = Number(v);
  if (Number.isNaN(x)) return "NaN";
  if (x === Infinity) return "∞";
  if (x === -Infinity) return "-∞";
  return null;
}

/**
 * A field value, compact and sign-preserving: 4 significant digits, exponent notation outside
 * [1e-3, 1e5) (the look table's `numbers.value`). Accepts the strings "nan", "inf", "-inf" that
 * Python sends for non-finite values.
 */
export function formatValue(v) {
  const special = nonFinite(v);
  if (special !== null) return special;
  const x = Number(v);
  if (x === 0) return "0";
  const { exponent_below: below, exponent_from: above } = VALUE_RULE;
  // Integers are shown whole (a step-like 12345 is not rounded to "12350").
  if (Number.isInteger(x) && Math.abs(x) < above) return String(x);
  const a = Math.abs(x);
  return a >= above || a < below ? scientific(VALUE_EXP, x) : VALUE.format(x);
}

/** A duration in seconds: "0.42 s", "12.3 s", "2 m 05 s", "1 h 02 m". (Intl.DurationFormat
 * writes "2 min, 5 sec" and is missing from older browsers: only its number parts are Intl.) */
export function formatDuration(seconds) {
  const s = Number(seconds) + 0; // -0 is 0 (Intl writes "-0.00")
  if (!Number.isFinite(s) || s < 0) return "–";
  if (s < 10) return `${SECONDS[0].format(s)} s`;
  if (s < 60) return `${SECONDS[1].format(s)} s`;
  const total = Math.floor(s);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const sec = total % 60;
  return h > 0 ? `${h} h ${TWO_DIGITS.format(m)} m` : `${m} m ${TWO_DIGITS.format(sec)} s`;
}

// No ETA: a loop's end is decided by its `cond`, which the panel cannot foresee; the only known
// end is max_steps, a cap, and a time to reach it ("≤ 25 m left" on a run that ends in 7 s)
// says more than the panel knows. The bar and "step / max_steps" show the cap.

/** The rate, labelled, in the one number format: "rate 850 steps/s", "rate 11,300 steps/s",
 * "rate 4.1M steps/s"; "" when there is no rate (no step taken yet, or a run that ended with
 * zero steps). */
export function formatRate(rate) {
  const r = Number(rate);
  if (!Number.isFinite(r) || r <= 0) return "";
  return `rate ${formatNumber(r)} steps/s`;
}

/** The elapsed time, labelled: "elapsed 0.07 s", "elapsed 2 m 05 s". */
export function formatElapsed(seconds) {
  return `elapsed ${formatDuration(seconds)}`;
}

/** Per-lane end states, most frequent first: {converged: 5, max_steps: 1} ->
 * "5 finished · 1 max steps". Lanes of a status held by at most two lanes are named when
 * `names` (status -> lane labels) is given: "5 finished · 1 max steps (lr=0.3)". */
export function laneSummary(counts, names) {
  const entries = Object.entries(counts || {}).filter(([, n]) => Number(n) > 0);
  entries.sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return entries
    .map(([status, n]) => {
      const who = names && Object.hasOwn(names, status) ? names[status] : null;
      const few = who && who.length > 0 && who.length <= 2 && n <= 2;
      const named = few ? ` (${who.join(", ")})` : "";
      return `${formatCount(n)} ${statusLabel(status)}${named}`;
    })
    .join(" · ");
}

/** What a kernel status means for a view whose model lives in that kernel: null while the
 * kernel is usable, else the text shown ("kernel died", "kernel restarted"). A restarted
 * kernel does not know this widget any more, so both are final for the view. */
export function kernelLostLabel(kernelStatus) {
  if (kernelStatus === "dead" || kernelStatus === "autorestarting") return "kernel died";
  if (kernelStatus === "restarting") return "kernel restarted";
  return null;
}

/** The lanes, labelled: ["6 lanes", ""] while running, ["6 lanes:", "5 finished · 1 max steps
 * (lr=0.3)"] once they ended (`laneSummary`); ["", ""] for an unbatched run. */
export function formatLanes(lanes, counts, names) {
  const n = Number(lanes);
  if (!(n > 0)) return ["", ""];
  const summary = laneSummary(counts, names);
  return [`${formatCount(n)} lanes${summary ? ":" : ""}`, summary];
}

/** The latest values of a field under vmap, labelled: "median 0.067 (min–max 0.0216 … 0.2389)";
 * without a range (unbatched), just the value. */
export function formatLatest(value, span) {
  if (!(Array.isArray(span) && span.length === 2)) return formatValue(value);
  const [lo, hi] = span.map(formatValue);
  return `median ${formatValue(value)} (min–max ${lo} … ${hi})`;
}

/** The figure width (px) to report to the kernel, or null to leave `plot_width` as it is:
 * nothing before the box is laid out, and no message for a change under `PLOT_WIDTH_STEP` px
 * (the kernel re-chooses the x ticks on each report; a resize drag must not flood it). */
export function widthToReport(current, measured) {
  const w = Math.round(Number(measured));
  if (!(w > 0)) return null;
  return Math.abs(w - Number(current || 0)) >= PLOT_WIDTH_STEP ? w : null;
}
export const PLOT_WIDTH_STEP = 16;

/** CSS class of the progress bar: its colour says how the run ended (pass `shownStatus`). */
export function progressClass(status) {
  return `jhw-progress-bar ${statusClass(status).replace("jhw-status--", "jhw-progress-bar--")}`;
}

/** "step / max_steps" text. */
export function formatProgress(step, maxSteps) {
  return Number(maxSteps) > 0
    ? `${formatCount(step)} / ${formatCount(maxSteps)}`
    : formatCount(step);
}

/** A hovered value, more precise than the panel's: 6 significant digits, exponent notation
 * outside [1e-4, 1e6) (the look table's `numbers.readout`). */
export function formatReadout(v) {
  const x = Number(v);
  if (!Number.isFinite(x) || x === 0) return formatValue(x);
  const a = Math.abs(x);
  const { exponent_below: below, exponent_from: above } = READOUT_RULE;
  return a >= above || a < below ? scientific(READOUT_EXP, x) : READOUT.format(x);
}

/** A time on the x axis as the read-out shows it: `mode` "relative" (seconds since the run's
 * first row): "12.3 s", "2 m 05 s"; "wall" (seconds since the epoch): the local time of day,
 * "14:03:27.4". */
export function formatAxisTime(seconds, mode) {
  const s = Number(seconds);
  if (!Number.isFinite(s)) return "–";
  if (mode !== "wall") return formatDuration(Math.max(0, s));
  const d = new Date(s * 1000);
  const two = (n) => String(n).padStart(2, "0");
  const tenth = Math.floor((s * 10) % 10);
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}.${tenth}`;
}

/** The step at time `x` of the run a line named `name` belongs to, from `clocks` (run name ->
 * [times, steps], as the x axis counts time; a line's name ends with " · <run>", or
 * " · <run> · smoothed"), or null when no clock matches. Rows reach the host in chunks: the
 * step is interpolated between chunk arrivals, so it is the nearest step to a chunk's
 * resolution. */
export function stepAtTime(clocks, name, x) {
  const label = String(name ?? "").replace(/ · smoothed$/, "");
  let best = null;
  for (const run of Object.keys(clocks || {})) {
    if ((label === run || label.endsWith(` · ${run}`)) && (!best || run.length > best.length)) {
      best = run;
    }
  }
  if (best === null) return null;
  const [times, steps] = clocks[best];
  if (!times || !times.length) return null;
  if (x <= times[0]) return steps[0];
  for (let i = 1; i < times.length; i++) {
    if (x <= times[i]) {
      const f = (x - times[i - 1]) / (times[i] - times[i - 1] || 1);
      return Math.round(steps[i - 1] + f * (steps[i] - steps[i - 1]));
    }
  }
  return steps[steps.length - 1];
}

/** The read-out's x line on a time axis (`axis`: {mode, clocks}): "step 1,200 · 14:03:27.4",
 * or the time alone where the step cannot be told. */
export function timeReadout(name, x, axis) {
  const time = formatAxisTime(x, axis.mode);
  const step = stepAtTime(axis.clocks, name, x);
  return step === null ? `time ${time}` : `step ${formatCount(step)} · ${time}`;
}

/**
 * A chart's log button: its text, its tooltip and whether it is offered (its values span
 * `decades` decades or more on a linear axis: the kernel's `log_hints`, 0 for none).
 */
export function logButton(title, on, decades) {
  const hinted = !on && decades > 0;
  return {
    text: hinted ? "log?" : "log",
    tip: hinted
      ? `${title} spans ${decades} decades: a logarithmic y axis shows them`
      : `${title}: logarithmic y axis`,
    hinted,
  };
}

/**
 * The panel's "log y" box from the charts' own log toggles: checked while every chart is on a
 * log axis (`logY`), half-checked when some are (`logCharts`: their titles), never checked over
 * a linear chart.
 */
export function logYBox(logY, logCharts) {
  return { checked: Boolean(logY), indeterminate: !logY && (logCharts || []).length > 0 };
}
