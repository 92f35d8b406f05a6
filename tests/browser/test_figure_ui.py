"""The LivePlot figure in a real JupyterLab, measured from the DOM at several widths and in
both themes: tick labels inside the SVG and apart from each other, the legend outside the plot
area and inside the widget, a 64-lane sweep without overflow.

``JHW_UPDATE_SCREENSHOT=1`` also writes the widget screenshots to ``docs/figure-*.png``.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..helpers.browser import (
    CONTRAST_JS,
    MIN_CONTRAST,
    Notebook,
    hover_until_read_out,
)
from ..helpers.jupyter_browser import (
    save_screenshot,
)

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.ui

DOCS = Path(__file__).resolve().parents[2] / "docs"

SETUP = """\
import ipywidgets
import jax
import jax.numpy as jnp
import jaxhist_widget as jhw
from IPython.display import display

A = 0.998 * jnp.eye(8) + 0.0001 * jnp.ones((8, 8))


@jax.jit
def decay(x0):
    # 20,000 compute-bound steps; the loss falls over twenty decades.
    return jhw.while_loop(lambda x: jnp.sum(x * x) > 0.0, lambda x: jnp.tanh(A @ x),
                          x0, max_steps=20_000,
                          record=lambda x: {"loss": 1e4 * jnp.sum(x * x) / 8,
                                            "grad_norm": jnp.linalg.norm(x)})


LRS = jnp.linspace(0.01, 0.3, 64)


@jax.jit
@jax.vmap
def sweep(lr):
    def body(x):
        return x - lr * jnp.tanh(A @ x)

    return jhw.while_loop(lambda x: jnp.sum(x * x) > 1e-6, body, jnp.ones(8), max_steps=400,
                          record=lambda x: {"loss": jnp.sum(x * x),
                                            "grad_norm": jnp.linalg.norm(jnp.tanh(A @ x))})


def boxed(live, width):
    return ipywidgets.Box([live.widget], layout=ipywidgets.Layout(width=width))
