// The zoom of a LivePlot's step axis, in the browser: a drag across a chart selects steps (a
// rectangle shows them at once) and asks the kernel to show just those, on every chart; a
// double-click zooms back out; shift+drag pans the steps shown. Path charts (class `jhw-path`,
// their x is a series) are not zoomed.
//
// The kernel draws the zoom (`step_range`: every point of the range, decimated afresh from its
// rows), so the view only sends what was asked (`requestZoom`, a control message). A normal
// cell keeps the kernel from handling any message until it ends: the rectangle then stays,
// marked as waiting, with the panel's zoom chip, until the kernel applied the zoom. A pan sends
// its next range once the kernel showed the previous one, so a busy kernel gets one message,
// and the final range when the drag ends, which it applies when the cell ends.
//
// Stable hooks for tests: .jhw-zoom-rect[data-kind="zoom"|"pan"][data-lo][data-hi]
// [data-waiting] (hidden unless a drag or a zoom waiting for the kernel shows it).

import { BqplotMismatch, bqplot } from "./bqplot_adapter.js";
import { element } from "../base/dom.js";
import { requestZoom } from "../panel/kernel.js";
import {
  dragRange,
  inArea,
  panRange,
  rangeLabel,
  sameRange,
  selectionBox,
} from "../base/zoom_range.js";

/**
 * Zooms the charts of the LivePlot box `box` by dragging. `chartAt(point)` resolves to the
 * bqplot figure view under a client point (from the hover, which keeps them); `view` is the
 * panel view's own state (`kernelLost`, `pendingZoom`) and `refresh` redraws the panel.
 * Returns `{ remove, update, dragging }`: `update` follows the kernel's `step_range` and the
 * pending zoom, `dragging()` whether a drag is under way (the hover read-out waits meanwhile).
 */
