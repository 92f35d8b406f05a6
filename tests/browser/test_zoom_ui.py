"""Zoom and pan of the step axis in a real JupyterLab, light at 1400 px and dark at 600 px, on a
finished 10^5-step run: a drag across a chart shows a selection rectangle at once, and the
kernel applies the zoom even while a normal cell holds it (on the subshell JupyterLab sends
widget messages on); then every chart shows the dragged steps, every point of them drawn (not
the few whole-run buckets in that range), each y axis fitting them, and the hover read-out reads the
zoomed line; Escape cancels a drag; shift+drag pans; a double-click zooms back out.

``JHW_UPDATE_SCREENSHOT=1`` also writes the screenshots to ``docs/zoom-*.png``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ..helpers.browser import (
    X_LABELS_JS,
    Y_LABELS_JS,
    Notebook,
    hover_until_read_out,
    saw,
)
from ..helpers.jupyter_browser import cell_output_text, run_all, save_screenshot
from ..helpers.page_charts import AREA_JS, drag

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.ui

DOCS = Path(__file__).resolve().parents[2] / "docs"
N = 100_000

SETUP = f"""\
import os
import time

import ipywidgets
import jax
import jax.numpy as jnp
import jaxhist_widget as jhw
from IPython.display import display


@jax.jit
def run():
    def record(c):
        k = c[0]
        return {{"saw": (k % 97).astype(jnp.float32) / 97.0, "loss": jnp.exp(-k / 20000.0)}}

    return jhw.while_loop(lambda c: c[0] < {N}, lambda c: (c[0] + 1, c[1]),
                          (jnp.int32(0), jnp.float32(0.0)), max_steps={N}, record=record)
