// The LivePanel view (anywidget ES module): status, progress, rate, latest values, controls.
//
// All state lives in the model's traits (see jaxhist_widget/widget.py), so any view, opened
// at any time, renders the same thing. The view only writes the controls: log_y, keep_runs,
// and the click counters stop_clicks / clear_clicks (counters, so every click is a change).
//
// Stable hooks for tests: .jhw-panel[data-status], .jhw-status[data-status],
// .jhw-step[data-step][data-max-steps], .jhw-progress[aria-valuenow], .jhw-rate,
// .jhw-elapsed, .jhw-eta, .jhw-lane-status, .jhw-field[data-field] > .jhw-field-value[data-value],
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

export const STATUS_LABELS = {
  idle: "idle",
  running: "running",
  converged: "converged",
  max_steps: "max steps",
  stopped: "stopped",
  error: "error",
};

/** Human label of a status; unknown statuses are shown as they are. */
export function statusLabel(status) {
  return Object.hasOwn(STATUS_LABELS, status) ? STATUS_LABELS[status] : String(status ?? "");
}

/** CSS class of the status badge (unknown statuses share one class). */
export function statusClass(status) {
  const known = Object.hasOwn(STATUS_LABELS, status) ? status : "unknown";
  return `jhw-status--${known.replace(/_/g, "-")}`;
}

/** The one number format of the panel (steps, step counts, rate): thousands separators up to
 * a million ("1,074", "20,000"), then 3 significant digits with a suffix ("1.23M", "45.6B");
 * values below 10 that are not integers keep 2 significant digits ("4.2", "0.42"). */
export function formatNumber(n) {
  const v = Number(n);
  if (!Number.isFinite(v)) return "–";
  const a = Math.abs(v);
  const sign = v < 0 ? "-" : "";
  for (const [scale, suffix] of [[1e12, "T"], [1e9, "B"], [1e6, "M"]]) {
    if (Math.round(a) >= scale) return sign + `${Number((a / scale).toPrecision(3))}${suffix}`;
  }
  if (a < 10 && !Number.isInteger(v)) return sign + String(Number(a.toPrecision(2)));
  return sign + Math.round(a).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** True while a run is in progress (the Stop button is enabled only then). */
export function isRunning(status) {
  return status === "running";
}

/** Fraction of max_steps done, clamped to [0, 1]; 0 when max_steps is unknown. A converged
 * run is complete whatever its step (a run that converged at 32 % must not look unfinished). */
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

/**
 * A field value, compact and sign-preserving: 4 significant digits, exponent notation outside
 * [1e-3, 1e5). Accepts the strings "nan", "inf", "-inf" that Python sends for non-finite values.
 */
export function formatValue(v) {
  if (v === null || v === undefined) return "–";
  if (typeof v === "string") {
    const s = v.toLowerCase();
    if (s === "nan") return "NaN";
    if (s === "inf" || s === "+inf" || s === "infinity") return "∞";
    if (s === "-inf" || s === "-infinity") return "-∞";
    const parsed = Number(v);
    return Number.isNaN(parsed) ? v : formatValue(parsed);
  }
  if (typeof v === "boolean") return v ? "true" : "false";
  const x = Number(v);
  if (Number.isNaN(x)) return "NaN";
  if (x === Infinity) return "∞";
  if (x === -Infinity) return "-∞";
  if (x === 0) return "0";
  if (Number.isInteger(x) && Math.abs(x) < 1e5) return String(x);
  const a = Math.abs(x);
  if (a >= 1e5 || a < 1e-3) {
    // "1.235e+6" -> "1.235e6": shorter, still unambiguous
    return x.toExponential(3).replace(/\.?0+e/, "e").replace("e+", "e");
  }
  return String(Number(x.toPrecision(4)));
}

/** A duration in seconds: "0.42 s", "12.3 s", "2 m 05 s", "1 h 02 m". */
export function formatDuration(seconds) {
  const s = Number(seconds);
  if (!Number.isFinite(s) || s < 0) return "–";
  if (s < 10) return `${s.toFixed(2)} s`;
  if (s < 60) return `${s.toFixed(1)} s`;
  const total = Math.floor(s);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const sec = total % 60;
  const pad = (k) => String(k).padStart(2, "0");
  return h > 0 ? `${h} h ${pad(m)} m` : `${m} m ${pad(sec)} s`;
}

/** Steps per second in the one number format: "850 steps/s", "11,300 steps/s", "4.1M steps/s";
 * "" when there is no rate (no step taken yet, or a run that ended with zero steps). */
export function formatRate(rate) {
  const r = Number(rate);
  if (!Number.isFinite(r) || r <= 0) return "";
  return `${formatNumber(r)} steps/s`;
}

/** Seconds left until max_steps at `rate`, or null when unknown or not running. An upper
 * bound: the loop may converge earlier. */
export function etaSeconds(step, maxSteps, rate, status) {
  const s = Number(step);
  const m = Number(maxSteps);
  const r = Number(rate);
  if (status !== "running" || !(r > 0) || !(m > 0) || !Number.isFinite(s) || s >= m) return null;
  return (m - s) / r;
}

/** "≤ 1 m 05 s left" (an upper bound: the loop may converge before max_steps); "" if unknown. */
export function formatEta(seconds) {
  if (seconds === null || seconds === undefined || !Number.isFinite(Number(seconds))) return "";
  return `≤ ${formatDuration(seconds)} left`;
}

/** Per-lane end states, most frequent first: {converged: 5, max_steps: 1} ->
 * "5 converged · 1 max steps". Lanes of a status held by at most two lanes are named when
 * `names` (status -> lane labels) is given: "5 converged · 1 max steps (lr=0.3)". */
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

/** CSS class of the progress bar: its colour says how the run ended. */
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
  if (a >= 1e6 || a < 1e-4) {
    return x.toExponential(5).replace(/\.?0+e/, "e").replace("e+", "e");
  }
  return String(Number(x.toPrecision(6)));
}

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

