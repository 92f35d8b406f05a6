"""Tests and benchmarks inspect a `LivePlot` through its public seam, not its privates: what the
figure shows is `LivePlot.drawing()` (per chart: lines, bands, flags, axes; the notes; the work
its updates did), an update now is `LivePlot.refresh()`, and a pure computation (smoothing, a
band, a lane's spread) is called on its own (`jaxhist_widget.ui.series.RunDrawing`,
`..reduce`). A test or a script of ``benchmarks/`` that reads a plot's state (``._state.``),
pushes it (``._push(``) or reaches into its figure (``._fig``) again fails here, kernel code in
a string too: the internals stay free to change.

(Tests about an internal part itself may still name it: ``live._updates``, ``live._lock``,
``live._downloads``, ``live._outputs``, ``live._copies``.)
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .helpers import ROOT

TESTS = Path(__file__).resolve().parent
#: What a test or a benchmark must not read of a plot: its state, its push, its figure.
PRIVATE = re.compile(r"\._state\.|\._push\(|\._fig\b")


def _files() -> list[Path]:
    tests = [p for p in TESTS.rglob("*.py") if p != Path(__file__).resolve()]
    return sorted([*tests, *(ROOT / "benchmarks").glob("*.py")])


@pytest.mark.parametrize("path", _files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_test_reads_a_plots_privates(path: Path) -> None:
    hits = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if PRIVATE.search(line)
    ]
    assert not hits, (
        "read what a plot shows with live.drawing() (per chart: .lines, .bands, .flags, "
        ".y_range, .log_y; .notes, .log_charts, .work), draw what has arrived with "
        "live.refresh(), or call the pure computation on the run (ui.series.RunDrawing):\n"
        + "\n".join(hits)
    )


def test_the_guard_sees_each_private_read() -> None:
    for line in ("(d,) = live._state.drawn", "live._push(final=False)", "p._fig.notes"):
        assert PRIVATE.search(line), line
    for line in ("live.drawing().notes", "live.refresh()", "live._fig_x", "panel._state"):
        assert not PRIVATE.search(line), line
