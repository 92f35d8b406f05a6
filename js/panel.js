// The LivePanel view (anywidget ES module): status, progress, rate, latest values, controls.
//
// All state lives in the model's traits (see jaxhist_widget/widget.py), so any view, opened
// at any time, renders the same thing. The view only writes the controls: log_y, keep_runs,
// and the click counters stop_clicks / clear_clicks (counters, so every click is a change).
// Its styles are js/panel.css, served by anywidget as the `_css` trait.
//
// Layout of this file: pure helpers (status, number formats, hover geometry: unit-tested in
// panel.test.mjs), then `bqplot` (the one place that reads bqplot's internals), then the view:
// `buildPanel` makes the DOM once, `updatePanel` applies a state to it, `render` wires the two
// to the model, and `attachHover` adds the hover read-out.
//
// Stable hooks for tests: .jhw-panel[data-status], .jhw-status[data-status],
// .jhw-status[data-shown] (the word shown: "diverged" over a status, see `shownStatus`),
// .jhw-step[data-step][data-max-steps], .jhw-progress[aria-valuenow], .jhw-rate,
// .jhw-elapsed, .jhw-lane-status, .jhw-field[data-field] > .jhw-field-value[data-value],
// .jhw-error, .jhw-stop[data-mode], .jhw-logy, .jhw-keep, .jhw-clear, and
// .jhw-panel[data-kernel] ("alive", or "dead" once the view saw its kernel die or restart);
// in a LivePlot box, the hover read-out .jhw-hover[data-name][data-step][data-value] (hidden
// unless a drawn point is under the pointer) and its marker .jhw-hover-dot.
//
// Hover: the panel's `figure` trait is its LivePlot's bqplot figure; the view finds that
// figure's view in the same box and reads the points its lines hold (no kernel round trip).
//
// Stop: in a normal cell (`with live:`) the kernel handles no widget message until the cell
// ends, so a click there asks the kernel for an interrupt, exactly as the notebook's ■ does;
// jaxhist_widget.interrupts turns that interrupt into a clean stop. The runner says which
// applies through the `stop_mode` trait ("interrupt", or "message" for `run_async`).

// Status words. The kernel's "converged" only means that `cond` became False, whatever the
// condition encodes (a tolerance, a fixed schedule, a counter): the panel says "finished" and
// colours it neutrally. "diverged" is the panel's own word (see `shownStatus`).
export const STATUS_LABELS = {
  idle: "idle",
  compiling: "compiling",
  running: "running",
  converged: "finished",
  max_steps: "max steps",
  stopped: "stopped",
  diverged: "diverged",
  error: "error",
};

/** Tooltip of a status badge: what the word means. */
const STATUS_TITLES = {
  idle: "No run yet",
  compiling: "Waiting for the loop to start (JAX traces and compiles it first)",
  converged: "The loop's condition became False",
  max_steps: "The loop reached max_steps before its condition became False",
  stopped: "Stopped on request; the rows so far are kept",
  diverged: "The latest value of a plotted field is NaN or infinite",
};

/** Human label of a status; unknown statuses are shown as they are. */
export function statusLabel(status) {
  return Object.hasOwn(STATUS_LABELS, status) ? STATUS_LABELS[status] : String(status ?? "");
}

/** The status the badge shows: "diverged" while a plotted field's latest value is NaN or
 * infinite (`diverged`: those fields) in a run that is running or ended without an error (a
 * warning: the computation itself succeeded), else `status`. */
