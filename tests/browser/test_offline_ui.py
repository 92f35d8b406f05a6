"""A notebook of LivePlots opened without its kernel, in headless Chromium: its HTML export
offline (every request but the file's blocked), and the notebook run in JupyterLab, saved,
its kernel restarted and the notebook reopened (the widget models gone).

What the kernel writes into such a notebook is checked in ``tests/ui/picture/``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..helpers.browser import Notebook, block_outside
from ..helpers.jupyter_browser import reload_notebook, save_notebook, wait_idle
from ..helpers.offline import (
    CELLS,
    PLOTS,
    execute_notebook,
    nbformat,
    plot_outputs,
    to_html,
    without_widget_state,
)

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = [pytest.mark.ui, pytest.mark.kernel]


def offline_plots(browser: Any, html_files: list[Path]) -> tuple[list[Any], list[str]]:
    """Open each HTML file with every non-file request blocked: per file, the visible plot
    images (`VISIBLE_PLOTS`); and the blocked URLs."""
    page = browser.new_page(viewport={"width": 1000, "height": 800})
    try:
        blocked = block_outside(page)
        seen = []
        for path in html_files:
            page.goto(path.as_uri(), wait_until="load")
            seen.append(page.evaluate(VISIBLE_PLOTS))
    finally:
        page.close()
    return seen, blocked


def assert_every_plot_visible(shown: list[Any]) -> None:
    assert [cell for cell, _ in shown] == sorted(PLOTS), shown
    for cell, (width, height, natural) in shown:
        assert natural > 0 and width > 300 and height > 200, (cell, width, height, natural)


def test_offline_browser_shows_the_plots(browser: Browser, tmp_path: Path) -> None:
    """Offline, the HTML of the notebook shows each plot's picture once: without widget state
    the picture's output; with widget state (nbconvert's default) the same, in place of the
    widget view its manager cannot load."""
    executed = execute_notebook()
    stripped, stateful = tmp_path / "no_state.html", tmp_path / "with_state.html"
    stripped.write_text(to_html(without_widget_state(executed)))
    stateful.write_text(to_html(executed))
    (shown, with_state), blocked = offline_plots(browser, [stripped, stateful])
    assert blocked, "nothing was blocked: the page did not try the network"
    assert_every_plot_visible(shown)
    assert_every_plot_visible(with_state)


def test_jupyterlab_live_saved_reopened_and_exported(
    notebook: Notebook, browser: Browser, tmp_path: Path
) -> None:
    """Run in JupyterLab: it shows the live widgets, not the pictures. Saved with default
    settings (no widget state), the file holds each plot's final picture (the run-end updates
    reached Lab's outputs, from whichever thread ended the run). Reopened with a new kernel
    (the widget models are gone, and Lab's widget renderer writes "model not found" without
    falling back to another mimetype), each plot shows its picture instead. Rendered by
    nbconvert, the saved file shows them offline."""
    page = notebook.open(CELLS, name="offline-plots.ipynb")
    wait_idle(page, timeout=120)
    server = notebook.server
    cells = page.locator(".jp-Notebook .jp-Cell")
    for index in PLOTS:  # Lab draws the live widget (its mimetype ranks first)
        cells.nth(index).locator(".jhw-liveplot").wait_for(state="attached")
    live = page.evaluate(LAB_PLOTS)
    # A kernel restart keeps the views, disconnected: no broken-link icons, and the lines stay
    # on their axes.
    page.evaluate(RESTART_KERNEL)
    page.locator(".jhw-liveplot.jupyter-widgets-disconnected").first.wait_for(state="attached")
    restarted = page.evaluate(DISCONNECTED_VIEWS)
    save_notebook(page)
    server.shutdown_kernels()
    reload_notebook(page, "offline-plots.ipynb")  # a new kernel: the models are gone
    page.locator("img.jhw-static").first.wait_for(state="visible")
    reopened = page.evaluate(LAB_PLOTS)
    assert [cell for cell, *_ in live] == sorted(PLOTS), live
    assert all(widget and not picture for _, widget, picture, _ in live), live
    assert len(restarted) == len(PLOTS), restarted
    for icons, marks_left, axes_left in restarted:
        assert icons == [], icons
        assert marks_left == axes_left, (marks_left, axes_left)
    assert [cell for cell, *_ in reopened] == sorted(PLOTS), reopened
    for cell, widget, picture, text in reopened:
        assert not widget and picture, (cell, widget, picture)
        assert "model not found" not in text, (cell, text)
    nb = nbformat().read(server.root_dir / "offline-plots.ipynb", as_version=4)
    assert "widgets" not in nb.metadata  # Lab's default: no widget state
    for index, title in PLOTS.items():
        (output,) = plot_outputs(nb.cells[index])
        assert output.data["text/plain"].startswith(f"{title}: finished, ")
    html = tmp_path / "saved.html"
    html.write_text(to_html(nb))
    (shown,), _ = offline_plots(browser, [html])
    assert_every_plot_visible(shown)


RESTART_KERNEL = """async () => {
  await window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.restart();
}"""

#: Per LivePlot view: the broken-link icons shown (elements whose ``::before`` is displayed),
#: and the left edges of its figure's marks layer and axes layer.
DISCONNECTED_VIEWS = """() => [...document.querySelectorAll('.jhw-liveplot')].map((view) => {
  const icons = [view, ...view.querySelectorAll('.jupyter-widgets-disconnected')]
    .filter((el) => el.classList.contains('jupyter-widgets-disconnected')
      && getComputedStyle(el, '::before').display !== 'none')
    .map((el) => el.className);
  const fig = view.querySelector('.bqplot');
  const left = (sel) => Math.round(fig.querySelector(sel).getBoundingClientRect().left);
  return [icons, left(':scope > svg.svg-figure'), left(':scope > svg.svg-background')];
})"""

#: Per notebook cell showing a LivePlot output in JupyterLab: its index, whether a live widget
#: view is visible, whether the static picture is visible, and the output's visible text.
LAB_PLOTS = """() => {
  const visible = (el) => !!el && el.getBoundingClientRect().width > 0;
  const cells = [...document.querySelectorAll('.jp-Notebook .jp-Cell')];
  const out = [];
  cells.forEach((cell, index) => {
    const widget = cell.querySelector('.jhw-liveplot');
    const picture = cell.querySelector('img.jhw-static');
    const area = cell.querySelector('.jp-OutputArea');
    if (widget || picture) {
      out.push([index, visible(widget), visible(picture) && picture.naturalWidth > 0,
                area ? area.innerText : '']);
    }
  });
  return out;
}"""


#: Per code cell with a visible image output: its index and the image's size on the page.
VISIBLE_PLOTS = """() => {
  const cells = [...document.querySelectorAll('.jp-Cell.jp-CodeCell')];
  const out = [];
  cells.forEach((cell, index) => {
    for (const img of cell.querySelectorAll('.jp-OutputArea-output img')) {
      const box = img.getBoundingClientRect();
      if (img.complete && box.width > 0 && box.height > 0) {
        out.push([index, [box.width, box.height, img.naturalWidth]]);
      }
    }
  });
  return out;
}"""
