"""The ``%%jaxhist`` cell magic in a real JupyterLab 4, driven by headless Chromium.

A notebook loads the extension and runs one ``%%jaxhist`` cell whose loop is compute-bound (each
step 16 ``x = tanh(A @ x)``, 256x256, no Python in it). While the cell runs, the plot the magic
put at the top of its output moves: the step counter and the drawn line change several times.
Afterwards the cell shows exactly one plot, with the final step and status, and nothing reaches
the browser console.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from ..helpers.browser import (
    LIVE_PROBE_JS,
    VIEW_STATE_JS,
    Notebook,
    assert_final_panel,
    assert_live_updates,
    output_line,
)
from ..helpers.jupyter_browser import (
    sample_while_running,
)

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.ui

STEPS = 60_000  # a few seconds of compute here

SETUP = f"""\
import jax
import jax.numpy as jnp
import jaxhist_widget as jhw

A = jax.random.normal(jax.random.key(0), (256, 256)) / 16.0


def heavy(c):  # compute-bound: pure XLA work, no host call in the step
    i, x = c
    return i + 1, jax.lax.fori_loop(0, 16, lambda _, x: jnp.tanh(A @ x), x)


@jax.jit
def solve(x0):
    return jhw.while_loop(lambda c: c[0] < {STEPS}, heavy, (0, x0), max_steps={STEPS},
                          record=lambda c: {{"norm": jnp.linalg.norm(c[1])}})
"""

MAGIC_CELLS = [
    SETUP,
    "%load_ext jaxhist_widget",
    '%%jaxhist --title "magic cell"\n'
    "final, hist = solve(jnp.ones(256))\n"
    'print("RESULT", int(hist.length) - 1, flush=True)',
]


def test_magic_cell_plot_moves_while_the_cell_runs(page: Page, notebook: Notebook) -> None:
    notebook.open(MAGIC_CELLS, name="magic-lab.ipynb", ui="lab")
    samples = sample_while_running(page, LIVE_PROBE_JS, timeout=120)
    notebook.idle(timeout=30)
    assert_live_updates(page, samples)

    (steps,) = output_line(page, 2, "RESULT")
    assert int(steps) == STEPS
    assert_final_panel(page, STEPS, "converged")
    state = page.evaluate(VIEW_STATE_JS)
    assert state["views"] == 1, f"{state['views']} plots on the page"
    assert state["cell"] == 2, f"the plot is in cell {state['cell']}, not the magic's"
    assert state["title"] == "magic cell"
    # Above what the cell printed: the magic shows the plot before running the body.
    order = (
        page.locator(".jp-Notebook .jp-Cell")
        .nth(2)
        .evaluate(
            "(cell) => [...cell.querySelectorAll('.jp-OutputArea-output')].map("
            "(o) => o.querySelector('.jhw-liveplot') ? 'plot' : o.innerText.split(' ')[0])"
        )
    )
    assert order[0] == "plot", order
    assert notebook.errors() == []