"""

CELLS = [
    SETUP,
    # one LivePlot per case, each in its own cell: full width and in a 330 px output
    "wide = jhw.LivePlot(title='log wide', log_y=True)\n"
    "display(wide)\n"
    "with wide:\n"
    "    decay(jnp.ones(8))",
    "lanes = jhw.LivePlot(title='sweep wide', lane_labels=[f'lr={v:.3f}' for v in LRS])\n"
    "display(lanes)\n"
    "with lanes:\n"
    "    sweep(LRS)",
    "narrow = jhw.LivePlot(title='log narrow', log_y=True)\n"
    "display(boxed(narrow, '330px'))\n"
    "with narrow:\n"
    "    decay(jnp.ones(8))",
    "narrow_lanes = jhw.LivePlot(title='sweep narrow')\n"
    "display(boxed(narrow_lanes, '330px'))\n"
    "with narrow_lanes:\n"
    "    sweep(LRS)",
    "kept = jhw.LivePlot(title='kept runs', keep_runs=True, fields=['loss'])\n"
    "display(kept)\n"
    "with kept:\n"
    "    for lr in (0.02, 0.05, 0.1, 0.2):\n"
    "        sweep(jnp.full(2, lr))",
]
TITLES = ["log wide", "sweep wide", "log narrow", "sweep narrow", "kept runs"]
#: The plots whose legend names something: the lanes of one vmap run. One unbatched run on charts
#: titled with their field has none (the header names the run, in its colour), nor have kept
#: runs (each in its colour, named by the run list).
LEGENDS = {"sweep wide", "sweep narrow"}

# Per LivePlot view and per chart of it (one per metric): the chart's SVG box, its plot area,
# its tick labels; the view's legend.
GEOMETRY_JS = """
() => [...document.querySelectorAll('.jhw-liveplot')].map((view) => {
  const box = (el) => { const r = el.getBoundingClientRect();
    return { left: r.left, right: r.right, top: r.top, bottom: r.bottom }; };
  const legend = view.querySelector('.jhw-legend .jhw-legend-items');
  // A tick d3 is removing (opacity ~0, a transition not yet run) is not a label a user sees.
  const shown = (t) => t.textContent && Number(getComputedStyle(t.closest('.tick')).opacity) > 0.5;
  const charts = [...view.querySelectorAll('.jhw-figure')].map((fig) => {
    const svg = fig.querySelector('svg');
    const area = fig.querySelector('.plotarea_background');
    return {
      svg: svg && box(svg),
      area: area && box(area),
      allTicks: [...fig.querySelectorAll('g.axis .tick text')].filter(shown)
        .map((t) => ({ text: t.textContent, ...box(t) })),
      lines: fig.querySelectorAll('g.curve path.line').length,
    };
  });
  return {
    title: (view.querySelector('.jhw-title') || {}).textContent,
    widget: box(view),
    charts,
    legend: legend && { ...box(legend), scroll: legend.scrollWidth, client: legend.clientWidth,
                        text: legend.textContent },
  };
})
"""

EPS = 0.5  # px: sub-pixel rounding of boxes

# CONTRAST_JS, with an SVG text's color being its fill.
_FG = "parse(getComputedStyle(el).color)"
assert _FG in CONTRAST_JS
SVG_CONTRAST_JS = CONTRAST_JS.replace(
    _FG,
    "parse(el instanceof SVGElement ? getComputedStyle(el).fill : getComputedStyle(el).color)",
)
FIGURE_TEXT = ".jhw-figure g.axis .tick text, .jhw-figure text.axislabel, .jhw-legend-items > span"


def inside(inner: dict[str, float], outer: dict[str, float]) -> bool:
    return (
        inner["left"] >= outer["left"] - EPS
        and inner["right"] <= outer["right"] + EPS
        and inner["top"] >= outer["top"] - EPS
        and inner["bottom"] <= outer["bottom"] + EPS
    )


def disjoint(a: dict[str, float], b: dict[str, float]) -> bool:
    return (
        a["right"] <= b["left"] + EPS
        or b["right"] <= a["left"] + EPS
        or a["bottom"] <= b["top"] + EPS
        or b["bottom"] <= a["top"] + EPS
    )


def check_geometry(views: list[dict[str, Any]], where: str) -> None:
    assert [v["title"] for v in views] == TITLES, where
    for view in views:
        assert view["charts"], f"{view['title']} at {where}: no chart"
        for k, chart in enumerate(view["charts"]):
            name = f"{view['title']} (chart {k + 1}) at {where}"
            check_chart({**view, **chart}, name, legend=view["title"] in LEGENDS)


def check_chart(v: dict[str, Any], name: str, legend: bool) -> None:
    assert v["svg"] and v["area"] and v["lines"] > 0, f"{name}: no figure drawn: {v}"
    assert len(v["allTicks"]) >= 4, f"{name}: too few tick labels: {v['allTicks']}"
    clipped = [t for t in v["allTicks"] if not inside(t, v["svg"])]
    assert not clipped, f"{name}: tick labels cut by the SVG {v['svg']}: {clipped}"
    # x labels side by side, never running together
    xs = sorted(
        (t for t in v["allTicks"] if t["top"] >= v["area"]["bottom"] - EPS),
        key=lambda t: t["left"],
    )
    assert len(xs) >= 2, f"{name}: x tick labels {xs}"
    touching = [(a["text"], b["text"]) for a, b in itertools.pairwise(xs) if a["right"] > b["left"]]
    assert not touching, f"{name}: x tick labels run together: {touching}"
    if not legend:
        assert not v["legend"], f"{name}: a legend with nothing to name: {v['legend']}"
        return
    legend = v["legend"]
    assert legend, f"{name}: no legend"
    assert disjoint(legend, v["area"]), f"{name}: legend {legend} over plot {v['area']}"
    assert inside(legend, v["widget"]), f"{name}: legend {legend} out of {v['widget']}"
    assert legend["scroll"] <= legend["client"] + 1, f"{name}: legend overflows: {legend}"


def settled_geometry(page: Page, where: str, timeout: float = 10.0) -> list[dict[str, Any]]:
    """The geometry once every view has relaid out after a resize (bqplot does it on a
    resize observer, view by view); on timeout the last one's failed check is raised."""
    deadline = time.monotonic() + timeout
    while True:
        # JupyterLab skips layout of cells out of view (content-visibility), so bqplot's resize
        # observer fires only once a view is scrolled to.
        for k in range(len(TITLES)):
            page.locator(".jhw-liveplot").nth(k).scroll_into_view_if_needed()
            page.wait_for_timeout(150)
        views = page.evaluate(GEOMETRY_JS)
        try:
            check_geometry(views, where)
            return views
        except AssertionError:
            if time.monotonic() > deadline:
                raise