/** The read-out's lines for the point (`x`, `y`) of the line named `name` ("field · lane ·
 * run", as the figure labels its lines): the name, the step and the value. */
export function readoutLines(name, x, y) {
  return [String(name ?? ""), `step ${formatCount(x)}`, `value ${formatReadout(y)}`];
}

// Colors and fonts come from JupyterLab's theme variables, so the dark theme is readable;
// the fallbacks serve the classic notebook and other hosts.
const CSS = `
.jhw-panel {
  font-family: var(--jp-ui-font-family, system-ui, -apple-system, "Segoe UI", sans-serif);
  font-size: var(--jp-ui-font-size1, 13px);
  color: var(--jp-ui-font-color1, rgba(0, 0, 0, 0.87));
  background: var(--jp-layout-color1, transparent);
  border: 1px solid var(--jp-border-color2, #e0e0e0);
  border-radius: 4px;
  padding: 6px 8px;
  display: flex;
  flex-direction: column;
  gap: 4px;
  box-sizing: border-box;
}
.jhw-row { display: flex; align-items: center; gap: 10px; flex-wrap: wrap; }
.jhw-title { font-weight: 600; }
.jhw-status {
  display: inline-block; min-width: 5.5em; text-align: center;
  padding: 1px 8px; border-radius: 10px; font-weight: 600;
  color: var(--jp-ui-inverse-font-color1, #fff);
  background: var(--jp-layout-color4, #757575);
}
.jhw-status--running { background: var(--jp-brand-color1, #1976d2); }
/* Light and mid-tone badges take black text in both themes: white on them fails WCAG AA. */
.jhw-status--converged { background: var(--jp-success-color1, #388e3c); color: #000; }
.jhw-status--max-steps { background: var(--jp-warn-color1, #f57c00); color: #000; }
.jhw-status--stopped { background: var(--jp-warn-color2, #ffa726); color: #000; }
.jhw-status--error { background: var(--jp-error-color1, #d32f2f); }
.jhw-status--idle, .jhw-status--unknown {
  background: var(--jp-layout-color3, #bdbdbd); color: var(--jp-ui-font-color1, #000);
}
.jhw-progress {
  flex: 1 1 120px; min-width: 80px; height: 8px; border-radius: 4px; overflow: hidden;
  background: var(--jp-layout-color3, #e0e0e0);
}
.jhw-progress-bar { height: 100%; width: 0; background: var(--jp-brand-color1, #1976d2); }
/* The bar's colour says how the run ended, like the badge. */
.jhw-progress-bar--converged { background: var(--jp-success-color1, #388e3c); }
.jhw-progress-bar--max-steps, .jhw-progress-bar--stopped {
  background: var(--jp-warn-color1, #f57c00);
}
.jhw-progress-bar--error { background: var(--jp-error-color1, #d32f2f); }
.jhw-progress-bar--idle, .jhw-progress-bar--unknown {
  background: var(--jp-layout-color4, #757575);
}
.jhw-panel[data-kernel="dead"] .jhw-progress-bar { background: var(--jp-layout-color4, #757575); }
.jhw-step, .jhw-rate, .jhw-elapsed, .jhw-eta, .jhw-field-value {
  font-family: var(--jp-code-font-family, ui-monospace, monospace);
  font-variant-numeric: tabular-nums;
}
.jhw-muted { color: var(--jp-ui-font-color2, rgba(0, 0, 0, 0.54)); }
.jhw-fields { display: flex; flex-wrap: wrap; gap: 4px 14px; }
.jhw-field-name { color: var(--jp-ui-font-color2, rgba(0, 0, 0, 0.54)); margin-right: 4px; }
.jhw-error {
  margin: 0; padding: 4px 6px; white-space: pre-wrap; max-height: 10em; overflow: auto;
  font-family: var(--jp-code-font-family, ui-monospace, monospace);
  font-size: var(--jp-code-font-size, 12px);
  /* The body text takes the ordinary font colour: the theme's error red on a dark background
     is about 2.7:1; the red border and the badge say it is an error. */
  color: var(--jp-ui-font-color1, rgba(0, 0, 0, 0.87));
  background: var(--jp-layout-color2, #fafafa);
  border-left: 3px solid var(--jp-error-color1, #d32f2f);
}
.jhw-error[hidden] { display: none; }
.jhw-panel button {
  font: inherit; padding: 1px 10px; border-radius: 3px; cursor: pointer;
  color: var(--jp-ui-font-color1, #000);
  background: var(--jp-layout-color2, #eee);
  border: 1px solid var(--jp-border-color1, #bdbdbd);
}
.jhw-panel button:disabled { opacity: 0.45; cursor: default; }
.jhw-panel button.jhw-stop:not(:disabled) {
  color: var(--jp-ui-inverse-font-color1, #fff);
  background: var(--jp-error-color1, #d32f2f);
  border-color: var(--jp-error-color1, #d32f2f);
}
.jhw-panel label { display: inline-flex; align-items: center; gap: 3px; cursor: pointer; }
.jhw-kernel {
  font-weight: 600; padding: 1px 8px; border-radius: 10px;
  color: var(--jp-ui-inverse-font-color1, #fff); background: var(--jp-error-color1, #d32f2f);
}
.jhw-kernel[hidden] { display: none; }
/* Inside a LivePlot (the .jhw-liveplot box: this panel above the bqplot figure) the two read
   as one widget: one frame around both, the figure's (transparent) background, the same left
   and right edges, no gap. ipywidgets gives the figure a 2 px margin, which put it 2 px right
   of the panel and overflowed the box by 4 px. */
.jhw-liveplot {
  box-sizing: border-box;
  border: 1px solid var(--jp-border-color2, #e0e0e0);
  border-radius: 4px;
}
.jhw-liveplot .jhw-panel {
  border: none;
  border-bottom: 1px solid var(--jp-border-color2, #e0e0e0);
  border-radius: 0;
  background: transparent;
}
.jhw-liveplot > .jhw-figure { margin: 0; }
/* The hover read-out (step and value of the point under the pointer), placed in the LivePlot
   box: it never takes pointer events, so it cannot hide the line it describes. */
.jhw-liveplot { position: relative; }
.jhw-hover {
  position: absolute; z-index: 20; pointer-events: none; white-space: nowrap;
  padding: 3px 7px; border-radius: 3px;
  font-family: var(--jp-ui-font-family, system-ui, sans-serif);
  font-size: var(--jp-ui-font-size1, 12px); line-height: 1.35;
  color: var(--jp-ui-font-color1, rgba(0, 0, 0, 0.87));
  background: var(--jp-layout-color1, #fff);
  border: 1px solid var(--jp-border-color1, #bdbdbd);
  box-shadow: 0 1px 4px rgba(0, 0, 0, 0.25);
}
.jhw-hover-step, .jhw-hover-value {
  font-family: var(--jp-code-font-family, ui-monospace, monospace);
  font-variant-numeric: tabular-nums;
}
.jhw-hover-dot {
  position: absolute; z-index: 20; pointer-events: none;
  width: 9px; height: 9px; margin: -5.5px 0 0 -5.5px; border-radius: 50%;
  border: 1px solid var(--jp-ui-font-color1, #000); box-sizing: content-box;
}
.jhw-hover[hidden], .jhw-hover-dot[hidden] { display: none; }
`;

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

