"""A `LivePlot` between its updates (`ui/plot/_ahead.py`): the loop's host call never waits
for an update in progress, and the rows that came are reduced on the worker meanwhile, none
lost."""

from __future__ import annotations

import threading

import jax
import jax.numpy as jnp
import numpy as np

import jaxhist_widget as jhw
from jaxhist_widget.ui.plot import _updates

from ...helpers.synthetic import FakeLoop, layout


def test_a_chunk_never_waits_for_an_update_in_progress_and_its_rows_are_drawn() -> None:
    live = jhw.LivePlot()
    with live:
        loop = FakeLoop(layout(("loss",)), lanes=4)
        loop.send(loss=np.ones((4, 3)))  # the first rows: the run's marks are made
        entered, release = threading.Event(), threading.Event()

        def update_in_progress() -> None:  # as a trailing flush on the worker holds the plot
            with live._lock, live._updates.ahead.working():
                entered.set()
                release.wait(30)

        busy = threading.Thread(target=update_in_progress)
        busy.start()
        assert entered.wait(30)
        chunk = threading.Thread(target=lambda: loop.send(loss=np.full((4, 5), 2.0)))
        chunk.start()
        chunk.join(10)
        returned = not chunk.is_alive()  # the loop's call went on while the plot was busy
        release.set()
        busy.join(30)
        chunk.join(30)
        assert returned
        loop.end()
    # taken up as the update ended: every row drawn (rows 0..7 of each lane)
    assert live.panel.step == 7
    lines = live.drawing().chart("loss").lines
    assert [line.lane for line in lines] == [0, 1, 2, 3]
    assert [line.x.tolist() for line in lines] == [list(range(8))] * 4
    assert [line.y.tolist() for line in lines] == [[1.0] * 3 + [2.0] * 5] * 4


def test_rows_never_wait_for_an_update_that_takes_the_plot_after_they_looked() -> None:
    # Issue 56 (8): new rows asked whether the plot was busy, then waited for its lock. An
    # update that took the plot between the two (here: a holder that becomes an update once
    # the rows have looked) held the loop's call until it ended.
    live = jhw.LivePlot()
    ahead = live._updates.ahead
    with live:
        loop = FakeLoop(layout(("loss",)))
        loop.send(loss=np.ones(3))
        looked, noted, returned = threading.Event(), threading.Event(), threading.Event()
        asked = ahead.note_if_busy

        def note_if_busy() -> bool:
            busy = asked()
            looked.set()
            if busy:
                noted.set()
            return busy

        ahead.note_if_busy = note_if_busy  # type: ignore[method-assign]
        came: list[bool] = []

        def holder() -> None:  # a quick change, then an update, in one hold of the plot
            with live._lock:
                chunk.start()
                assert looked.wait(30)
                with ahead.working() as rows_came:
                    # Until the rows are noted, not until the loop's call returns: a sink
                    # found slow (its first update took > 50 ms on a loaded machine) is told
                    # of rows on the hub's worker, and the call returns before they look.
                    noted.wait(10)
            came.append(rows_came())

        chunk = threading.Thread(target=lambda: (loop.send(loss=np.full(2, 2.0)), returned.set()))
        busy = threading.Thread(target=holder)
        busy.start()
        busy.join(30)
        chunk.join(30)
        assert came == [True] and returned.is_set(), "the loop's call waited for the update"
        del ahead.note_if_busy
        loop.end()
    assert live.panel.step == 4  # the rows noted were taken up: rows 0..4 drawn
    assert live.drawing().chart("loss").lines[0].y.tolist() == [1.0] * 3 + [2.0] * 2


def test_a_sweep_is_reduced_on_the_worker_between_updates(monkeypatch) -> None:
    lanes, steps = 512, 3000
    reduced_by: list[str] = []
    ingest = _updates.Updates._ingest_live

    def noting(self) -> None:
        reduced_by.append(threading.current_thread().name)
        ingest(self)

    monkeypatch.setattr(_updates.Updates, "_ingest_live", noting)
    rates = jnp.linspace(0.01, 0.5, lanes)

    @jax.jit
    @jax.vmap
    def sweep(rate):  # compute-bound: no Python in the step
        def body(c):
            i, x = c
            return i + 1, x - rate * jnp.sin(x) * jnp.cos(x)

        return jhw.while_loop(
            lambda c: c[0] < steps, body, (0, jnp.ones(64)), max_steps=steps,
            record=lambda c: {"loss": jnp.sum(c[1] ** 2)},
        )  # fmt: skip

    sweep(rates)  # compiled first: the timed part is the loop
    live = jhw.LivePlot(log_y=False)  # (a band on a log axis is clipped to it)
    with live:
        _, hist = sweep(rates)
    assert reduced_by and all(name.startswith("jaxhist") for name in reduced_by)
    # every step of every lane reached the band and the panel: its last row is the final one
    (run,) = live.runs
    assert live.panel.step == steps and run.counts == [steps + 1] * lanes
    (band,) = live.drawing().chart().bands
    x, y = band.outer
    assert (x.min(), x.max()) == (0, steps)  # from the first row to the last
    losses = np.asarray(hist.values["loss"])  # the device history: (lanes, steps + 1)
    np.testing.assert_allclose((y.min(), y.max()), (losses.min(), losses.max()), rtol=1e-6)
