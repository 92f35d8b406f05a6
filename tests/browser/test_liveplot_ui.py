"""`jhw.LivePlot` in a real JupyterLab 4 / Notebook 7, driven by headless Chromium.

What a user sees, checked from the DOM:

- live updates: while a jitted ``jhw.while_loop`` runs inside ``with live:``, the step counter
  and the bqplot line change several times, and afterwards the panel shows the final step and
  status (JupyterLab and Notebook 7);
- the Stop button ends a run awaited with ``live.run_async`` early, with a consistent history;
- a view opened after the run (the LivePlot displayed only in a later cell) shows the whole
  final state, and so does the view JupyterLab restores from the live kernel after a page
  reload;
- a vmapped run draws one line per lane and the panel shows the lane count;
- the panel text, in every status, is readable in JupyterLab's dark and light themes (WCAG AA
  contrast against the effective background);
- no error reaches the browser console or the page.

``JHW_UPDATE_SCREENSHOT=1`` also copies the JupyterLab widget screenshot to
``docs/liveplot.png`` (shown by the README).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..helpers.browser import (
    CONTRAST_JS,
    LIVE_PROBE_JS,
    MIN_CONTRAST,
    SLOW_SETUP,
    STATUS_NAMES,
    VIEW_STATE_JS,
    Notebook,
    assert_final_panel,
    assert_live_updates,
    output_line,
)
from ..helpers.jupyter_browser import (
    UI,
    kernel_id,
    reload_notebook,
    run_all_done,
    sample_while_running,
    save_notebook,
    save_screenshot,
)

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.ui

REPO_ROOT = Path(__file__).resolve().parents[2]
DOCS_SCREENSHOT = REPO_ROOT / "docs" / "liveplot.png"

# ------------------------------------------------------------------------------ notebook code

LIVE_CELLS = [
    SLOW_SETUP,
    'live = jhw.LivePlot(title="gradient descent", log_y=True)\nlive',
    "with live:\n"
    "    x, hist = descend(jnp.array([2.0, -1.5]))\n"
    "final_loss = float(loss_fn(x))\n"
    'print("RESULT", int(hist.length) - 1, repr(final_loss), flush=True)',
]

STOP_MAX_STEPS = 100_000
STOP_WITHIN_S = 15.0  # generous: a stop takes effect at the next chunk flush (~50 ms)
STOP_CELLS = [
    SLOW_SETUP,
    'live = jhw.LivePlot(title="stop me")\nlive',
    "final, hist = await live.run_async(forever, jnp.float32(0.0))",
    'print("LENGTHS", int(hist.length), len(live.history()), flush=True)',
]

# A real run (eager: no compile, no sleep), plus a bare panel in every status so each badge
# color is measured.
THEME_CELLS = [
    "import jaxhist_widget as jhw\n"
    "from IPython.display import display\n"
    "from jaxhist_widget.ui.panel import STATUSES, LivePanel\n"
    'live = jhw.LivePlot(title="halving")\n'
    "display(live)\n"
    "with live:\n"
    "    x, hist = jhw.while_loop(lambda x: x > 1.0, lambda x: x / 2, 10.0, max_steps=9)",
    "for s in STATUSES:\n"
    '    display(LivePanel(title=f"status {s}", status=s, step=3, max_steps=10,\n'
    '                      fields=["loss"], latest={"loss": 0.5}, rate=12.0, elapsed=1.5))',
]

#: The LivePlot is created and fed a whole run without being displayed; cell 1 opens the first
#: view, after the run. 300 steps, two scalar fields; no sleep, so the run takes well under 1 s.
LATE_STEPS = 300
LATE_CELLS = [
    "import jax\n"
    "import jax.numpy as jnp\n"
    "import jaxhist_widget as jhw\n"
    "\n"
    'live = jhw.LivePlot(title="late view")\n'
    "\n"
    "\n"
    "@jax.jit\n"
    "def count(c0):\n"
    f"    return jhw.while_loop(lambda c: c[0] < {LATE_STEPS},\n"
    "                          lambda c: (c[0] + 1, 0.99 * c[1]), c0, max_steps=1000,\n"
    '                          record=lambda c: {"n": c[0].astype(jnp.float32), "decay": c[1]})\n'
    "\n"
    "\n"
    "with live:\n"
    "    (n, decay), hist = count((jnp.int32(0), jnp.float32(1.0)))\n"
    'print("RESULT", int(hist.length) - 1, repr(float(n)), repr(float(decay)), flush=True)',
    "live",
]

#: Four vmap lanes that stop after 50, 100, 150 and 200 steps (201 rows for the longest).
LANE_LIMITS = (50, 100, 150, 200)
VMAP_CELLS = [
    "import jax\n"
    "import jax.numpy as jnp\n"
    "import jaxhist_widget as jhw\n"
    "\n"
    "\n"
    "@jax.jit\n"
    "@jax.vmap\n"
    "def climb(limit):\n"
    "    return jhw.while_loop(lambda x: x < limit, lambda x: x + 1.0, 0.0, max_steps=500)\n"
    "\n"
    "\n"
    'live = jhw.LivePlot(title="vmap lanes")\n'
    "live",
    "with live:\n"
    f"    x, hist = climb(jnp.array({[float(v) for v in LANE_LIMITS]}))\n"
    'print("LENGTHS", *map(int, hist.length), flush=True)',
]

# -------------------------------------------------------------------------------- DOM probes

TEXT_SELECTORS = ".jhw-status, .jhw-step, .jhw-title, .jhw-rate, .jhw-elapsed, .jhw-field-name, "
TEXT_SELECTORS += ".jhw-field-value"
# ----------------------------------------------------------------------------------- helpers


def check_live_plot(notebook: Notebook, ui: UI) -> Path:
    """Run LIVE_CELLS in ``ui``; check the live updates and the final panel. Returns the PNG
    of the widget."""
    page = notebook.open(LIVE_CELLS, name=f"liveplot-{ui}.ipynb", ui=ui)
    samples = sample_while_running(page, LIVE_PROBE_JS, timeout=90)
    notebook.idle(timeout=30)
    # The kernel runs in the test interpreter, so it imports the package under test.
    (kernel_python,) = output_line(page, 0, "PYTHON")
    assert os.path.realpath(kernel_python) == os.path.realpath(sys.executable)
    assert_live_updates(page, samples)

    steps, final_loss = output_line(page, 2, "RESULT")
    assert 100 < int(steps) < 2000, f"unexpected run length {steps}"
    assert_final_panel(page, int(steps), "converged")
    # The latest values: the plotted fields, the loss equal to the one the cell printed.
    fields = page.locator(".jhw-field").evaluate_all("els => els.map(e => e.dataset.field)")
    assert fields == ["loss", "grad_norm"]  # (as `record` writes them, not sorted)
    shown = page.locator(".jhw-field[data-field=loss] .jhw-field-value")
    assert float(shown.get_attribute("data-value") or "nan") == pytest.approx(
        float(final_loss), rel=1e-5
    )
    page.locator(".jhw-figure g.curve path.line").first.wait_for(state="attached")
    # The static picture (an output of its own, updated when the run ended) stays hidden
    # beside the live view, in Lab and in Notebook 7: one plot on the page, not two.
    picture = page.locator("img.jhw-static")
    assert picture.count() == 1, "the plot's output carries no static picture"
    assert page.locator(".jhw-liveplot").is_visible() and not picture.is_visible()
    return save_screenshot(page.locator(".jhw-liveplot"), notebook.tmp_path, f"liveplot-{ui}")


def wait_view_state(page: Page, lines: int, min_points: int, timeout: float = 30.0) -> Any:
    """Wait until the last LivePlot view on the page draws ``lines`` lines of at least
    ``min_points`` points each (bqplot renders after the panel) and no run is shown as
    running; return its VIEW_STATE_JS state."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

    with contextlib.suppress(PlaywrightTimeoutError):
        page.wait_for_function(
            f"([n, k]) => {{ const s = ({VIEW_STATE_JS})();"
            " return !!s && s.status !== 'running' && s.lines.length === n"
            " && s.lines.every((l) => l.points >= k); }",
            arg=[lines, min_points],
            timeout=timeout * 1000,
            polling=100,
        )
    # On timeout, the asserts of the caller say what is missing.
    return page.evaluate(VIEW_STATE_JS)


