"""Vectors and paths in a real JupyterLab: 10 per-class losses drawn as 10 lines, 50 as a
median over two bands (and, asked, over a heatmap), and a gradient-descent path on the Rosenbrock
function drawn x against y while the run streams; none of them reads as an error.

``JHW_UPDATE_SCREENSHOT=1`` also writes the widget screenshots to ``docs/vectors-*.png`` and
``docs/path-*.png``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ..helpers.browser import (
    Notebook,
    hover_until_read_out,
)
from ..helpers.jupyter_browser import (
    sample_while_running,
    save_screenshot,
)
from ..helpers.page_charts import CHARTS_JS

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.ui

DOCS = Path(__file__).resolve().parents[2] / "docs"

CLASSES = """\
import functools

import jax
import jax.numpy as jnp
import jaxhist_widget as jhw
from IPython.display import display


@functools.partial(jax.jit, static_argnames="classes")
def train(classes):
    # Per-class losses, each falling at its own rate, with a wobble: a classifier's, by class.
    rates = 20.0 + 9.0 * jnp.arange(classes)

    def losses(k):
        wobble = 0.04 * jnp.sin(k * (1.0 + jnp.arange(classes)) / 7.0)
        return 2.3 * jnp.exp(-k / rates) + 0.05 + wobble

    return jhw.while_loop(
        lambda k: k < 400, lambda k: k + 1.0, jnp.float32(0), max_steps=400,
        record=lambda k: {"loss": losses(k).mean(), "class_loss": losses(k)})
"""

PATH = """\
import jax
import jax.numpy as jnp
import jaxhist_widget as jhw
from IPython.display import display

N = 256
A = jax.random.normal(jax.random.key(0), (N, N)) / N**0.5


def rosenbrock(x):
    return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2


@jax.jit
def descend(x0):
    # Gradient descent from (-1.5, 2): a fall into the valley, then a long walk along it. The
    # tanh(A @ h) beside it makes each step compute-bound, so the run lasts several seconds
    # (on a loaded machine too: the test samples the drawn path while it runs).
    def body(c):
        k, x, h = c
        return k + 1, x - 1.5e-3 * jax.grad(rosenbrock)(x), jnp.tanh(A @ h)

    return jhw.while_loop(
        lambda c: c[0] < 2_000_000, body, (jnp.int32(0), x0, jnp.ones(N)),
        max_steps=2_000_000, record=lambda c: {"loss": rosenbrock(c[1]), "x": c[1]})
"""


def _plots(page: Page) -> list[dict]:
    return page.evaluate(CHARTS_JS)


def _inside(inner: dict, outer: dict, eps: float = 1.0) -> bool:
    return (
        outer["left"] - eps <= inner["left"]
        and inner["right"] <= outer["right"] + eps
        and outer["top"] - eps <= inner["top"]
        and inner["bottom"] <= outer["bottom"] + eps
    )


# The client position of the vertex at 40 % of the line named ``prefix`` in LivePlot ``k``.
VERTEX_IN_PLOT_JS = """
([k, prefix]) => {
  const plot = document.querySelectorAll('.jhw-liveplot')[k];
  for (const path of plot.querySelectorAll('.jhw-figure g.curve path.line')) {
    const curve = path.parentNode.__data__;
    if (!curve || !String(curve.name).startsWith(prefix)) continue;
    const pts = [...path.getAttribute('d').matchAll(/[ML]([-\\d.e]+),([-\\d.e]+)/g)];
    const [, x, y] = pts[Math.floor(0.4 * (pts.length - 1))];
    const p = new DOMPoint(Number(x), Number(y)).matrixTransform(path.getScreenCTM());
    return { x: p.x, y: p.y };
  }
  return null;
}
"""


def _hover_plot(page: Page, k: int, prefix: str) -> str:
    """Point at a vertex of LivePlot ``k``'s line ``prefix``; the name its read-out shows."""
    vertex = page.evaluate(VERTEX_IN_PLOT_JS, [k, prefix])
    assert vertex is not None, f"no {prefix!r} line in plot {k}"
    page.mouse.move(vertex["x"] + 3, vertex["y"] + 3)
    page.mouse.move(vertex["x"], vertex["y"])
    tip = page.locator(".jhw-liveplot").nth(k).locator(".jhw-hover:not([hidden]) .jhw-hover-name")
    tip.first.wait_for(timeout=10_000)
    return tip.first.text_content() or ""


