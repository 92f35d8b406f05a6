"""Temporary smoke test of the browser-test fixtures (to be replaced by LivePlot tests).

A plain ``ipywidgets.IntProgress`` is updated from a ~3 s loop; while the cell
runs, the DOM is sampled and must show several intermediate values. This proves
that run_all() does not block, that widget messages reach the front end during
execution, and that both JupyterLab and Notebook 7 work.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

import pytest

from .jupyter_browser import (
    UI,
    BrowserLog,
    JupyterServer,
    cell_errors,
    cell_output_text,
    open_notebook,
    run_all,
    sample_while_running,
    save_screenshot,
    screenshot_on_failure,
    wait_idle,
)

if TYPE_CHECKING:
    from pathlib import Path

    from playwright.sync_api import Page

pytestmark = pytest.mark.ui

STEPS = 30
STEP_SLEEP_S = 0.1  # STEPS * STEP_SLEEP_S ~ 3 s of live updates

CELLS = [
    "import sys\nprint(sys.executable)",
    "import time\n"
    "import ipywidgets as widgets\n"
    "\n"
    f"bar = widgets.IntProgress(min=0, max={STEPS}, description='smoke')\n"
    "display(bar)\n"
    f"for i in range(1, {STEPS} + 1):\n"
    "    bar.value = i\n"
    f"    time.sleep({STEP_SLEEP_S})\n"
    "print('loop done')",
]

# ipywidgets 8 renders a horizontal IntProgress as
# .widget-hprogress > .progress > .progress-bar, the inline style width being
# the percentage (not .widget-progress).
PROGRESS_WIDTH_JS = """
() => {
  const bar = document.querySelector('.widget-hprogress .progress-bar');
  return bar ? bar.style.width : null;
}
"""


@pytest.mark.parametrize("ui", ["lab", "notebook7"])
def test_progress_updates_while_cell_runs(
    page: Page,
    browser_log: BrowserLog,
    jupyter_server: JupyterServer,
    tmp_path: Path,
    ui: UI,
) -> None:
    open_notebook(page, jupyter_server, CELLS, name=f"infra-smoke-{ui}.ipynb", ui=ui)
    run_all(page)
    with screenshot_on_failure(page, tmp_path, f"smoke-{ui}"):
        samples = sample_while_running(page, PROGRESS_WIDTH_JS, timeout=60)
        wait_idle(page, timeout=60)

        # Distinct widths seen while the cell was still running, in order.
        seen = [w for i, w in enumerate(samples) if w and (i == 0 or w != samples[i - 1])]
        assert len(set(seen)) >= 5, f"too few live updates seen while running: {seen}"

        assert cell_errors(page) == []
        assert "loop done" in cell_output_text(page, 1)
        # The kernel must run in the test interpreter (so it sees the package).
        kernel_python = cell_output_text(page, 0).strip()
        assert os.path.realpath(kernel_python) == os.path.realpath(sys.executable)

        bar = page.locator(".widget-hprogress .progress-bar")
        assert bar.evaluate("el => el.style.width") == "100%"
        shot = save_screenshot(page.locator(".widget-hprogress"), tmp_path, f"bar-{ui}")
        assert shot.read_bytes().startswith(b"\x89PNG")

    assert browser_log.errors() == []
