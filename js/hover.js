// The hover read-out of a LivePlot's figure: the drawn point nearest to the pointer, read from
// the points the figure's lines already hold (see `attachHover`). The panel's `figure` trait is
// its LivePlot's bqplot figure; the view finds that figure's view in the same box.

import { BqplotMismatch, bqplot } from "./bqplot_adapter.js";
import { element } from "./dom.js";
import { nearestOnLines, readoutLines, readoutPlacement } from "./geometry.js";

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
export function attachHover(model, el) {
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
