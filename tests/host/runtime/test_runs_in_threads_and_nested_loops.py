"""Runs as the host sees them: inner runs of nested loops, runs in several threads, stale stops,
slow sinks."""

from __future__ import annotations

import threading
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import jaxhist_widget as jhw
from jaxhist_widget._host import HUB

from ...helpers.backends import callback_errors_raise
from ...helpers.loops import failing_solve, slow_counter


def halve(x):
    """Halve until <= 1: a run of ``log2(x) + 1`` rows."""
    return jhw.while_loop(lambda c: c > 1.0, lambda c: c / 2, x, max_steps=20, stream_every=4)


XS = 2.0 ** jnp.arange(10, 5, -1, dtype=jnp.float32)  # inner runs of 11, 10, 9, 8, 7 rows


def scan_outer(xs):
    return lax.scan(lambda c, x: (c, halve(x)[1].length), 0, xs)[1]


def map_outer(xs):
    return lax.map(lambda x: halve(x)[1].length, xs)


def fori_outer(xs):
    def body(i, lengths):
        return lengths.at[i].set(halve(xs[i])[1].length)

    return lax.fori_loop(0, xs.shape[0], body, jnp.zeros(xs.shape[0], jnp.int32))


def jhw_outer(xs):
    # an outer recording loop whose body runs an inner recording loop each step
    def body(c):
        i, lengths = c
        return i + 1, lengths.at[i].set(halve(xs[i])[1].length)

    init = (jnp.int32(0), jnp.zeros(xs.shape[0], jnp.int32))
    (_, lengths), _ = jhw.while_loop(
        lambda c: c[0] < xs.shape[0], body, init, max_steps=10, record=lambda c: c[0]
    )
    return lengths


@pytest.mark.parametrize("outer", [scan_outer, map_outer, fori_outer, jhw_outer])
@pytest.mark.parametrize("jit", [True, False])
def test_every_inner_run_of_a_nested_loop_reaches_the_host(outer, jit):
    fn = jax.jit(outer) if jit else outer
    with jhw.Recorder() as rec:
        lengths = np.asarray(fn(XS))
    assert lengths.tolist() == [11, 10, 9, 8, 7]
    inner = [r for r in rec.runs if r.layout.max_steps == 20]  # not the outer jhw run
    assert [r.counts[0] for r in inner] == [11, 10, 9, 8, 7]
    assert len({r.id for r in inner}) == 5
    for r, x in zip(inner, XS, strict=True):
        expected = float(x) / 2.0 ** np.arange(r.counts[0])
        np.testing.assert_array_equal(r.history(), expected.astype(np.float32))
        assert r.status == "converged"


def test_inner_runs_of_a_vmapped_outer_loop_are_one_run_each_with_every_lane():
    def outer(x):
        def body(c):
            i, x = c
            x, _ = halve(x * 4.0)
            return i + 1, x

        return lax.while_loop(lambda c: c[0] < 3, body, (0, x))[1]

    xs = jnp.array([2.0, 8.0, 32.0, 128.0])
    with jhw.Recorder() as rec:
        jax.jit(jax.vmap(outer))(xs)
    assert len(rec.runs) == 3  # one per outer iteration, all lanes together
    for run in rec.runs:
        assert run.lanes == 4 and run.status == "converged"


@pytest.mark.slow  # compiles several loops: kept out of the quick subset
def test_an_error_in_one_thread_never_touches_another_threads_run():
    solve = slow_counter(step_seconds=0.004, max_steps=150, steps=150)
    solve(jnp.float32(0))  # compile
    rec_a, rec_b = jhw.Recorder(), EndLog()
    b_out = {}

    def thread_b():
        with rec_b:
            b_out["result"] = solve(jnp.float32(0))

    worker = threading.Thread(target=thread_b)
    with pytest.raises(ZeroDivisionError), rec_a:  # thread A's block, attached
        worker.start()  # B's run starts while A's sink is attached: it streams to both
        while not (rec_b.runs and rec_b.runs[-1].counts and rec_b.runs[-1].counts[0] > 5):
            time.sleep(0.005)
        1 / 0  # noqa: B018 - A's block fails while B's run is in flight
    assert rec_a.runs and rec_a.runs[-1] is rec_b.runs[-1]  # attaching is process-wide
    worker.join()
    _, hist = b_out["result"]
    run_b = rec_b.runs[-1]
    assert int(hist.length) == 151 and run_b.status == "converged"
    assert run_b.counts == [151]
    np.testing.assert_array_equal(rec_b.history()[1], hist.to_numpy()[1])
    assert rec_b.ends == ["converged"]  # never told the run ended before it did


