"""The LivePlot panel in a real JupyterLab 4 / Notebook 7, driven by headless Chromium.

- Stop works in a normal cell (``with live:``): the view asks the kernel for an interrupt, as
  the notebook's stop button does, and the run of a compute-bound step (no Python in it) ends
  as ``stopped`` with its partial history, host rows equal to device rows; in an async cell
  (``await live.run_async``) the click is a widget message and works too.
- A kernel that died (``os._exit`` during a run) or was restarted does not leave the panel
  ``running`` with Stop enabled: it says so, and the controls are disabled.
- The progress bar takes the colour of how the run ended; an ETA and a rate in the panel's
  one number format show while running; error text and the new texts are readable (WCAG AA)
  in the dark and light themes.
"""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING

import pytest

from ..helpers.browser import (
    CONTRAST_JS,
    MIN_CONTRAST,
    STATUS_NAMES,
    Notebook,
    hover_until_read_out,
    output_line,
)
from ..helpers.jupyter_browser import (
    UI,
    cell_errors,
    run_all_done,
    wait_idle,
)

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.ui

#: A step with no Python in it: the main thread stays inside XLA for the whole call, so only
#: the interrupt path (a wakeup fd polled per chunk) can stop it. Unstopped, SPIN_STEPS steps
#: take minutes here.
SPIN_SETUP = """\
from functools import partial
import os
import jax
import jax.numpy as jnp
import jaxhist_widget as jhw

N = 384
A = jax.random.normal(jax.random.key(0), (N, N)) / N**0.5


@partial(jax.jit, static_argnames="max_steps")
def spin(x0, max_steps):
    return jhw.while_loop(lambda x: True, lambda x: jnp.tanh(A @ x), x0, max_steps=max_steps,
                          record=lambda x: {"norm": jnp.linalg.norm(x)})
"""
SPIN_STEPS = 20_000_000
STOP_WITHIN_S = 15.0
REPORT = 'print("LENGTHS", int(hist.length), len(live.history()["norm"]), flush=True)'

STOP_CELLS = {
    "with": [
        SPIN_SETUP,
        'live = jhw.LivePlot(title="stop a normal cell")\nlive',
        f"with live:\n    x, hist = spin(jnp.ones(N), max_steps={SPIN_STEPS})\n{REPORT}",
    ],
    "async": [
        SPIN_SETUP,
        'live = jhw.LivePlot(title="stop an async cell")\nlive',
        f"x, hist = await live.run_async(spin, jnp.ones(N), max_steps={SPIN_STEPS})\n{REPORT}",
    ],
}

#: The run cell kills its kernel from a sink once the run has streamed for 4 s.
DEAD_CELLS = [
    SPIN_SETUP,
    'live = jhw.LivePlot(title="doomed")\nlive',
    "import time\n"
    "class Killer(jhw.Sink):\n"
    "    start = None\n"
    "    def on_rows(self, run, lanes):\n"
    "        self.start = self.start or time.monotonic()\n"
    "        if time.monotonic() - self.start > 4.0:\n"
    "            os._exit(1)\n"
    "\n"
    "with live, Killer():\n"
    f"    spin(jnp.ones(N), max_steps={SPIN_STEPS})",
]

#: One bare panel per status, plus an error panel with text, a running one, one that ended
#: with zero steps (no rate shown) and one whose loss became NaN (diverged).
BARS_CELLS = [
    "from IPython.display import display\n"
    "from jaxhist_widget.ui.panel import STATUSES, LivePanel\n"
    "for s in STATUSES:\n"
    '    display(LivePanel(title=f"status {s}", status=s, step=300, max_steps=1000,\n'
    '                      fields=["loss"], latest={"loss": 0.5}, rate=1074.4, elapsed=1.5,\n'
    '                      error="ValueError: boom" if s == "error" else ""))\n'
    'display(LivePanel(title="zero steps", status="converged", step=0, max_steps=100))\n'
    'display(LivePanel(title="nan", status="max_steps", step=300, max_steps=1000,\n'
    '                  fields=["loss"], latest={"loss": "nan"}, diverged=["loss"]))',
]


