"""Auto mode's cell sink (`jaxhist_widget._extension._cell_sinks`) with real loops and no kernel:
where and when the cell's plot is made."""

from __future__ import annotations

import threading

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
