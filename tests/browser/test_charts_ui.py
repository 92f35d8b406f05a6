"""One chart per metric in a real JupyterLab: an Adam-like run recording loss, grad_norm and lr
(three scales apart) draws three titled charts, each line inside its own chart's plot area and
spanning it (its own y range), side by side in a wide cell and in one column in a 600 px one;
the hover read-out lists every series of the chart at the step under the pointer; each chart's
own log toggle puts that chart alone on a log axis.

``JHW_UPDATE_SCREENSHOT=1`` also writes the widget screenshots to ``docs/charts-*.png``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ..helpers.browser import (
    Y_LABELS_JS,
    Notebook,
    hover_until_read_out,
)
from ..helpers.jupyter_browser import (
    save_screenshot,
)

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.ui

#: A log axis' label (`jaxhist_widget.ui.look.ticks.log_label`): 10⁻³, 3×10⁻², 10⁰.
POWER_OF_TEN = "^(\\d+(\\.\\d+)?×)?10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+$"

DOCS = Path(__file__).resolve().parents[2] / "docs"

SETUP = """\
import ipywidgets
import jax
import jax.numpy as jnp
import jaxhist_widget as jhw
from IPython.display import display

LRS = jnp.array([0.02, 0.05, 0.1])


@jax.jit
@jax.vmap
def adam(peak):
    # A warm-up schedule, a loss that plateaus and a gradient norm ten times larger.
    def body(c):
        k, x = c
        lr = peak * jnp.minimum(1.0, (k + 1) / 100.0)
        return k + 1, x - lr * jnp.tanh(x)

    return jhw.while_loop(
        lambda c: c[0] < 600, body, (jnp.int32(0), jnp.float32(4.0)), max_steps=600,
        record=lambda c: {"loss": 0.16 + c[1] ** 2 / 8, "grad_norm": 10 * jnp.abs(jnp.tanh(c[1])),
                          "lr": 1e-3 * peak * jnp.minimum(1.0, (c[0] + 1) / 100.0)})