def _bar_color(page: Page, status: str) -> tuple[int, int, int]:
    css = page.evaluate(
        "(s) => getComputedStyle(document.querySelector("
        "`.jhw-panel[data-status=${s}] .jhw-progress-bar`)).backgroundColor",
        status,
    )
    r, g, b = (int(v) for v in re.findall(r"\d+", css)[:3])
    return r, g, b


def _wait_running(page: Page, min_step: int) -> None:
    page.wait_for_function(
        "(k) => { const s = document.querySelector('.jhw-step');"
        " return !!s && s.closest('.jhw-panel').dataset.status === 'running'"
        " && Number(s.dataset.step) >= k; }",
        arg=min_step,
        timeout=120_000,
        polling=50,
    )


# ------------------------------------------------------------------------------------ tests


@pytest.mark.parametrize(("cell", "ui"), [("with", "lab"), ("with", "notebook7"), ("async", "lab")])
def test_stop_ends_a_compute_bound_run(page: Page, notebook: Notebook, cell: str, ui: UI) -> None:
    notebook.open(STOP_CELLS[cell], name=f"panel-stop-{cell}-{ui}.ipynb", ui=ui)
    _wait_running(page, 2000)
    stop = page.locator(".jhw-stop")
    assert stop.is_enabled()
    expected_mode = "interrupt" if cell == "with" else "message"
    assert stop.get_attribute("data-mode") == expected_mode
    # While running: a labelled rate in the one number format (no ETA: see panel.js).
    page.wait_for_function(
        "() => /^rate .+ steps\\/s$/.test(document.querySelector('.jhw-rate').textContent)",
        timeout=30_000,
    )
    rate = page.locator(".jhw-rate").text_content() or ""
    assert re.fullmatch(r"rate (\d{1,3}(,\d{3})*|\d+(\.\d+)?[MBT]) steps/s", rate), rate
    clicked = time.monotonic()
    stop.click()
    assert stop.is_disabled(), "Stop stays clickable after a click (a second interrupt)"
    while not run_all_done(page):
        took = time.monotonic() - clicked
        if took > STOP_WITHIN_S:
            raise AssertionError(f"the run went on for {took:.0f} s after Stop was clicked")
        time.sleep(0.1)
    wait_idle(page, timeout=30)
    assert cell_errors(page) == [], "the stop raised in the cell (KeyboardInterrupt?)"
    length, streamed = map(int, output_line(page, 2, "LENGTHS"))
    assert length == streamed, f"device rows {length} != host rows {streamed}"
    assert 2000 < length < SPIN_STEPS + 1
    panel = page.locator(".jhw-panel")
    assert panel.get_attribute("data-status") == "stopped"
    assert page.locator(".jhw-step").get_attribute("data-step") == str(length - 1)
    assert stop.is_disabled()
    assert page.locator(".jhw-eta").is_hidden(), "an ETA after the run ended"
    assert panel.get_attribute("data-kernel") == "alive"
    assert notebook.errors() == []


def test_dead_kernel_is_shown_and_disables_the_controls(page: Page, notebook: Notebook) -> None:
    notebook.open(DEAD_CELLS, name="panel-dead.ipynb")
    _wait_running(page, 100)
    # The kernel exits mid-run; the server restarts it; the old widget is orphaned.
    page.wait_for_function(
        "() => document.querySelector('.jhw-panel').dataset.kernel === 'dead'"
        " && document.querySelector('.jhw-kernel').textContent === 'kernel died'",
        timeout=60_000,
        polling=100,
    )
    note = page.locator(".jhw-kernel")
    assert note.is_visible()
    assert note.text_content() == "kernel died"
    assert page.locator(".jhw-stop").is_disabled()
    assert page.locator(".jhw-clear").is_disabled()
    assert page.locator(".jhw-logy").is_disabled()
    assert page.locator(".jhw-eta").is_hidden()
    assert page.locator(".jhw-rate").is_hidden()
    # The dying kernel's websocket and the restart log errors that are not ours.
    ours = [e for e in notebook.errors() if "jaxhist" in e or "jhw" in e]
    assert ours == []