"""


def cells(width: str | None, flag: str) -> list[str]:
    show = (
        "display(live)"
        if width is None
        else f"display(ipywidgets.Box([live.widget], layout=ipywidgets.Layout(width='{width}')))"
    )
    return [
        SETUP,
        f"live = jhw.LivePlot(title='zoom')\n{show}",
        "with live:\n    run()",
        # A normal cell that holds the kernel's main shell until the test lets it go.
        f"print('holding', flush=True)\nwhile not os.path.exists({flag!r}):\n"
        "    time.sleep(0.05)\nprint('released', live.step_range)",
    ]


# The points drawn of the first line named "<prefix>...", and the zoom's rectangle and chip.
STATE_JS = """
(prefix) => {
  const path = [...document.querySelectorAll('.jhw-figure g.curve path.line')].find((p) =>
    String((p.parentNode.__data__ || {}).name).startsWith(prefix));
  const rect = document.querySelector('.jhw-zoom-rect');
  const chip = document.querySelector('.jhw-zoom');
  return {
    points: path ? [...path.getAttribute('d').matchAll(/[ML]/g)].length : 0,
    rect: rect && !rect.hidden ? { ...rect.dataset } : null,
    chip: chip && !chip.hidden ? { ...chip.dataset, text: chip.innerText } : null,
  };
}
"""


# Whether the plot area of chart `title` is where the previous poll found it (the page's layout
# has settled: a scrollbar or a new output may move it for a moment).
SETTLED_JS = f"""
(title) => {{
  const now = JSON.stringify(({AREA_JS})(title));
  const same = window.__jhwArea === now;
  window.__jhwArea = now;
  return same;
}}
"""


def settled_area(page: Page, title: str) -> dict:
    page.wait_for_function(SETTLED_JS, arg=title, polling=300, timeout=30_000)
    return page.evaluate(AREA_JS, title)


def labels(page: Page) -> dict[str, list[float]]:
    return {
        title: [float(t.replace(",", "")) for t in ticks]
        for title, ticks in page.evaluate(X_LABELS_JS).items()
    }


def state(page: Page) -> dict:
    return page.evaluate(STATE_JS, "saw ·")


@pytest.mark.parametrize(
    ("theme", "width"), [("JupyterLab Light", None), ("JupyterLab Dark", "600px")]
)
def test_drag_zooms_every_chart_double_click_zooms_out_shift_drag_pans(
    page: Page,
    notebook: Notebook,
    tmp_path: Path,
    theme: str,
    width: str | None,
) -> None:
    slug = theme.split()[-1].lower()
    key = "1400" if width is None else width.removesuffix("px")
    flag = f"zoom-release-{slug}-{key}"
    name, viewport = f"zoom-{slug}-{key}.ipynb", (1400, 1400)
    notebook.open(cells(width, flag), name=name, theme=theme, viewport=viewport, run=False)
    (notebook.server.root_dir / flag).unlink(missing_ok=True)
    run_all(page)
    page.wait_for_function(
        "() => [...document.querySelectorAll('.jp-OutputArea-output')]"
        ".some((o) => o.textContent.includes('holding'))",
        timeout=180_000,
    )
    page.wait_for_function(
        "() => document.querySelector('.jhw-panel').dataset.status === 'converged'"
        f" && ({STATE_JS})('saw ·').points > 100",
        timeout=60_000,
    )
    view = page.locator(".jhw-liveplot").first
    view.scroll_into_view_if_needed()
    # Each chart's axis takes its last update in a message of its own, and the two draw apart
    # (a loaded CI read one chart's ticks at 25,000 steps apart, the other's at 20,000): the
    # axes must come to agree, on the whole run.
    page.wait_for_function(
        f"(n) => {{ const l = Object.values(({X_LABELS_JS})()).map((t) => t.join('|'));"
        " return l.length >= 2 && l.every((x) => x === l[0])"
        " && Number(l[0].split('|').at(-1).replace(/,/g, '')) === n; }",
        arg=N,
        timeout=30_000,
    )
    whole = labels(page)
    assert whole["saw"] == whole["loss"] and whole["saw"][-1] == N, whole
    whole_points = state(page)["points"]
    loss_top = max(float(t) for t in page.evaluate(Y_LABELS_JS)["loss"])
    area = settled_area(page, "saw")

    # The kernel is busy in the last cell: the rectangle shows at once, and the kernel applies
    # the zoom at once too (JupyterLab sends widget messages on a kernel subshell, where the
    # panel's controls are served: jaxhist_widget/ui/panel/_subshell.py).
    drag(page, area, 0.30, 0.318)
    during = state(page)["rect"]
    assert during is not None and during["kind"] == "zoom", during
    page.mouse.up()
    page.wait_for_function(
        "() => { const c = document.querySelector('.jhw-zoom');"
        " return !c.hidden && c.dataset.waiting === 'false' && c.dataset.lo !== ''"
        " && document.querySelector('.jhw-zoom-rect').hidden; }",
        timeout=30_000,
    )
    chip = state(page)["chip"]
    lo, hi = int(chip["lo"]), int(chip["hi"])
    assert abs(lo - 0.30 * N) < 0.01 * N and 1000 < hi - lo < 2000, (lo, hi)
    held = cell_output_text(page, 3)
    assert "holding" in held and "released" not in held, held  # the cell still runs

    (notebook.server.root_dir / flag).touch()  # let the cell end
    notebook.idle(timeout=60)
    page.wait_for_function(
        f"([lo, hi]) => Object.values(({X_LABELS_JS})()).every((l) => l.length >= 3"
        " && l.every((t) => Number(t.replace(/,/g, '')) >= lo"
        " && Number(t.replace(/,/g, '')) <= hi))",
        arg=[lo, hi],
        timeout=30_000,
    )
    zoomed = labels(page)
    assert zoomed["saw"] == zoomed["loss"], zoomed  # one step axis for all charts
    # Every step of the range is a point of the line (the whole run drew ~2,000 for
    # 10^5 steps: some 30 in this range).
    page.wait_for_function(
        f"(n) => ({STATE_JS})('saw ·').points === n", arg=hi - lo + 1, timeout=30_000
    )
    assert whole_points <= 2000
    # The loss axis fits the range (about 0.22), not the whole run's 1.
    assert max(float(t) for t in page.evaluate(Y_LABELS_JS)["loss"]) < 0.5 * loss_top

    # The hover read-out reads the zoomed line: the step under the pointer, its value.
    _, shown = hover_until_read_out(page, "saw ·", 0.5)
    step = int(shown["step"])
    assert lo <= step <= hi and abs(float(shown["value"]) - saw(step)) < 1e-6, shown

    # A second drag over the zoomed chart (the screenshot), then Escape: no zoom.
    drag(page, area, 0.4, 0.6)
    page.wait_for_function("() => !document.querySelector('.jhw-zoom-rect').hidden", timeout=10_000)
    shot = save_screenshot(view, tmp_path, f"zoom-{slug}-{key}")
    page.keyboard.press("Escape")
    page.mouse.up()
    assert state(page)["rect"] is None
    assert (int(state(page)["chip"]["lo"]), int(state(page)["chip"]["hi"])) == (lo, hi)

    # Shift+drag pans: the lines dragged a quarter of the plot left show later steps.
    drag(page, area, 0.6, 0.35, shift=True)
    assert state(page)["rect"]["kind"] == "pan"
    page.mouse.up()
    page.keyboard.up("Shift")
    span = hi - lo
    page.wait_for_function(
        "([lo, span]) => { const c = document.querySelector('.jhw-zoom');"
        " const l = Number(c.dataset.lo), h = Number(c.dataset.hi);"
        " return c.dataset.waiting === 'false'"
        " && Math.abs(l - (lo + span / 4)) <= span / 20 && Math.abs(h - l - span) <= 2; }",
        arg=[lo, span],
        timeout=30_000,
    )
    panned = state(page)["chip"]
    page.wait_for_function(
        f"(lo) => Object.values(({X_LABELS_JS})()).every((l) =>"
        " Number(l[0].replace(/,/g, '')) >= lo)",
        arg=int(panned["lo"]),
        timeout=30_000,
    )
    assert state(page)["rect"] is None

    # A double-click zooms back out: every step again, the whole-run lines.
    page.mouse.dblclick((area["left"] + area["right"]) / 2, area["top"] + 20)
    page.wait_for_function("() => document.querySelector('.jhw-zoom').hidden", timeout=30_000)
    page.wait_for_function(
        f"(last) => Object.values(({X_LABELS_JS})()).every((l) =>"
        " Number(l[l.length - 1].replace(/,/g, '')) === last)",
        arg=N,
        timeout=30_000,
    )
    # (as many ticks as each chart's width holds: the width the view reported while the
    # cell held the kernel has been applied since)
    assert all(t[0] == 0 for t in labels(page).values()), labels(page)
    assert state(page)["points"] == whole_points
    if os.environ.get("JHW_UPDATE_SCREENSHOT") == "1":
        DOCS.mkdir(exist_ok=True)
        shutil.copyfile(shot, DOCS / f"zoom-{slug}-{key}.png")
    assert notebook.errors() == []