class EndLog(jhw.Recorder):
    def __init__(self):
        super().__init__()
        self.ends = []

    def on_end(self, run):
        self.ends.append(run.status)


@pytest.mark.slow  # compiles several loops: kept out of the quick subset
@callback_errors_raise
def test_a_caught_error_inside_the_block_leaves_no_run_running_nor_a_stale_stop():
    bad = failing_solve()  # its host step raises at the 4th step
    good = jax.jit(lambda x: jhw.while_loop(lambda c: c < 50.0, lambda c: c + 1.0, x, max_steps=60))
    rec = jhw.Recorder()
    with rec:
        with pytest.raises(Exception, match="host step failed"):
            bad(jnp.float32(0))  # caught inside the block: the run can never close
        rec.stop()  # a stop now (the dead run looks in flight) must not reach later runs
        _, hist = good(jnp.float32(0))
        assert rec.runs[-1].status == "converged" and int(hist.length) == 51
        rec.stop()  # after the run ended, still inside the block: must not stop the next one
        _, hist = good(jnp.float32(0))
        assert rec.runs[-1].status == "converged" and int(hist.length) == 51
    assert rec.runs[0].status == "failed"  # given up for dead once the block ended
    assert rec.runs[0].history()[1].tolist()[:3] == [0.0, 1.0, 2.0]  # its rows are kept
    assert not rec.running and not rec.stop_requested


class SlowSink(jhw.Recorder):
    """A sink whose updates take far longer than the loop's steps (a slow widget, a file)."""

    def __init__(self, seconds):
        super().__init__()
        self.seconds, self.calls, self.last_done = seconds, 0, 0.0

    def on_rows(self, run, lanes):
        self.calls += 1
        time.sleep(self.seconds)
        self.last_done = time.perf_counter()


@pytest.mark.slow  # compiles several loops: kept out of the quick subset
def test_a_slow_sink_slows_only_its_own_updates():
    steps = 2000
    solve = jax.jit(
        lambda x: jhw.while_loop(
            lambda c: c[0] < steps,
            lambda c: (c[0] + 1, jnp.tanh(c[1] @ c[1])),
            (0, x),
            max_steps=steps,
            record=lambda c: (c[0], jnp.mean(c[1])),
        )
    )
    x0 = jnp.eye(64) * 0.5
    with jhw.Recorder() as plain:
        solve(x0)  # compile, and the baseline rows
    slow = SlowSink(seconds=0.3)
    with slow:
        _, hist = solve(x0)
    run = slow.runs[-1]
    # The loop did not wait for the sink: it ended (its close callback ran) while the sink was
    # still busy with updates, which it then got, merged, before the block ended.
    assert run.ended is not None and run.ended < slow.last_done
    # every row arrived (rows are never dropped), in few merged updates
    assert run.counts == [steps + 1] == plain.runs[-1].counts
    np.testing.assert_array_equal(slow.history()[1], hist.to_numpy()[1])
    assert slow.calls < 60, slow.calls
    assert run.status == "converged"


@callback_errors_raise
def test_a_run_that_outlives_its_block_in_a_thread_and_raises_ends_failed():
    # Issue 31: a run started on a worker thread inside `with rec:` outlives the block (it is
    # given up, then taken up again when rows come); its computation then raises: it read
    # `running` and stayed in the host's run table (for 30 s at best).
    def boom(x):
        if x > 30:
            raise ValueError("host step failed")
        time.sleep(0.01)
        return x

    def body(c):
        i, x = c
        x = jax.pure_callback(boom, jax.ShapeDtypeStruct((), jnp.float32), x + 1.0)
        return i + 1, x

    solve = jax.jit(
        lambda x: jhw.while_loop(lambda c: c[0] < 100, body, (0, x), max_steps=100, stream_every=1)
    )
    rec, raised = jhw.Recorder(), []

    def work():
        try:
            solve(jnp.float32(0))
        except Exception as e:  # the computation's own error, in its own thread
            raised.append(e)

    with rec:
        thread = threading.Thread(target=work)
        thread.start()
        while not rec.runs or sum(rec.runs[-1].counts) < 3:
            time.sleep(0.01)
    thread.join(60)
    assert raised, "the computation did not raise"
    run = rec.runs[-1]
    deadline = time.monotonic() + 15
    while run.status == "running" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert run.status == "failed" and run.id not in [r.id for r in HUB.live_runs()]
    assert 3 <= run.counts[0] <= 32  # the rows it sent are kept