def test_restarted_kernel_is_shown(page: Page, notebook: Notebook) -> None:
    cells = [
        "import jaxhist_widget as jhw\n"
        'live = jhw.LivePlot(title="restart")\n'
        "display(live)\n"
        "with live:\n"
        "    jhw.while_loop(lambda x: x > 1.0, lambda x: x / 2, 10.0, max_steps=9)"
    ]
    notebook.open(cells, name="panel-restart.ipynb")
    wait_idle(page, timeout=60)
    page.locator(".jhw-panel[data-status=converged]").wait_for()
    assert page.locator(".jhw-panel").get_attribute("data-kernel") == "alive"
    page.evaluate(
        "async () => { const w = window.jupyterapp.shell.currentWidget;"
        " await w.sessionContext.session.kernel.restart(); }"
    )
    page.wait_for_function(
        "() => document.querySelector('.jhw-panel').dataset.kernel === 'dead'",
        timeout=30_000,
    )
    assert page.locator(".jhw-kernel").text_content() == "kernel restarted"
    # How the run ended stays readable; the controls are off.
    assert page.locator(".jhw-panel").get_attribute("data-status") == "converged"
    assert page.locator(".jhw-logy").is_disabled()
    assert notebook.errors() == []


@pytest.mark.parametrize("theme", ["JupyterLab Dark", "JupyterLab Light"])
def test_progress_colours_and_readable_texts(page: Page, notebook: Notebook, theme: str) -> None:
    slug = theme.split()[-1].lower()
    notebook.open(BARS_CELLS, name=f"panel-bars-{slug}.ipynb", theme=theme)
    notebook.idle(timeout=60)
    page.wait_for_function(
        "(n) => document.querySelectorAll('.jhw-panel').length >= n",
        arg=len(STATUS_NAMES) + 1,
    )
    colors = {s: _bar_color(page, s) for s in STATUS_NAMES}
    # cond became False: "finished", neutral (grey), never a green "success"
    r, g, b = colors["converged"]
    assert max(r, g, b) - min(r, g, b) < 30, f"finished bar not neutral: {colors}"
    badge = page.locator(".jhw-panel[data-status=converged] .jhw-status").first
    assert badge.text_content() == "finished"
    r, g, b = colors["error"]
    assert r > g + 60 and r > b + 60, f"error bar not red: {colors}"
    for s in ("stopped", "max_steps"):
        r, g, b = colors[s]
        assert r > g > b, f"{s} bar not amber: {colors}"
    assert colors["running"] not in {colors[s] for s in ("converged", "error", "stopped")}
    # NaN latest values: an amber "diverged" warning, not the red error
    nan = page.locator(".jhw-panel", has_text="nan")
    assert nan.locator(".jhw-status").text_content() == "diverged"
    assert nan.locator(".jhw-status").get_attribute("data-shown") == "diverged"
    nan_bar = nan.locator(".jhw-progress-bar").evaluate(
        "(e) => getComputedStyle(e).backgroundColor"
    )
    r, g, b = (int(v) for v in re.findall(r"\d+", nan_bar)[:3])
    assert r > g > b and (r, g, b) != colors["error"], f"diverged bar: {nan_bar}"
    # Attached with no run yet: the panel says what it waits for
    compiling = page.locator(".jhw-panel[data-status=compiling] .jhw-status")
    assert compiling.text_content() == "compiling: waiting for the loop to start"
    # A finished run is complete (full bar) whatever step it finished at.
    width = page.evaluate(
        "() => { const p = document.querySelector("
        "'.jhw-panel[data-status=converged] .jhw-progress');"
        " return p.querySelector('.jhw-progress-bar').getBoundingClientRect().width"
        " / p.getBoundingClientRect().width; }"
    )
    assert width == pytest.approx(1.0, abs=0.02)
    # One number format, labelled; no ETA (max_steps is only a cap); no rate after
    # zero steps.
    running = page.locator(".jhw-panel[data-status=running]")
    assert running.locator(".jhw-rate").text_content() == "rate 1,074 steps/s"
    assert running.locator(".jhw-elapsed").text_content() == "elapsed 1.50 s"
    assert running.locator(".jhw-step").text_content() == "300 / 1,000"
    assert running.locator(".jhw-eta").count() == 0
    zero = page.locator(".jhw-panel", has_text="zero steps")
    assert zero.locator(".jhw-rate").is_hidden()
    assert "steps/s" not in (zero.text_content() or "")
    # Error text (and the other texts) readable in this theme.
    measured = page.evaluate(
        CONTRAST_JS, ".jhw-error, .jhw-rate, .jhw-elapsed, .jhw-step, .jhw-status"
    )
    assert any(m["el"] == "jhw-error" for m in measured)
    poor = [m for m in measured if m["text"].strip() and m["ratio"] < MIN_CONTRAST]
    assert not poor, f"text below WCAG AA in {theme}: {poor}"
    assert notebook.errors() == []


