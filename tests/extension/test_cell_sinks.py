"""Auto mode's cell sink (`jaxhist_widget._extension._cell_sinks`) with real loops and no kernel:
where and when the cell's plot is made."""

from __future__ import annotations

import threading
import time

import jax
import jax.numpy as jnp

import jaxhist_widget as jhw
from jaxhist_widget._extension._cell_sinks import _CellPlot, _CellSink


def test_the_cell_s_plot_is_made_on_the_worker_under_no_lock_and_joins_every_run():
    # Issue 33: auto mode made and displayed its plot on an XLA callback thread (the loop's own
    # host call) while holding the sink's lock.
    made = []

    def make_plot(sink):
        made.append((threading.current_thread().name, sink._lock._is_owned()))
        return _CellPlot(sink)

    solve = jax.jit(
        lambda x: jhw.while_loop(
            lambda c: c[0] < 300, lambda c: (c[0] + 1, c[1] * 0.99), (0, x), max_steps=300
        )
    )
    sink = _CellSink(make_plot)
    with sink:
        solve(jnp.float32(1.0))
        _, second = solve(jnp.float32(2.0))
    assert len(made) == 1, "a cell's runs share one plot"
    thread, lock_held = made[0]
    assert thread != threading.main_thread().name and thread.startswith("jaxhist-worker")
    assert not lock_held
    plot = sink.plot
    assert plot.panel.run_number == 2  # both runs reached it (it keeps the latest one)
    [run] = plot.runs
    assert run.status == "converged"
    assert (run.history()[1] == second.to_numpy()[1]).all()  # every row, joined or not
    assert (plot.history()[1] == second.to_numpy()[1]).all()


class _SlowPlot(_CellPlot):
    """A cell's plot whose updates outlast the hub's quick budget (a busy front end, a slow
    machine): the hub then hands it rows, and the run's end, on the worker."""

    def on_rows(self, run, lanes):
        time.sleep(0.08)
        super().on_rows(run, lanes)


def test_the_cell_s_plot_shows_its_run_ended_when_the_cell_ends():
    # A run's end reaches a sink on the worker while that sink has work queued there. The
    # cell's plot is joined to its runs, not attached, so the cell's own drain did not wait for
    # it: the cell ended (and its picture was saved) with the plot still showing "running".
    solve = jax.jit(
        jax.vmap(
            lambda x: jhw.while_loop(
                lambda c: c[0] < 4000,
                lambda c: (c[0] + 1, c[1] * 0.999 + jnp.sin(c[1]) * 1e-3),
                (0, x),
                max_steps=4000,
                stream_every=200,
            )
        )
    )
    sink = _CellSink(_SlowPlot)
    with sink:
        solve(jnp.linspace(0.0, 1.0, 64))
    plot = sink.plot
    assert plot.panel.status == "converged"
    assert plot.panel.lane_statuses == {"converged": 64}
    assert plot.panel.step == 4000
