// Each chart's own tools in its top left corner (hover.js places them once it found the LivePlot
// box): a titled chart's "log" toggle, every chart's download menu
// (js/charts/chart_download.js), a hyperparameter chart's field select and best toggle, then
// the chart's title: in the same row, after them, so no control is ever over it (bqplot's own,
// centred over the plot, is hidden: `.jhw-tools-titled`).

import { bqplot } from "./bqplot_adapter.js";
import { attachDownloads } from "./chart_download.js";
import { element } from "../base/dom.js";
import { logButton } from "../base/format.js";
import { paramTools } from "../base/params.js";
import { sendControl } from "../panel/kernel.js";

/**
 * Each chart's tools, in its top left corner: a titled chart's "log" toggle, pressed while the
 * chart's title is in the `log_charts` trait (a click asks the kernel to flip it: a `chart_log`
 * control, never a trait write, see `kernel.js`) and offered ("log?", in the accent colour)
 * while its values span decades on a linear axis (`log_hints`), then its download menu. A chart's figure
 * view can be made after the figures changed: the tools are placed again a few times until
 * every chart has its own. Returns a function that removes them.
 */
export function attachChartLogToggles(model, box) {
  let disposed = false;
  let retry = 0;
  let tries = 0;
  const downloads = attachDownloads(model);
  const tools = new Map(); // figure model -> {root, log: its log button or null, title}
  const watched = new Set(); // figure models whose title is watched
  async function place() {
    retry = 0;
    if (disposed) return;
    const refs = model.get("figures") || [];
    const current = new Set();
    let missing = false;
    for (const ref of refs) {
      let view = null;
      try {
        view = await bqplot.figureView(model.widget_manager, ref, box);
      } catch (e) {
        view = null;
      }
      if (disposed) return;
      if (!view) {
        missing = true;
        continue;
      }
      const figure = view.model;
      current.add(figure);
      // A chart can be titled after its view is made (a live run's first rows name it).
      if (!watched.has(figure)) {
        watched.add(figure);
        figure.on("change:title", onFigures);
      }
      let tool = tools.get(figure);
      if (!tool || tool.root.parentNode !== view.el) {
        if (tool) tool.root.remove();
        tool = { root: element("div", "jhw-chart-tools"), log: null, params: null, title: "" };
        tool.heading = element("span", "jhw-chart-title");
        tool.root.append(downloads.control(() => figure.get("title") || ""), tool.heading);
        if (getComputedStyle(view.el).position === "static") view.el.style.position = "relative";
        view.el.append(tool.root);
        view.el.classList.add("jhw-tools-titled");
        tool.el = view.el;
        tools.set(figure, tool);
      }
      tool.title = figure.get("title") || "";
      tool.heading.textContent = tool.title;
      tool.heading.title = tool.title; // (the whole of a title cut short in a narrow chart)
      tool.heading.hidden = !tool.title;
      if (tool.title && !tool.log) {
        tool.log = logToggle(() => tool.title);
        tool.root.prepend(tool.log);
      } else if (!tool.title && tool.log) {
        tool.log.remove();
        tool.log = null;
      }
      // a hyperparameter chart: which plotted field it ranks, and whether best is min or max
      const ranks = paramTools(model.get("param_lanes"), tool.title) !== null;
      if (ranks && !tool.params) {
        tool.params = paramControls(() => tool.title);
        tool.heading.before(tool.params.root);
      } else if (!ranks && tool.params) {
        tool.params.root.remove();
        tool.params = null;
      }
    }
    for (const [figure, tool] of tools) {
      if (!current.has(figure)) {
        tool.root.remove();
        tool.el.classList.remove("jhw-tools-titled");
        tools.delete(figure);
      }
    }
    show();
    if (missing && ++tries < 20) retry = setTimeout(place, 250);
  }
  function logToggle(title) {
    const button = element("button", "jhw-chart-log", "log");
    button.type = "button";
    button.addEventListener("click", () => {
      const on = (model.get("log_charts") || []).includes(title());
      sendControl(model, "chart_log", [title(), !on]);
    });
    return button;
  }
  // A hyperparameter chart's field select and best toggle: each sends its control (the
  // kernel sets `params_field` / `params_best`, the chart is drawn anew, `param_lanes` follows).
  function paramControls(title) {
    const root = element("span", "jhw-params-tools");
    const select = element("select", "jhw-params-field");
    select.addEventListener("change", () => sendControl(model, "params_field", select.value));
    const best = element("button", "jhw-params-best");
    best.type = "button";
    best.addEventListener("click", () => {
      const tools = paramTools(model.get("param_lanes"), title());
      if (tools) sendControl(model, "params_best", tools.next);
    });
    root.append(select, best);
    return { root, select, best };
  }
  function showParams(tool) {
    const tools = paramTools(model.get("param_lanes"), tool.title);
    if (!tool.params || !tools) return;
    const { select, best } = tool.params;
    const options = tools.fields.join("\n");
    if (select.dataset.fields !== options) {
      select.dataset.fields = options;
      select.replaceChildren(...tools.fields.map((f) => element("option", "", f)));
    }
    if (select.value !== tools.field) select.value = tools.field;
    select.title = `the field this chart ranks: ${tools.field}`;
    best.textContent = tools.text;
    best.title = tools.tip;
    best.dataset.best = tools.best;
  }
  function show() {
    const logs = model.get("log_charts") || [];
    const hints = model.get("log_hints") || {};
    for (const tool of tools.values()) {
      showParams(tool);
      if (!tool.log) continue;
      const on = logs.includes(tool.title);
      const look = logButton(tool.title, on, hints[tool.title] || 0);
      tool.log.setAttribute("aria-pressed", String(on));
      tool.log.classList.toggle("jhw-on", on);
      tool.log.classList.toggle("jhw-hint", look.hinted);
      tool.log.textContent = look.text;
      tool.log.title = look.tip;
    }
  }
  const onFigures = () => {
    tries = 0;
    clearTimeout(retry);
    retry = setTimeout(place, 0);
  };
  model.on("change:figures", onFigures);
  model.on("change:log_charts", show);
  model.on("change:log_hints", show);
  model.on("change:param_lanes", onFigures); // (a chart may become one: its tools are placed)
  onFigures();
  return () => {
    disposed = true;
    clearTimeout(retry);
    model.off("change:figures", onFigures);
    model.off("change:log_charts", show);
    model.off("change:log_hints", show);
    model.off("change:param_lanes", onFigures);
    for (const figure of watched) figure.off("change:title", onFigures);
    for (const tool of tools.values()) {
      tool.root.remove();
      tool.el.classList.remove("jhw-tools-titled"); // (bqplot's own title shows again)
    }
    downloads.dispose();
  };
}
