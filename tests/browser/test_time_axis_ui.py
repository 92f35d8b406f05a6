"""The x axis in time, in a real JupyterLab: after a run, the panel's "x" select puts every
chart on relative time (tick labels in s / min / h), then on the wall clock (HH:MM:SS), and back
on steps; the hover read-out tells the step and the time of the point; "last N steps" (in
steps) waits, disabled, while the axis counts time; a drag does not zoom a time axis.

``JHW_SHOT_DIR=<dir>`` also writes the screenshots there.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ..helpers.browser import (
    SLOW_SETUP,
    X_LABELS_JS,
    Notebook,
    hover_until_read_out,
    wait_lines,
)
from ..helpers.jupyter_browser import save_screenshot

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.ui

CELLS = [
    SLOW_SETUP,
    "live = jhw.LivePlot(title='time axis')\nlive",
    "with live:\n    x, hist = descend(jnp.array([1.0, 1.0]))\nprint('DONE', flush=True)",
]

RELATIVE = r"^\d+(\.\d+)? (s|min|h)$"
WALL = r"^\d\d:\d\d:\d\d(\.\d+)?$"


def _all_labels_match(pattern: str) -> str:
    return (
        f"() => {{ const l = Object.values(({X_LABELS_JS})()); return l.length > 0 && "
        f"l.every((t) => t.length >= 2 && t.every((s) => /{pattern}/.test(s))); }}"
    )


def test_the_x_axis_switches_to_relative_time_and_the_wall_clock(
    page: Page, notebook: Notebook, tmp_path: Path
) -> None:
    shots = Path(os.environ.get("JHW_SHOT_DIR", tmp_path))
    notebook.open(CELLS, name="time-axis.ipynb", viewport=(1400, 1200))
    notebook.idle(timeout=180)
    page.wait_for_function(
        "() => document.querySelector('.jhw-panel')?.dataset.status === 'converged'",
        timeout=120_000,
    )
    wait_lines(page, 1)
    view = page.locator(".jhw-liveplot").first
    view.scroll_into_view_if_needed()
    labels = page.evaluate(X_LABELS_JS)
    assert all(re.fullmatch(r"[\d,]+", t) for ticks in labels.values() for t in ticks), labels

    select = page.locator(".jhw-x-axis").first
    select.select_option("relative")
    page.wait_for_function(_all_labels_match(RELATIVE), timeout=30_000)
    wait_lines(page, 1)
    assert page.locator(".jhw-last-steps").first.is_disabled()
    axis_titles = page.evaluate(
        "() => [...document.querySelectorAll('.jhw-figure .axislabel')].map((t) => t.textContent)"
    )
    assert "relative time" in axis_titles, axis_titles
    _, shown = hover_until_read_out(page, "loss ·", 0.5)
    assert re.fullmatch(r"step [\d,]+ · [\d.]+ s|step [\d,]+ · \d+ m \d\d s", shown["lines"][1]), (
        shown
    )
    save_screenshot(view, shots, "time-axis-relative")

    select.select_option("wall")
    page.wait_for_function(_all_labels_match(WALL), timeout=30_000)
    _, shown = hover_until_read_out(page, "loss ·", 0.9)
    assert re.fullmatch(r"step [\d,]+ · \d\d:\d\d:\d\d\.\d", shown["lines"][1]), shown
    page.mouse.move(5, 5)
    save_screenshot(view, shots, "time-axis-wall")

    select.select_option("step")
    page.wait_for_function(
        f"() => Object.values(({X_LABELS_JS})()).every((l) => l.length > 1 && l[0] === '0')",
        timeout=30_000,
    )
    assert not page.locator(".jhw-last-steps").first.is_disabled()
    assert notebook.errors() == []
