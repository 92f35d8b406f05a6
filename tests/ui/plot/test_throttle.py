"""How often a `LivePlot` updates while a loop runs (`ui/plot/_throttle.py`, with the flush
pace of `_host/_pace.py`): a slow first update, the one that makes a run's marks, must not
space out the updates after it (CI, loaded: a 3 s `jhw.log` loop moved its plot twice)."""

from __future__ import annotations

import time

import jaxhist_widget as jhw
from jaxhist_widget.ui.figure import ChartGrid
from jaxhist_widget.ui.plot import _updates


def test_a_slow_first_update_does_not_space_out_the_next_ones(monkeypatch) -> None:
    made = ChartGrid.add_marks

    def slowly(self, *args, **kwargs):  # a run's marks, made on a loaded machine
        time.sleep(0.4)
        return made(self, *args, **kwargs)

    monkeypatch.setattr(ChartGrid, "add_marks", slowly)
    pushed = _updates.Updates.push
    steps: list[int] = []

    def counted(self, final, ended=None):
        pushed(self, final, ended)
        if not final:
            steps.append(self.panel.step)

    monkeypatch.setattr(_updates.Updates, "push", counted)
    live = jhw.LivePlot()
    with live:
        for i in range(1500):  # ~1.5 s of steps after the marks are made
            time.sleep(0.001)
            jhw.log(loss=1.0 / (i + 1))
    assert live.runs[-1].status == "converged" and live.panel.step == 1499
    moved = {s for s in steps if 0 < s < 1499}
    # at most 20 updates a second: a 1.5 s loop should show about a dozen
    assert len(moved) >= 5, sorted(moved)
