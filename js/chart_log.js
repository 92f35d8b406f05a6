// Each titled chart's own "log" toggle (hover.js places them once it found the LivePlot box).

import { bqplot } from "./bqplot_adapter.js";
import { element } from "./dom.js";
import { sendControl } from "./kernel.js";

/**
 * Each titled chart's own "log" toggle, in its top left corner: pressed while the chart's title
 * is in the `log_charts` trait; a click asks the kernel to flip it (a `chart_log` control,
 * never a trait write, see `kernel.js`). A chart's figure view can be made after the figures
 * changed: the toggles are placed again a few times until every chart has its own.
 * Returns a function that removes them.
 */
export function attachChartLogToggles(model, box) {
  let disposed = false;
  let retry = 0;
  let tries = 0;
  const toggles = new Map(); // chart title -> its button
  const watched = new Set(); // figure models whose title is watched
  async function place() {
    retry = 0;
    if (disposed) return;
    const refs = model.get("figures") || [];
    const titles = new Set();
    let missing = false;
    for (const ref of refs) {
      let view = null;
      try {
        view = await bqplot.figureView(model.widget_manager, ref, box);
      } catch (e) {
        view = null;
      }
      if (disposed) return;
      const title = view ? view.model.get("title") : "";
      if (!view) missing = true;
      // A chart can be titled after its view is made (a live run's first rows name it).
      if (view && !watched.has(view.model)) {
        watched.add(view.model);
        view.model.on("change:title", onFigures);
      }
      if (!title) continue;
      titles.add(title);
      let button = toggles.get(title);
      if (!button || button.parentNode !== view.el) {
        if (button) button.remove();
        button = element("button", "jhw-chart-log", "log");
        button.type = "button";
        button.title = `${title}: logarithmic y axis`;
        button.addEventListener("click", () => {
          const on = (model.get("log_charts") || []).includes(title);
          sendControl(model, "chart_log", [title, !on]);
        });
        if (getComputedStyle(view.el).position === "static") view.el.style.position = "relative";
        view.el.append(button);
        toggles.set(title, button);
      }
    }
    for (const [title, button] of toggles) {
      if (!titles.has(title)) {
        button.remove();
        toggles.delete(title);
      }
    }
    show();
    if (missing && ++tries < 20) retry = setTimeout(place, 250);
  }
  function show() {
    const logs = model.get("log_charts") || [];
    for (const [title, button] of toggles) {
      const on = logs.includes(title);
      button.setAttribute("aria-pressed", String(on));
      button.classList.toggle("jhw-on", on);
    }
  }
  const onFigures = () => {
    tries = 0;
    clearTimeout(retry);
    retry = setTimeout(place, 0);
  };
  model.on("change:figures", onFigures);
  model.on("change:log_charts", show);
  onFigures();
  return () => {
    disposed = true;
    clearTimeout(retry);
    model.off("change:figures", onFigures);
    model.off("change:log_charts", show);
    for (const figure of watched) figure.off("change:title", onFigures);
    for (const button of toggles.values()) button.remove();
  };
}