def assert_late_view(state: Any, steps: int, n: str, decay: str, cell: int) -> None:
    """The full final state of the LATE_CELLS run, in one view, in cell ``cell``."""
    assert state is not None, "no LivePlot view on the page"
    assert state["views"] == 1, f"{state['views']} LivePlot views on the page"
    assert state["cell"] == cell, f"the view is in cell {state['cell']}, expected {cell}"
    assert state["title"] == "late view"
    assert state["status"] == "converged", state
    assert (state["step"], state["maxSteps"]) == (steps, 1000), state
    assert state["progress"] == str(steps)
    assert state["stopDisabled"] is True
    assert state["lanes"] is None, state
    assert set(state["fields"]) == {"decay", "n"}, state["fields"]
    assert float(state["fields"]["n"]) == float(n)
    assert float(state["fields"]["decay"]) == pytest.approx(float(decay), rel=1e-6)
    # One line per field, every row drawn (301 rows < max_points: no decimation).
    assert [line["points"] for line in state["lines"]] == [steps + 1] * 2, state["lines"]


# ------------------------------------------------------------------------------------- tests


def test_live_updates_lab(notebook: Notebook) -> None:
    shot = check_live_plot(notebook, "lab")
    assert shot.read_bytes().startswith(b"\x89PNG")
    if os.environ.get("JHW_UPDATE_SCREENSHOT") == "1":
        DOCS_SCREENSHOT.parent.mkdir(exist_ok=True)
        shutil.copyfile(shot, DOCS_SCREENSHOT)
    assert notebook.errors() == []