export function shownStatus(status, diverged) {
  const flagged = Array.isArray(diverged) && diverged.length > 0;
  const run = ["running", "converged", "max_steps", "stopped"].includes(status);
  return flagged && run ? "diverged" : status;
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
const COUNT = nf({ maximumFractionDigits: 0 }); // "1,074"
const COMPACT = nf({ notation: "compact", maximumSignificantDigits: 3 }); // "1.23M", "45.6B"
const SMALL = nf({ maximumSignificantDigits: 2 }); // "4.3", "0.42"
const TINY = nf({ notation: "scientific", maximumSignificantDigits: 2 }); // "4.5e-9"
const VALUE = nf({ maximumSignificantDigits: 4, useGrouping: false }); // "3.142"
const VALUE_EXP = nf({ notation: "scientific", maximumSignificantDigits: 4 });
const READOUT = nf({ maximumSignificantDigits: 6, useGrouping: false }); // "0.975586"
const READOUT_EXP = nf({ notation: "scientific", maximumSignificantDigits: 6 });
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
  if (Math.round(a) >= 1e6) return COMPACT.format(v);
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
 * [1e-3, 1e5). Accepts the strings "nan", "inf", "-inf" that Python sends for non-finite values.
 */
export function formatValue(v) {
  const special = nonFinite(v);
  if (special !== null) return special;
  const x = Number(v);
  if (x === 0) return "0";
  // Integers are shown whole (a step-like 12345 is not rounded to "12350").
  if (Number.isInteger(x) && Math.abs(x) < 1e5) return String(x);
  const a = Math.abs(x);
  return a >= 1e5 || a < 1e-3 ? scientific(VALUE_EXP, x) : VALUE.format(x);
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
 * outside [1e-4, 1e6). */
export function formatReadout(v) {
  const x = Number(v);
  if (!Number.isFinite(x) || x === 0) return formatValue(x);
  const a = Math.abs(x);
  return a >= 1e6 || a < 1e-4 ? scientific(READOUT_EXP, x) : READOUT.format(x);
}

// ---- Hover geometry (pure: the bqplot-specific reads are in `bqplot` below)

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
  if (best === null) return null;
  const point = best.line.values[best.index];
  return {
    name: best.line.name,
    color: best.line.color,
    x: point.x,
    y: point.y,
    at: best.set.toClient(best.px, best.py),
  };
}

/** The read-out's lines for the point (`x`, `y`) of the line named `name` ("field · lane ·
 * run", as the figure labels its lines): the name, the step and the value. */
export function readoutLines(name, x, y) {
  return [String(name ?? ""), `step ${formatCount(x)}`, `value ${formatReadout(y)}`];
}

/** Top-left corner of a `w` x `h` read-out for a point at (`x`, `y`) in a `boxW` x `boxH`
 * box: beside the point, right of it unless that runs past the box's right edge, above it
 * unless that runs past the top, and never past the bottom. */
export function readoutPlacement(x, y, w, h, boxW, boxH) {
  const left = x + 12 + w <= boxW ? x + 12 : Math.max(0, x - 12 - w);
  const top = Math.min(Math.max(0, y - h - 8), Math.max(0, boxH - h));
  return { left, top };
}

// ---- bqplot adapter
//
// Everything the hover reads of bqplot's front end that is not public API: the figure
// model's views, the figure view's `mark_views`, each mark view's `scales` (bqscales views:
// `scale`, a d3 scale with `invert`, plus a pixel `offset`, the mapping bqplot's Lines draws
// with), its model's `mark_data` (per line: `name`, `index`, `values` as sorted {x, y}), and
// its SVG element's screen transform. Checked against bqplot 0.13.1 (front end bqplot 0.6.1,
// bqscales 0.3.7); a LivePlot figure's marks are all Lines. What is missing while a figure is
// still being drawn makes it return nothing; anything else that is not as expected throws a
// `BqplotMismatch`, on which the hover turns itself off and says why in the console, rather
// than read out a wrong point.

/** bqplot's internals are not what the adapter was written against. */
export class BqplotMismatch extends Error {
  constructor(what) {
    super(`bqplot internals changed: ${what}`);
    this.name = "BqplotMismatch";
  }
}

function expect(condition, what) {
  if (!condition) throw new BqplotMismatch(what);
}

// A line bqplot has drawn (Lines draws each line as a `path.line` in its mark's element).
// Internals that are missing although this is there are missing for good, not yet to come.
const DRAWN_LINE = "path.line";
const hasDrawnLine = (el) =>
  typeof el.querySelector === "function" && el.querySelector(DRAWN_LINE) !== null;

function isScaleView(s) {
  return (
    !!s &&
    typeof s.scale === "function" &&
    typeof s.scale.invert === "function" &&
    typeof s.offset === "number"
  );
}

/** `x`, `y` through the 2D affine matrix `m` (a DOMMatrix: a, b, c, d, e, f). */
function transform(m, x, y) {
  return { x: m.a * x + m.c * y + m.e, y: m.b * x + m.d * y + m.f };
}

/** The lines of one mark view as plain data, or null while it is not drawn. */
function readMark(mark) {
  expect(mark && mark.model && mark.el, "a mark view without model or element");
  const scales = mark.scales;
  if (!scales) {
    // Scale views are made asynchronously after the mark view; nothing is drawn before.
    expect(!hasDrawnLine(mark.el), "a drawn mark view without `scales`");
    return null;
  }
  expect(isScaleView(scales.x) && isScaleView(scales.y), "a mark's x/y scale views");
  const data = mark.model.mark_data;
  expect(Array.isArray(data), "a mark model without a `mark_data` list");
  expect(typeof mark.el.getScreenCTM === "function", "a mark element that is not SVG");
  const ctm = mark.el.getScreenCTM();
  if (!ctm) return null; // not laid out (detached, or display: none)
  const inverse = ctm.inverse();
  const colors = mark.model.get("colors") || [];
  const lines = data.map((line) => {
    expect(line && Array.isArray(line.values), "a `mark_data` line without `values`");
    const first = line.values[0];
    expect(first === undefined || (first && "x" in first && "y" in first), "points not {x, y}");
    // bqplot cycles the mark's `colors` over its lines.
    const cycled = colors.length && Number.isInteger(line.index);
    const color = cycled ? colors[line.index % colors.length] : "";
    return { name: line.name, values: line.values, color };
  });
  const [xs, ys] = [scales.x, scales.y];
  return {
    lines,
    xPx: (x) => xs.scale(x) + xs.offset,
    yPx: (y) => ys.scale(y) + ys.offset,
    xData: (px) => xs.scale.invert(px - xs.offset),
    toLocal: (x, y) => transform(inverse, x, y),
    toClient: (x, y) => transform(ctm, x, y),
  };
}

export const bqplot = {
  checkedAgainst: "bqplot 0.13.1 (front end 0.6.1, bqscales 0.3.7)",

  /** The view of the figure model `ref` ("IPY_MODEL_<id>") whose element is inside `box`, or
   * null while there is none. */
  async figureView(manager, ref, box) {
    // (The widget manager is ipywidgets' public API, not bqplot's: a host without one simply
    // has no read-out.)
    if (typeof ref !== "string" || !ref.startsWith("IPY_MODEL_") || !manager) return null;
    const figure = await manager.get_model(ref.slice("IPY_MODEL_".length));
    if (!figure) return null; // closed meanwhile
    expect(figure.views && typeof figure.views === "object", "a figure model without `views`");
    const views = await Promise.all(Object.values(figure.views));
    return views.find((v) => v && v.el && box.contains(v.el)) || null;
  },

  /** Whether `view` (from `figureView`) is still the one shown in `box`. */
  isShownIn(view, box) {
    return !!view && !!view.el && view.el.isConnected && box.contains(view.el);
  },

  /** What the figure view draws: one entry per mark (see `readMark`); [] before it draws. */
  async lineSets(view) {
    const list = view.mark_views;
    if (!list) {
      // A figure view makes its mark views once it is displayed and laid out.
      expect(!hasDrawnLine(view.el), "a drawn figure view without `mark_views`");
      return [];
    }
    expect(Array.isArray(list.views), "`mark_views.views` is not a list");
    const marks = await Promise.all(list.views);
    return marks.map(readMark).filter((set) => set !== null);
  },
};

// ---- The view

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function checkbox(className, text) {
  const label = element("label");
  const input = element("input", className);
  input.type = "checkbox";
  label.append(input, document.createTextNode(text));
  return [label, input];
}

/** Sets `node`'s text and hides it while the text is empty. */
function showText(node, text) {
  node.textContent = text;
  node.hidden = !text;
}

/** The panel's DOM, made once; `updatePanel` fills it. Returns its nodes by role. */
function buildPanel() {
  const ui = {
    root: element("div", "jhw-panel"),
    title: element("span", "jhw-title"),
    status: element("span", "jhw-status"),
    kernelNote: element("span", "jhw-kernel"),
    progress: element("div", "jhw-progress"),
    bar: element("div", "jhw-progress-bar"),
    step: element("span", "jhw-step"),
    rate: element("span", "jhw-rate jhw-muted"),
    elapsed: element("span", "jhw-elapsed jhw-muted"),
    lanes: element("span", "jhw-lanes jhw-muted"),
    laneStatus: element("span", "jhw-lane-status jhw-muted"),
    fields: element("div", "jhw-fields"),
    error: element("pre", "jhw-error"),
    stop: element("button", "jhw-stop", "■ Stop"),
    clear: element("button", "jhw-clear", "Clear"),
  };
  ui.kernelNote.hidden = true;
  ui.progress.setAttribute("role", "progressbar");
  ui.progress.setAttribute("aria-valuemin", "0");
  ui.progress.append(ui.bar);
  const head = element("div", "jhw-row");
  head.append(
    ui.title, ui.status, ui.kernelNote, ui.progress, ui.step,
    ui.rate, ui.elapsed, ui.lanes, ui.laneStatus,
  );

  ui.stop.type = "button";
  ui.clear.type = "button";
  ui.clear.title = "Forget previous runs and clear the plot";
  const [logLabel, logY] = checkbox("jhw-logy", "log y");
  // short labels: the four controls fit one row down to ~300 px of output width
  const [keepLabel, keep] = checkbox("jhw-keep", "keep runs");
  keepLabel.title = "Keep previous runs on the plot, faded";
  Object.assign(ui, { logY, keep });
  const controls = element("div", "jhw-row");
  controls.append(ui.stop, logLabel, keepLabel, ui.clear);

  ui.root.append(head, ui.fields, ui.error, controls);
  return ui;
}

/** One `.jhw-field` of the latest values. Under vmap `value` is the median over lanes and
 * `span` its [min, max], both labelled (`formatLatest`). */
function fieldItem(name, value, span) {
  const item = element("span", "jhw-field");
  item.dataset.field = name;
  const shown = element("span", "jhw-field-value", formatValue(value));
  shown.dataset.value = String(value ?? "");
  const batched = Array.isArray(span) && span.length === 2;
  const label = element("span", "jhw-field-name", name);
  if (!batched) {
    item.append(label, shown);
    return item;
  }
  shown.title = "median over lanes";
  const text = ` (min–max ${formatValue(span[0])} … ${formatValue(span[1])})`;
  const spread = element("span", "jhw-field-range jhw-muted", text);
  spread.title = "min … max over lanes";
  item.append(label, element("span", "jhw-field-stat jhw-muted", "median "), shown, spread);
  return item;
}

/** What the panel shows, as plain data: the model's traits plus the view's own state
 * (`kernelLost`, `stopping`, and the `stopMode` this browser can do). */
function panelState(model, view) {
  const get = (name) => model.get(name);
  return {
    status: get("status"),
    title: get("title") || "",
    step: get("step"),
    maxSteps: get("max_steps"),
    rate: get("rate"),
    elapsed: get("elapsed"),
    lanes: get("lanes"),
    diverged: get("diverged") || [],
    laneStatuses: get("lane_statuses"),
    laneNames: get("lane_names"),
    fields: get("fields") || [],
    latest: get("latest") || {},
    latestRange: get("latest_range") || {},
    error: get("error") || "",
    logY: Boolean(get("log_y")),
    keepRuns: Boolean(get("keep_runs")),
    stopMode: stopMode(model),
    kernelLost: view.kernelLost,
    stopping: view.stoppingRun !== null,
  };
}

/** Applies the state `s` (from `panelState`) to the panel's DOM `ui` (from `buildPanel`). */
function updatePanel(ui, s) {
  const lost = Boolean(s.kernelLost);
  ui.root.dataset.status = s.status;
  ui.root.dataset.kernel = lost ? "dead" : "alive";
  showText(ui.kernelNote, s.kernelLost || "");
  const shown = shownStatus(s.status, s.diverged);
  ui.status.textContent =
    s.status === "compiling" ? "compiling: waiting for the loop to start" : statusLabel(shown);
  ui.status.className = `jhw-status ${statusClass(shown)}`;
  ui.status.dataset.status = s.status;
  ui.status.dataset.shown = shown;
  ui.status.title = statusTitle(shown, s.diverged);
  showText(ui.title, s.title);

  ui.bar.style.width = `${(100 * progressFraction(s.step, s.maxSteps, s.status)).toFixed(2)}%`;
  ui.bar.className = progressClass(shown);
  ui.progress.setAttribute("aria-valuenow", String(s.step));
  ui.progress.setAttribute("aria-valuemax", String(s.maxSteps));
  ui.step.textContent = formatProgress(s.step, s.maxSteps);
  ui.step.dataset.step = String(s.step);
  ui.step.dataset.maxSteps = String(s.maxSteps);

  // A lost kernel sends no more updates: a rate would be stale.
  showText(ui.rate, lost ? "" : formatRate(s.rate));
  // Before a run (idle, compiling) there is no time to show.
  const started = s.status !== "idle" && s.status !== "compiling";
  showText(ui.elapsed, started ? formatElapsed(s.elapsed) : "");
  const [lanes, laneStatus] = formatLanes(s.lanes, s.laneStatuses, s.laneNames);
  showText(ui.lanes, lanes);
  showText(ui.laneStatus, laneStatus);

  ui.fields.replaceChildren(
    ...s.fields.map((name) => fieldItem(name, s.latest[name], s.latestRange[name])),
  );
  showText(ui.error, s.error);

  ui.stop.dataset.mode = s.stopMode;
  ui.stop.disabled = lost || !isRunning(s.status) || s.stopping;
  ui.stop.textContent = s.stopping ? "■ Stopping…" : "■ Stop";
  ui.stop.title = lost
    ? "The kernel is gone"
    : s.stopMode === "interrupt"
      ? "Stop the run after its current chunk (interrupts the kernel, like ■; " +
        "the partial history is kept)"
      : "Stop the run after its current chunk (the partial history is kept)";
  for (const control of [ui.logY, ui.keep, ui.clear]) control.disabled = lost;
  ui.logY.checked = s.logY;
  ui.keep.checked = s.keepRuns;
}

function kernelOf(model) {
  const manager = model.widget_manager;
  return manager && manager.kernel ? manager.kernel : null;
}

/** "interrupt" only where the kernel connection can be asked for one; else "message". */
function stopMode(model) {
  const k = kernelOf(model);
  const canInterrupt = k !== null && typeof k.interrupt === "function";
  return model.get("stop_mode") === "interrupt" && canInterrupt ? "interrupt" : "message";
}

/** Adds one to the counter trait `name` (a counter, so every click is a change). */
function bump(model, name) {
  model.set(name, (model.get(name) || 0) + 1);
  model.save_changes();
}

/** Connects the controls of `ui` to the model. `view` is the view's own state; `refresh`
 * redraws at once. Returns a function that disconnects them. */
function wireControls(ui, model, view, refresh) {
  const onStop = () => {
    if (view.kernelLost || !isRunning(model.get("status"))) return;
    // Stays set (the button disabled, "stopping…") until that run ended, so a second click
    // cannot turn into a second interrupt (which the kernel would take as "I insist": a
    // KeyboardInterrupt).
    view.stoppingRun = model.get("run_number");
    if (stopMode(model) === "interrupt") {
      // The cell holds the kernel: a widget message would wait until it ends. The interrupt
      // (SIGINT, like ■) reaches the running loop at its next chunk.
      Promise.resolve()
        .then(() => kernelOf(model).interrupt())
        .catch((e) => {
          console.warn("jaxhist_widget: kernel interrupt failed, sending a stop message", e);
          bump(model, "stop_clicks");
        });
    } else {
      bump(model, "stop_clicks");
    }
    refresh();
  };
  const onClear = () => bump(model, "clear_clicks");
  const onLogY = () => {
    model.set("log_y", ui.logY.checked);
    model.save_changes();
  };
  const onKeep = () => {
    model.set("keep_runs", ui.keep.checked);
    model.save_changes();
  };
  const listeners = [
    [ui.stop, "click", onStop],
    [ui.clear, "click", onClear],
    [ui.logY, "change", onLogY],
    [ui.keep, "change", onKeep],
  ];
  for (const [node, type, fn] of listeners) node.addEventListener(type, fn);
  return () => {
    for (const [node, type, fn] of listeners) node.removeEventListener(type, fn);
  };
}

/** Calls `onLost(label)` when the model's kernel dies or restarts (see `kernelLostLabel`).
 * A dead or restarted kernel takes the model's comm with it and sends nothing more, so
 * without this the panel would say "running" with Stop enabled forever. (The model's
 * comm_live flag is not exposed by anywidget's model proxy, and its change event does not
 * say which way it changed.) Returns a function that stops watching. */
function watchKernel(model, onLost) {
  const kernel = kernelOf(model);
  const signal = kernel && kernel.statusChanged;
  if (!signal || typeof signal.connect !== "function") return () => {};
  const onStatus = (_sender, kernelStatus) => {
    const lost = kernelLostLabel(kernelStatus);
    if (lost) onLost(lost);
  };
  signal.connect(onStatus);
  onStatus(null, kernel.status);
  return () => {
    if (typeof signal.disconnect === "function") signal.disconnect(onStatus);
  };
}

const TRAITS = [
  "status", "title", "step", "max_steps", "rate", "elapsed", "lanes", "diverged",
  "fields", "latest", "error", "log_y", "keep_runs", "stop_mode", "run_number",
  "lane_statuses", "lane_names", "latest_range",
];

function render({ model, el }) {
  const ui = buildPanel();
  el.append(ui.root);
  // The view's own state. kernelLost: set once the kernel died or restarted (the model's
  // comm is gone for good: nothing shown can change any more, no control can work).
  // stoppingRun: the run number a Stop was sent for.
  const view = { kernelLost: null, stoppingRun: null };

  const refresh = () => {
    const run = model.get("run_number");
    const ended = !isRunning(model.get("status"));
    if (view.stoppingRun !== null && (view.stoppingRun !== run || ended)) view.stoppingRun = null;
    updatePanel(ui, panelState(model, view));
  };
  // One message from Python changes several traits at once, and each fires its own event:
  // coalesce them into one redraw after the message is applied.
  let pending = false;
  let alive = true;
  const schedule = () => {
    if (pending) return;
    pending = true;
    queueMicrotask(() => {
      pending = false;
      if (alive) refresh();
    });
  };
  for (const name of TRAITS) model.on(`change:${name}`, schedule);

  const unwireControls = wireControls(ui, model, view, refresh);
  const unwatchKernel = watchKernel(model, (lost) => {
    // A crash shows as "restarting" then "autorestarting" (JupyterLab 4.6): let "kernel died"
    // replace "kernel restarted", never the other way.
    if (!view.kernelLost || (view.kernelLost !== lost && lost === "kernel died")) {
      view.kernelLost = lost;
      schedule();
    }
  });
  refresh();
  const removeHover = attachHover(model, el);
  // The view does not report its width yet (`plot_width`, `widthToReport`): a ResizeObserver
  // that saved it kept a Stop click in an awaiting cell from reaching the kernel (found by
  // tests/ui/test_liveplot_ui.py::test_stop_button_ends_async_run; cause not yet known).

  return () => {
    alive = false;
    removeHover();
    for (const name of TRAITS) model.off(`change:${name}`, schedule);
    unwatchKernel();
    unwireControls();
    ui.root.remove();
  };
}

// ---- Hover read-out

// Pixels from the pointer within which a drawn point is read out.
const HOVER_RADIUS_PX = 12;

// bqplot's internals were not as expected once on this page (one console error is enough).
let mismatchReported = false;

function reportMismatch(error) {
  if (mismatchReported) return;
  mismatchReported = true;
  const why = `written for ${bqplot.checkedAgainst}`;
  console.error(`jaxhist_widget: the hover read-out is turned off (${why}).`, error);
}

/** Shows `hit` (from `nearestOnLines`) in the read-out `tip` and marks its point with `dot`,
 * both placed in `box`. */
function showReadout(tip, dot, box, hit) {
  const [name, stepText, valueText] = readoutLines(hit.name, hit.x, hit.y);
  tip.replaceChildren(
    element("div", "jhw-hover-name", name),
    element("div", "jhw-hover-step", stepText),
    element("div", "jhw-hover-value", valueText),
  );
  tip.dataset.name = name;
  tip.dataset.step = String(hit.x);
  tip.dataset.value = String(hit.y);
  const r = box.getBoundingClientRect();
  const x = hit.at.x - r.left - box.clientLeft;
  const y = hit.at.y - r.top - box.clientTop;
  dot.style.left = `${x}px`;
  dot.style.top = `${y}px`;
  dot.style.borderColor = hit.color || ""; // the line's own colour
  dot.hidden = false;
  tip.hidden = false;
  const { left, top } = readoutPlacement(
    x, y, tip.offsetWidth, tip.offsetHeight, box.clientWidth, box.clientHeight,
  );
  tip.style.left = `${left}px`;
  tip.style.top = `${top}px`;
}

/**
 * The hover read-out of the LivePlot figure this panel belongs to (the `figure` trait): the
 * step, value, field, lane and run of the drawn point nearest to the pointer. It is computed
 * here, in the browser, from the points the figure's lines already hold, so it costs no kernel
 * round trip (it works while a synchronous cell keeps the kernel busy) and no byte per update.
 * Returns a function that removes it.
 */
function attachHover(model, el) {
  let disposed = false;
  let box = null; // the .jhw-liveplot element holding this panel and its figure
  let figureView = null;
  let pointer = null; // last {x, y} client position inside the box
  let frame = 0;
  let refresh = 0;
  let waitBox = 0;
  let tries = 0;
  let busy = false;
  let shownKey = ""; // what the read-out shows now: unchanged, the DOM is left alone
  const tip = element("div", "jhw-hover");
  tip.setAttribute("role", "tooltip");
  tip.hidden = true;
  const dot = element("div", "jhw-hover-dot");
  dot.hidden = true;

  const hide = () => {
    tip.hidden = true;
    dot.hidden = true;
    delete tip.dataset.name;
    shownKey = "";
  };

  // The bqplot view of the `figure` model in the same LivePlot box as this panel (a LivePlot
  // displayed twice has two boxes, each with its own figure view).
  async function findFigureView() {
    if (!bqplot.isShownIn(figureView, box)) {
      figureView = await bqplot.figureView(model.widget_manager, model.get("figure"), box);
    }
    return figureView;
  }

  async function lookup() {
    if (disposed || pointer === null || busy) return;
    busy = true;
    try {
      const view = await findFigureView();
      const sets = view ? await bqplot.lineSets(view) : [];
      const hit = pointer && nearestOnLines(sets, pointer.x, pointer.y, HOVER_RADIUS_PX);
      if (!hit) {
        hide();
        return;
      }
      // A still pointer over a still line (the refresh below): nothing to redo. (Placing the
      // box measures it, which makes the browser lay the page out.)
      const key = `${hit.name}|${hit.x}|${hit.y}|${hit.at.x}|${hit.at.y}`;
      if (key !== shownKey) {
        shownKey = key;
        showReadout(tip, dot, box, hit);
      }
    } catch (e) {
      hide();
      // Anything but a mismatch is passing: a figure being rebuilt (log y toggled) may have no
      // views for a moment, or a mark was removed meanwhile.
      if (e instanceof BqplotMismatch) {
        reportMismatch(e);
        remove();
      }
    } finally {
      busy = false;
    }
  }

  const schedule = () => {
    if (frame || disposed) return;
    frame = requestAnimationFrame(() => {
      frame = 0;
      lookup();
    });
  };
  const onMove = (event) => {
    pointer = { x: event.clientX, y: event.clientY };
    schedule();
    // A live run moves the lines under a still pointer: read the point out again meanwhile.
    if (!refresh) refresh = setInterval(schedule, 250);
  };
  const onLeave = () => {
    pointer = null;
    clearInterval(refresh);
    refresh = 0;
    hide();
  };

  // The panel is rendered before it is attached to the page (and before its figure view is):
  // find the box once it is there.
  const connect = () => {
    waitBox = 0;
    if (disposed) return;
    box = el.closest(".jhw-liveplot");
    if (!box) {
      // A panel displayed on its own (no LivePlot box around it) has no figure to read out.
      if (++tries < 40) waitBox = setTimeout(connect, 250);
      return;
    }
    box.append(tip, dot);
    box.addEventListener("mousemove", onMove);
    box.addEventListener("mouseleave", onLeave);
  };
  const onFigure = () => {
    figureView = null;
    if (box === null && !waitBox && typeof model.get("figure") === "string") connect();
  };
  model.on("change:figure", onFigure);
  onFigure();

  function remove() {
    disposed = true;
    model.off("change:figure", onFigure);
    clearTimeout(waitBox);
    clearInterval(refresh);
    if (frame) cancelAnimationFrame(frame);
    if (box) {
      box.removeEventListener("mousemove", onMove);
      box.removeEventListener("mouseleave", onLeave);
    }
    tip.remove();
    dot.remove();
  }
  return remove;
}

export default { render };
