"""A notebook of LivePlots read without its kernel: its cells (a plot by hand, ``%%jaxhist``,
auto mode, a run ending on a thread of its own), executed by nbclient and rendered by nbconvert.

Shared by the export tests (``tests/ui/picture/test_offline_export.py``) and the browser tests
that open the results (``tests/browser/test_offline_ui.py``).
"""

from __future__ import annotations

import copy
import os
from typing import Any

import pytest

from jaxhist_widget.ui.plot._outputs import picture_svg


def nbformat() -> Any:
    # Imported by the tests that use it, not at collection: importing it (jsonschema builds a
    # grammar) would slow every pytest run, the quick subset included.
    return pytest.importorskip("nbformat")


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
#: How each picture starts in an HTML export: its image's data: URI (the SVG once, not base64).
SVG_IMG = "src='data:image/svg+xml;charset=utf-8,"

SETUP = """\
%load_ext jaxhist_widget
import jax
import jax.numpy as jnp
import jaxhist_widget as jhw
from IPython.display import display


@jax.jit
def solve(x0):
    return jhw.while_loop(lambda x: x > 1e-3, lambda x: x * 0.95, x0, max_steps=500)
"""
CELLS = [
    SETUP,
    "live = jhw.LivePlot(title='by hand', log_y=True)\n"
    "display(live)\n"
    "with live:\n"
    "    x, hist = solve(jnp.float32(3.0))",
    "%%jaxhist --title magic\nx, hist = solve(jnp.float32(2.0))",
    "%jaxhist on --title auto",
    "x, hist = solve(jnp.float32(1.0))",
    "%jaxhist off",
    # A run on a thread of its own that ends while the next cell runs: its picture still goes
    # to this cell's output (ipykernel sends it under the running cell; the display id routes it).
    "import threading, time\n"
    "bg = jhw.LivePlot(title='thread')\n"
    "display(bg)\n"
    "worker = threading.Thread(target=lambda: (time.sleep(1.0), bg.run(solve, jnp.float32(3.0))))\n"
    "worker.start()",
    "worker.join()",
]
#: The cells that show a plot, and the title each one's picture must show.
PLOTS = {1: "by hand", 2: "magic", 4: "auto", 6: "thread"}


def make_notebook() -> Any:
    nb = nbformat().v4.new_notebook()
    nb.cells = [nbformat().v4.new_code_cell(source) for source in CELLS]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    return nb


def execute_notebook() -> Any:
    """The notebook of `CELLS` executed by nbclient, with its widget state (nbclient's
    default), as ``jupyter nbconvert --execute`` runs it."""
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    nb = make_notebook()
    env = {**os.environ, "JAX_PLATFORMS": os.environ.get("JAX_PLATFORMS", "cpu")}
    nbclient.NotebookClient(nb, kernel_name="python3", timeout=120).execute(env=env)
    return nb


def without_widget_state(nb: Any) -> Any:
    """What JupyterLab saves with default settings: the outputs, no widget state."""
    nb = copy.deepcopy(nb)
    nb.metadata.pop("widgets", None)
    return nb


def to_html(nb: Any) -> str:
    from nbconvert import HTMLExporter

    html, _ = HTMLExporter().from_notebook_node(nb)
    return html


def plot_outputs(cell: Any) -> list[Any]:
    """The picture outputs of ``cell`` (one per plot, right after the widget's)."""
    return [o for o in cell.outputs if o.output_type == "display_data" and picture_svg(o.data)]
