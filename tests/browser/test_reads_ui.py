"""What only the page shows of a sweep's answer, in a real JupyterLab: narrow outputs keep what
matters whole (one row of controls at ~400 px, the run's name and the lane counts never cut),
no chart's title lies under its controls, the notes read as one short line; the hover read-out
snaps to the nearest step anywhere over a chart, goes when the x axis changes, and says "time"
where the axis counts seconds.

Before (issue 57): at ~400 px five rows of controls and the run's name cut to "ru…", mid-run
lane counts cut even at 1400 px, hyperparameter charts' titles under their select and best
toggle, up to four paragraphs of notes; a read-out only on a drawn vertex, that stayed up after
the x axis changed and labelled seconds "step".
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ..helpers.browser import SLOW_SETUP, Notebook
from ..helpers.jupyter_browser import save_screenshot

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.ui

DOCS = Path(__file__).resolve().parents[2] / "docs"

WIDTHS = (400, 700, 1400)

SWEEP_CELLS = [
    SLOW_SETUP + "import ipywidgets\n"
    "import numpy as np\n"
    "\n"
    "\n"
    "def _tick(x):\n"
    "    time.sleep(0.01)\n"
    "    return x\n"
    "\n"
    "\n"
    "@jax.jit\n"
    "@jax.vmap\n"
    "def sweep(lr):\n"
    "    # Gradient descent on x**2 + x**4 / 2 from 2: the largest rates diverge. A step's host\n"
    "    # call (all lanes at once) keeps the run going for a few seconds.\n"
    "    def body(c):\n"
    "        k, x = c\n"
    "        x = jax.pure_callback(_tick, jax.ShapeDtypeStruct((), jnp.float32), x,\n"
    "                              vmap_method='broadcast_all')\n"
    "        return k + 1, x - lr * 2 * x * (1 + x**2)\n"
    "\n"
    "    return jhw.while_loop(lambda c: c[0] < 1500, body, (0, jnp.float32(2.0)),\n"
    "                          max_steps=1500,\n"
    "                          record=lambda c: {'loss': c[1] ** 2,\n"
    "                                            'accuracy': 1 / (1 + c[1] ** 2)})\n"
    "\n"
    "\n"
    "rates = np.logspace(-2, 0, 4096).astype(np.float32)\n",
    'live = jhw.LivePlot(title="learning-rate sweep", lane_values={"lr": rates}, fields=["loss",'
    ' "accuracy", "lsos"])\n'
    "display(*[ipywidgets.Box([live.widget], layout=ipywidgets.Layout(width=f'{w}px'))"
    f" for w in {list(WIDTHS)!r}])",
    'with live.named("a learning-rate sweep"):\n    sweep(rates)\n',
]

# Per view (box width): what is cut, how many rows the controls take, where the titles are.
LAYOUT_JS = """
() => [...document.querySelectorAll('.jhw-liveplot')].map((box) => {
  const panel = box.querySelector('.jhw-panel');
  const rect = (e) => e.getBoundingClientRect();
  const shown = (e) => !!e && e.getClientRects().length > 0;
  const cut = (e) => shown(e) && e.scrollWidth > e.clientWidth + 1;
  const row = panel.querySelector('.jhw-controls')
    || [...panel.children].filter((c) => c.classList.contains('jhw-row')).pop();
  const controls = [...row.querySelectorAll(':scope > *, .jhw-view-options > *')].filter(shown);
  // rows as a reader sees them: a control below the bottom of the row so far starts another
  // (controls of one row differ in height, so their tops differ by a pixel or two)
  let rows = 0, bottom = -Infinity;
  for (const r of controls.map(rect).sort((a, b) => a.top - b.top)) {
    if (r.top >= bottom - 1) { rows += 1; bottom = r.bottom; }
    else bottom = Math.max(bottom, r.bottom);
  }
  const right = rect(panel).right;
  const counters = ['.jhw-header-run', '.jhw-step', '.jhw-rate', '.jhw-elapsed', '.jhw-lanes',
    '.jhw-lane-status', '.jhw-field'].flatMap((s) => [...panel.querySelectorAll(s)]).map((e) =>
    ({ cls: e.className, text: e.textContent, cut: cut(e),
       out: shown(e) && rect(e).right > right + 1 }));
  const charts = [...box.querySelectorAll('.jhw-chart-tools')].map((tools) => {
    // the title shown: in the tools' row, else bqplot's own over the plot
    const heading = tools.querySelector('.jhw-chart-title');
    const title = shown(heading) ? heading : tools.parentElement.querySelector('text.mainheading');
    const t = rect(title);
    const over = [...tools.querySelectorAll('button, select')].filter(shown).some((c) => {
      const r = rect(c);
      return !(r.right <= t.left || r.left >= t.right || r.bottom <= t.top || r.top >= t.bottom);
    });
    const svgTitle = tools.parentElement.querySelector('text.mainheading');
    const both = title !== svgTitle && shown(svgTitle) && !!svgTitle.textContent;
    return { title: title.textContent, over, svgShown: both };
  });
  const notes = box.querySelector('.jhw-legend .jhw-notes');
  return {
    width: Math.round(rect(box).width), rows, counters, charts,
    notes: notes ? { tag: notes.tagName, height: rect(notes).height,
                     open: notes.open, line: notes.querySelector('summary')?.textContent } : null,
  };
})
"""


def test_narrow_outputs_keep_what_matters_whole_and_titles_clear_of_controls(
    page: Page, notebook: Notebook
) -> None:
    page.set_viewport_size({"width": 1600, "height": 1000})
    notebook.open(SWEEP_CELLS, name="reads.ipynb")
    page.wait_for_function(
        "() => { const p = document.querySelector('.jhw-panel');"
        " return !!p && p.dataset.status === 'running'"
        " && Number(p.querySelector('.jhw-step').dataset.step) > 60; }",
        timeout=120_000,
    )
    # mid-run: the lane counts, the run's name, the controls
    page.wait_for_function(
        "() => document.querySelectorAll('.jhw-liveplot .jhw-chart-tools').length >= 9",
        timeout=60_000,
    )
    for view in page.evaluate(LAYOUT_JS):
        assert view["rows"] <= (1 if view["width"] <= 400 else 2), view
        for counter in view["counters"]:
            assert not counter["cut"] and not counter["out"], (view["width"], counter)
        for chart in view["charts"]:
            assert chart["title"] and not chart["over"] and not chart["svgShown"], chart
    notebook.idle(timeout=180)
    views = page.evaluate(LAYOUT_JS)
    titles = [c["title"] for c in views[0]["charts"]]
    assert titles == ["loss", "accuracy", "loss vs lr"], titles
    for view in views:
        for chart in view["charts"]:
            assert not chart["over"] and not chart["svgShown"], (view["width"], chart)
        notes = view["notes"]  # a misspelt field and the lanes drawn: one short line
        assert notes["tag"] == "DETAILS" and not notes["open"] and notes["height"] < 36, notes
        assert notes["line"].startswith("Note: ") and "more" in notes["line"], notes
    # the view options open in a narrow output, on a row of their own
    narrow = page.locator(".jhw-liveplot").first
    narrow.locator(".jhw-more").click()
    page.wait_for_function(
        "() => document.querySelector('.jhw-liveplot .jhw-view-options').getClientRects().length"
    )
    assert narrow.locator(".jhw-outliers").is_visible()


HOVER_CELLS = [
    SLOW_SETUP + "\n"
    "def _tick(x):\n"
    "    time.sleep(0.005)\n"
    "    return x\n"
    "\n"
    "\n"
    "@jax.jit\n"
    "@jax.vmap\n"
    "def two(x0):\n"
    "    # Two lanes (their rows arrive together: one read-out row each, at every step).\n"
    "    def body(c):\n"
    "        k, x = c\n"
    "        x = jax.pure_callback(_tick, jax.ShapeDtypeStruct((), jnp.float32), x,\n"
    "                              vmap_method='broadcast_all')\n"
    "        return k + 1, x * 0.8\n"
    "\n"
    "    return jhw.while_loop(lambda c: c[0] < 12, body, (0, x0), max_steps=12,\n"
    "                          record=lambda c: {'loss': c[1]})\n",
    'live = jhw.LivePlot(title="hover")\nlive',
    "with live:\n    two(jnp.array([1.0, 2.0]))\n",
]

# The loss chart's plot area (client pixels) and the read-out's headline and table.
PLOT_JS = """
() => {
  const fig = [...document.querySelectorAll('.jhw-liveplot .jhw-figure')]
    .find((f) => f.querySelector('text.mainheading')?.textContent === 'loss');
  const r = fig.querySelector('rect.plotarea_events, .plotarea_background')
    .getBoundingClientRect();
  return { left: r.left, right: r.right, top: r.top, bottom: r.bottom };
}
"""
READ_JS = """
() => {
  const tip = document.querySelector('.jhw-hover');
  if (!tip || tip.hidden) return null;
  const list = document.querySelector('.jhw-hover-list');
  const heads = list && !list.hidden ? [...list.querySelectorAll('th')].map((t) => t.textContent)
    : [];
  return { step: tip.querySelector('.jhw-hover-step').textContent, heads };
}
"""


def test_the_read_out_snaps_to_the_nearest_step_and_follows_the_x_axis(
    page: Page, notebook: Notebook
) -> None:
    page.set_viewport_size({"width": 1200, "height": 900})
    notebook.open(HOVER_CELLS, name="hover-axis.ipynb")
    notebook.idle(timeout=120)
    page.locator(".jhw-liveplot .jhw-legend").scroll_into_view_if_needed()
    area = page.evaluate(PLOT_JS)
    # over the plot's top right, far from every drawn vertex (the lines lie low by then)
    x, y = area["right"] - 0.3 * (area["right"] - area["left"]), area["top"] + 8
    page.mouse.move(x - 5, y + 5)
    page.mouse.move(x, y)
    page.wait_for_function(f"() => ({READ_JS})() !== null", timeout=10_000)
    read = page.evaluate(READ_JS)
    assert read["step"].startswith("step "), read
    assert read["heads"][-1] == "step"  # both lanes at that step
    # the x axis counts seconds now: the read-out of steps is gone at once
    page.select_option(".jhw-x-axis", "relative")
    page.wait_for_function(f"() => ({READ_JS})() === null", timeout=5_000)
    page.wait_for_function(
        "() => document.querySelector('.jhw-liveplot .jhw-figure .axis text')"
        " && [...document.querySelectorAll('.jhw-liveplot .jhw-figure text.axislabel')]"
        ".some((t) => t.textContent.includes('relative time'))",
        timeout=30_000,
    )
    page.mouse.move(x - 3, y + 3)
    page.mouse.move(x, y)
    page.wait_for_function(f"() => ({READ_JS})() !== null", timeout=10_000)
    read = page.evaluate(READ_JS)
    assert not read["step"].startswith("step ") or "·" in read["step"], read  # a time
    assert read["heads"][-1] == "time", read  # not "step": its column holds seconds


GRID_CELLS = [
    "import jax\n"
    "import jax.numpy as jnp\n"
    "import numpy as np\n"
    "import jaxhist_widget as jhw\n"
    "\n"
    "X = jax.random.normal(jax.random.key(0), (64, 8))\n"
    "w_true = jnp.linspace(-1.0, 1.0, 8)\n"
    "y = X @ w_true + 0.5 * jax.random.normal(jax.random.key(1), (64,))\n"
    "X_val = jax.random.normal(jax.random.key(2), (64, 8))\n"
    "y_val = X_val @ w_true\n"
    "\n"
    "\n"
    "def train(lr, wd):\n"
    "    def step(w, _):\n"
    "        grad = jax.grad(lambda w: jnp.mean((X @ w - y) ** 2) + wd * jnp.sum(w**2))(w)\n"
    "        w = w - lr * grad\n"
    "        return w, {'train_loss': jnp.mean((X @ w - y) ** 2),\n"
    "                   'val_loss': jnp.mean((X_val @ w - y_val) ** 2)}\n"
    "\n"
    "    return jhw.scan(step, jnp.zeros(8), None, length=300)\n"
    "\n"
    "\n"
    "lr, wd = np.meshgrid(np.logspace(-3, 0, 8), [0, 1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3, 1],\n"
    "                     indexing='ij')\n"
    "grid = {'lr': lr.ravel().astype(np.float32), 'wd': wd.ravel().astype(np.float32)}\n",
    'live = jhw.LivePlot(title="learning rate x weight decay", lane_values=grid)\nlive',
    "with live:\n    jax.jit(jax.vmap(train))(grid['lr'], grid['wd'])\n"
    "print('BEST', *live.drawing().chart('val_loss vs lr × wd').grid.best)",
]

HEATMAP_JS = """
() => {
  const fig = [...document.querySelectorAll('.jhw-liveplot .jhw-figure.jhw-params')]
    .find((f) => f.querySelector('text.mainheading')?.textContent === 'val_loss vs lr × wd');
  if (!fig) return null;
  const image = fig.querySelector('image');
  const legend = fig.closest('.jhw-chart-cell')?.querySelector('.jhw-chart-legend');
  const star = [...fig.querySelectorAll('text')].find((t) => t.textContent === '★');
  const box = (e) => { const r = e.getBoundingClientRect();
    return { left: r.left, right: r.right, top: r.top, bottom: r.bottom }; };
  const ticks = (i) => [...fig.querySelectorAll('g.axis')][i]?.querySelectorAll('.tick text');
  return {
    image: !!image && !!(image.getAttribute('href') || image.getAttribute('xlink:href')),
    imageBox: image ? box(image) : null,
    starBox: star ? box(star) : null,
    yTicks: [...(ticks(1) || [])].map((t) => t.textContent),
    star: !!star,
    crosses: fig.querySelectorAll('path.dot').length,
    legend: legend ? legend.textContent : '',
  };
}
"""


@pytest.mark.parametrize("theme", ["JupyterLab Light", "JupyterLab Dark"])
def test_a_grid_of_two_parameters_is_a_heatmap_its_best_cell_starred(
    page: Page, notebook: Notebook, tmp_path: Path, theme: str
) -> None:
    notebook.open(GRID_CELLS, name="grid.ipynb", theme=theme, viewport=(1400, 1300))
    notebook.idle(timeout=180)
    ready = f"() => {{ const h = ({HEATMAP_JS})(); return !!h && h.image; }}"
    page.wait_for_function(ready, timeout=60_000)
    heatmap = page.evaluate(HEATMAP_JS)
    assert heatmap["star"] and heatmap["crosses"] > 0, heatmap  # the largest rates diverged
    # the star on the best cell (8 x 8), the rows labelled with their values
    out = page.locator(".jp-Notebook .jp-Cell").nth(2).locator(".jp-OutputArea").inner_text()
    row, col = (int(v) for v in out.split("BEST")[1].split()[:2])
    image, star = heatmap["imageBox"], heatmap["starBox"]
    x = image["left"] + (col + 0.5) / 8 * (image["right"] - image["left"])
    y = image["bottom"] - (row + 0.5) / 8 * (image["bottom"] - image["top"])
    middle = ((star["left"] + star["right"]) / 2, (star["top"] + star["bottom"]) / 2)
    assert abs(middle[0] - x) < 8 and abs(middle[1] - y) < 8, (middle, x, y)
    assert heatmap["yTicks"][:2] == ["0", "0.001"], heatmap["yTicks"]
    assert "best: lr=" in heatmap["legend"] and ", wd=" in heatmap["legend"], heatmap
    assert (
        page.locator(".jhw-legend").first.inner_text().strip().startswith("best = lowest val_loss")
    )
    page.mouse.move(0, 0)
    slug = "dark" if "Dark" in theme else "light"
    shot = save_screenshot(page.locator(".jhw-liveplot").first, tmp_path, f"params-grid-{slug}")
    if os.environ.get("JHW_UPDATE_SCREENSHOT") == "1":
        shutil.copyfile(shot, DOCS / f"params-grid-{slug}.png")
    assert notebook.errors() == []
