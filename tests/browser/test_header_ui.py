"""The panel's header and run list reflow cleanly from 600 to 1400 px of output width, and
nothing of them is cut off in a side panel's 330 px.

One plot shown in boxes of six widths while a run is under way, with a kept run beside it and a
long run name: the header is what runs (title, run, badge) then how far it is (bar, step, rate,
elapsed), and the second group moves to a line of its own as one piece, its counters never
split over lines (a lone "elapsed" used to wrap at ~830 px); the run list's latest values are
never cut to nothing (at ~630 px they used to be dropped): they take a line of their own.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ..helpers.browser import LIGHT, SLOW_SETUP, Notebook
from ..helpers.jupyter_browser import save_screenshot

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.ui

DOCS = Path(__file__).resolve().parents[2] / "docs"
WIDTHS = [330, 600, 700, 830, 1000, 1200, 1400]
#: Narrower than this, the counters may wrap (they do not fit one line), never stick out.
ONE_LINE = 600

CELLS = [
    SLOW_SETUP + "import ipywidgets\n",
    'live = jhw.LivePlot(title="momentum sweep", keep_runs=True)\n'
    "display(*[ipywidgets.Box([live.widget], layout=ipywidgets.Layout(width=f'{w}px'))"
    f" for w in {WIDTHS!r}])",
    'with live.named("momentum 0.9"):\n'
    "    descend(jnp.array([1.0, 2.0]), max_steps=300)\n"
    'with live.named("a rather long run name lr=0.001"):\n'
    "    final, hist = forever(jnp.float32(1.0))\n",
]

# Per panel: its box, the header's parts and the run list's values (client rectangles).
LAYOUT_JS = """
() => [...document.querySelectorAll('.jhw-liveplot')].map((box) => {
  const p = box.querySelector('.jhw-panel');
  const r = (sel) => { const e = p.querySelector(sel); if (!e || !e.getClientRects().length)
    return null; const b = e.getBoundingClientRect();
    return { left: b.left, right: b.right, top: b.top, bottom: b.bottom }; };
  const panel = p.getBoundingClientRect();
  const run = p.querySelector('.jhw-header-run');
  return {
    width: Math.round(box.getBoundingClientRect().width),
    panelRight: panel.right,
    runCut: run.scrollWidth > run.clientWidth + 1,
    parts: Object.fromEntries(['.jhw-title', '.jhw-header-run', '.jhw-status', '.jhw-progress',
      '.jhw-step', '.jhw-rate', '.jhw-elapsed'].map((s) => [s, r(s)])),
    values: [...p.querySelectorAll('.jhw-run-values')].map((e) => ({
      text: e.textContent, shown: e.getClientRects().length ? e.getBoundingClientRect().width : 0,
      cut: e.scrollWidth > e.clientWidth + 1 })),
  };
})
"""


@pytest.mark.parametrize("theme", [LIGHT, "JupyterLab Dark"])
def test_header_and_run_list_reflow_from_600_to_1400_px(
    page: Page, notebook: Notebook, tmp_path: Path, theme: str
) -> None:
    page.set_viewport_size({"width": 1900, "height": 1000})
    notebook.open(CELLS, name="header.ipynb", theme=theme)
    page.wait_for_function(
        "() => { const p = document.querySelector('.jhw-panel');"
        " return !!p && p.dataset.status === 'running'"
        " && p.querySelector('.jhw-header-run').textContent.includes('long run name')"
        " && Number(document.querySelector('.jhw-step').dataset.step) > 30; }",
        timeout=90_000,
    )
    # (a few updates later the rate and elapsed are shown in every view)
    page.wait_for_function(
        "() => [...document.querySelectorAll('.jhw-panel')].every((p) =>"
        " ['.jhw-rate', '.jhw-elapsed'].every((s) => p.querySelector(s).getClientRects().length"
        " && p.querySelector(s).textContent))",
        timeout=30_000,
    )
    layouts = page.evaluate(LAYOUT_JS)
    assert [box["width"] for box in layouts] == WIDTHS
    for box in layouts:
        parts = box["parts"]
        assert all(parts.values()), (box["width"], parts)
        # Nothing of the header sticks out of the panel.
        assert all(b["right"] <= box["panelRight"] + 0.5 for b in parts.values()), box
        # The counters share one line, and the bar is on it.
        lines = {
            round((parts[s]["top"] + parts[s]["bottom"]) / 2)
            for s in (".jhw-step", ".jhw-rate", ".jhw-elapsed", ".jhw-progress")
        }
        if box["width"] >= ONE_LINE:
            assert max(lines) - min(lines) <= 4, (box["width"], parts)
        # What runs stays on the first line where it fits one; narrower, the run's name takes
        # a line of its own rather than being cut ("ru…"): whole, in the panel.
        first = {
            round((parts[s]["top"] + parts[s]["bottom"]) / 2)
            for s in (".jhw-title", ".jhw-header-run")
        }
        if box["width"] >= ONE_LINE:
            assert len(first) == 1 or max(first) - min(first) <= 4, (box["width"], parts)
        assert not box["runCut"], box
        # Every run's latest values are shown whole.
        assert len(box["values"]) == 2, box
        for v in box["values"]:
            assert v["text"] and v["shown"] > 40 and not v["cut"], (box["width"], v)
    slug = "dark" if "Dark" in theme else "light"
    shots = []
    for i, width in enumerate(WIDTHS):
        view = page.locator(".jhw-liveplot").nth(i).locator(".jhw-panel")
        view.scroll_into_view_if_needed()
        shots.append(save_screenshot(view, tmp_path, f"header-{slug}-{width}"))
    if os.environ.get("JHW_UPDATE_SCREENSHOT") == "1":
        DOCS.mkdir(exist_ok=True)
        for shot, width in zip(shots, WIDTHS, strict=True):
            if width in (600, 1400):
                shutil.copyfile(shot, DOCS / f"header-{slug}-{width}.png")
    page.locator(".jhw-stop").first.click()
    notebook.idle(timeout=60)
    assert notebook.errors() == []