def _legend_under(chart: dict, names: list[str]) -> None:
    """``chart``'s own legend names ``names`` and sits right under its figure: its top at the
    figure's bottom, its entries within the figure's left and right, under it."""
    legend, figure = chart["legend"], chart["figure"]
    assert legend is not None and all(n in legend["text"] for n in names), legend
    assert abs(legend["box"]["top"] - figure["bottom"]) <= 2, (legend["box"], figure)
    assert legend["items"] and all(
        figure["left"] - 1 <= item["left"]
        and item["right"] <= figure["right"] + 1
        and figure["bottom"] - 1 <= item["top"]
        and item["bottom"] <= legend["box"]["bottom"] + 1
        for item in legend["items"]
    ), (legend["items"], figure)


def _copy_to_docs(shots: dict[str, Path]) -> None:
    if os.environ.get("JHW_UPDATE_SCREENSHOT") == "1":
        DOCS.mkdir(exist_ok=True)
        for name, shot in shots.items():
            shutil.copyfile(shot, DOCS / f"{name}.png")


def test_per_class_losses_lines_and_a_50_class_band_and_heatmap(
    page: Page, notebook: Notebook, tmp_path: Path
) -> None:
    page.set_viewport_size({"width": 1400, "height": 1400})
    cells = [
        CLASSES,
        "ten = jhw.LivePlot(title='10 classes')\ndisplay(ten)\nwith ten:\n    train(10)",
        "fifty = jhw.LivePlot(title='50 classes')\ndisplay(fifty)\nwith fifty:\n    train(50)",
        "heat = jhw.LivePlot(title='50 classes, heatmap', fields=['class_loss'],\n"
        "                    vectors='heatmap')\n"
        "display(heat)\nwith heat:\n    train(50)",
    ]
    notebook.open(cells, name="vectors.ipynb")
    notebook.idle(timeout=180)
    page.wait_for_function(
        f"() => ({CHARTS_JS})().length === 3 && ({CHARTS_JS})().every((p) =>"
        " p.status === 'converged' && (p.charts.class_loss || {lines: []}).lines.length > 0"
        " && p.charts.class_loss.lines.every((l) => l.points >= 2))",
        timeout=60_000,
    )
    page.wait_for_timeout(500)  # the last layout (widths reported back)
    views = page.locator(".jhw-liveplot")
    shots = {}
    for k, name in enumerate(("vectors-lines", "vectors-band", "vectors-heatmap")):
        views.nth(k).scroll_into_view_if_needed()
        shots[name] = save_screenshot(views.nth(k), tmp_path, name)
    ten, fifty, heat = _plots(page)
    for plot in (ten, fifty, heat):  # finished: the plot's trouble never reads as the run's
        assert plot["badge"] == "finished", plot["badge"]
    # 10 classes: a line per class, each its own colour, inside the chart
    chart = ten["charts"]["class_loss"]
    assert len(chart["lines"]) == 10 and len({line["stroke"] for line in chart["lines"]}) == 10
    assert all(_inside(line["box"], chart["area"]) for line in chart["lines"])
    # their legend right under their chart, not in the row under the whole grid (which the
    # reader would have to match colours across)
    _legend_under(chart, [f"class_loss[{k}]" for k in range(10)])
    assert "class_loss[" not in ten["legend"] and ten["charts"]["loss"]["legend"] is None
    # 50 classes: two filled bands under one median line, the bands around it
    chart = fifty["charts"]["class_loss"]
    bands = [line for line in chart["lines"] if line["fill"] != "none"]
    (median,) = [line for line in chart["lines"] if line["fill"] == "none"]
    assert len(bands) == 2 and median["name"] == "class_loss median · run 1"
    outer = bands[0]["box"]
    assert outer["top"] <= median["box"]["top"] and median["box"]["bottom"] <= outer["bottom"]
    assert _inside(outer, chart["area"]) and bands[0]["fill"] == bands[1]["fill"]
    _legend_under(chart, ["class_loss median", "class_loss min–max"])
    assert "class_loss" not in fifty["legend"]
    # the heatmap: an image (a PNG) under the median
    chart = heat["charts"]["class_loss"]
    (image,) = chart["images"]
    (median,) = chart["lines"]
    # the picture drawn, not the blank one a heatmap starts with (a bqplot Image redraws
    # only for a new image widget)
    sizes = page.evaluate(
        "async () => Promise.all([...document.querySelectorAll('.jhw-figure image')]"
        ".map(async (i) => (await (await fetch(i.getAttribute('href'))).blob()).size))"
    )
    assert len(sizes) == 1 and sizes[0] > 1000, sizes
    # over the same steps as its median line (the run's first to last), in the plot area
    assert abs(image["left"] - median["box"]["left"]) < 2, (image, median)
    assert abs(image["right"] - median["box"]["right"]) < 2, (image, median)
    assert _inside(image, chart["area"], eps=8.0)
    # hovering the band's chart reads out the median (the bands are not read as lines)
    views.nth(1).scroll_into_view_if_needed()
    _, shown = hover_until_read_out(page, "class_loss median", 0.4, timeout=30)
    assert shown["lines"][0] == "class_loss median · run 1", shown
    page.mouse.move(0, 0)
    # and the heatmap's chart too: its image is not read (bqplot keeps no lines for it)
    views.nth(2).scroll_into_view_if_needed()
    assert _hover_plot(page, 2, "class_loss median") == "class_loss median · run 1"
    page.mouse.move(0, 0)
    _copy_to_docs(shots)
    assert notebook.errors() == []