# Geometry and effective backgrounds of the first LivePlot: the panel, the figure, the box.
LAYOUT_JS = """
() => {
  const box = document.querySelector('.jhw-liveplot');
  const rect = (e) => e.getBoundingClientRect();
  const bg = (e) => {
    for (let n = e; n; n = n.parentElement) {
      const c = getComputedStyle(n).backgroundColor;
      if (c !== 'rgba(0, 0, 0, 0)') return c;
    }
    return 'rgb(255, 255, 255)';
  };
  const p = rect(document.querySelector('.jhw-liveplot .jhw-panel'));
  const f = rect(box.querySelector('.jhw-figure'));
  return {
    panel: [p.left, p.top, p.right, p.bottom], figure: [f.left, f.top, f.right, f.bottom],
    overflow: box.scrollWidth - box.clientWidth,
    panelBg: bg(document.querySelector('.jhw-liveplot .jhw-panel')),
    figureBg: bg(box.querySelector('.jhw-figure')),
  };
}
"""


@pytest.mark.parametrize("theme", ["JupyterLab Dark", "JupyterLab Light"])
def test_panel_and_figure_read_as_one_widget(page: Page, notebook: Notebook, theme: str) -> None:
    """Same background, same left and right edges, no gap, no overflow."""
    slug = theme.split()[-1].lower()
    cells = [
        "import jaxhist_widget as jhw\n"
        'live = jhw.LivePlot(title="halving")\n'
        "display(live)\n"
        "with live:\n"
        "    jhw.while_loop(lambda x: x > 1.0, lambda x: x / 2, 10.0, max_steps=9)"
    ]
    notebook.open(cells, name=f"panel-layout-{slug}.ipynb", theme=theme)
    wait_idle(page, timeout=60)
    page.locator(".jhw-panel[data-status=converged]").wait_for()
    page.locator(".jhw-figure svg").first.wait_for(state="attached")
    m = page.evaluate(LAYOUT_JS)
    assert m["panelBg"] == m["figureBg"], m
    assert abs(m["panel"][0] - m["figure"][0]) <= 0.5, f"left edges differ: {m}"
    assert abs(m["panel"][2] - m["figure"][2]) <= 0.5, f"right edges differ: {m}"
    assert 0 <= m["figure"][1] - m["panel"][3] <= 0.5, f"gap between panel and figure: {m}"
    assert m["overflow"] == 0, f"the LivePlot box overflows by {m['overflow']} px"
    assert notebook.errors() == []