def test_live_updates_notebook7(notebook: Notebook) -> None:
    check_live_plot(notebook, "notebook7")
    assert notebook.errors() == []


def test_stop_button_ends_async_run(page: Page, notebook: Notebook) -> None:
    notebook.open(STOP_CELLS, name="liveplot-stop.ipynb")
    # Click once the run is well under way (compiled, rows streaming).
    page.wait_for_function(
        "() => { const s = document.querySelector('.jhw-step');"
        " return !!s && s.closest('.jhw-panel').dataset.status === 'running'"
        " && Number(s.dataset.step) >= 30; }",
        timeout=60_000,
        polling=50,
    )
    stop = page.locator(".jhw-stop")
    assert stop.is_enabled()
    clicked = time.monotonic()
    stop.click()
    # Unstopped, the run would last ~5 minutes; stopped, it ends after its current chunk.
    while not run_all_done(page):
        took = time.monotonic() - clicked
        if took > STOP_WITHIN_S:
            probe = page.evaluate(LIVE_PROBE_JS)
            raise AssertionError(
                f"the run went on for {took:.0f} s after Stop was clicked (panel: {probe})"
            )
        time.sleep(0.1)
    notebook.idle(timeout=60)

    length, streamed = map(int, output_line(page, 3, "LENGTHS"))
    assert length == streamed, f"hist.length {length} != len(live.history()) {streamed}"
    assert 30 < length < STOP_MAX_STEPS + 1
    assert_final_panel(page, length - 1, "stopped")
    assert notebook.errors() == []


