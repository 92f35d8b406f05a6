"""Each chart's download menu, in a real JupyterLab: the chart's CSV while a normal cell runs the
loop (the request served on a kernel subshell) and once it stopped (every row the kernel holds,
not the drawn points), the plot's picture as SVG and as PNG (drawn in the page), each saved from
a Blob the page made: no request leaves the page for them.

``JHW_SHOT_DIR=<dir>`` also writes the screenshots (the menu open, light and dark) there.
"""

from __future__ import annotations

import io
import os
import struct
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import pytest

from ..helpers.browser import SLOW_SETUP, Notebook, set_theme
from ..helpers.jupyter_browser import cell_output_text, save_screenshot

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.ui

CELLS = [
    SLOW_SETUP,
    'live = jhw.LivePlot(title="download me")\nlive',
    "with live:\n"
    "    final, hist = forever(jnp.float32(1.0))\n"
    "rows = live.to_pandas()\n"
    'print("ROWS", len(rows), repr(float(rows["value"].astype("float64").sum())), flush=True)',
]

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _download(page: Page, fmt: str) -> tuple[str, str, bytes]:
    """Open the first chart's download menu, choose ``fmt``: the file's URL, name and bytes."""
    page.locator(".jhw-download-button").first.click()
    with page.expect_download(timeout=60_000) as info:
        page.locator(f".jhw-download-item[data-format='{fmt}']").first.click()
    download = info.value
    path = download.path()
    return download.url, download.suggested_filename, Path(path).read_bytes()


def _csv_rows(data: bytes) -> list[list[str]]:
    import csv

    return list(csv.reader(io.StringIO(data.decode("utf-8"))))


def _printed(page: Page, tag: str, timeout: float) -> list[str]:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for line in cell_output_text(page, 2).splitlines():
            if line.startswith(f"{tag} "):
                return line.split()[1:]
        time.sleep(0.2)
    raise AssertionError(f"no {tag} line: {cell_output_text(page, 2)!r}")


def test_a_chart_downloads_its_csv_mid_run_and_the_picture_offline(
    page: Page, notebook: Notebook, tmp_path: Path
) -> None:
    shots = Path(os.environ.get("JHW_SHOT_DIR", tmp_path))
    outside: list[str] = []
    notebook.open(CELLS, name="download.ipynb", viewport=(1400, 1000))
    server = urlsplit(page.url).netloc

    def record(request) -> None:  # Lab's own calls to its server aside, nothing may go out
        if urlsplit(request.url).netloc != server and not request.url.startswith(
            ("blob:", "data:")
        ):
            outside.append(request.url)

    page.on("request", record)
    page.wait_for_function(
        "() => document.querySelector('.jhw-panel')?.dataset.status === 'running'"
        " && Number(document.querySelector('.jhw-step').dataset.step) >= 20",
        timeout=120_000,
        polling=50,
    )

    # Mid-run, in a normal cell: the kernel answers on a subshell with the rows so far.
    url, name, data = _download(page, "csv")
    assert page.locator(".jhw-panel").first.get_attribute("data-status") == "running"
    assert url.startswith("blob:") and name == "download_me-value.csv"
    rows = _csv_rows(data)
    assert rows[0] == ["run", "step", "wall_time", "value"]
    assert len(rows) - 1 >= 20 and [r[1] for r in rows[1:4]] == ["0", "1", "2"]
    assert float(rows[1][3]) == 1.0 and float(rows[2][3]) == pytest.approx(1.99)

    page.locator(".jhw-stop").first.click()
    count, total = _printed(page, "ROWS", 60)
    notebook.idle(timeout=60)

    # Stopped: every row the run has, as `live.to_pandas()` has them.
    url, name, data = _download(page, "csv")
    rows = _csv_rows(data)[1:]
    assert url.startswith("blob:") and len(rows) == int(count)
    assert sum(float(r[3]) for r in rows) == pytest.approx(float(total), rel=1e-9)

    url, name, svg = _download(page, "svg")
    assert url.startswith("blob:") and name == "download_me.svg"
    root = ET.fromstring(svg.decode("utf-8"))
    assert root.tag == "{http://www.w3.org/2000/svg}svg" and "download me" in svg.decode()
    width, height = float(root.get("width")), float(root.get("height"))

    url, name, png = _download(page, "png")
    assert url.startswith("blob:") and name == "download_me.png"
    assert png[:8] == PNG_SIGNATURE and png[12:16] == b"IHDR"
    assert struct.unpack(">II", png[16:24]) == (round(2 * width), round(2 * height))

    # The menu open over the chart, in the light and the dark theme.
    chart = page.locator(".jhw-figure").first
    for theme, tag in (("JupyterLab Light", "light"), ("JupyterLab Dark", "dark")):
        set_theme(page, theme)
        notebook.theme = theme
        page.locator(".jhw-download-button").first.click()
        assert page.locator(".jhw-download-menu").first.is_visible()
        save_screenshot(chart, shots, f"download-menu-{tag}")
        page.keyboard.press("Escape")
        assert not page.locator(".jhw-download-menu").first.is_visible()
    assert outside == []
    assert notebook.errors() == []
