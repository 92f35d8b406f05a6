// The bqplot adapter.
//
// Everything the hover and the zoom read of bqplot's front end that is not public API: the
// figure model's views, the figure view's `mark_views`, each mark view's `scales` (bqscales
// views: `scale`, a d3 scale with `invert`, `copy`, `range` and `domain`, plus a pixel `offset`,
// the mapping bqplot's Lines draws with), its model's `mark_data` (per line: `name`, `index`,
// `values` as sorted {x, y}), and its SVG element's screen transform. Checked against bqplot
// 0.13.1 (front end bqplot 0.6.1, bqscales 0.3.7); only a LivePlot figure's plain Lines marks
// are read (`lineSets`). What is missing while a figure is still being drawn makes it return
// nothing; anything else that is not as expected throws a `BqplotMismatch`, on which the hover
// and the zoom turn themselves off and say why in the console, rather than read out a wrong
// point or zoom to wrong steps.

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

/** A Lines mark drawn as lines (not a filled band), by its model. */
function isPlainLine(model) {
  return model.get("_model_name") === "LinesModel" && (model.get("fill") || "none") === "none";
}

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
  // A vmap lane hidden one by one is drawn transparent: nothing to read out there.
  const opacities = mark.model.get("opacities") || [];
  const shown = (line) =>
    !opacities.length || !Number.isInteger(line.index) ||
    Number(opacities[line.index % opacities.length]) !== 0;
  const lines = data.filter(shown).map((line) => {
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
    el: mark.el, // (where a line drawn by the page goes: js/charts/highlight.js)
    xPx: (x) => xs.scale(x) + xs.offset,
    yPx: (y) => ys.scale(y) + ys.offset,
    xData: (px) => xs.scale.invert(px - xs.offset),
    toLocal: (x, y) => transform(inverse, x, y),
    toClient: (x, y) => transform(ctm, x, y),
    axis: () => frozenAxis(xs, ys, ctm, inverse),
  };
}

/** The step axis of a mark's scale views `xs`, `ys` (its element's screen transform `ctm` and
 * `inverse`), copied as drawn now: a later update of the scale leaves it as it is. */
function frozenAxis(xs, ys, ctm, inverse) {
  const ok = (s) => ["copy", "range", "domain"].every((f) => typeof s.scale[f] === "function");
  expect(ok(xs) && ok(ys), "a scale view's d3 scale without copy / range / domain");
  const x = xs.scale.copy();
  const [x0, x1] = x.range().map((px) => px + xs.offset);
  const [y0, y1] = ys.scale.range().map((px) => px + ys.offset);
  const a = transform(ctm, Math.min(x0, x1), Math.min(y0, y1));
  const b = transform(ctm, Math.max(x0, x1), Math.max(y0, y1));
  return {
    toStep: (clientX, clientY = a.y) => x.invert(transform(inverse, clientX, clientY).x - xs.offset),
    area: { left: a.x, right: b.x, top: a.y, bottom: b.y },
    domain: x.domain().map(Number),
    log: typeof x.base === "function", // d3's log scales have a base
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

  /** The step axis of the figure view (from `figureView`), frozen as drawn now: `toStep(clientX)`,
   * the plot area in client pixels (`area`: left, right, top, bottom), the steps it spans
   * (`domain`) and whether it is logarithmic (`log`); null for a path chart (its x is a
   * series) or while it draws no line. */
  async stepAxis(view) {
    const [set] = await this.lineSets(view);
    return set ? set.axis() : null;
  },

  /** What the figure view draws: one entry per shown line mark (see `readMark`; a hidden
   * run's marks are not shown); [] before it draws. Only the lines are read: a band (a filled
   * polygon, its x going back), a heatmap image and a path's end dots are not, nor any line of
   * a path chart (class `jhw-path`: its x is a series, not a step). */
  async lineSets(view) {
    if (view.el && view.el.classList && view.el.classList.contains("jhw-path")) return [];
    const list = view.mark_views;
    if (!list) {
      // A figure view makes its mark views once it is displayed and laid out.
      expect(!hasDrawnLine(view.el), "a drawn figure view without `mark_views`");
      return [];
    }
    expect(Array.isArray(list.views), "`mark_views.views` is not a list");
    const marks = await Promise.all(list.views);
    return marks
      .filter((m) => !m || !m.model || isPlainLine(m.model))
      .filter((m) => !(m && m.model && m.model.get("visible") === false))
      .map(readMark)
      .filter((set) => set !== null);
  },

  /** What a hyperparameter chart's view (class `jhw-params`) draws: as `lineSets`, its line
   * marks (its x is a parameter, not a step, so `lineSets` leaves it out). */
  async paramSets(view) {
    const list = view.mark_views;
    if (!list) return [];
    expect(Array.isArray(list.views), "`mark_views.views` is not a list");
    const marks = await Promise.all(list.views);
    return marks
      .filter((m) => m && m.model && isPlainLine(m.model))
      .map(readMark)
      .filter((set) => set !== null);
  },

  /** The elements of the figure view's plain line marks, in the figure's order (its `marks`,
   * the order bqplot draws them in, whatever order they are in the page now): per mark its
   * element (`el`, a child of the figure's marks group) and its lines (`lines`: per line its
   * `g.curve` element `el` and `name`). bqplot binds a mark's lines to its `g.curve` elements
   * by position, so the k-th element draws `mark_data[k]`: the highlight styles them but never
   * moves them (it moves whole marks). [] before the figure draws. */
  async lineMarks(view) {
    const list = view.mark_views;
    if (!list) return [];
    expect(Array.isArray(list.views), "`mark_views.views` is not a list");
    const marks = await Promise.all(list.views);
    return marks
      .filter((m) => m && m.model && m.el && isPlainLine(m.model))
      .map((m) => {
        const data = m.model.mark_data;
        expect(Array.isArray(data), "a mark model without a `mark_data` list");
        const curves = [...m.el.querySelectorAll("g.curve")];
        const lines = curves.map((el, k) => ({ el, name: data[k] ? String(data[k].name) : "" }));
        return { el: m.el, lines };
      });
  },
};
