"""The tutorial notebooks in ``notebooks/``: they run top to bottom, end on the picture they
teach, and are committed clean.

Each notebook is executed in a fresh ``python3`` kernel through `nbclient` (cwd ``notebooks/``;
once per session: the docs site's build, where it ran first, made the run read here, see
``scripts/notebook_runs.py``);
any cell error fails the test, and so does a last plot that shows no curve (read from its
static picture, as a reader of the executed notebook sees it). The static checks make sure the
committed files carry no outputs or execution counts (so diffs stay readable) and name their
kernel.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from jaxhist_widget.ui.plot._outputs import picture_svg

from ..helpers import ROOT
from ..helpers.notebook_runs import run_notebook


def _nbformat() -> Any:
    # Imported by the tests that use it, not at collection: importing it (jsonschema builds a
    # grammar) would slow every pytest run, the quick subset included.
    return pytest.importorskip("nbformat")


NOTEBOOK_DIR = ROOT / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
CELL_TIMEOUT_S = 120
#: A whole notebook should run in well under a minute on a 2-core CPU.
NOTEBOOK_BUDGET_S = 60
ANSI = re.compile(r"\x1b\[[0-9;]*m")
#: The plot's one-line summary of a run: "title: finished, 30 / 50 steps, ...".
RUN_SUMMARY = re.compile(r": (finished|max steps|stopped|diverged), [\d,]+ / \S+ steps")


def _ids(paths: list[Path]) -> list[str]:
    return [p.stem for p in paths]


def test_notebooks_exist() -> None:
    assert len(NOTEBOOKS) >= 5, f"expected the tutorial notebooks in {NOTEBOOK_DIR}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_notebook_is_clean(path: Path) -> None:
    # Read as JSON: nbformat's schema validation costs seconds (it runs in test_notebook_runs).
    nb = json.loads(path.read_text(encoding="utf-8"))
    assert nb["nbformat"] == 4, f"{path.name}: nbformat {nb['nbformat']}"
    spec = nb["metadata"].get("kernelspec", {})
    assert spec.get("name") == "python3", f"{path.name}: kernelspec metadata missing or not python3"
    assert spec.get("language") == "python"
    cells = nb["cells"]
    assert cells, f"{path.name} has no cells"
    assert cells[0]["cell_type"] == "markdown", f"{path.name} should start with a markdown title"
    dirty = [
        i
        for i, cell in enumerate(cells)
        if cell["cell_type"] == "code" and (cell.get("outputs") or cell.get("execution_count"))
    ]
    assert not dirty, f"{path.name}: cells {dirty} have outputs or execution counts; clear them"
    assert "widgets" not in nb["metadata"], f"{path.name}: saved widget state; clear it"


@pytest.mark.kernel
@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_notebook_runs(path: Path) -> None:
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    _nbformat().validate(_nbformat().read(path, as_version=4))
    failure = None
    try:
        # a run the docs site's build made of the same notebook this session, if it did
        nb, elapsed = run_notebook(path, CELL_TIMEOUT_S)
    except nbclient.exceptions.CellExecutionError as e:
        failure = ANSI.sub("", str(e))  # the kernel's traceback is colored
    if failure is not None:
        pytest.fail(f"{path.name} failed:\n{failure}", pytrace=False)
    assert elapsed < NOTEBOOK_BUDGET_S, f"{path.name} took {elapsed:.1f} s"
    errors = [
        out
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.outputs
        if out.output_type == "error"
    ]
    assert not errors, f"{path.name}: error outputs {errors}"
    _assert_the_last_plot_shows_a_curve(path, nb)


def _assert_the_last_plot_shows_a_curve(path: Path, nb: Any) -> None:
    """After Run All, the notebook's last plot (its picture, updated when each run ended) shows
    a run, and at least one drawn line of two points or more (a later run with no step must not
    have replaced the curve the notebook teaches)."""
    pictures = [
        (out["data"], svg)
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.outputs
        if (svg := picture_svg(out.get("data", {})))
    ]
    if not pictures:
        return  # a notebook without a LivePlot
    last, svg = pictures[-1]
    summary = last["text/plain"]
    assert RUN_SUMMARY.search(summary), f"{path.name}: the last plot shows no run: {summary!r}"
    lines = re.findall(r'<path class="jhw-line"[^>]* d="([^"]*)"', svg)
    assert any("L" in d for d in lines), f"{path.name}: the last plot draws no line: {summary!r}"
