"""A notebook with LivePlots read without its kernel: executed by nbclient (as
``jupyter nbconvert --execute`` does), rendered to HTML by nbconvert (as GitHub, nbviewer and
docs builders do) and opened offline in headless Chromium.

Each plot's output must carry the widget view (for a live frontend) and the final static
picture, replaced in place when the run ended, so that a notebook without widget state (a
JupyterLab save with default settings) shows every plot as an image, `%%jaxhist` and auto mode
included. With widget state embedded, nbconvert picks the widget view, which needs a CDN: the
tests pin what an offline reader then sees (nothing) and the one-line exports that keep the
image.
"""

from __future__ import annotations

import base64
import copy
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest


def _nbformat() -> Any:
    # Imported by the tests that use it, not at collection: importing it (jsonschema builds a
    # grammar) would slow every pytest run, the quick subset included.
    return pytest.importorskip("nbformat")


pytestmark = [pytest.mark.kernel, pytest.mark.slow]

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
SVG_MIME = "image/svg+xml"
SVG_IMG = 'src="data:image/svg+xml;base64,'

SETUP = """\
%load_ext jaxhist_widget
import jax
import jax.numpy as jnp
import jaxhist_widget as jhw
from IPython.display import display


@jax.jit
def solve(x0):
    return jhw.while_loop(lambda x: x > 1e-3, lambda x: x * 0.95, x0, max_steps=500)
"""
CELLS = [
    SETUP,
    "live = jhw.LivePlot(title='by hand', log_y=True)\n"
    "display(live)\n"
    "with live:\n"
    "    x, hist = solve(jnp.float32(3.0))",
    "%%jaxhist --title magic\nx, hist = solve(jnp.float32(2.0))",
    "%jaxhist on --title auto",
    "x, hist = solve(jnp.float32(1.0))",
    "%jaxhist off",
    # A run on a thread of its own that ends while the next cell runs: its picture still goes
    # to this cell's output (ipykernel sends it under the running cell; the display id routes it).
    "import threading, time\n"
    "bg = jhw.LivePlot(title='thread')\n"
    "display(bg)\n"
    "worker = threading.Thread(target=lambda: (time.sleep(1.0), bg.run(solve, jnp.float32(3.0))))\n"
    "worker.start()",
    "worker.join()",
]
#: The cells that show a plot, and the title each one's picture must show.
PLOTS = {1: "by hand", 2: "magic", 4: "auto", 6: "thread"}


def make_notebook() -> Any:
    nb = _nbformat().v4.new_notebook()
    nb.cells = [_nbformat().v4.new_code_cell(source) for source in CELLS]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    return nb


@pytest.fixture(scope="module")
def executed() -> Any:
    """The notebook executed by nbclient, with its widget state (nbclient's default)."""
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    nb = make_notebook()
    env = {**os.environ, "JAX_PLATFORMS": os.environ.get("JAX_PLATFORMS", "cpu")}
    nbclient.NotebookClient(nb, kernel_name="python3", timeout=120).execute(env=env)
    return nb


def without_widget_state(nb: Any) -> Any:
    """What JupyterLab saves with default settings: the outputs, no widget state."""
    nb = copy.deepcopy(nb)
    nb.metadata.pop("widgets", None)
    return nb


def to_html(nb: Any) -> str:
    from nbconvert import HTMLExporter

    html, _ = HTMLExporter().from_notebook_node(nb)
    return html


def plot_outputs(cell: Any) -> list[Any]:
    """The picture outputs of ``cell`` (one per plot, right after the widget's)."""
    return [o for o in cell.outputs if o.output_type == "display_data" and SVG_MIME in o.data]