export function attachZoom(model, box, chartAt, view, refresh) {
  const rect = element("div", "jhw-zoom-rect");
  const label = element("span", "jhw-zoom-label");
  const wait = element("span", "jhw-zoom-wait", "applied when the kernel is free");
  rect.append(label, wait);
  rect.hidden = true;
  let drag = null; // {kind, start, x, chart, axis, range}
  let shown = null; // the range the rectangle waits for, once let go
  let panSent = null; // a pan's range sent and not yet shown by the kernel
  let disabled = false;

  const hide = () => {
    rect.hidden = true;
    shown = null;
  };
  // The rectangle is placed in the chart's own element, so that it stays on its chart if the
  // panel above changes height meanwhile (the zoom chip may wrap onto a row of its own).
  const place = (chart, x0, x1, area, kind, range) => {
    const host = chart.el;
    if (rect.parentNode !== host) {
      if (getComputedStyle(host).position === "static") host.style.position = "relative";
      host.append(rect);
    }
    const r = host.getBoundingClientRect();
    const frame = { left: r.left, top: r.top, clientLeft: host.clientLeft, clientTop: host.clientTop };
    const b = selectionBox(x0, x1, area, frame);
    Object.assign(rect.style, {
      left: `${b.left}px`, top: `${b.top}px`, width: `${b.width}px`, height: `${b.height}px`,
    });
    rect.dataset.kind = kind;
    rect.dataset.lo = range ? String(range[0]) : "";
    rect.dataset.hi = range ? String(range[1]) : "";
    label.textContent = range ? rangeLabel(range) : "";
    rect.hidden = false;
  };
  const floorOf = (axis) => (axis.log ? 1 : 0); // a log axis has no step 0
  // A zoom is in steps: on a time axis (`x_axis` relative or wall) a drag does nothing.
  const timeAxis = () => (model.get("x_axis") || "step") !== "step";

  const show = () => {
    const d = drag;
    if (!d || !d.axis) return;
    const { area, toStep } = d.axis;
    rect.dataset.waiting = "false";
    if (d.kind === "pan") {
      d.range = panRange(area, d.x - d.start.x, toStep, floorOf(d.axis));
      place(d.chart, area.left, area.right, area, "pan", d.range);
      if (d.range && !panSent && !sameRange(d.range, model.get("step_range"))) {
        panSent = d.range; // the next once the kernel showed this one (`update`)
        requestZoom(model, view, d.range);
        refresh();
      }
    } else {
      d.range = dragRange(d.start.x, d.x, d.axis);
      place(d.chart, d.start.x, d.x, area, "zoom", d.range);
    }
  };

  const stop = () => {
    window.removeEventListener("mousemove", onMove);
    window.removeEventListener("mouseup", onUp);
    window.removeEventListener("keydown", onKey);
    drag = null;
  };
  const onMove = (event) => {
    if (!drag) return;
    drag.x = event.clientX;
    show();
  };
  const onKey = (event) => {
    if (event.key !== "Escape" || !drag) return;
    stop();
    hide();
  };
  const onUp = async (event) => {
    const d = drag;
    if (!d) return;
    d.x = event.clientX;
    stop();
    if (!d.axis) return hide();
    const { area, toStep } = d.axis;
    let range = d.kind === "pan" ? panRange(area, d.x - d.start.x, toStep, floorOf(d.axis)) : null;
    if (d.kind === "zoom") {
      // From the step pressed on to the step under the pointer as the chart is drawn now (a
      // live run or a relayout may have moved its axis meanwhile).
      const now = await bqplot.stepAxis(d.chart).catch(() => null);
      range = dragRange(d.start.x, d.x, d.axis, now || d.axis);
    }
    panSent = null;
    if (range && requestZoom(model, view, range)) refresh(); // (a pan's may be on its way)
    const pending = view.pendingZoom;
    if (range && pending && sameRange(pending.range, range)) {
      shown = range; // the rectangle stays, waiting, until the kernel shows the range
      if (d.kind === "zoom") place(d.chart, d.start.x, d.x, area, "zoom", range);
    } else {
      hide();
    }
    update();
  };

  const onDown = (event) => {
    if (event.button !== 0 || drag || disabled || view.kernelLost || timeAxis()) return;
    const target = event.target;
    const fig = target && target.closest ? target.closest(".jhw-figure") : null;
    if (!fig || !box.contains(fig) || fig.classList.contains("jhw-path")) return;
    if (target.closest("button, .jhw-chart-tools")) return; // a chart's own tools
    event.preventDefault(); // no text selection while dragging
    const start = { x: event.clientX, y: event.clientY };
    const kind = event.shiftKey ? "pan" : "zoom";
    const d = { kind, start, x: start.x, chart: null, axis: null, range: null };
    drag = d;
    window.addEventListener("mousemove", onMove);
    window.addEventListener("mouseup", onUp);
    window.addEventListener("keydown", onKey);
    chartAt(d.start)
      .then((chart) => {
        d.chart = chart;
        return chart ? bqplot.stepAxis(chart) : null;
      })
      .then((axis) => {
        if (drag !== d) return;
        if (!axis || !inArea(d.start, axis.area)) {
          stop(); // on an axis, a title or a margin: no zoom
          return;
        }
        d.axis = axis;
        hide();
        show();
      })
      .catch((e) => {
        if (drag === d) stop();
        if (e instanceof BqplotMismatch) {
          disabled = true;
          console.error("jaxhist_widget: zoom is turned off (bqplot internals changed).", e);
        }
      });
  };

  const onDoubleClick = (event) => {
    const fig = event.target && event.target.closest ? event.target.closest(".jhw-figure") : null;
    if (!fig || fig.classList.contains("jhw-path") || event.target.closest("button, .jhw-chart-tools")) return;
    if (view.kernelLost || timeAxis()) return;
    hide();
    if (requestZoom(model, view, null)) refresh();
  };

  /** Follows the kernel's `step_range`: the next range of a pan, and the waiting rectangle,
   * hidden once its zoom is shown or another one replaced it. */
  function update() {
    const steps = model.get("step_range");
    if (panSent && sameRange(panSent, steps)) {
      panSent = null;
      if (drag && drag.kind === "pan") show(); // sends where the pan is now, if it moved on
    }
    const pending = view.pendingZoom;
    if (shown && (!pending || !sameRange(pending.range, shown) || sameRange(steps, shown))) hide();
    else if (shown) rect.dataset.waiting = "true";
  }

  box.addEventListener("mousedown", onDown);
  box.addEventListener("dblclick", onDoubleClick);
  return {
    update,
    dragging: () => drag !== null,
    remove() {
      stop();
      box.removeEventListener("mousedown", onDown);
      box.removeEventListener("dblclick", onDoubleClick);
      rect.remove();
    },
  };
}