def test_late_view_and_reload_show_full_state(page: Page, notebook: Notebook) -> None:
    """A view opened after the run shows everything; after a page reload (no cell re-run),
    JupyterLab restores the view from the live kernel's widget state, still complete."""
    name = "liveplot-late.ipynb"
    notebook.open(LATE_CELLS, name=name)
    notebook.idle(timeout=60)
    steps, n, decay = output_line(page, 0, "RESULT")
    assert int(steps) == LATE_STEPS
    state = wait_view_state(page, lines=2, min_points=LATE_STEPS + 1)
    assert_late_view(state, LATE_STEPS, n, decay, cell=1)

    # Reload: only what the file holds comes back, so save the outputs (a widget-view
    # reference by model id) first. The file holds no widget state, so whatever the
    # view shows after the reload comes from the kernel.
    save_notebook(page)
    saved = json.loads((notebook.server.root_dir / name).read_text())
    assert "widgets" not in saved["metadata"]
    kernel = kernel_id(page)
    reload_notebook(page, name)
    assert kernel_id(page) == kernel, "the reload started another kernel"
    assert not page.evaluate("() => window.__jhRunAll !== undefined"), "not reloaded"
    notebook.idle(timeout=30)
    state = wait_view_state(page, lines=2, min_points=LATE_STEPS + 1)
    assert_late_view(state, LATE_STEPS, n, decay, cell=1)
    assert notebook.errors() == []


def test_vmap_run_shows_one_line_per_lane(page: Page, notebook: Notebook) -> None:
    notebook.open(VMAP_CELLS, name="liveplot-vmap.ipynb")
    notebook.idle(timeout=60)
    lengths = [int(v) for v in output_line(page, 1, "LENGTHS")]
    assert lengths == [k + 1 for k in LANE_LIMITS]
    state = wait_view_state(page, lines=len(LANE_LIMITS), min_points=min(lengths))
    assert state is not None, "no LivePlot view on the page"
    assert state["status"] == "converged", state
    # The panel counts steps of the longest lane.
    assert (state["step"], state["maxSteps"]) == (max(lengths) - 1, 500), state
    assert state["lanes"] == f"{len(LANE_LIMITS)} lanes:", state  # then the summary
    assert list(state["fields"]) == ["value"], state["fields"]
    # One drawn line per lane (a 2-D y: one path.line per row), each as long as its lane
    # (shorter lanes are padded with their last point, which counts once), each its own
    # color (one plotted field: lanes are told apart by color).
    lines = state["lines"]
    assert sorted(line["points"] for line in lines) == lengths, lines
    assert len({line["stroke"] for line in lines}) == len(LANE_LIMITS), lines
    # Shorter lanes once ended in NaN padding: bqplot then logged an invalid label transform.
    assert notebook.errors() == []


@pytest.mark.parametrize("theme", ["JupyterLab Dark", "JupyterLab Light"])
def test_theme_text_is_readable(page: Page, notebook: Notebook, theme: str) -> None:
    """Every text of the panel, in every status, has WCAG AA contrast (>= 4.5) against its
    effective background."""
    slug = theme.split()[-1].lower()
    notebook.open(THEME_CELLS, name=f"liveplot-theme-{slug}.ipynb", theme=theme)
    notebook.idle(timeout=60)
    page.locator(".jhw-panel[data-status=converged]").first.wait_for()
    # The LivePlot's panel plus one bare panel per status.
    page.wait_for_function(
        "(n) => document.querySelectorAll('.jhw-panel').length >= n",
        arg=1 + len(STATUS_NAMES),
    )
    measured = page.evaluate(CONTRAST_JS, TEXT_SELECTORS)
    assert {m["status"] for m in measured} == set(STATUS_NAMES)
    # The theme reached the panel (else this test proves nothing).
    dark = theme == "JupyterLab Dark"
    bg = page.evaluate(CONTRAST_JS, ".jhw-step")
    assert all((m["bgLuminance"] < 0.1) == dark for m in bg), f"not {theme}: {bg}"
    poor = [m for m in measured if m["ratio"] < MIN_CONTRAST]
    assert not poor, f"text below WCAG AA contrast in {theme}:\n" + "\n".join(
        f"  {m['status']:>9} {m['el']}: {m['text']!r} {m['fg']} on {m['bg']} = {m['ratio']:.2f}"
        for m in poor
    )
    assert notebook.errors() == []
