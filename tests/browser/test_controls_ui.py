"""The panel's controls keep reaching the kernel, click after click, in awaiting cells.

A control written as a synced trait goes through ipywidgets' message throttle: a model sends
its next update only after the kernel said "idle" for the previous one. ipykernel 7 handles a
widget message that arrives while an async cell awaits concurrently and says nothing for it,
so a panel that wrote a trait there would hold every later click back for good. These tests
press as users do: Stop in an awaiting run, then log y, then Stop in a second awaiting run.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import pytest

from ..helpers.browser import (
    SLOW_SETUP,
    Notebook,
)
from ..helpers.jupyter_browser import (
    cell_output_text,
)

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.ui

#: Two awaiting runs of the never-ending loop (from 1: a log axis has no place for 0); between
#: them the cell waits (awaiting, so the kernel handles widget messages) until the log y click
#: has reached the kernel, or 30 s.
CELLS = [
    SLOW_SETUP + "import asyncio\n",
    'live = jhw.LivePlot(title="click after click")\nlive',
    "final, hist = await live.run_async(forever, jnp.float32(1.0))\n"
    'print("FIRST", live.runs[-1].status, flush=True)\n'
    "for _ in range(300):\n"
    "    if live.panel.log_y:\n"
    "        break\n"
    "    await asyncio.sleep(0.1)\n"
    'print("LOGY", live.panel.log_y, flush=True)\n'
    "final, hist = await live.run_async(forever, jnp.float32(1.0))\n"
    'print("SECOND", live.runs[-1].status, flush=True)',
]


def _wait_running(page: Page) -> None:
    """Until a run is well under way (compiled, rows streaming) with Stop enabled."""
    page.wait_for_function(
        "() => { const p = document.querySelector('.jhw-panel');"
        " const s = document.querySelector('.jhw-step');"
        " return !!p && p.dataset.status === 'running' && Number(s.dataset.step) >= 20"
        " && !document.querySelector('.jhw-stop').disabled; }",
        timeout=90_000,
        polling=50,
    )


def _output(page: Page, tag: str, timeout: float) -> str:
    """The words after ``tag`` in the run cell's output, once printed (or "" after timeout)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for line in cell_output_text(page, 2).splitlines():
            if line.startswith(f"{tag} "):
                return line[len(tag) + 1 :]
        time.sleep(0.1)
    return ""


def test_stop_log_y_stop_in_awaiting_runs_all_reach_the_kernel(
    page: Page, notebook: Notebook
) -> None:
    notebook.open(CELLS, name="controls.ipynb")

    _wait_running(page)
    page.locator(".jhw-stop").click()
    assert _output(page, "FIRST", 30) == "stopped", cell_output_text(page, 2)

    page.locator(".jhw-logy").check()
    assert _output(page, "LOGY", 40) == "True", "the log y click never reached the kernel"

    _wait_running(page)
    page.locator(".jhw-stop").click()
    assert _output(page, "SECOND", 30) == "stopped", cell_output_text(page, 2)
    notebook.idle(timeout=60)
    assert notebook.errors() == []
