"""Runs compared under the pointer, as in TensorBoard's Scalars, in a real JupyterLab (light and
dark): three kept runs with smoothing on. Hovering one run's line highlights that run in every
chart (its lines thicker and drawn last, the others dimmed) until the pointer leaves; the
read-out lists one row per run with its smoothed and raw values side by side, sorted by value
(and by name once pinned with a click and its toggle pressed), and stays off the panel header.

The runs record ``level + 0.3 * sin(12.9898 k)`` at step ``k`` (levels 3, 2, 1, the highest run
first, so that it is not the one drawn last anyway): the test knows every raw value.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from ..helpers.browser import Notebook, hover_until_read_out, wait_lines
from ..helpers.jupyter_browser import save_screenshot

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.ui

LEVELS = {"high": 3.0, "mid": 2.0, "low": 1.0}

CELLS = [
    "import jax\n"
    "import jax.numpy as jnp\n"
    "import jaxhist_widget as jhw\n"
    "\n"
    "\n"
    "@jax.jit\n"
    "def noisy(level):\n"
    "    def record(k):\n"
    "        return {'loss': level + 0.3 * jnp.sin(k * 12.9898),\n"
    "                'inverse': 1.0 / level + 0.0 * k}\n"
    "\n"
    "    return jhw.while_loop(lambda k: k < 300, lambda k: k + 1, jnp.int32(0), max_steps=300,\n"
    "                          record=record)\n",
    "live = jhw.LivePlot(title='compare', keep_runs=True, smoothing=0.9)\ndisplay(live)",
    "\n".join(f"with live.named({name!r}):\n    noisy({level})" for name, level in LEVELS.items()),
]

# Per chart (by title): its drawn lines in drawing order, by name, with what the highlight set.
DRAWN_JS = """
() => Object.fromEntries([...document.querySelectorAll('.jhw-charts .jhw-figure')].map((fig) =>
  [(fig.querySelector('text.mainheading') || {}).textContent || '',
   [...fig.querySelectorAll('g.curve')].filter((g) => g.getClientRects().length > 0)
     .map((g) => ({ name: String(g.__data__.name), lit: g.classList.contains('jhw-lit'),
                    dim: g.classList.contains('jhw-dim'),
                    opacity: Number(getComputedStyle(g).opacity),
                    width: parseFloat(getComputedStyle(g.querySelector('path.line')).strokeWidth),
                 }))]))
"""

ROWS_JS = """
() => [...document.querySelectorAll('.jhw-hover-list:not([hidden]) .jhw-hover-row')].map((r) => ({
  name: r.querySelector('.jhw-hover-name').textContent, run: r.dataset.run,
  value: r.querySelector('.jhw-hover-value').textContent,
  raw: (r.querySelector('.jhw-hover-raw') || {}).textContent,
  step: r.querySelector('.jhw-hover-step').textContent,
  current: r.classList.contains('jhw-hover-current') }))
"""

# The boxes of the read-out (headline and table) and of the panel header, in client pixels.
BOXES_JS = """
() => { const box = (el) => { const r = el.getBoundingClientRect();
          return { left: r.left, top: r.top, right: r.right, bottom: r.bottom }; };
  const plot = document.querySelector('.jhw-liveplot');
  return { panel: box(plot.querySelector('.jhw-panel')),
           readout: [...plot.querySelectorAll('.jhw-hover, .jhw-hover-list')]
             .filter((e) => !e.hidden).map(box) }; }
"""


def raw_value(level: float, step: int) -> float:
    """What run ``level`` records at ``step`` (float32, as on the device)."""
    k = np.float32(step)
    return float(np.float32(level) + np.float32(0.3) * np.sin(k * np.float32(12.9898)))


def names(drawn: dict[str, list[dict[str, Any]]]) -> dict[str, list[str]]:
    return {chart: [line["name"] for line in lines] for chart, lines in drawn.items()}


def overlaps(a: dict[str, float], b: dict[str, float]) -> bool:
    return (
        a["left"] < b["right"]
        and b["left"] < a["right"]
        and a["top"] < b["bottom"]
        and (b["top"] < a["bottom"])
    )


def assert_highlighted(drawn: dict[str, list[dict[str, Any]]], run: str) -> None:
    """In every chart: `run`'s lines lit, drawn last and thicker; every other line dimmed."""
    for chart, lines in drawn.items():
        ours = [line for line in lines if f" · {run}" in line["name"]]
        others = [line for line in lines if line not in ours]
        assert len(ours) == 2 and len(others) == 4, (chart, lines)
        assert all(line["lit"] and not line["dim"] for line in ours), (chart, lines)
        assert all(line["dim"] and line["opacity"] < 0.5 for line in others), (chart, lines)
        assert min(line["width"] for line in ours) > max(line["width"] for line in others)
        # Drawn on top: the run's raw line, then its smoothed one, last.
        assert [line["name"] for line in lines[-2:]] == [
            f"{chart} · {run}",
            f"{chart} · {run} · smoothed",
        ], (chart, lines)


