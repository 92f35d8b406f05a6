"""Comparing runs in a real JupyterLab (issue 39, item 2): four named runs; a regex typed into the
run list's filter leaves only the matching runs in the charts and the list (the toggles of those
kept as they were), an invalid one is marked and not applied, and the static picture follows;
hide all / show all act on the runs the filter lists; a click on a lane's legend entry hides that
lane of a vmapped run, and a second click shows it again; with two sweeps kept, a lane's toggle
in the run list (folded under its run) does the same. Screenshots light and dark.

``JHW_UPDATE_SCREENSHOT=1`` also writes them to ``docs/run-filter-*.png``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ..helpers.browser import Notebook, set_theme
from ..helpers.jupyter_browser import save_screenshot
from ..helpers.page_charts import PICTURE_JS

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

pytestmark = pytest.mark.ui

DOCS = Path(__file__).resolve().parents[2] / "docs"

SETUP = """\
import jax
import jax.numpy as jnp
import jaxhist_widget as jhw
from IPython.display import display


@jax.jit
def descend(lr):
    # The loss of gradient descent on x**2: each learning rate its own curve.
    return jhw.while_loop(
        lambda c: c[0] < 60, lambda c: (c[0] + 1, c[1] * (1 - lr)),
        (jnp.int32(0), jnp.float32(3.0)), max_steps=60, record=lambda c: {"loss": c[1] ** 2})


