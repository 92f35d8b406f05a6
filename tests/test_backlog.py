"""Rows filed on the backlog's worker thread while the loop runs on (issue 14, problem (c))."""

from __future__ import annotations

import threading
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxhist_widget as jhw
from jaxhist_widget import backlog, registry

N = 32
A = jnp.asarray(np.random.default_rng(0).normal(size=(N, N)) / 6, jnp.float32)


def solve(x0):
    """``tanh(A @ x)`` (no Python in the step) for a number of steps that differs per lane."""
    limit = 30 + (jnp.abs(x0[0]) * 90).astype(jnp.int32)
    return jhw.while_loop(
        lambda c: c[0] < limit,
        lambda c: (c[0] + 1, jnp.tanh(A @ c[1])),
        (jnp.int32(0), x0),
        max_steps=200,
        record=lambda c: {"x": c[1], "norm": jnp.sum(c[1] ** 2)},
        stream_every=4,
    )


@pytest.fixture
def slow_filing(monkeypatch):
    """Each chunk filed on the backlog takes 30 ms (far longer than its steps); records the
    filing threads and how many chunks were waiting meanwhile."""
    seen = {"threads": set(), "waiting": 0}
    real = registry._file

    def slow(*args):
        seen["threads"].add(threading.current_thread().name)
        time.sleep(0.03)
        seen["waiting"] = max(seen["waiting"], backlog._queue.qsize())
        real(*args)

    monkeypatch.setattr(registry, "_file", slow)
    return seen


def test_the_loop_goes_on_while_rows_are_filed_and_every_row_is_in_when_it_returns(
    slow_filing,
):
    x0 = jnp.asarray(np.random.default_rng(1).uniform(-1, 1, size=(8, N)), jnp.float32)
    f = jax.jit(jax.vmap(solve))
    with jhw.Recorder() as rec:
        _, hist = f(x0)
        # Still inside the block (nothing drained yet): the chunk that ended the run waited
        # for every chunk before it, so all rows of all lanes are filed, in order.
        run = rec.runs[-1]
        assert run.ended is not None and run.status == "converged"
        lengths = np.asarray(hist.length).tolist()
        assert run.counts == lengths and len(set(lengths)) > 1
        for host, device in zip(rec.history(), hist.to_numpy(), strict=True):
            jax.tree_util.tree_map(np.testing.assert_array_equal, host, device)
    # Filed off the loop's thread, and the loop did not wait: chunks queued up meanwhile.
    assert slow_filing["threads"] == {"jaxhist-backlog"}
    assert slow_filing["waiting"] >= 2, slow_filing


def test_a_stop_request_still_ends_the_loop_at_the_next_chunk(slow_filing):
    # A stop (the Stop button, an interrupt) is a flag the call reads at once: the lagging
    # filing does not delay it, and the rows up to the stop are all kept.
    rec = jhw.Recorder()
    stopped_at = {}

    def request_stop():
        while not rec.runs or max(rec.runs[-1].counts or [0]) < 12:
            time.sleep(0.001)
        stopped_at["rows"] = max(rec.runs[-1].counts)
        rec.stop()

    x0 = jnp.full((4, N), 0.9, jnp.float32)
    f = jax.jit(jax.vmap(lambda x: jhw.while_loop(
        lambda c: c[0] < 10**6,
        lambda c: (c[0] + 1, jnp.tanh(A @ c[1])),
        (jnp.int32(0), x),
        max_steps=10**6,
        stream_every=4,
    )))  # fmt: skip
    f(x0[:1])  # compile
    stopper = threading.Thread(target=request_stop)
    with rec:
        stopper.start()
        _, hist = f(x0)
    stopper.join()
    run = rec.runs[-1]
    assert set(run.statuses) == {"stopped"}
    assert run.counts == np.asarray(hist.length).tolist()
    assert max(run.counts) < 10**6


def test_only_sinks_whose_rows_can_wait_let_the_loop_go_on():
    class Quiet(jhw.Sink):
        pass

    class Watching(jhw.Sink):
        def on_rows(self, run, lanes):
            pass

    class WatchingRecorder(jhw.Recorder):
        def on_rows(self, run, lanes):
            pass

    class StopsOnRows(jhw.Recorder):
        def _should_stop(self, run):
            return max(run.counts) > 10

    class Declared(jhw.Sink):
        _rows_can_wait = True

        def on_rows(self, run, lanes):
            pass

    assert jhw.Recorder._rows_can_wait
    assert not jhw.LivePlot._rows_can_wait  # its pushes pause the loop (see there)
    assert Quiet._rows_can_wait and Declared._rows_can_wait
    # a stop these ask for may depend on the rows: it must end the loop right after them
    assert not Watching._rows_can_wait and not WatchingRecorder._rows_can_wait
    assert not StopsOnRows._rows_can_wait


def test_a_failing_stop_check_loses_no_row(slow_filing):
    class Broken(jhw.Recorder):
        _rows_can_wait = True  # claims so, then fails when asked

        def _should_stop(self, run):
            raise ValueError("broken sink")

    x0 = jnp.asarray(np.random.default_rng(2).uniform(-1, 1, size=(4, N)), jnp.float32)
    with pytest.warns(RuntimeWarning, match="broken sink"), Broken() as rec:
        _, hist = jax.jit(jax.vmap(solve))(x0)
    assert rec.runs[-1].counts == np.asarray(hist.length).tolist()
    for host, device in zip(rec.history(), hist.to_numpy(), strict=True):
        jax.tree_util.tree_map(np.testing.assert_array_equal, host, device)


def test_a_sink_that_watches_rows_sees_them_before_the_loop_goes_on(slow_filing):
    # Attached beside a Recorder, a sink with its own on_rows makes every chunk wait for it:
    # its stop after row 10 ends each lane at the first chunk boundary after it.
    class StopAfterTen(jhw.Sink):
        def on_rows(self, run, lanes):
            if max(run.counts) > 10:
                self.stop()

    x0 = jnp.full((3, N), 0.99, jnp.float32)  # lanes that would run 119 steps
    with jhw.Recorder() as rec, StopAfterTen():
        _, hist = jax.jit(jax.vmap(solve))(x0)
    # chunks end at 4, 8, 12 rows: the one after row 10 is the last
    assert np.asarray(hist.length).tolist() == [12, 12, 12]
    assert rec.runs[-1].counts == [12, 12, 12] and not slow_filing["threads"]
