"""The hover read-out of a LivePlot in a real JupyterLab: the step and value of the point under
the pointer, read while a synchronous cell keeps the kernel busy with a compute-bound run.

The recorded field is a sawtooth of the step, ``saw = (step % 97) / 97`` in float32, so the test
knows every value the run records: a read-out of step ``s`` must show exactly that value (no
kernel is asked: it is busy, and the read-out is computed in the browser from the points the
line already holds).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import pytest

from ..helpers.browser import (
    CONTRAST_JS,
    MIN_CONTRAST,
    READOUT_JS,
    SAW,
    Notebook,
    hover_until_read_out,
    saw,
)
from ..helpers.jupyter_browser import UI, run_all_done

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.ui

HOVER_CELLS = [
    "import jax\n"
    "import jax.numpy as jnp\n"
    "import jaxhist_widget as jhw\n"
    "\n"
    "N = 256\n"
    "A = jax.random.normal(jax.random.key(0), (N, N)) / N**0.5\n"
    "\n"
    "\n"
    "@jax.jit\n"
    "def spin(x0):\n"
    "    # Compute-bound: no Python in the step; runs for minutes unless stopped.\n"
    "    def body(c):\n"
    "        return c[0] + 1, jnp.tanh(1.5 * A @ c[1])\n"
    "\n"
    "    return jhw.while_loop(\n"
    "        lambda c: True, body, (jnp.int32(0), x0), max_steps=20_000_000,\n"
    f"        record=lambda c: {{'saw': (c[0] % {SAW}).astype(jnp.float32) / {SAW}.0,\n"
    "                           'norm': jnp.linalg.norm(c[1])})\n",
    'live = jhw.LivePlot(title="hover")\nlive',
    "with live:\n    x, hist = spin(jnp.ones(N))\nprint('LENGTH', int(hist.length), flush=True)",
]


def six_digits(v: float) -> str:
    """``v`` as the read-out writes it (6 significant digits; no ties occur for these values,
    where Python's rounding and JavaScript's would differ)."""
    return str(float(f"{v:.6g}")) if v else "0"


def test_hover_reads_out_step_and_value_while_the_kernel_is_busy(
    page: Page, notebook: Notebook
) -> None:
    notebook.open(HOVER_CELLS, name="hover-readout.ipynb")
    read: list[dict[str, Any]] = []
    page.wait_for_function(
        "() => { const s = document.querySelector('.jhw-step');"
        " return !!s && Number(s.dataset.step) > 5000; }",
        timeout=120_000,
        polling=100,
    )
    # The whole plot in the window (a pointer outside it sends no event).
    page.locator(".jhw-liveplot .jhw-legend").scroll_into_view_if_needed()
    # The kernel is busy in the `with live:` cell for every read-out below.
    for frac in (0.3, 0.55, 0.8, 0.97):
        vertex, shown = hover_until_read_out(page, "saw ·", frac)
        assert not run_all_done(page), "the run ended before the read-out: nothing proven"
        assert shown["status"] == "running", shown
        read.append({**shown, "at": vertex})
    # Readable in the theme, like the rest of the widget (WCAG AA).
    measured = page.evaluate(CONTRAST_JS, ".jhw-hover > div")
    assert len(measured) == 3, measured
    assert all(m["ratio"] >= MIN_CONTRAST for m in measured), measured
    # The pointer leaves the plot: the read-out goes.
    page.mouse.move(2, 2)
    page.wait_for_function(f"() => ({READOUT_JS})() === null", timeout=30_000)
    # Stop the run (an interrupt, as ■ does); its history then holds every row.
    page.locator(".jhw-stop").click()
    deadline = time.monotonic() + 60
    while not run_all_done(page):
        assert time.monotonic() < deadline, "the run did not stop"
        time.sleep(0.2)
    notebook.idle(timeout=30)
    for r in read:
        step = int(r["step"])
        value = float(r["value"])
        name, step_text, value_text = r["lines"]
        assert name == "saw · run 1", r
        assert step_text == f"step {step:,}", r
        # The value of that very step (XLA may divide by 97 as a product with 1/97: one float32
        # ulp apart from numpy's quotient; neighbouring steps differ by 1/97).
        assert abs(value - saw(step)) < 1e-6, f"read-out {r}: the run recorded {saw(step)!r}"
        assert value_text == f"value {six_digits(value)}", r
        # The step read out is the one under the pointer: the read-out snaps to the step
        # nearest the pointer's x (as TensorBoard's), its dot on that step's value. The line
        # moves as the run goes on (new rows rescale the x axis): by the time the pointer
        # arrives, the vertex it was sent to may have moved, and the step now under it is
        # another, whose value (a sawtooth's: anywhere from 0 to 1) is drawn at another y. So
        # only x is the pointer's; the value is the step's, checked above.
        assert abs(r["dot"]["x"] - r["at"]["x"]) <= 12, r
    # Four places, four steps. Not in order: the x axis can be rescaled (the run grew past it)
    # between finding a vertex and the pointer's arrival, and the step then under the pointer is
    # a later one than the vertex's (CI read 16,863 at 0.3 of the line, then 13,727 at 0.55).
    steps = [int(r["step"]) for r in read]
    assert len(set(steps)) == len(steps), steps
    assert notebook.errors() == []


@pytest.mark.parametrize("ui", ["lab", "notebook7"])
def test_hover_far_from_any_line_snaps_to_the_nearest_step(
    page: Page, notebook: Notebook, ui: UI
) -> None:
    """A finished run: pointer on a point, then in an empty corner of the plot, where the
    read-out is of the step nearest to it (TensorBoard's snapping), then off the plot, where
    there is none (JupyterLab and Notebook 7)."""
    cells = [
        "import jaxhist_widget as jhw\n"
        'live = jhw.LivePlot(title="halving")\n'
        "display(live)\n"
        "with live:\n"
        "    jhw.while_loop(lambda x: x > 1.0, lambda x: x / 2, 999.0, max_steps=20)"
    ]
    notebook.open(cells, name=f"hover-empty-{ui}.ipynb", ui=ui)
    notebook.idle(timeout=60)
    page.locator(".jhw-panel[data-status=converged]").wait_for()
    page.locator(".jhw-figure g.curve path.line").first.wait_for(state="attached")
    page.locator(".jhw-liveplot .jhw-legend").scroll_into_view_if_needed()
    # The line falls from 999 to < 1 in 10 steps: its last vertex is at the bottom right;
    # the top right of the plot area is far from every point.
    vertex, shown = hover_until_read_out(page, "value ·", 1.0, timeout=30)
    assert vertex["points"] == 11, vertex
    assert shown["lines"] == ["value · run 1", "step 10", "value 0.975586"], shown
    area = page.locator(".jhw-figure .plotarea_background").bounding_box()
    assert area is not None
    page.mouse.move(area["x"] + area["width"] - 20, area["y"] + 20)
    page.wait_for_function(
        f"() => (({READOUT_JS})() || {{lines: []}}).lines[1] === 'step 10'", timeout=30_000
    )
    page.mouse.move(area["x"] - 30, area["y"] + 20)  # over the y axis's labels: no plot
    page.wait_for_function(f"() => ({READOUT_JS})() === null", timeout=30_000)
    assert notebook.errors() == []