def test_each_plot_output_holds_the_widget_and_its_final_picture(executed: Any) -> None:
    for index, title in PLOTS.items():
        cell_outputs = executed.cells[index].outputs
        outputs = plot_outputs(executed.cells[index])
        assert len(outputs) == 1, f"cell {index}: {len(outputs)} plot outputs"
        data = outputs[0].data
        # Right before it, the widget's own output: JupyterLab / Notebook 7 show the live widget.
        before = cell_outputs[cell_outputs.index(outputs[0]) - 1]
        assert set(before.data) == {WIDGET_VIEW}
        # The placeholder was replaced in place by the picture of the ended run.
        summary = data["text/plain"]
        assert re.match(rf"{title}: finished, 1[3-5]\d / 500 steps, value 9\.\d+e-4$", summary)
        svg = ET.fromstring(data[SVG_MIME])
        lines = [p for p in svg.iter("{http://www.w3.org/2000/svg}path") if p.get("d")]
        assert any(p.get("class") == "jhw-line" for p in lines), f"cell {index}: no line"
        encoded = re.search(r'base64,([^"]+)', data["text/html"]).group(1)
        assert base64.b64decode(encoded).decode() == data[SVG_MIME]
    assert "widgets" in executed.metadata  # nbclient stores the widget state by default


def test_html_without_widget_state_embeds_every_picture(executed: Any) -> None:
    html = to_html(without_widget_state(executed))
    assert html.count('class="jhw-static"') == len(PLOTS)  # the picture, as an image
    assert WIDGET_VIEW not in html


def test_html_with_widget_state_uses_the_widget_view(executed: Any) -> None:
    """nbconvert's default with state: the widget view (drawn by a manager from a CDN) and
    the fallback picture after it, shown only where the widget is not drawn (offline: see the
    browser test)."""
    html = to_html(executed)
    assert html.count('<div class="jp-RenderedSVG') == 0
    assert html.count('class="jhw-static"') == len(PLOTS)
    assert html.count(f'<script type="{WIDGET_VIEW}">') == len(PLOTS)


def test_one_line_export_of_a_notebook_with_state_keeps_the_images(
    executed: Any, tmp_path: Path
) -> None:
    """The documented command for a notebook that already holds widget state: drop the
    notebook's metadata but the language, keep the outputs."""
    path = tmp_path / "with_state.ipynb"
    _nbformat().write(executed, path)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "nbconvert",
            "--to",
            "html",
            "--ClearMetadataPreprocessor.enabled=True",
            str(path),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    html = (tmp_path / "with_state.html").read_text()
    assert html.count('class="jhw-static"') == len(PLOTS)
    assert WIDGET_VIEW not in html


def test_one_line_execute_and_export_keeps_the_images(tmp_path: Path) -> None:
    """The documented command to execute and export: no widget state stored, so nbconvert
    renders the pictures."""
    path = tmp_path / "plots.ipynb"
    _nbformat().write(make_notebook(), path)
    env = {**os.environ, "JAX_PLATFORMS": os.environ.get("JAX_PLATFORMS", "cpu")}
    subprocess.run(
        [
            sys.executable,
            "-m",
            "nbconvert",
            "--to",
            "html",
            "--execute",
            "--ExecutePreprocessor.store_widget_state=False",
            str(path),
        ],
        check=True,
        capture_output=True,
        timeout=300,
        env=env,
    )
    html = (tmp_path / "plots.html").read_text()
    assert html.count('class="jhw-static"') == len(PLOTS)
    assert WIDGET_VIEW not in html
    pictures = [base64.b64decode(chunk.split('"', 1)[0]) for chunk in html.split(SVG_IMG)[1:]]
    assert len(pictures) == len(PLOTS) and all(b"jhw-line" in svg for svg in pictures)


# ------------------------------------------------------------------------- offline Chromium


def offline_plots(browser: Any, html_files: list[Path]) -> tuple[list[Any], list[str]]:
    """Open each HTML file with every non-file request blocked: per file, the visible plot
    images (`VISIBLE_PLOTS`); and the blocked URLs."""
    blocked: list[str] = []

    def offline(route: Any) -> None:
        if route.request.url.startswith("file:"):
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    page = browser.new_page(viewport={"width": 1000, "height": 800})
    try:
        page.route("**/*", offline)
        seen = []
        for path in html_files:
            page.goto(path.as_uri(), wait_until="load")
            seen.append(page.evaluate(VISIBLE_PLOTS))
    finally:
        page.close()
    return seen, blocked