// Pixels from the pointer within which a drawn point is read out.
const HOVER_RADIUS_PX = 12;

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

  // The bqplot view of the `figure` model that sits in the same LivePlot box as this panel
  // (a LivePlot displayed twice has two boxes, each with its own figure view).
  async function findFigureView() {
    if (figureView && figureView.el && figureView.el.isConnected && box.contains(figureView.el)) {
      return figureView;
    }
    figureView = null;
    const ref = model.get("figure");
    const manager = model.widget_manager;
    if (typeof ref !== "string" || !ref.startsWith("IPY_MODEL_") || !manager) return null;
    const figure = await manager.get_model(ref.slice("IPY_MODEL_".length));
    const views = await Promise.all(Object.values((figure && figure.views) || {}));
    figureView = views.find((v) => v && v.el && box.contains(v.el)) || null;
    return figureView;
  }

  async function lookup() {
    if (disposed || pointer === null || busy) return;
    busy = true;
    try {
      const view = await findFigureView();
      const marks = view && view.mark_views ? await Promise.all(view.mark_views.views) : [];
      let best = null;
      for (const mark of marks) {
        const xs = mark && mark.scales && mark.scales.x;
        const ys = mark && mark.scales && mark.scales.y;
        const ctm = mark && mark.el && mark.el.getScreenCTM && mark.el.getScreenCTM();
        if (!xs || !ys || !xs.scale || !ys.scale || !ctm) continue;
        const p = new DOMPoint(pointer.x, pointer.y).matrixTransform(ctm.inverse());
        const xPx = (x) => xs.scale(x) + (xs.offset || 0);
        const yPx = (y) => ys.scale(y) + (ys.offset || 0);
        const xData = (px) => xs.scale.invert(px - (xs.offset || 0));
        for (const curve of mark.model.mark_data || []) {
          const hit = nearestPoint(curve.values, p.x, p.y, xPx, yPx, xData, HOVER_RADIUS_PX);
          if (hit && (best === null || hit.dist < best.dist)) best = { ...hit, curve, ctm, mark };
        }
      }
      if (best === null || pointer === null) {
        hide();
        return;
      }
      const point = best.curve.values[best.index];
      const at = new DOMPoint(best.px, best.py).matrixTransform(best.ctm);
      // A still pointer over a still line (the refresh below): nothing to redo. (Placing the
      // box measures it, which makes the browser lay the page out.)
      const key = `${best.curve.name}|${point.x}|${point.y}|${at.x}|${at.y}`;
      if (key === shownKey) return;
      shownKey = key;
      const [name, stepText, valueText] = readoutLines(best.curve.name, point.x, point.y);
      tip.replaceChildren(
        element("div", "jhw-hover-name", name),
        element("div", "jhw-hover-step", stepText),
        element("div", "jhw-hover-value", valueText),
      );
      tip.dataset.name = name;
      tip.dataset.step = String(point.x);
      tip.dataset.value = String(point.y);
      // Inside the box, beside the point: right of it unless that runs past the box's edge.
      const r = box.getBoundingClientRect();
      const x = at.x - r.left - box.clientLeft;
      const y = at.y - r.top - box.clientTop;
      dot.style.left = `${x}px`;
      dot.style.top = `${y}px`;
      // The line's own colour (bqplot cycles `colors` over the lines of a mark).
      const colors = best.mark.model.get("colors") || [];
      dot.style.borderColor = colors.length ? colors[best.curve.index % colors.length] : "";
      dot.hidden = false;
      tip.hidden = false;
      const w = tip.offsetWidth;
      const h = tip.offsetHeight;
      const left = x + 12 + w <= box.clientWidth ? x + 12 : Math.max(0, x - 12 - w);
      const top = Math.min(Math.max(0, y - h - 8), Math.max(0, box.clientHeight - h));
      tip.style.left = `${left}px`;
      tip.style.top = `${top}px`;
    } catch (e) {
      hide(); // a figure being rebuilt (log y toggled) may have no views for a moment
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

  return () => {
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
  };
}

function render({ model, el }) {
  const root = element("div", "jhw-panel");
  const style = element("style");
  style.textContent = CSS;

  const head = element("div", "jhw-row");
  const title = element("span", "jhw-title");
  const status = element("span", "jhw-status");
  const progress = element("div", "jhw-progress");
  progress.setAttribute("role", "progressbar");
  progress.setAttribute("aria-valuemin", "0");
  const bar = element("div", "jhw-progress-bar");
  progress.append(bar);
  const step = element("span", "jhw-step");
  const rate = element("span", "jhw-rate jhw-muted");
  const elapsed = element("span", "jhw-elapsed jhw-muted");
  const eta = element("span", "jhw-eta jhw-muted");
  const lanes = element("span", "jhw-lanes jhw-muted");
  const laneStatus = element("span", "jhw-lane-status jhw-muted");
  const kernelNote = element("span", "jhw-kernel");
  kernelNote.hidden = true;
  head.append(title, status, kernelNote, progress, step, rate, eta, elapsed, lanes, laneStatus);

  const fields = element("div", "jhw-fields");
  const error = element("pre", "jhw-error");

  const controls = element("div", "jhw-row");
  const stop = element("button", "jhw-stop", "■ Stop");
  stop.type = "button";
  const [logLabel, logY] = checkbox("jhw-logy", "log y");
  // short labels: the four controls fit one row down to ~300 px of output width
  const [keepLabel, keep] = checkbox("jhw-keep", "keep runs");
  keepLabel.title = "Keep previous runs on the plot, faded";
  const clear = element("button", "jhw-clear", "Clear");
  clear.type = "button";
  clear.title = "Forget previous runs and clear the plot";
  controls.append(stop, logLabel, keepLabel, clear);

  root.append(style, head, fields, error, controls);
  el.append(root);

  // Set once the kernel died or restarted: the model's comm is gone for good, so nothing this
  // view shows can change any more and no control can work.
  let kernelLost = null;
  // The run number a Stop was sent for: the button stays disabled ("stopping…") until that
  // run ended, so a second click cannot turn into a second interrupt (which the kernel would
  // take as "I insist": a KeyboardInterrupt).
  let stoppingRun = null;

  function update() {
    const s = model.get("status");
    root.dataset.status = s;
    root.dataset.kernel = kernelLost ? "dead" : "alive";
    kernelNote.textContent = kernelLost || "";
    kernelNote.hidden = !kernelLost;
    status.textContent = statusLabel(s);
    status.className = `jhw-status ${statusClass(s)}`;
    status.dataset.status = s;

    title.textContent = model.get("title") || "";
    title.hidden = !title.textContent;

    const k = model.get("step");
    const m = model.get("max_steps");
    const frac = progressFraction(k, m, s);
    bar.style.width = `${(100 * frac).toFixed(2)}%`;
    bar.className = progressClass(s);
    progress.setAttribute("aria-valuenow", String(k));
    progress.setAttribute("aria-valuemax", String(m));
    step.textContent = formatProgress(k, m);
    step.dataset.step = String(k);
    step.dataset.maxSteps = String(m);

    rate.textContent = kernelLost ? "" : formatRate(model.get("rate"));
    rate.hidden = !rate.textContent;
    eta.textContent = kernelLost ? "" : formatEta(etaSeconds(k, m, model.get("rate"), s));
    eta.hidden = !eta.textContent;
    elapsed.textContent = formatDuration(model.get("elapsed"));
    const b = model.get("lanes");
    lanes.textContent = b > 0 ? `${b} lanes` : "";
    lanes.hidden = !(b > 0);
    const summary = laneSummary(model.get("lane_statuses"), model.get("lane_names"));
    laneStatus.textContent = b > 0 ? summary : "";
    laneStatus.hidden = !laneStatus.textContent;

    // Under vmap `latest` holds the median over lanes and `latest_range` its [min, max].
    const latest = model.get("latest") || {};
    const range = model.get("latest_range") || {};
    fields.replaceChildren(
      ...(model.get("fields") || []).map((name) => {
        const item = element("span", "jhw-field");
        item.dataset.field = name;
        const value = element("span", "jhw-field-value", formatValue(latest[name]));
        value.dataset.value = String(latest[name] ?? "");
        item.append(element("span", "jhw-field-name", name), value);
        const span = range[name];
        if (Array.isArray(span) && span.length === 2) {
          value.title = "median over lanes";
          const text = ` [${formatValue(span[0])} … ${formatValue(span[1])}]`;
          const spread = element("span", "jhw-field-range jhw-muted", text);
          spread.title = "min … max over lanes";
          item.append(spread);
        }
        return item;
      }),
    );

    const message = model.get("error") || "";
    error.textContent = message;
    error.hidden = !message;

    const run = model.get("run_number");
    if (stoppingRun !== null && (stoppingRun !== run || !isRunning(s))) stoppingRun = null;
    const mode = stopMode();
    stop.dataset.mode = mode;
    stop.disabled = Boolean(kernelLost) || !isRunning(s) || stoppingRun !== null;
    stop.textContent = stoppingRun !== null ? "■ Stopping…" : "■ Stop";
    stop.title = kernelLost
      ? "The kernel is gone"
      : mode === "interrupt"
        ? "Stop the run after its current chunk (interrupts the kernel, like ■; " +
          "the partial history is kept)"
        : "Stop the run after its current chunk (the partial history is kept)";
    for (const control of [logY, keep, clear]) control.disabled = Boolean(kernelLost);
    logY.checked = Boolean(model.get("log_y"));
    keep.checked = Boolean(model.get("keep_runs"));
  }

  function kernel() {
    const manager = model.widget_manager;
    return manager && manager.kernel ? manager.kernel : null;
  }

  // "interrupt" only where the kernel connection can be asked for one; else the message.
  function stopMode() {
    const k = kernel();
    const canInterrupt = k !== null && typeof k.interrupt === "function";
    return model.get("stop_mode") === "interrupt" && canInterrupt ? "interrupt" : "message";
  }

  const sendStop = () => {
    model.set("stop_clicks", (model.get("stop_clicks") || 0) + 1);
    model.save_changes();
  };
  const onStop = () => {
    if (kernelLost || !isRunning(model.get("status"))) return;
    stoppingRun = model.get("run_number");
    if (stopMode() === "interrupt") {
      // The cell holds the kernel: a widget message would wait until it ends. The interrupt
      // (SIGINT, like ■) reaches the running loop at its next chunk.
      Promise.resolve()
        .then(() => kernel().interrupt())
        .catch((e) => {
          console.warn("jaxhist_widget: kernel interrupt failed, sending a stop message", e);
          sendStop();
        });
    } else {
      sendStop();
    }
    update();
  };
  const onClear = () => {
    model.set("clear_clicks", (model.get("clear_clicks") || 0) + 1);
    model.save_changes();
  };
  const onLogY = () => {
    model.set("log_y", logY.checked);
    model.save_changes();
  };
  const onKeep = () => {
    model.set("keep_runs", keep.checked);
    model.save_changes();
  };
  stop.addEventListener("click", onStop);
  clear.addEventListener("click", onClear);
  logY.addEventListener("change", onLogY);
  keep.addEventListener("change", onKeep);

  const traits = [
    "status", "title", "step", "max_steps", "rate", "elapsed", "lanes",
    "fields", "latest", "error", "log_y", "keep_runs", "stop_mode", "run_number",
    "lane_statuses", "lane_names", "latest_range",
  ];
  // One message from Python changes several traits at once, and each fires its own event:
  // coalesce them into one redraw after the message is applied.
  let pending = false;
  let alive = true;
  const schedule = () => {
    if (pending) return;
    pending = true;
    queueMicrotask(() => {
      pending = false;
      if (alive) update();
    });
  };
  for (const name of traits) model.on(`change:${name}`, schedule);

  // A dead or restarted kernel takes the model's comm with it and sends nothing more: watch
  // the kernel's status so the panel does not say "running" with Stop enabled forever.
  // (The model's comm_live flag is not exposed by anywidget's model proxy, and its change
  // event does not say which way it changed.)
  const onKernelStatus = (_sender, kernelStatus) => {
    const lost = kernelLostLabel(kernelStatus);
    // A crash shows as "restarting" then "autorestarting" (JupyterLab 4.6): let "kernel died"
    // replace "kernel restarted", never the other way.
    if (lost && (!kernelLost || (kernelLost !== lost && lost === "kernel died"))) {
      kernelLost = lost;
      schedule();
    }
  };
  const watched = kernel();
  if (watched && watched.statusChanged && typeof watched.statusChanged.connect === "function") {
    watched.statusChanged.connect(onKernelStatus);
    onKernelStatus(null, watched.status);
  }
  update();
  const removeHover = attachHover(model, el);

  return () => {
    alive = false;
    removeHover();
    for (const name of traits) model.off(`change:${name}`, schedule);
    const signal = watched && watched.statusChanged;
    if (signal && typeof signal.disconnect === "function") {
      watched.statusChanged.disconnect(onKernelStatus);
    }
    stop.removeEventListener("click", onStop);
    clear.removeEventListener("click", onClear);
    logY.removeEventListener("change", onLogY);
    keep.removeEventListener("change", onKeep);
    root.remove();
  };
}

export default { render };
