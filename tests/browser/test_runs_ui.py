"""Runs, smoothing and the outlier-robust y range in a real JupyterLab, light at 1400 px and dark
at 600 px: three kept runs named three ways (a named block, after `live.run`'s call, the plot's
``run N``) drawn in three colours in every chart and listed in the panel (each line's colour is
its run's swatch; every text readable); a run's toggle hides its lines in every chart and the
static picture follows (where the plot itself is displayed); "ignore outliers" fits the loss axis
to the line without its spikes; the smoothing slider draws a smoothed line over each faint raw
one.

``JHW_UPDATE_SCREENSHOT=1`` also writes the screenshots to ``docs/runs-*.png``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ..helpers.browser import (
    CONTRAST_JS,
    LINES_JS,
    MIN_CONTRAST,
    THREE_RUNS,
    TRAIN_SETUP,
    Y_LABELS_JS,
    Notebook,
    wait_lines,
)
from ..helpers.jupyter_browser import (
    save_screenshot,
)
from ..helpers.page_charts import PICTURE_JS

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.ui

DOCS = Path(__file__).resolve().parents[2] / "docs"

RUN_LIST_JS = """
() => [...document.querySelectorAll('.jhw-runs .jhw-run')].map((row) => ({
  number: row.dataset.run, name: row.dataset.name, hidden: row.dataset.hidden,
  swatch: getComputedStyle(row.querySelector('.jhw-run-swatch')).backgroundColor,
  status: row.querySelector('.jhw-run-status').textContent,
  steps: row.querySelector('.jhw-run-steps').textContent,
  values: row.querySelector('.jhw-run-values').textContent,
}))
"""


RUN_TEXTS = ".jhw-run-name, .jhw-run-status, .jhw-run-steps, .jhw-run-time, .jhw-run-values"


def cells(width: str | None) -> list[str]:
    show = (
        "display(live)"
        if width is None
        else f"display(ipywidgets.Box([live.widget], layout=ipywidgets.Layout(width='{width}')))"
    )
    return [
        TRAIN_SETUP,
        f"live = jhw.LivePlot(title='three runs', keep_runs=True)\n{show}",
        THREE_RUNS,
    ]


def shown_lines(page: Page) -> dict[str, list[dict]]:
    return page.evaluate(LINES_JS)


def max_tick(page: Page, chart: str) -> float:
    return max(float(t.replace(",", "")) for t in page.evaluate(Y_LABELS_JS)[chart])


@pytest.mark.parametrize(
    ("theme", "width"), [("JupyterLab Light", None), ("JupyterLab Dark", "600px")]
)
def test_runs_named_coloured_listed_hidden_and_smoothed(
    page: Page,
    notebook: Notebook,
    tmp_path: Path,
    theme: str,
    width: str | None,
) -> None:
    slug = theme.split()[-1].lower()
    key = "1400" if width is None else width.removesuffix("px")
    notebook.open(cells(width), name=f"runs-{slug}-{key}.ipynb", theme=theme, viewport=(1400, 1400))
    notebook.idle(timeout=180)
    page.wait_for_function(
        "() => document.querySelectorAll('.jhw-runs .jhw-run').length === 3 && [...document"
        ".querySelectorAll('.jhw-run-status')].every((s) => s.textContent === 'finished')",
        timeout=60_000,
    )
    wait_lines(page, 3)
    view = page.locator(".jhw-liveplot").first
    view.scroll_into_view_if_needed()
    runs = page.evaluate(RUN_LIST_JS)
    assert [r["name"] for r in runs] == ["sgd lr=0.01", "train(0.003)", "run 3"], runs
    assert all(r["steps"].startswith("400 / 400 steps") for r in runs), runs
    assert all(r["values"].startswith("loss ") and " · lr " in r["values"] for r in runs)
    swatches = [r["swatch"] for r in runs]
    assert len(set(swatches)) == 3, swatches  # three colours
    lines = shown_lines(page)
    assert sorted(lines) == ["loss", "lr"], lines
    for chart, drawn in lines.items():  # every chart draws each run in its colour
        assert [line["stroke"] for line in drawn] == swatches, (chart, drawn)
        assert all(line["opacity"] == 1 for line in drawn), (chart, drawn)
    header = page.locator(".jhw-panel .jhw-header-run").first.text_content()
    assert header == "run 3"  # the latest run's name
    measured = page.evaluate(CONTRAST_JS, RUN_TEXTS)
    poor = [m for m in measured if m["ratio"] < MIN_CONTRAST]
    assert len(measured) == 1 + 15 and not poor, poor  # the header names the latest run
    shot = save_screenshot(view, tmp_path, f"runs-{slug}-{key}")

    # A run's toggle hides it in every chart, and the saved picture follows.
    page.locator('.jhw-run[data-run="1"] .jhw-run-toggle').click()
    page.locator('.jhw-run[data-run="1"][data-hidden="true"]').wait_for()
    wait_lines(page, 2)
    assert [line["stroke"] for line in shown_lines(page)["loss"]] == swatches[1:]
    if width is None:  # (in a Box only the widget is displayed: no picture)
        hidden = 'data-name="sgd lr=0.01" data-hidden="true"'
        page.wait_for_function(
            f"(text) => ({PICTURE_JS})().includes(text)", arg=hidden, timeout=30_000
        )
    page.locator('.jhw-run[data-run="1"] .jhw-run-toggle').click()
    wait_lines(page, 3)

    # Ignore outliers, on by default: the loss axis fits the line without its spikes (40
    # above it); unticked, it holds them.
    assert max_tick(page, "loss") <= 10
    page.locator(".jhw-outliers").first.uncheck()
    page.wait_for_function(
        f"() => Math.max(...({Y_LABELS_JS})().loss.map(Number)) >= 40", timeout=30_000
    )
    page.locator(".jhw-outliers").first.check()
    page.wait_for_function(
        f"() => Math.max(...({Y_LABELS_JS})().loss.map(Number)) <= 10", timeout=30_000
    )

    # Smoothing: a smoothed line over each raw one, which stays, faint.
    page.locator(".jhw-smoothing").first.evaluate(
        "(el) => { el.value = '0.9'; el.dispatchEvent(new Event('input'));"
        " el.dispatchEvent(new Event('change')); }"
    )
    wait_lines(page, 6)
    page.mouse.move(0, 0)
    assert page.locator(".jhw-smoothing-value").first.text_content() == "0.90"
    for chart, drawn in shown_lines(page).items():
        raw, smoothed = drawn[:3], drawn[3:]
        assert [line["stroke"] for line in smoothed] == swatches, (chart, drawn)
        assert all(line["opacity"] < 0.5 for line in raw), (chart, raw)
        assert all(line["opacity"] == 1 for line in smoothed), (chart, smoothed)
    if width is None:
        page.wait_for_function(f"() => ({PICTURE_JS})().includes('· smoothed')")
    smooth_shot = save_screenshot(view, tmp_path, f"runs-smoothing-{slug}-{key}")
    if os.environ.get("JHW_UPDATE_SCREENSHOT") == "1":
        DOCS.mkdir(exist_ok=True)
        shutil.copyfile(shot, DOCS / f"runs-{slug}-{key}.png")
        shutil.copyfile(smooth_shot, DOCS / f"runs-smoothing-{slug}-{key}.png")
    assert notebook.errors() == []