"""

# Per chart of the (only) LivePlot: its title, plot area, drawn lines' bounds.
CHARTS_JS = """
() => [...document.querySelectorAll('.jhw-liveplot .jhw-charts .jhw-figure')].map((fig) => {
  const box = (r) => ({ left: r.left, right: r.right, top: r.top, bottom: r.bottom });
  const area = fig.querySelector('.plotarea_background').getBoundingClientRect();
  const lines = [...fig.querySelectorAll('g.curve path.line')].map((p) => box(p.getBBox ?
    p.getBoundingClientRect() : p.getBoundingClientRect()));
  return {
    title: (fig.querySelector('.jhw-chart-title')
    || fig.querySelector('text.mainheading') || {}).textContent || '',
    figure: box(fig.getBoundingClientRect()),
    area: box(area),
    lines,
  };
})
"""

EPS = 1.0


def cells(width: str | None) -> list[str]:
    show = (
        "display(live)"
        if width is None
        else (f"display(ipywidgets.Box([live.widget], layout=ipywidgets.Layout(width='{width}')))")
    )
    return [
        SETUP,
        "live = jhw.LivePlot(title='Adam', lane_labels=[f'lr={v:g}' for v in LRS.tolist()])\n"
        f"{show}\n"
        "with live:\n"
        "    adam(LRS)",
    ]


@pytest.mark.parametrize(
    ("theme", "width"), [("JupyterLab Light", None), ("JupyterLab Dark", "600px")]
)
def test_one_chart_per_metric(
    page: Page,
    notebook: Notebook,
    tmp_path: Path,
    theme: str,
    width: str | None,
) -> None:
    slug = theme.split()[-1].lower()
    key = "1400" if width is None else width.removesuffix("px")
    notebook.open(
        cells(width), name=f"charts-{slug}-{key}.ipynb", theme=theme, viewport=(1400, 1400)
    )
    notebook.idle(timeout=180)
    page.wait_for_function(
        "() => document.querySelectorAll('.jhw-charts g.curve path.line').length >= 3"
        " && document.querySelector('.jhw-panel').dataset.status !== 'running'",
        timeout=60_000,
    )
    view = page.locator(".jhw-liveplot").first
    view.scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    charts = page.evaluate(CHARTS_JS)
    # in the order the record was written (not JAX's sorted keys)
    assert [c["title"] for c in charts] == ["loss", "grad_norm", "lr"], charts
    for c in charts:
        assert len(c["lines"]) == 3, c  # one line per lane in every chart
        area = c["area"]
        top = min(line["top"] for line in c["lines"])
        bottom = max(line["bottom"] for line in c["lines"])
        # each chart's y range holds its data, and the data fills it (its own scale)
        assert area["top"] - EPS <= top and bottom <= area["bottom"] + EPS, c
        assert bottom - top >= 0.5 * (area["bottom"] - area["top"]), c
    lefts = {round(c["figure"]["left"]) for c in charts}
    tops = {round(c["figure"]["top"]) for c in charts}
    if width is None:  # a wide cell: as many side by side as 320 px columns fit
        cell = page.evaluate(
            "() => document.querySelector('.jhw-charts').getBoundingClientRect().width"
        )
        columns = min(3, int((cell + 8) // 328))
        assert columns >= 2 and len(lefts) == columns, (cell, charts)
    else:  # 600 px: one column
        assert len(lefts) == 1 and len(tops) == 3, charts
    shot = save_screenshot(view, tmp_path, f"charts-{slug}-{key}")
    # Hover: the point under the pointer, then every lane of that chart at its step (one row
    # each, the one under the pointer marked current).
    _, shown = hover_until_read_out(page, "grad_norm · lr=0.05", 0.3, timeout=30)
    name, _step, _value = shown["lines"]
    assert name.startswith("grad_norm · lr="), name
    rows = page.evaluate(
        "() => [...document.querySelectorAll('.jhw-hover-list:not([hidden]) .jhw-hover-row')]"
        ".map((r) => [r.dataset.series, r.classList.contains('jhw-hover-current')])"
    )
    # (each lane named for its role by the plot's goal, the lowest loss best)
    lanes = {"0.02": "lr=0.02 (worst)", "0.05": "lr=0.05 (best)", "0.1": "lr=0.1 (median)"}
    assert sorted(rows) == sorted(
        [f"grad_norm · {lane} · run 1", f"grad_norm · {lane} · run 1" == name]
        for lane in lanes.values()
    ), rows
    hover_shot = save_screenshot(view, tmp_path, f"charts-{slug}-{key}-hover")
    page.mouse.move(0, 0)
    # The lr chart's own log toggle puts that chart alone on a log axis.
    before = page.evaluate(Y_LABELS_JS)
    page.locator(".jhw-figure:has(text.mainheading:text-is('lr')) .jhw-chart-log").click()
    page.wait_for_function(
        f"(re) => ({Y_LABELS_JS})().lr.every((t) => new RegExp(re).test(t))",
        arg=POWER_OF_TEN,
        timeout=30_000,
    )
    after = page.evaluate(Y_LABELS_JS)
    assert after["loss"] == before["loss"] and after["grad_norm"] == before["grad_norm"]
    pressed = page.evaluate(
        "() => [...document.querySelectorAll('.jhw-chart-log')]"
        ".map((b) => b.getAttribute('aria-pressed'))"
    )
    # (grad_norm, falling over 20 decades, is on a log axis of itself: log_y=None)
    assert pressed == ["false", "true", "true"], pressed
    # log y: every chart on a log axis, each written in the one notation of log axes (their
    # ranges differ by decades: fixed point on one and 1e-3 on another read as two notations).
    page.locator(".jhw-logy").first.check()
    page.wait_for_function(
        f"(re) => Object.values(({Y_LABELS_JS})()).every((ts) => ts.length >= 2"
        " && ts.every((t) => new RegExp(re).test(t)))",
        arg=POWER_OF_TEN,
        timeout=30_000,
    )
    page.locator(".jhw-logy").first.uncheck()
    if os.environ.get("JHW_UPDATE_SCREENSHOT") == "1":
        DOCS.mkdir(exist_ok=True)
        shutil.copyfile(shot, DOCS / f"charts-{slug}-{key}.png")
        shutil.copyfile(hover_shot, DOCS / f"charts-{slug}-{key}-hover.png")
    assert notebook.errors() == []
