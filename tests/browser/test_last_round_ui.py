"""What the round before issue 50 built and no browser test had seen (issue 50, item 5): the
palette's colours as the page draws them, apart and readable in the light and the dark theme;
the step axis fitted to where a stopped run ended; and the static picture's text, which never
overlaps, however long the names.
"""

from __future__ import annotations

import itertools
import math
import re
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest

import jaxhist_widget as jhw

from ..helpers.browser import Notebook
from ..helpers.colours import contrast, lab
from ..helpers.jupyter_browser import save_screenshot
from ..helpers.synthetic import feed

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.ui

LANES = """\
import jax.numpy as jnp
import jaxhist_widget as jhw
live = jhw.LivePlot(title="palette", lane_labels=[f"lane {k}" for k in range(10)])
display(live)
with live:
    jax_rates = jnp.linspace(0.5, 1.5, 10)
    import jax
    jax.vmap(lambda r: jhw.while_loop(lambda c: c[0] < 40, lambda c: (c[0] + 1, c[1] * 0.95),
                                      (0, r), max_steps=40))(jax_rates)
"""

COLORS_JS = """
() => ({
  plot: document.querySelector('.jhw-figure .plotarea_background').getBoundingClientRect().height,
  strokes: [...document.querySelectorAll('.jhw-figure g.curve path.line')].map(
    (p) => getComputedStyle(p).stroke),
  background: getComputedStyle(document.querySelector('.jp-Notebook')).backgroundColor,
})
"""


def _hex(rgb: str) -> str:
    r, g, b = (int(v) for v in re.findall(r"\d+", rgb)[:3])
    return f"#{r:02x}{g:02x}{b:02x}"


@pytest.mark.parametrize("theme", ["JupyterLab Light", "JupyterLab Dark"])
def test_the_palette_as_drawn_is_apart_and_readable_in_both_themes(
    page: Page, notebook: Notebook, tmp_path: Path, theme: str
) -> None:
    slug = "dark" if "Dark" in theme else "light"
    notebook.open([LANES], f"palette-{slug}.ipynb", theme=theme)
    notebook.idle()
    page.wait_for_function("() => document.querySelectorAll('g.curve path.line').length === 10")
    drawn = page.evaluate(COLORS_JS)
    # (laid out at its full height: a figure shown after the empty plot's hidden box was
    # once drawn a third as tall, in the top of its cell)
    assert drawn["plot"] > 150, drawn["plot"]
    colors = [_hex(s) for s in drawn["strokes"]]
    background = _hex(drawn["background"])
    assert len(set(colors)) == 10, colors
    closest = min(itertools.combinations(colors, 2), key=lambda p: math.dist(*map(lab, p)))
    assert math.dist(*map(lab, closest)) >= 30, closest  # no two read as one
    for color in colors:
        assert contrast(color, background) >= 3.0, (color, background)
    save_screenshot(page.locator(".jhw-liveplot").first, tmp_path, f"palette-{slug}")
    assert notebook.errors() == []


STOPPED = """\
import jax.numpy as jnp
import jaxhist_widget as jhw
A = jnp.eye(64) * 0.999
live = jhw.LivePlot(title="stopped")
display(live)
with live:
    jhw.while_loop(lambda c: True, lambda c: (c[0] + 1, jnp.tanh(A @ c[1])), (0, jnp.ones(64)),
                   max_steps=2_000_000, record=lambda c: {"value": c[1][0]})
"""


def test_after_stop_the_step_axis_fits_where_the_run_ended(
    page: Page, notebook: Notebook, tmp_path: Path
) -> None:
    notebook.open([STOPPED], "stopped.ipynb")
    page.wait_for_function(
        "() => { const s = document.querySelector('.jhw-step');"
        " return !!s && Number(s.dataset.step) > 2000; }",
        timeout=180_000,
    )
    page.locator(".jhw-stop").click()
    notebook.idle(timeout=120)
    page.wait_for_function(
        "() => document.querySelector('.jhw-panel').dataset.status === 'stopped'"
    )
    page.wait_for_timeout(500)
    step = int(page.locator(".jhw-step").get_attribute("data-step"))
    ticks = page.evaluate(
        "() => [...[...document.querySelectorAll('.jhw-figure g.axis')][0]"
        ".querySelectorAll('.tick text')].map((t) => t.textContent)"
    )
    values = [_step(t) for t in ticks]
    # the axis ends near the last step, not at max_steps (2M) nor a live run's headroom: its
    # ticks (round steps inside it) reach past half of it and stop short of a quarter past it
    assert 0.5 * step <= values[-1] <= 1.25 * step + 10, (step, ticks)
    save_screenshot(page.locator(".jhw-liveplot").first, tmp_path, "stopped")
    assert notebook.errors() == []


def _step(label: str) -> float:
    """A step tick's label as a number: ``20,000``, ``250k``, ``1.5M``."""
    text = label.replace(",", "").strip()
    scale = {"k": 1e3, "M": 1e6, "G": 1e9}.get(text[-1:], 1.0)
    return float(text.rstrip("kMG")) * scale


BOXES_JS = """
() => [...document.querySelectorAll('svg text')].filter((t) => t.textContent.trim()).map((t) => {
  const r = t.getBoundingClientRect();
  return { text: t.textContent, left: r.left, right: r.right, top: r.top, bottom: r.bottom };
})
"""


def test_the_static_pictures_text_never_overlaps_with_long_names(
    page: Page, tmp_path: Path
) -> None:
    long = "a run whose name goes on and on: adam lr=0.001 warmup=500 decay=cosine seed=1234"
    live = jhw.LivePlot(
        keep_runs=True,
        title="a title longer than the picture is wide, " * 3,
        lane_labels=[f"{long} lane {k}" for k in range(3)],
    )
    fields = ["training loss of the whole model over every batch", "gradient norm (clipped)"]
    for k in range(3):
        live.name = f"{long} #{k}"
        values = {f: [np.linspace(1.0 + j, 0.1, 30 + 10 * k) for j in range(3)] for f in fields}
        feed(live, values, lanes=3, max_steps=100)
    svg = live._repr_mimebundle_()["image/svg+xml"]
    page.set_viewport_size({"width": 1000, "height": 1400})
    page.set_content(f"<html><body style='margin:0'>{svg}</body></html>")
    boxes = page.evaluate(BOXES_JS)
    assert len(boxes) > 20
    overlaps = [
        (a["text"], b["text"])
        for a, b in itertools.combinations(boxes, 2)
        if min(a["right"], b["right"]) - max(a["left"], b["left"]) > 1
        and min(a["bottom"], b["bottom"]) - max(a["top"], b["top"]) > 1
    ]
    assert not overlaps, overlaps[:5]
    right = max(b["right"] for b in boxes)
    width = float(re.search(r'width="(\d+)"', svg).group(1))
    # nothing runs off the picture (before: the title, the header's facts and values, and a
    # long chart title centred on its cell ran off it; now they end in "…")
    assert right <= width + 1 and min(b["left"] for b in boxes) >= 0, right
    page.screenshot(path=str(tmp_path / "picture-long-names.png"), full_page=True)
