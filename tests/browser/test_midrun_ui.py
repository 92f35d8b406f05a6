"""The panel's controls act while a normal cell runs, in a real JupyterLab.

A normal cell (``with live:``) holds the kernel's main shell until it ends. JupyterLab sends
widget messages on a kernel subshell, and the panel keeps its control messages there (see
``jaxhist_widget/ui/panel/_subshell.py``): smoothing, a chart's log toggle, the panel's log y
and a drag-zoom are applied by the kernel while the loop still runs, not when the cell ends.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from ..helpers.browser import LINES_JS, SLOW_SETUP, Notebook
from ..helpers.jupyter_browser import cell_errors, cell_output_text, wait_idle
from ..helpers.page_charts import AREA_JS, drag

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.ui

CELLS = [
    SLOW_SETUP,
    'live = jhw.LivePlot(title="mid-run")\nlive',
    # ~100k slow steps (minutes): only Stop ends it.
    "with live:\n"
    "    final, hist = forever(jnp.float32(1.0))\n"
    "    jax.block_until_ready(final)\n"
    'print("END", live.runs[-1].status, live.smoothing, live.log_y, live.step_range,'
    " flush=True)",
]

# The same loop under the cell magic: the magic's own plot (the cell makes none).
MAGIC_CELLS = [
    SLOW_SETUP + "%load_ext jaxhist_widget\n",
    'print("no plot here")',
    '%%jaxhist --title "mid-run"\n'
    "final, hist = forever(jnp.float32(1.0))\n"
    "jax.block_until_ready(final)\n"
    'print("END", "stopped" if int(hist.length) < 100_000 else "finished", flush=True)',
]

# Whether the loop still runs (the panel says so and Stop is enabled).
RUNNING_JS = (
    "() => { const p = document.querySelector('.jhw-panel');"
    " return !!p && p.dataset.status === 'running'"
    " && !document.querySelector('.jhw-stop').disabled; }"
)


def _while_running(page: Page, condition: str, arg: object = None) -> None:
    """Wait (20 s at most) until ``condition`` holds while the loop still runs."""
    page.wait_for_function(
        f"(arg) => ({RUNNING_JS})() && ({condition})(arg)", arg=arg, timeout=20_000, polling=50
    )


@pytest.mark.parametrize(("cell", "ui"), [("with", "lab"), ("magic", "lab"), ("with", "notebook7")])
def test_controls_act_while_a_normal_cell_runs(
    page: Page, notebook: Notebook, cell: str, ui: str
) -> None:
    notebook.open(CELLS if cell == "with" else MAGIC_CELLS, name=f"midrun-{cell}.ipynb", ui=ui)
    page.wait_for_function(
        f"() => ({RUNNING_JS})() && Number(document.querySelector('.jhw-step').dataset.step) >= 20",
        timeout=90_000,
        polling=50,
    )
    title = page.locator(".jhw-figure text.mainheading").first.text_content()

    # Smoothing: the kernel draws a smoothed line over the raw one, mid-run.
    page.locator(".jhw-smoothing").first.evaluate(
        "(el) => { el.value = '0.6'; el.dispatchEvent(new Event('input'));"
        " el.dispatchEvent(new Event('change')); }"
    )
    # (the weight's trait reaches the view after the lines it drew: the panel's write holds
    # its sync until the change's handlers, which draw them, have run)
    _while_running(
        page,
        f"() => Object.values(({LINES_JS})()).every((lines) => lines.length === 2)"
        " && document.querySelector('.jhw-smoothing-value').textContent === '0.60'",
    )

    # A chart's own log toggle: pressed once the kernel put the chart on a log axis.
    page.locator(".jhw-chart-log").first.click()
    _while_running(
        page,
        "() => document.querySelector('.jhw-chart-log').getAttribute('aria-pressed') === 'true'",
    )
    # The panel's log y follows: its one chart is on a log axis now (issue 50: it never reads
    # unchecked over charts all on a log axis, nor checked over a linear one).
    _while_running(page, "() => document.querySelector('.jhw-logy').checked")
    # log y off: every chart linear (the chart's toggle follows), then on again.
    # (A click, not Playwright's check(): a live update may redraw the box from the kernel's
    # state before the click's message came back, which check() reports as a failed click.)
    page.locator(".jhw-logy").click()
    _while_running(
        page,
        "() => !document.querySelector('.jhw-logy').checked && document.querySelector("
        "'.jhw-chart-log').getAttribute('aria-pressed') === 'false'",
    )
    page.locator(".jhw-logy").click()
    _while_running(page, "() => document.querySelector('.jhw-logy').checked")

    # A drag-zoom: the chip stops waiting ("applied when the kernel is free") mid-run.
    area = page.evaluate(AREA_JS, title)
    drag(page, area, 0.2, 0.6)
    page.mouse.up()
    _while_running(
        page,
        "() => { const c = document.querySelector('.jhw-zoom');"
        " return !!c && !c.hidden && c.dataset.waiting === 'false' && c.dataset.lo !== ''; }",
    )

    page.locator(".jhw-stop").click()
    page.wait_for_function(
        "() => cellText().includes('END')".replace(
            "cellText()",
            "[...document.querySelectorAll('.jp-OutputArea-output')]"
            ".map((o) => o.textContent).join(' ')",
        ),
        timeout=60_000,
    )
    end = next(ln for ln in cell_output_text(page, 2).splitlines() if ln.startswith("END "))
    if cell == "magic":
        assert end == "END stopped", end
    else:
        status, smoothing, log_y, *zoom = end.split(" ", 4)[1:]
        # What the page showed is what the kernel reports back.
        assert (status, smoothing, log_y) == ("stopped", "0.6", "True"), end
        assert zoom and zoom[0] != "None", end
    if cell == "magic":
        # A stopped %%jaxhist cell says so (and Run All stops there); nothing else is an error.
        wait_idle(page, timeout=60)
        assert [e.split(":")[0] for e in cell_errors(page)] == ["CellStopped"]
    else:
        notebook.idle(timeout=60)
    assert notebook.errors() == []