@pytest.fixture
def chromium() -> Any:
    pytest.importorskip("playwright.sync_api")
    from playwright.sync_api import sync_playwright

    from ..helpers.jupyter_browser import CHROMIUM_ARGS, CHROMIUM_PATH

    if not CHROMIUM_PATH.exists():
        pytest.skip(f"needs Chromium at {CHROMIUM_PATH}")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM_PATH),
            headless=True,
            chromium_sandbox=False,
            args=CHROMIUM_ARGS,
        )
        try:
            yield browser
        finally:
            browser.close()


def assert_every_plot_visible(shown: list[Any]) -> None:
    assert [cell for cell, _ in shown] == sorted(PLOTS), shown
    for cell, (width, height, natural) in shown:
        assert natural > 0 and width > 300 and height > 200, (cell, width, height, natural)


@pytest.mark.ui
def test_offline_browser_shows_the_plots(executed: Any, chromium: Any, tmp_path: Path) -> None:
    """Offline, the HTML of the notebook shows each plot's picture once: without widget state
    the picture's output; with widget state (nbconvert's default) the same, in place of the
    widget view its manager cannot load."""
    stripped, stateful = tmp_path / "no_state.html", tmp_path / "with_state.html"
    stripped.write_text(to_html(without_widget_state(executed)))
    stateful.write_text(to_html(executed))
    (shown, with_state), blocked = offline_plots(chromium, [stripped, stateful])
    assert blocked, "nothing was blocked: the page did not try the network"
    assert_every_plot_visible(shown)
    assert_every_plot_visible(with_state)


@pytest.mark.ui
def test_jupyterlab_live_saved_reopened_and_exported(chromium: Any, tmp_path: Path) -> None:
    """Run in JupyterLab: it shows the live widgets, not the pictures. Saved with default
    settings (no widget state), the file holds each plot's final picture (the run-end updates
    reached Lab's outputs, from whichever thread ended the run). Reopened with a new kernel
    (the widget models are gone, and Lab's widget renderer writes "model not found" without
    falling back to another mimetype), each plot shows its picture instead. Rendered by
    nbconvert, the saved file shows them offline."""
    pytest.importorskip("jupyterlab")
    from ..helpers.jupyter_browser import (
        open_notebook,
        reload_notebook,
        run_all,
        save_notebook,
        start_jupyter_server,
        stop_jupyter_server,
        wait_idle,
    )

    server = start_jupyter_server(tmp_path / "lab")
    try:
        page = chromium.new_page(viewport={"width": 1280, "height": 900})
        page.set_default_timeout(60_000)
        open_notebook(page, server, CELLS, name="plots.ipynb")
        run_all(page)
        wait_idle(page, timeout=120)
        cells = page.locator(".jp-Notebook .jp-Cell")
        for index in PLOTS:  # Lab draws the live widget (its mimetype ranks first)
            cells.nth(index).locator(".jhw-liveplot").wait_for(state="attached")
        live = page.evaluate(LAB_PLOTS)
        # A kernel restart keeps the views, disconnected: no broken-link icons, and the lines
        # stay on their axes.
        page.evaluate(RESTART_KERNEL)
        page.locator(".jhw-liveplot.jupyter-widgets-disconnected").first.wait_for(state="attached")
        restarted = page.evaluate(DISCONNECTED_VIEWS)
        save_notebook(page)
        server.shutdown_kernels()
        reload_notebook(page, "plots.ipynb")  # a new kernel: the models are gone
        page.locator("img.jhw-static").first.wait_for(state="visible")
        reopened = page.evaluate(LAB_PLOTS)
        page.close()
    finally:
        stop_jupyter_server(server)
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
    nb = _nbformat().read(server.root_dir / "plots.ipynb", as_version=4)
    assert "widgets" not in nb.metadata  # Lab's default: no widget state
    for index, title in PLOTS.items():
        (output,) = plot_outputs(nb.cells[index])
        assert output.data["text/plain"].startswith(f"{title}: finished, ")
    html = tmp_path / "saved.html"
    html.write_text(to_html(nb))
    (shown,), _ = offline_plots(chromium, [html])
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
