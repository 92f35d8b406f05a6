"""Stopping a running loop from the host: stop(), interrupts, run_async cancellation."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxhist_widget as jhw

from ...helpers.backends import callback_errors_raise
from ...helpers.loops import failing_solve, slow_counter


class StopAfter(jhw.Recorder):
    """Calls its own stop() once ``rows`` rows have arrived (from inside the callback)."""

    def __init__(self, rows):
        super().__init__()
        self.rows = rows

    def on_rows(self, run, lanes):
        if max(run.counts) >= self.rows:
            self.stop()


def warm(solve):
    """Compile ``solve`` (stopping its run at once) so timed tests measure the loop only."""
    with StopAfter(rows=1):
        solve(jnp.float32(0))
    return solve


def assert_stopped_consistently(rec, final, hist, max_steps):
    run = rec.runs[-1]
    n = int(hist.length)
    assert 1 < n < max_steps + 1, n
    assert run.status == "stopped"
    streamed = rec.history()
    np.testing.assert_array_equal(streamed[1], hist.to_numpy()[1])  # streamed == device rows
    assert len(streamed[1]) == n
    assert int(final[0]) == n - 1  # the carry of the last completed step
    assert float(final[1]) == float(hist.last()[1])


def test_stop_from_a_sink_ends_the_loop_with_the_partial_history():
    solve = slow_counter(step_seconds=0.0, max_steps=50_000)
    with StopAfter(rows=5) as rec:
        final, hist = solve(jnp.float32(0))
    assert_stopped_consistently(rec, final, hist, 50_000)
    assert int(hist.length) < 5_000  # stopped at the first chunk flush after the request


@pytest.mark.slow  # compiles several loops: kept out of the quick subset
def test_stop_from_another_thread_reaches_a_slow_loop_quickly():
    solve = warm(slow_counter(step_seconds=0.02))
    rec = jhw.Recorder()
    stamps = {}

    def press_stop():
        time.sleep(0.5)
        stamps["stop"] = time.perf_counter()
        rec.stop()

    threading.Thread(target=press_stop).start()
    final, hist = rec.run(solve, jnp.float32(0))
    stamps["end"] = time.perf_counter()
    assert_stopped_consistently(rec, final, hist, 100_000)
    # 20 ms steps flush every row or two (auto), so the stop lands within a few steps
    assert stamps["end"] - stamps["stop"] < 2.0


def test_a_run_after_a_stop_works_normally():
    solve = slow_counter(step_seconds=0.0, max_steps=300)
    with StopAfter(rows=3) as rec:
        solve(jnp.float32(0))
    assert rec.runs[-1].status == "stopped"
    with jhw.Recorder() as fresh:  # (a new attach clears an old stop request too)
        _, hist = solve(jnp.float32(0))
    assert int(hist.length) == 301 and fresh.runs[-1].status == "max_steps"
    rec.rows = 10**9  # the same sink, no longer asking to stop: its old request is cleared
    with rec:
        _final, hist = solve(jnp.float32(0))
    assert rec.runs[-1].status == "max_steps" and int(hist.length) == 301


def test_stop_under_vmap_stops_every_lane():
    solve = slow_counter(step_seconds=0.0, max_steps=20_000)
    with StopAfter(rows=4) as rec:
        _final, hist = jax.vmap(solve)(jnp.arange(3.0))
    run = rec.runs[-1]
    assert run.statuses == ["stopped"] * 3
    lengths = np.asarray(hist.length)
    assert (lengths < 20_001).all()
    for lane, rows in enumerate(rec.history()):
        np.testing.assert_array_equal(rows[1], hist.to_numpy()[lane][1])


class InterruptAfter(jhw.Recorder):
    """Has another thread send this process SIGINT (like the notebook's ■) once ``rows`` arrived."""

    def __init__(self, rows):
        super().__init__()
        self.rows, self.sent = rows, False

    def on_rows(self, run, lanes):
        if not self.sent and max(run.counts) >= self.rows:
            self.sent = True
            threading.Thread(target=os.kill, args=(os.getpid(), signal.SIGINT)).start()


@pytest.mark.parametrize("how", ["run", "with"])
def test_interrupt_during_a_run_stops_it_instead_of_raising(how):
    solve = warm(slow_counter(step_seconds=0.01))  # an interrupt while compiling would raise
    rec = InterruptAfter(rows=20)
    if how == "run":
        final, hist = rec.run(solve, jnp.float32(0))
    else:
        with rec:
            final, hist = solve(jnp.float32(0))
    assert rec.sent
    assert_stopped_consistently(rec, final, hist, 100_000)
    # outside a run, the handler is gone: Ctrl-C means KeyboardInterrupt again
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_interrupt_outside_a_run_still_raises():
    rec = jhw.Recorder()
    with pytest.raises(KeyboardInterrupt), rec:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(1)


def test_run_async_stop_and_cancellation():
    solve = warm(slow_counter(step_seconds=0.01))

    async def main():
        rec = jhw.Recorder()
        task = asyncio.ensure_future(rec.run_async(solve, jnp.float32(0)))
        while not (rec.runs and rec.runs[-1].counts and rec.runs[-1].counts[0] > 5):
            await asyncio.sleep(0.01)  # the loop is under way on its worker thread
        assert not task.done()
        task.cancel()  # how an interrupt reaches an awaiting notebook cell
        final, hist = await task
        return rec, final, hist

    rec, final, hist = asyncio.run(asyncio.wait_for(main(), timeout=60))
    assert_stopped_consistently(rec, final, hist, 100_000)


def test_run_async_returns_results_and_raises_errors():
    async def main():
        rec = jhw.Recorder()
        out = await rec.run_async(
            lambda x: jhw.while_loop(lambda x: x > 1, lambda x: x / 2, x, max_steps=9), 8.0
        )
        with pytest.raises(ZeroDivisionError):
            await rec.run_async(lambda: 1 / 0)
        return rec, out

    rec, (_final, hist) = asyncio.run(main())
    assert hist.to_numpy().tolist() == [8.0, 4.0, 2.0, 1.0]
    assert rec.history().tolist() == [8.0, 4.0, 2.0, 1.0]


def test_a_stale_stop_outside_any_run_is_ignored():
    rec = jhw.Recorder()
    rec.stop()  # not attached, nothing running: nothing to stop
    assert not rec.stop_requested
    with rec:
        _, hist = jhw.while_loop(lambda x: x > 1.0, lambda x: x / 2, 10.0, max_steps=5)
    assert rec.runs[-1].status == "converged" and int(hist.length) == 5


@callback_errors_raise
def test_a_run_that_raises_ends_as_failed_and_frees_the_interrupt():
    rec = jhw.Recorder()
    with pytest.raises(Exception, match="host step failed"):
        rec.run(failing_solve(), jnp.float32(0))
    run = rec.runs[-1]
    assert run.status == "failed" and not rec.running  # Ctrl-C means KeyboardInterrupt again
    assert run.history()[1].tolist()[:3] == [0.0, 1.0, 2.0]  # rows before the failure kept


@callback_errors_raise
def test_liveplot_shows_a_failed_run_as_an_error():
    live = jhw.LivePlot()
    with pytest.raises(Exception, match="host step failed"), live:
        # waited for: where dispatch is asynchronous (a TPU) a computation's error is raised
        # where its result is used, as JAX does it
        jax.block_until_ready(failing_solve()(jnp.float32(0)))
    assert live.panel.status == "error"
    assert "failed" in live.panel.error
    assert live.panel.step >= 2  # the rows that arrived are still shown


def test_an_error_after_the_loop_leaves_its_finished_run_alone():
    live = jhw.LivePlot()
    with pytest.raises(ZeroDivisionError), live:
        jhw.while_loop(lambda x: x > 1.0, lambda x: x / 2, 10.0, max_steps=5)
        1 / 0  # noqa: B018
    assert live.panel.status == "converged"
