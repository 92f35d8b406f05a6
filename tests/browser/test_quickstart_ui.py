"""The README's first command, as a newcomer runs it: ``bash scripts/quickstart.sh`` installs the
package, starts JupyterLab on the quickstart tutorial, and the tutorial runs there (Run All) to
plots with curves, no error, the file on disk untouched."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ..helpers.jupyter_browser import (
    cell_errors,
    run_all,
    start_jupyter_server,
    stop_jupyter_server,
    wait_idle,
)

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = pytest.mark.ui

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = "notebooks/01_quickstart.ipynb"
#: Every LivePlot of the tutorial with a drawn curve (a path with at least two points).
DRAWN_PLOTS_JS = """
() => [...document.querySelectorAll('.jp-Notebook .jhw-liveplot')].filter((plot) =>
  [...plot.querySelectorAll('.jhw-figure g.curve path.line')].some((p) =>
    /^M[^M]*L/.test(p.getAttribute('d') || ''))).length
"""

#: The "watch a loop run" plot's panel: its status, step and whether its Stop can be pressed.
WATCH_JS = """
() => {
  const plot = [...document.querySelectorAll('.jp-Notebook .jhw-liveplot')].find((p) =>
    (p.querySelector('.jhw-panel') || {}).textContent.includes('a million steps'));
  if (!plot) return null;
  const panel = plot.querySelector('.jhw-panel');
  const stop = plot.querySelector('.jhw-stop');
  return { status: panel.dataset.status, text: panel.textContent, stoppable: !stop.disabled };
}
"""

#: The tutorial is the current document and its kernel is idle.
TUTORIAL_IDLE_JS = """
() => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const kernel = w && w.sessionContext && w.sessionContext.session
    && w.sessionContext.session.kernel;
  return !!kernel && kernel.status === 'idle' && w.context.path.endsWith('01_quickstart.ipynb');
}
"""


def test_the_quickstart_command_opens_the_tutorial_and_it_runs(
    browser: Browser, tmp_path: Path
) -> None:
    readme = (ROOT / "README.md").read_text()
    assert re.search(r"^bash scripts/quickstart\.sh\b", readme, re.M), "README's first command"
    tutorial = ROOT / NOTEBOOK
    before = tutorial.read_bytes()
    server = start_jupyter_server(
        tmp_path,
        startup_timeout=600,  # the script installs the package first
        launcher=["bash", str(ROOT / "scripts" / "quickstart.sh")],
        # The test runs the checkout's own tutorial: nothing may be written back into it.
        settings={"@jupyterlab/docmanager-extension/plugin": {"autosave": False}},
    )
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        # Where the script's JupyterLab sends the user's browser: the page its runtime
        # folder holds for the file it was asked to open.
        [opener] = (tmp_path / "runtime").glob("jpserver-file-to-run-*-open.html")
        url = re.search(r'href="([^"]+)"', opener.read_text()).group(1)
        assert url.split("?")[0].endswith("/lab/tree/01_quickstart.ipynb"), url
        page.goto(url, wait_until="domcontentloaded")
        page.wait_for_function(TUTORIAL_IDLE_JS, timeout=180_000, polling=200)
        run_all(page)
        # The newcomer sees its long loop run (the panel reads running, Stop can be
        # pressed) and, invited to, presses Stop during Run All: the loop ends, the rest runs.
        page.wait_for_function(
            f"() => {{ const w = ({WATCH_JS})(); return w && w.status === 'running'"
            " && w.stoppable; }",
            timeout=300_000,
            polling=100,
        )
        plot = page.locator(".jhw-liveplot").filter(has_text="a million steps")
        plot.locator(".jhw-stop").click()
        wait_idle(page, timeout=600)
        assert cell_errors(page) == []
        assert page.evaluate(WATCH_JS)["status"] == "stopped"
        said = page.locator(".jp-Notebook .jp-Cell").filter(has_text="a million steps")
        assert "(stopped)" in said.locator(".jp-OutputArea").inner_text()
        assert page.evaluate(DRAWN_PLOTS_JS) >= 2, "the tutorial's plots show no curve"
    finally:
        context.close()
        stop_jupyter_server(server)
    assert tutorial.read_bytes() == before, f"{NOTEBOOK} was written to"
