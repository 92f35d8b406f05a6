"""How often a `LivePlot` updates while a loop runs (`ui/plot/_throttle.py`, with the flush
pace of `_host/_pace.py`): a slow first update, the one that makes a run's marks, must not
space out the updates after it (CI, loaded: a 3 s `jhw.log` loop moved its plot twice), and a
trailing flush that an update overtook must not update again at once."""

from __future__ import annotations

import itertools
import threading
import time

import numpy as np
import pytest

import jaxhist_widget as jhw
from jaxhist_widget._host import HUB
from jaxhist_widget.ui.figure import ChartGrid
from jaxhist_widget.ui.plot import _throttle, _updates
from jaxhist_widget.ui.plot._throttle import MAX_UPDATES_PER_SECOND

from ...helpers.synthetic import FakeLoop, layout


def test_a_slow_first_update_does_not_space_out_the_next_ones(monkeypatch) -> None:
    made = ChartGrid.add_marks

    def slowly(self, *args, **kwargs):  # a run's marks, made on a loaded machine
        time.sleep(0.4)
        return made(self, *args, **kwargs)

    monkeypatch.setattr(ChartGrid, "add_marks", slowly)
    pushed = _updates.Updates.push
    steps: list[int] = []

    def counted(self, ended=None):
        pushed(self, ended)
        if ended is None:  # (not the update that shows a run's end)
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


@pytest.mark.usefixtures("sinks_told_in_the_loops_call")
def test_a_trailing_flush_that_an_update_overtook_keeps_to_the_cap(monkeypatch) -> None:
    # CI (python313): two updates 2 ms apart. The trailing flush had started on one worker
    # thread, waiting for the plot's lock, while an update was made on another (a reduction
    # taking up rows); cancelling the flush then came too late, and it updated again at once.
    pushed = _updates.Updates.push
    sent: list[tuple[float, int]] = []

    def counted(self, ended=None):
        pushed(self, ended)
        if ended is None:  # (not the update that shows a run's end)
            sent.append((time.perf_counter(), self.panel.step))

    monkeypatch.setattr(_updates.Updates, "push", counted)
    live = jhw.LivePlot()
    updates = live._updates
    with live:
        loop = FakeLoop(layout(("loss",)))
        loop.send(loss=np.ones(3))  # an update: the first rows
        with live._lock:  # an update holds the plot...
            loop.send(loss=np.ones(2))  # (rows held back: a trailing flush is scheduled)
            time.sleep(0.3)  # ...while the flush fires on the worker, waiting for the lock
            with updates.ahead.working() as came:
                # a chunk comes during the update: noted, taken up as the update ends
                chunk = threading.Thread(target=lambda: loop.send(loss=np.ones(1)))
                chunk.start()
                chunk.join(30)
                updates.push()  # the update sends the rows held back
            assert came()
            updates.rows()  # taken up: too soon for an update, so held for a flush
        HUB.drain(live)  # the flush that was overtaken, then the one the last rows asked for
        loop.end()
    steps = [step for _, step in sent]
    assert steps[0] == 2 and steps[-1] == 5 and steps == sorted(steps), steps
    gaps = [b - a for (a, _), (b, _) in itertools.pairwise(sent)]
    assert min(gaps) >= 0.9 / MAX_UPDATES_PER_SECOND, f"updates {min(gaps) * 1e3:.1f} ms apart"
    assert live.panel.step == 5 and live.panel.status == "converged"


def test_the_plots_updates_are_no_cost_of_the_loops_chunks(monkeypatch) -> None:
    # A LivePlot on a CPU updates inside the host call, and the flush pace counted its update
    # as the cost of that chunk, lengthening the next chunks as if every chunk cost an update:
    # a 10^6-step loop got rows 11 times a second with a plot, 20 with a Recorder (and its
    # plot moved 9 times a second). The plot spaces its updates by their cost itself.
    drawn = _updates.Updates._draw

    def slowly(self, d):  # an update of 40 ms (a loaded machine, a kernel's messages)
        time.sleep(0.04)
        return drawn(self, d)

    monkeypatch.setattr(_updates.Updates, "_draw", slowly)
    # An update due at every chunk, as when the chunks come as often as the plot updates
    # (else a trailing flush on the worker makes most updates, outside any host call).
    monkeypatch.setattr(_throttle.Throttle, "due", lambda self, now: True)
    auto = layout(("loss",))
    auto = auto.__class__(**{**auto.__dict__, "max_steps": 10**6, "chunk": 10**6})
    live = jhw.LivePlot()
    costs, rows = [], 100
    with live:
        loop = FakeLoop(auto)
        for _ in range(40):
            time.sleep(0.02)  # the device's time
            loop.send(loss=np.ones(rows))
            costs.append(HUB._runs.get(loop.id).pace.cost)  # (the hub's run, looked at here)
        loop.end()
    assert live.panel.step == 40 * rows - 1  # (the plot did update: its last rows shown)
    # The host's cost of a chunk, as the pace counts it, holds no update (each >= 40 ms):
    # the chunks are not lengthened for them.
    assert max(costs) < 0.03, [f"{c * 1e3:.1f} ms" for c in costs]


def test_an_update_takes_a_tenth_of_the_time_between_updates(monkeypatch) -> None:
    # The next update was due an interval after the last one *ended*: updates of 9 ms of a
    # kernel's messages came 99 ms apart, and a 10^6-step loop's plot moved 9 times a second.
    work = [0.0]  # the update's work as its clock counts it (no global clock is touched)
    monkeypatch.setattr(_throttle, "work_clock", lambda: work[0])
    throttle = _throttle.Throttle(lambda: None, key=object())
    try:
        began = time.perf_counter()
        start = throttle.started()
        time.sleep(0.009)
        work[0] = 0.009  # an update of 9 ms, all of it work
        throttle.ended(start)
        interval = _throttle.PUSH_BUDGET * 0.009  # 90 ms between updates, 9 of them updating
        assert not throttle.due(began + interval - 1e-3)
        assert throttle.due(began + interval + 1e-3)
    finally:
        throttle.cancel()


def test_an_update_that_waits_costs_only_its_work() -> None:
    # An update waits for the interpreter (the loop's host calls, the kernel's threads) and for
    # its messages to be queued: counted as its cost, those waits spaced a 10^6-step loop's
    # updates in a real kernel 90-110 ms apart, where the loop ran as fast as without a plot.
    throttle = _throttle.Throttle(lambda: None, key=object())
    try:
        start = throttle.started()
        time.sleep(0.05)  # 50 ms of waiting, no work
        throttle.ended(start)
        # due after the cap's 50 ms (at 20 a second), not after 10 x 50 ms
        assert throttle.due(time.perf_counter() + 1.5 / MAX_UPDATES_PER_SECOND)
    finally:
        throttle.cancel()