@pytest.mark.parametrize("width", [1280, 700])
@pytest.mark.parametrize("theme", ["JupyterLab Light", "JupyterLab Dark"])
def test_figure_ticks_and_legend_fit(
    page: Page,
    notebook: Notebook,
    tmp_path: Path,
    theme: str,
    width: int,
) -> None:
    """At a 1280 px and a 700 px window (there JupyterLab leaves the notebook ~330 px), and
    in 330 px boxes: tick labels inside the SVG and apart, legend outside the plot area.

    Each width is a fresh page: bqplot does not reliably relayout a figure that was out of
    view when the window was resized (seen for whichever view was off screen).
    """
    slug = theme.split()[-1].lower()
    # tall enough for a whole plot at 330 px (~850 px) under JupyterLab's bars: a picture of
    # one taller than the window had the notebook's toolbar over its header
    page.set_viewport_size({"width": width, "height": 1300})
    notebook.open(CELLS, name=f"figure-{slug}-{width}.ipynb", theme=theme)
    notebook.idle(timeout=180)
    page.wait_for_function(
        "(n) => [...document.querySelectorAll('.jhw-liveplot')].filter((v) =>"
        " v.querySelector('g.curve path.line')"
        " && v.querySelector('.jhw-panel').dataset.status !== 'running').length >= n",
        arg=len(TITLES),
        timeout=60_000,
    )
    shots = {}
    # Screenshots first: on a failed check they show what was measured.
    for k, key in ((0, f"{width}"), (1, f"sweep-{width}")):
        view = page.locator(".jhw-liveplot").nth(k)
        view.scroll_into_view_if_needed()
        page.wait_for_timeout(300)
        shots[key] = save_screenshot(view, tmp_path, f"figure-{slug}-{key}")
    views = settled_geometry(page, f"{width} px, {theme}")
    assert views[2]["widget"]["right"] - views[2]["widget"]["left"] <= 331
    # 64 lanes: one lane scale with the first and last lane label, not 64 entries
    assert "lr=0.010" in views[1]["legend"]["text"]
    assert "lr=0.300" in views[1]["legend"]["text"]
    # Axis and legend text readable in the theme (WCAG AA)
    measured = page.evaluate(SVG_CONTRAST_JS, FIGURE_TEXT)
    assert len(measured) > 20, measured
    poor = [m for m in measured if m["ratio"] < MIN_CONTRAST]
    assert not poor, f"figure text below {MIN_CONTRAST}:1 in {theme}: {poor}"
    # Hover read-out: field, lane label, run, step and value of the point under the
    # pointer (a vertex of one of the 64 sweep lanes).
    page.locator(".jhw-liveplot").nth(1).scroll_into_view_if_needed()
    _, shown = hover_until_read_out(page, "grad_norm · lr=", 0.1, timeout=30)
    name, step, value = shown["lines"]
    # (a lane named for its role by the plot's goal: "lr=0.010 (worst)")
    assert re.fullmatch(r"(grad_norm|loss) · lr=0\.\d{3}( \(\w+(, \w+)*\))? · run 1", name), name
    assert re.fullmatch(r"step \d+", step) and re.fullmatch(r"value \S+", value)
    measured = page.evaluate(SVG_CONTRAST_JS, ".jhw-hover > div")
    assert len(measured) == 3 and min(m["ratio"] for m in measured) >= MIN_CONTRAST
    if os.environ.get("JHW_UPDATE_SCREENSHOT") == "1":
        DOCS.mkdir(exist_ok=True)
        for key, shot in shots.items():
            shutil.copyfile(shot, DOCS / f"figure-{slug}-{key}.png")
    assert notebook.errors() == []