@pytest.mark.parametrize("theme", ["JupyterLab Light", "JupyterLab Dark"])
def test_hovering_a_run_highlights_it_everywhere_and_reads_out_every_run(
    page: Page, notebook: Notebook, tmp_path: Path, theme: str
) -> None:
    slug = theme.split()[-1].lower()
    notebook.open(CELLS, name=f"compare-{slug}.ipynb", theme=theme, viewport=(1400, 1200))
    notebook.idle(timeout=180)
    page.wait_for_function(
        "() => [...document.querySelectorAll('.jhw-run-status')].filter((s) =>"
        " s.textContent === 'finished').length === 3",
        timeout=60_000,
    )
    wait_lines(page, 6)  # per chart: three raw lines and their smoothed twins
    view = page.locator(".jhw-liveplot").first
    view.scroll_into_view_if_needed()
    canonical = names(page.evaluate(DRAWN_JS))
    assert canonical["loss"][-1] == "loss · low · smoothed", canonical

    # On the highest run near the top of the loss chart, just under the panel.
    vertex, shown = hover_until_read_out(page, "loss · high · smoothed", 0.3, timeout=30)
    assert shown["lines"][0] == "loss · high", shown
    assert shown["lines"][2].startswith("smoothed ") and " · raw " in shown["lines"][2], shown
    page.wait_for_function("() => document.querySelectorAll('g.curve.jhw-lit').length === 4")
    assert_highlighted(page.evaluate(DRAWN_JS), "high")

    rows = page.evaluate(ROWS_JS)
    assert [r["name"] for r in rows] == ["high", "mid", "low"], rows  # by value, highest first
    assert [r["current"] for r in rows] == [True, False, False], rows
    smoothed = [float(r["value"]) for r in rows]
    assert smoothed == sorted(smoothed, reverse=True), rows
    for r in rows:
        level, step = LEVELS[r["name"]], int(r["step"].replace(",", ""))
        assert abs(float(r["raw"]) - raw_value(level, step)) < 1e-4, r
        assert abs(float(r["value"]) - level) < 0.3 and r["value"] != r["raw"], r
    boxes = page.evaluate(BOXES_JS)
    assert len(boxes["readout"]) == 2, boxes
    assert not any(overlaps(b, boxes["panel"]) for b in boxes["readout"]), boxes
    save_screenshot(view, tmp_path, f"compare-{slug}-hover")

    # A click pins the read-out; its toggle sorts the rows by name.
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    # (Clicked again if a redraw had the read-out hidden at that instant: a click then pins
    # nothing, as it pins nothing where no read-out shows.)
    for _ in range(3):
        page.mouse.click(vertex["x"], vertex["y"])
        try:
            page.locator(".jhw-hover-list.jhw-pinned").wait_for(timeout=3_000)
            break
        except PlaywrightTimeout:
            page.mouse.move(vertex["x"], vertex["y"] + 1)
    page.locator(".jhw-hover-list.jhw-pinned").wait_for(timeout=10_000)
    page.locator('.jhw-hover-sort[data-sort="name"]').click()
    page.wait_for_function(
        "() => document.querySelector('.jhw-hover-list').dataset.sort === 'name'"
    )
    assert [r["name"] for r in page.evaluate(ROWS_JS)] == ["high", "low", "mid"]
    save_screenshot(view, tmp_path, f"compare-{slug}-pinned")

    # The pointer leaves: every line as bqplot drew it, in its order.
    page.mouse.move(2, 2)
    page.wait_for_function("() => !document.querySelector('g.curve.jhw-lit, g.curve.jhw-dim')")
    drawn = page.evaluate(DRAWN_JS)
    assert names(drawn) == canonical
    assert all(line["opacity"] == 1 for lines in drawn.values() for line in lines), drawn
    assert notebook.errors() == []