sweep = jax.jit(jax.vmap(descend))
"""

CELLS = [
    SETUP,
    "live = jhw.LivePlot(title='compare', keep_runs=True)\ndisplay(live)",
    "for name, lr in [('adam lr=0.1', 0.1), ('adam lr=0.01', 0.01), ('sgd lr=0.1', 0.05),\n"
    "                 ('Adagrad', 0.2)]:\n"
    "    with live.named(name):\n"
    "        descend(lr)",
    "lanes = jhw.LivePlot(title='sweep', lane_labels=['lr=0.1', 'lr=0.2', 'lr=0.3'])\n"
    "display(lanes)",
    "with lanes:\n    sweep(jnp.array([0.1, 0.2, 0.3]))",
    "kept = jhw.LivePlot(title='two sweeps', keep_runs=True)\ndisplay(kept)",
    "for name in ('small', 'large'):\n"
    "    with kept.named(name):\n"
    "        sweep(jnp.array([0.02, 0.04]) if name == 'small' else jnp.array([0.2, 0.4]))",
]

# Per LivePlot box: the names of the runs its list shows, and its lines that draw something (a
# lane hidden one by one is transparent).
VIEW_JS = """
(box) => ({
  listed: [...box.querySelectorAll('.jhw-runs .jhw-run')].map((row) => row.dataset.name),
  hidden: [...box.querySelectorAll('.jhw-runs .jhw-run[data-hidden="true"]')]
    .map((row) => row.dataset.name),
  lines: [...box.querySelectorAll('.jhw-figure g.curve path.line')]
    .filter((p) => p.getClientRects().length > 0)
    .filter((p) => [p, p.parentNode].every((n) => Number(getComputedStyle(n).opacity) > 0))
    .filter((p) => /[ML]\\s*[-\\d]/.test(p.getAttribute('d') || '')).length,
})
"""

# The first plot's static picture (hidden beside its live view): test_runs_ui's reader.


def view(box: Locator) -> dict:
    return box.evaluate(VIEW_JS)


def wait_view(page: Page, index: int, want: dict) -> None:
    """Wait until the ``index``-th LivePlot shows what ``want`` names (its keys of `VIEW_JS`)."""
    page.wait_for_function(
        f"""([index, want]) => {{
          const box = document.querySelectorAll('.jhw-liveplot')[index];
          if (!box) return false;
          const got = ({VIEW_JS})(box);
          const same = (k, v) => JSON.stringify(got[k]) === JSON.stringify(v);
          return Object.entries(want).every(([k, v]) => same(k, v));
        }}""",
        arg=[index, want],
        timeout=30_000,
    )


def type_filter(box: Locator, text: str) -> None:
    field = box.locator(".jhw-run-filter")
    field.fill(text)
    field.press("Enter")


def test_filter_show_all_hide_all_and_a_lane_legend_toggle(
    page: Page, notebook: Notebook, tmp_path: Path
) -> None:
    notebook.open(CELLS, name="run-filter.ipynb", viewport=(1400, 1400))
    notebook.idle(timeout=180)
    names = ["adam lr=0.1", "adam lr=0.01", "sgd lr=0.1", "Adagrad"]
    wait_view(page, 0, {"listed": names, "lines": 4})
    box = page.locator(".jhw-liveplot").nth(0)
    box.scroll_into_view_if_needed()
    tools = box.locator(".jhw-run-tools")
    assert tools.is_visible()

    # A toggle off, then a filter: the matching runs only, the toggle kept; the picture too.
    box.locator('.jhw-run[data-name="adam lr=0.1"] .jhw-run-toggle').click()
    wait_view(page, 0, {"lines": 3, "hidden": ["adam lr=0.1"]})
    type_filter(box, "^AD")
    wait_view(page, 0, {"listed": ["adam lr=0.1", "adam lr=0.01", "Adagrad"], "lines": 2})
    assert box.locator(".jhw-run-count").text_content() == "3 of 4"
    assert box.locator(".jhw-runs").get_attribute("data-shown") == "3"
    page.wait_for_function(
        f"() => ({PICTURE_JS})().includes(\"filter '^AD': 3 of 4 runs\")", timeout=30_000
    )
    picture = page.evaluate(PICTURE_JS)
    assert 'data-name="sgd lr=0.1"' not in picture and 'data-name="Adagrad"' in picture
    shot = save_screenshot(box, tmp_path, "run-filter-light")

    # Half a regex: marked invalid and not applied (every run back); then a whole one.
    type_filter(box, "sgd|(adam")
    assert box.locator(".jhw-run-filter").get_attribute("data-invalid") == "true"
    wait_view(page, 0, {"listed": names, "lines": 3})
    type_filter(box, "sgd|(adam)")
    assert box.locator(".jhw-run-filter").get_attribute("data-invalid") == "false"
    wait_view(page, 0, {"listed": names[:3], "lines": 2})

    # Hide all and show all act on the listed runs only.
    box.locator(".jhw-runs-hide-all").click()
    wait_view(page, 0, {"hidden": names[:3], "lines": 0})
    type_filter(box, "")
    wait_view(page, 0, {"listed": names, "hidden": names[:3], "lines": 1})  # Adagrad's
    box.locator(".jhw-runs-show-all").click()
    wait_view(page, 0, {"hidden": [], "lines": 4})

    # A lane of a sweep: a click on its legend entry hides its line, a second shows it.
    wait_view(page, 1, {"lines": 3})
    sweep = page.locator(".jhw-liveplot").nth(1)
    sweep.scroll_into_view_if_needed()
    entry = sweep.locator('.jhw-legend-lane[data-lane="1"]')
    assert entry.text_content().strip() == "lr=0.2 (median)"  # (named for its role)
    entry.click()
    sweep.locator('.jhw-legend-lane[data-lane="1"][data-hidden="true"]').wait_for()
    wait_view(page, 1, {"lines": 2})
    lane_shot = save_screenshot(sweep, tmp_path, "run-filter-lane-light")
    sweep.locator('.jhw-legend-lane[data-lane="1"]').click()
    wait_view(page, 1, {"lines": 3})

    # Two sweeps kept: the run list folds each one's lanes under it, a toggle each.
    wait_view(page, 2, {"listed": ["small", "large"], "lines": 4})
    kept = page.locator(".jhw-liveplot").nth(2)
    kept.scroll_into_view_if_needed()
    folded = kept.locator('.jhw-run-lanes[data-run="2"]')
    assert folded.locator("summary").text_content() == "2 lanes drawn"
    folded.locator("summary").click()
    folded.locator('.jhw-lane[data-lane="0"] .jhw-lane-toggle').click()
    kept.locator('.jhw-run-lanes[data-run="2"][open] .jhw-lane[data-hidden="true"]').wait_for()
    wait_view(page, 2, {"lines": 3})
    assert folded.locator("summary").text_content() == "2 lanes drawn · 1 hidden"
    kept_shot = save_screenshot(kept, tmp_path, "run-filter-lanes-light")

    # Dark: the tools and the struck entry readable (looked at in the screenshots).
    type_filter(box, "adam(")
    sweep.locator('.jhw-legend-lane[data-lane="2"]').click()
    sweep.locator('.jhw-legend-lane[data-lane="2"][data-hidden="true"]').wait_for()
    set_theme(page, "JupyterLab Dark")
    notebook.theme = "JupyterLab Dark"
    dark = save_screenshot(box, tmp_path, "run-filter-dark")
    dark_lane = save_screenshot(sweep, tmp_path, "run-filter-lane-dark")
    dark_kept = save_screenshot(kept, tmp_path, "run-filter-lanes-dark")
    if os.environ.get("JHW_UPDATE_SCREENSHOT") == "1":
        DOCS.mkdir(exist_ok=True)
        for path in (shot, lane_shot, kept_shot, dark, dark_lane, dark_kept):
            shutil.copyfile(path, DOCS / path.name)
    assert notebook.errors() == []
