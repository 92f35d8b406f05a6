"""A sweep of 4096 vmap lanes in JupyterLab, as a user runs one: the chart shows the band of
every lane under the best, median, worst and a diverged lane and an even stride of the rest
drawn as lines (the diverged ones' ends flagged), the legend names them and says how many,
the panel counts the lanes that diverged, and hovering reads out a drawn lane by its label.
Stop, clicked twice in a hurry during a compute-bound sweep run by Run All, ends every lane at
one step with its rows on the host, and the queued cells run on.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ..helpers.browser import Notebook, hover_until_read_out, output_line
from ..helpers.jupyter_browser import cell_errors, run_all_done, save_screenshot, wait_idle
from ..helpers.page_charts import CHARTS_JS

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
    # the lanes drawn and, over them, the lanes' median
    assert len(bands) == 2 and len(lines) == drawn + 1 and 60 <= drawn <= 64, (
        len(bands),
        len(lines),
    )
    assert "lanes min–max" in plot["legend"] and "lanes' median" in plot["legend"]
    for role in ("(best)", "(median)", "(worst)", "(diverged)"):  # named in the legend
        assert role in plot["legend"], plot["legend"]
    assert "diverged: last finite value" in plot["legend"] and chart["dots"]  # the ends flagged
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


#: A sweep whose step is all XLA (a least-squares gradient step per lane, no Python in it):
#: unstopped, it takes minutes here.
SPIN_SWEEP = """\
import jax
import jax.numpy as jnp
import numpy as np
import jaxhist_widget as jhw

A = jax.random.normal(jax.random.key(0), (64, 32)) / 64**0.5
b = jnp.ones(64)
rates = jnp.logspace(-3, -1, 4096)


def solve(lr):
    def body(c):  # four gradient steps a row
        k, x = c
        x = jax.lax.fori_loop(0, 4, lambda _, x: x - lr * A.T @ (A @ x - b), x)
        return k + 1, x

    return jhw.while_loop(lambda c: True, body, (0, jnp.zeros(32)), max_steps=20_000,
                          record=lambda c: {"loss": jnp.sum((A @ c[1] - b) ** 2)})
"""


def test_stop_clicked_twice_during_a_4096_lane_sweep_stops_every_lane_and_run_all_goes_on(
    page: Page, notebook: Notebook
) -> None:
    cells = [
        SPIN_SWEEP,
        'live = jhw.LivePlot(title="stop a sweep")\nlive',
        "with live:\n    (k, x), hist = jax.jit(jax.vmap(solve))(rates)\n"
        "run = live.runs[-1]\n"
        'print("DEVICE", *sorted(set(np.asarray(hist.length).tolist())), flush=True)\n'
        'print("HOST", *sorted(set(run.counts)), run.status, len(run.counts), flush=True)',
        'print("AFTER", "ran", flush=True)',
    ]
    notebook.open(cells, name="sweep-4096-stop.ipynb")
    page.wait_for_function(
        "() => { const p = document.querySelector('.jhw-liveplot .jhw-panel');"
        " const s = document.querySelector('.jhw-step');"
        " return !!p && p.dataset.status === 'running' && Number(s.dataset.step) >= 200; }",
        timeout=180_000,
        polling=50,
    )
    stop = page.locator(".jhw-stop")
    assert stop.get_attribute("data-mode") == "interrupt"  # a normal cell: a kernel interrupt
    clicked = time.monotonic()
    stop.dblclick()  # twice in a hurry: one stop, not a second interrupt
    while not run_all_done(page):
        assert time.monotonic() - clicked < 30, "the sweep went on after Stop was clicked"
        time.sleep(0.1)
    wait_idle(page, timeout=60)
    assert cell_errors(page) == [], "the stop raised in the cell (KeyboardInterrupt?)"
    (device,) = output_line(page, 2, "DEVICE")  # every lane stopped at one step
    host, status, lanes = output_line(page, 2, "HOST")
    assert (host, status, lanes) == (device, "stopped", "4096")
    assert 200 < int(device) < 20_001
    assert output_line(page, 3, "AFTER") == ["ran"]  # Run All went on to the next cell
    panel = page.locator(".jhw-liveplot .jhw-panel")
    assert panel.get_attribute("data-status") == "stopped"
    assert page.locator(".jhw-step").get_attribute("data-step") == str(int(device) - 1)
    assert "4,096 lanes" in (panel.text_content() or "")
    assert notebook.errors() == []