#: Six vmap lanes counting up to their limit; the last one never gets there (max_steps=60).
#: Latest values: value = 10, 20, 30, 40, 50, 60 (median 35); scaled = value * limit / 10 =
#: 10, 40, 90, 160, 250, 6000 (median 125).
LANES_CELLS = [
    "import jax\n"
    "import jax.numpy as jnp\n"
    "import jaxhist_widget as jhw\n"
    "LIMITS = jnp.array([10.0, 20.0, 30.0, 40.0, 50.0, 1000.0])\n"
    "\n"
    "\n"
    "@jax.jit\n"
    "@jax.vmap\n"
    "def climb(limit):\n"
    "    return jhw.while_loop(lambda x: x < limit, lambda x: x + 1.0, 0.0, max_steps=60,\n"
    "                          record=lambda x: {'value': x, 'scaled': x * limit / 10})\n"
    "\n"
    "\n"
    "live = jhw.LivePlot(title='lanes', lane_labels=[f'limit={int(v)}' for v in LIMITS])\n"
    "display(live)\n"
    "with live:\n"
    "    x, hist = climb(LIMITS)",
]


@pytest.mark.parametrize("theme", ["JupyterLab Dark", "JupyterLab Light"])
def test_vmap_panel_shows_lane_summary_and_median_range(
    page: Page, notebook: Notebook, theme: str
) -> None:
    """Under vmap the panel sums up how the lanes ended (naming the odd one out by its label),
    gives each field's median over lanes with its [min … max], readably; the hover read-out
    names the lane."""
    slug = theme.split()[-1].lower()
    notebook.open(LANES_CELLS, name=f"panel-lanes-{slug}.ipynb", theme=theme)
    notebook.idle(timeout=60)
    panel = page.locator(".jhw-panel[data-status=max_steps]")
    panel.wait_for()
    assert panel.locator(".jhw-lanes").text_content() == "6 lanes:"
    summary = panel.locator(".jhw-lane-status")
    assert summary.is_visible()
    assert summary.text_content() == "5 finished · 1 max steps (limit=1000)"
    fields = {
        f.get_attribute("data-field"): (
            f.locator(".jhw-field-value").text_content(),
            f.locator(".jhw-field-value").get_attribute("title"),
            f.locator(".jhw-field-range").text_content(),
            f.locator(".jhw-field-range").get_attribute("title"),
        )
        for f in panel.locator(".jhw-field").all()
    }
    median, spread = "median over lanes", "min … max over lanes"
    assert fields == {
        "scaled": ("125", median, " (min–max 10 … 6000)", spread),
        "value": ("35", median, " (min–max 10 … 60)", spread),
    }, fields
    measured = page.evaluate(CONTRAST_JS, ".jhw-lane-status, .jhw-field-range, .jhw-lanes")
    assert len(measured) == 4, measured
    poor = [m for m in measured if m["ratio"] < MIN_CONTRAST]
    assert not poor, f"lane texts below WCAG AA in {theme}: {poor}"
    # Hover: the read-out names the lane (by its label) of the point under the pointer.
    # (The chart of "scaled" on screen: the pointer moves over what is shown.)
    chart = page.locator(".jhw-liveplot .jhw-figure").filter(has_text="scaled")
    chart.scroll_into_view_if_needed()
    vertex, shown = hover_until_read_out(page, "scaled · limit=1000 ·", 0.5, timeout=30)
    assert vertex["points"] == 61, vertex
    # The vertex under the pointer, or its neighbour if the chart moved meanwhile (its
    # layout settles after the view reports its width): "scaled" is 100 x the step.
    name, step, value = shown["lines"]
    assert name == "scaled · limit=1000 · run 1", shown
    k = int(step.removeprefix("step "))
    assert 27 <= k <= 33 and value == f"value {100 * k}", shown
    assert notebook.errors() == []
