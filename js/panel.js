// The LivePanel view (anywidget ES module): status, progress, rate, latest values, controls.
//
// All state lives in the model's traits (see jaxhist_widget/widget.py), so any view, opened
// at any time, renders the same thing. The view only writes the controls: log_y, keep_runs,
// and the click counters stop_clicks / clear_clicks (counters, so every click is a change).
//
// Stable hooks for tests: .jhw-panel[data-status], .jhw-status[data-status],
// .jhw-step[data-step][data-max-steps], .jhw-progress[aria-valuenow], .jhw-rate,
// .jhw-elapsed, .jhw-field[data-field] > .jhw-field-value[data-value], .jhw-error,
// .jhw-stop, .jhw-logy, .jhw-keep, .jhw-clear.

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

/** True while a run is in progress (the Stop button is enabled only then). */
export function isRunning(status) {
  return status === "running";
}

/** Fraction of max_steps done, clamped to [0, 1]; 0 when max_steps is unknown. */
export function progressFraction(step, maxSteps) {
  const s = Number(step);
  const m = Number(maxSteps);
  if (!Number.isFinite(s) || !Number.isFinite(m) || m <= 0) return 0;
  return Math.min(1, Math.max(0, s / m));
}

/** An integer with thousands separators: 1234567 -> "1,234,567". */
export function formatCount(n) {
  const v = Number(n);
  if (!Number.isFinite(v)) return "–";
  const sign = v < 0 ? "-" : "";
  return sign + Math.round(Math.abs(v)).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");
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

/** Steps per second with a k/M suffix: "850 steps/s", "12.3k steps/s", "4.1M steps/s". */
export function formatRate(rate) {
  const r = Number(rate);
  if (!Number.isFinite(r) || r <= 0) return "– steps/s";
  let text;
  if (r >= 1e6) text = `${(r / 1e6).toFixed(1)}M`;
  else if (r >= 1e4) text = `${(r / 1e3).toFixed(1)}k`;
  else if (r >= 100) text = `${Math.round(r)}`;
  else if (r >= 1) text = `${r.toFixed(1)}`;
  else text = r.toPrecision(2);
  return `${text} steps/s`;
}

/** "step / max_steps" text. */
export function formatProgress(step, maxSteps) {
  return Number(maxSteps) > 0
    ? `${formatCount(step)} / ${formatCount(maxSteps)}`
    : formatCount(step);
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
.jhw-step, .jhw-rate, .jhw-elapsed, .jhw-field-value {
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
  color: var(--jp-error-color1, #d32f2f);
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
  const lanes = element("span", "jhw-lanes jhw-muted");
  head.append(title, status, progress, step, rate, elapsed, lanes);

  const fields = element("div", "jhw-fields");
  const error = element("pre", "jhw-error");

  const controls = element("div", "jhw-row");
  const stop = element("button", "jhw-stop", "■ Stop");
  stop.type = "button";
  stop.title = "Stop the run after its current step (needs an async cell: await live.run_async(...))";
  const [logLabel, logY] = checkbox("jhw-logy", "log y");
  const [keepLabel, keep] = checkbox("jhw-keep", "keep previous runs");
  const clear = element("button", "jhw-clear", "Clear");
  clear.type = "button";
  clear.title = "Forget previous runs and clear the plot";
  controls.append(stop, logLabel, keepLabel, clear);

  root.append(style, head, fields, error, controls);
  el.append(root);

  function update() {
    const s = model.get("status");
    root.dataset.status = s;
    status.textContent = statusLabel(s);
    status.className = `jhw-status ${statusClass(s)}`;
    status.dataset.status = s;

    title.textContent = model.get("title") || "";
    title.hidden = !title.textContent;

    const k = model.get("step");
    const m = model.get("max_steps");
    const frac = progressFraction(k, m);
    bar.style.width = `${(100 * frac).toFixed(2)}%`;
    progress.setAttribute("aria-valuenow", String(k));
    progress.setAttribute("aria-valuemax", String(m));
    step.textContent = formatProgress(k, m);
    step.dataset.step = String(k);
    step.dataset.maxSteps = String(m);

    rate.textContent = formatRate(model.get("rate"));
    elapsed.textContent = formatDuration(model.get("elapsed"));
    const b = model.get("lanes");
    lanes.textContent = b > 0 ? `${b} lanes` : "";
    lanes.hidden = !(b > 0);

    const latest = model.get("latest") || {};
    fields.replaceChildren(
      ...(model.get("fields") || []).map((name) => {
        const item = element("span", "jhw-field");
        item.dataset.field = name;
        const value = element("span", "jhw-field-value", formatValue(latest[name]));
        value.dataset.value = String(latest[name] ?? "");
        item.append(element("span", "jhw-field-name", name), value);
        return item;
      }),
    );

    const message = model.get("error") || "";
    error.textContent = message;
    error.hidden = !message;

    stop.disabled = !isRunning(s);
    logY.checked = Boolean(model.get("log_y"));
    keep.checked = Boolean(model.get("keep_runs"));
  }

  const onStop = () => {
    model.set("stop_clicks", (model.get("stop_clicks") || 0) + 1);
    model.save_changes();
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
    "fields", "latest", "error", "log_y", "keep_runs",
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
  update();

  return () => {
    alive = false;
    for (const name of traits) model.off(`change:${name}`, schedule);
    stop.removeEventListener("click", onStop);
    clear.removeEventListener("click", onClear);
    logY.removeEventListener("change", onLogY);
    keep.removeEventListener("change", onKeep);
    root.remove();
  };
}

export default { render };
