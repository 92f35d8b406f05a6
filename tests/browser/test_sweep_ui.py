"""A sweep of 4096 vmap lanes in JupyterLab, as a user runs one: the chart shows the band of
every lane under the best, median, worst and a diverged lane and an even stride of the rest
drawn as lines (the diverged ones' ends flagged), the legend names them and says how many,
the panel counts the lanes that diverged, and hovering reads out a drawn lane by its label.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ..helpers.browser import Notebook, hover_until_read_out
from ..helpers.jupyter_browser import save_screenshot
from .test_vectors_ui import CHARTS_JS

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.ui

SWEEP = """\
import jax
import jax.numpy as jnp
import numpy as np
import jaxhist_widget as jhw
from IPython.display import display

rates = jnp.logspace(-3, 0.5, 4096)  # the largest rates diverge


def solve(lr):
    def body(c):
        k, x = c
        return k + 1, x - lr * 2 * x * (1 + x**2)

    return jhw.while_loop(lambda c: c[0] < 300, body, (0, jnp.float32(2.0)), max_steps=300,
                          record=lambda c: {"loss": c[1] ** 2})
"""

PANEL_JS = """
() => { const p = document.querySelector('.jhw-liveplot .jhw-panel');
  return p ? { status: p.dataset.status, text: p.textContent } : null; }
"""


def test_a_4096_lane_sweep_draws_a_band_of_every_lane_and_a_stride_of_lines(
    page: Page, notebook: Notebook, tmp_path: Path
) -> None:
    page.set_viewport_size({"width": 1400, "height": 1100})
    cells = [
        SWEEP,
        "live = jhw.LivePlot(log_y=True, lane_labels=[f'lr={r:.3g}' for r in np.asarray(rates)])\n"
        "display(live)\nwith live:\n    (k, x), hist = jax.jit(jax.vmap(solve))(rates)\n"
        "loss = np.asarray(x, np.float64) ** 2\n"
        "print('DIVERGED', int((~np.isfinite(loss)).sum()))",
    ]
    notebook.open(cells, name="sweep-4096.ipynb")
    notebook.idle(timeout=240)
    page.wait_for_function(f"() => ({PANEL_JS})().status === 'converged'", timeout=60_000)
    page.wait_for_timeout(500)  # the last layout
    (plot,) = page.evaluate(CHARTS_JS)
    chart = plot["charts"]["loss"]
    bands = [line for line in chart["lines"] if line["fill"] != "none"]
    lines = [line for line in chart["lines"] if line["fill"] == "none"]
    drawn = int(plot["legend"].split(" of 4096 drawn)")[0].rsplit("(", 1)[1])
    assert len(bands) == 2 and len(lines) == drawn and 60 <= drawn <= 64, (len(bands), len(lines))
    assert "loss min–max" in plot["legend"]
    for role in ("(best)", "(median)", "(worst)", "(diverged)"):  # named in the legend
        assert role in plot["legend"], plot["legend"]
    assert "diverged lanes left out" in plot["legend"] and chart["dots"]  # the ends flagged
    out = page.locator(".jp-Notebook .jp-Cell").nth(1).locator(".jp-OutputArea").inner_text()
    diverged = int(out.split("DIVERGED")[1].split()[0])
    assert 0 < diverged < 4096
    panel = page.evaluate(PANEL_JS)["text"]
    assert f"{diverged:,} diverged" in panel and "4,096 lanes" in panel, panel
    assert plot["badge"] == "diverged"
    # a drawn lane reads out by its label (the last lane is among those drawn)
    _, shown = hover_until_read_out(page, "loss · lr=", 0.5, timeout=60)
    assert shown["lines"] and shown["lines"][0].startswith("loss · lr="), shown
    # compact: the nearest lanes, the rest counted, the one under the pointer among them
    rows = page.locator(".jhw-hover-list:not([hidden]) .jhw-hover-row")
    assert rows.count() == 8
    assert page.locator(".jhw-hover-list .jhw-hover-current").count() == 1
    more = page.locator(".jhw-hover-list .jhw-hover-more").inner_text()
    assert more.startswith("+ ") and more.endswith(" more"), more
    save_screenshot(page.locator(".jhw-liveplot").first, tmp_path, "sweep-4096-hover")
    page.mouse.move(0, 0)
    save_screenshot(page.locator(".jhw-liveplot").first, tmp_path, "sweep-4096")
    assert notebook.errors() == []
