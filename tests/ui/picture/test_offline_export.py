"""A notebook with LivePlots read without its kernel: executed by nbclient (as
``jupyter nbconvert --execute`` does) and rendered to HTML by nbconvert (as GitHub, nbviewer and
docs builders do); opened offline in headless Chromium by ``tests/browser/test_offline_ui.py``.

Each plot's output must carry the widget view (for a live frontend) and the final static
picture (its SVG stored once), replaced in place when the run ended, so that a notebook without
widget state (a JupyterLab save with default settings) shows every plot as an image, `%%jaxhist`
and auto mode included. With widget state embedded, nbconvert picks the widget view, which needs
a CDN: the tests pin the one-line exports that keep the image.
"""

from __future__ import annotations

import base64
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from html import unescape
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

from jaxhist_widget.ui.plot._outputs import picture_svg

from ...helpers.offline import (
    PLOTS,
    SVG_IMG,
    WIDGET_VIEW,
    execute_notebook,
    make_notebook,
    nbformat,
    plot_outputs,
    to_html,
    without_widget_state,
)

pytestmark = [pytest.mark.kernel, pytest.mark.slow]


def images(html: str) -> int:
    """The pictures' images in an HTML export (the SVG each holds has that class too)."""
    return len(re.findall(r'<img [^>]*class="jhw-static"', html))


@pytest.fixture(scope="module")
def executed() -> Any:
    """The notebook executed by nbclient, with its widget state (nbclient's default)."""
    return execute_notebook()


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
        svg = ET.fromstring(picture_svg(data))
        lines = [p for p in svg.iter("{http://www.w3.org/2000/svg}path") if p.get("d")]
        assert any(p.get("class") == "jhw-line" for p in lines), f"cell {index}: no line"
        # The picture as an HTML image (what every reader that takes HTML shows), and no
        # image/svg+xml beside it: the SVG once.
        assert set(data) == {"text/html", "text/plain"}, f"cell {index}: {set(data)}"
    assert "widgets" in executed.metadata  # nbclient stores the widget state by default


def test_each_picture_is_stored_once_in_the_saved_notebook(executed: Any, tmp_path: Path) -> None:
    """Issue 39: the saved file held each picture twice (its SVG, then the same SVG as a base64
    image). Each picture's first line, its path data, is counted in the saved file's text and in
    every base64 payload it holds: as often as the pictures draw it (two plots may draw the
    same run), not twice that."""
    path = tmp_path / "saved.ipynb"
    nbformat().write(executed, path)
    saved = path.read_text(encoding="utf-8")
    decoded = [
        base64.b64decode(blob).decode("utf-8", "replace")
        for blob in re.findall(r"base64,([A-Za-z0-9+/=]+)", saved)
    ]
    svgs = [picture_svg(out.data) for index in PLOTS for out in plot_outputs(executed.cells[index])]
    assert len(svgs) == len(PLOTS)
    for svg in svgs:
        line = re.search(r'<path class="jhw-line"[^>]* d="([^"]{40,})"', svg).group(1)
        stored = saved.count(line) + sum(text.count(line) for text in decoded)
        assert stored == sum(other.count(line) for other in svgs), f"{line[:40]}... {stored}x"


def test_html_without_widget_state_embeds_every_picture(executed: Any) -> None:
    html = to_html(without_widget_state(executed))
    assert images(html) == len(PLOTS)  # the picture, as an image
    assert WIDGET_VIEW not in html


def test_html_with_widget_state_uses_the_widget_view(executed: Any) -> None:
    """nbconvert's default with state: the widget view (drawn by a manager from a CDN) and
    the fallback picture after it, shown only where the widget is not drawn (offline: see the
    browser test)."""
    html = to_html(executed)
    assert html.count('<div class="jp-RenderedSVG') == 0
    assert images(html) == len(PLOTS)
    assert html.count(f'<script type="{WIDGET_VIEW}">') == len(PLOTS)


def test_one_line_export_of_a_notebook_with_state_keeps_the_images(
    executed: Any, tmp_path: Path
) -> None:
    """The documented command for a notebook that already holds widget state: drop the
    notebook's metadata but the language, keep the outputs."""
    path = tmp_path / "with_state.ipynb"
    nbformat().write(executed, path)
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
    assert images(html) == len(PLOTS)
    assert WIDGET_VIEW not in html


def test_one_line_execute_and_export_keeps_the_images(tmp_path: Path) -> None:
    """The documented command to execute and export: no widget state stored, so nbconvert
    renders the pictures."""
    path = tmp_path / "plots.ipynb"
    nbformat().write(make_notebook(), path)
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
    assert images(html) == len(PLOTS)
    assert WIDGET_VIEW not in html
    pictures = [unquote(unescape(chunk.split("'", 1)[0])) for chunk in html.split(SVG_IMG)[1:]]
    assert len(pictures) == len(PLOTS) and all("jhw-line" in svg for svg in pictures)