# The path chart's line (vertex count, last vertex), ring and dot (centres), and the status.
PATH_JS = """
() => {
  const plot = document.querySelector('.jhw-liveplot');
  const fig = plot && plot.querySelector('.jhw-figure.jhw-path');
  if (!fig) return null;
  const line = fig.querySelector('g.curve path.line');
  const pts = line ? [...(line.getAttribute('d') || '').matchAll(/[ML]([-\\d.e]+),([-\\d.e]+)/g)]
    : [];
  let last = null;
  if (pts.length) {
    const [, x, y] = pts[pts.length - 1];
    const p = new DOMPoint(Number(x), Number(y)).matrixTransform(line.getScreenCTM());
    last = [p.x, p.y];
  }
  const dots = [...fig.querySelectorAll('path.dot')].map((d) => {
    const r = d.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; });
  const status = plot.querySelector('.jhw-panel').dataset.status;
  // The path's end, as drawn: it changes with each update (the vertex count alone may not,
  // once decimation holds it near its cap).
  const tail = line ? (line.getAttribute('d') || '').slice(-48) : null;
  return { status, points: pts.length, last, dots, tail };
}
"""


def _dot_at_end(sample: dict) -> bool:
    """The latest-point dot is drawn on the line's last vertex (within 3 px)."""
    if len(sample["dots"]) != 2 or not sample["last"]:
        return False
    (x, y), (lx, ly) = sample["dots"][1], sample["last"]
    return abs(x - lx) < 3 and abs(y - ly) < 3


@pytest.mark.parametrize("theme", ["JupyterLab Light", "JupyterLab Dark"])
def test_a_rosenbrock_path_is_drawn_live(
    page: Page, notebook: Notebook, tmp_path: Path, theme: str
) -> None:
    slug = theme.split()[-1].lower()
    page.set_viewport_size({"width": 1400, "height": 1100})
    cells = [
        PATH,
        "path = jhw.LivePlot(title='Rosenbrock', paths=['x'])\ndisplay(path)\n"
        "with path:\n    x, hist = descend(jnp.array([-1.5, 2.0]))\nprint('FINAL', x[1].tolist())",
    ]
    notebook.open(cells, name=f"path-{slug}.ipynb", theme=theme)
    samples = sample_while_running(page, PATH_JS, timeout=240, interval=0.2)
    # while the run streams: the path's line changes, and the dot (drawn apart from it, so a
    # sample may fall between the two drawings) sits on its last point
    live = [s for s in samples if s and s["status"] == "running" and s["points"] >= 2]
    seen = [(s["points"], s["status"], _dot_at_end(s)) for s in samples if s][-40:]
    # the line got new points: its end moved, or (once the descent stalls in float32, or on a
    # loaded machine whose first drawing comes late) it got more vertices
    assert len({(s["points"], s["tail"]) for s in live}) >= 2, seen
    assert any(_dot_at_end(s) for s in live), seen
    notebook.idle(timeout=120)
    page.wait_for_function(
        f"() => ({PATH_JS})().status === 'converged'", timeout=30_000
    )  # fmt: skip
    (plot,) = _plots(page)
    assert plot["badge"] == "finished"
    titles = list(plot["charts"])
    assert titles == ["loss", "x", "x[1] vs x[0]"], titles
    chart = plot["charts"]["x[1] vs x[0]"]
    assert chart["path"] and [t for t in chart["xLabel"] if t] == ["x[0]"]
    (line,) = chart["lines"]
    assert line["points"] >= 50 and _inside(line["box"], chart["area"])
    ring, dot = chart["dots"]
    # from (-1.5, 2), left and high, to near (1, 1), right and lower
    assert ring["left"] < dot["left"] and ring["top"] < dot["top"]
    assert all(_inside(d, chart["area"], eps=8.0) for d in (ring, dot))
    view = page.locator(".jhw-liveplot").first
    view.scroll_into_view_if_needed()
    _copy_to_docs({f"path-{slug}": save_screenshot(view, tmp_path, f"path-{slug}")})
    assert notebook.errors() == []
