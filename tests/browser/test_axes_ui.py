"""The step axis options in a real JupyterLab, light at 1400 px and dark at 600 px: "log x" puts
every chart's step axis on a log scale (1-3 log labels, every line still drawn, no console
error from step 0) and back; "last N steps" shows the last 100 steps of the runs, each y axis
fitting them.

``JHW_UPDATE_SCREENSHOT=1`` also writes the screenshots to ``docs/axes-*.png``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ..helpers.browser import (
    THREE_RUNS,
    TRAIN_SETUP,
    X_LABELS_JS,
    Y_LABELS_JS,
    Notebook,
    wait_lines,
)
from ..helpers.jupyter_browser import (
    save_screenshot,
)

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.ui

DOCS = Path(__file__).resolve().parents[2] / "docs"


def cells(width: str | None) -> list[str]:
    show = (
        "display(live)"
        if width is None
        else f"display(ipywidgets.Box([live.widget], layout=ipywidgets.Layout(width='{width}')))"
    )
    return [TRAIN_SETUP, f"live = jhw.LivePlot(title='axes', keep_runs=True)\n{show}", THREE_RUNS]


def x_labels(page: Page) -> dict[str, list[str]]:
    return page.evaluate(X_LABELS_JS)


@pytest.mark.parametrize(
    ("theme", "width"), [("JupyterLab Light", None), ("JupyterLab Dark", "600px")]
)
def test_log_step_axis_and_the_last_steps(
    page: Page,
    notebook: Notebook,
    tmp_path: Path,
    theme: str,
    width: str | None,
) -> None:
    slug = theme.split()[-1].lower()
    key = "1400" if width is None else width.removesuffix("px")
    notebook.open(cells(width), name=f"axes-{slug}-{key}.ipynb", theme=theme, viewport=(1400, 1400))
    notebook.idle(timeout=180)
    page.wait_for_function(
        "() => document.querySelectorAll('.jhw-runs .jhw-run').length === 3", timeout=60_000
    )
    wait_lines(page, 3)
    view = page.locator(".jhw-liveplot").first
    view.scroll_into_view_if_needed()
    assert x_labels(page)["loss"][0] == "0"

    page.locator(".jhw-logx").first.check()
    # 1-3 log ticks (under four decades): 1 3 10 30 100 300
    page.wait_for_function(
        f"() => Object.values(({X_LABELS_JS})()).every((l) => l.length >= 4"
        " && l[0] === '1' && l.every((t) => /^[13]0*$/.test(t.replace(',', ''))))",
        timeout=30_000,
    )
    wait_lines(page, 3)  # every line still drawn (step 0 is a gap, not an error)
    log_shot = save_screenshot(view, tmp_path, f"axes-logx-{slug}-{key}")
    page.locator(".jhw-logx").first.uncheck()
    page.wait_for_function(f"() => ({X_LABELS_JS})().loss[0] === '0'", timeout=30_000)

    before = max(float(t) for t in page.evaluate(Y_LABELS_JS)["loss"])
    steps = page.locator(".jhw-last-steps").first
    steps.fill("100")
    steps.press("Enter")
    page.wait_for_function(
        f"() => Object.values(({X_LABELS_JS})()).every((l) =>"
        " Number(l[0].replace(',', '')) >= 299 && l[l.length - 1] === '400')",
        timeout=30_000,
    )
    wait_lines(page, 3)
    after = max(float(t) for t in page.evaluate(Y_LABELS_JS)["loss"])
    assert after < before, (before, after)  # the early, large losses are out of view
    window_shot = save_screenshot(view, tmp_path, f"axes-window-{slug}-{key}")
    if os.environ.get("JHW_UPDATE_SCREENSHOT") == "1":
        DOCS.mkdir(exist_ok=True)
        shutil.copyfile(log_shot, DOCS / f"axes-logx-{slug}-{key}.png")
        shutil.copyfile(window_shot, DOCS / f"axes-window-{slug}-{key}.png")
    assert notebook.errors() == []
