"""Sweeps of 4096 ``vmap`` lanes, as users run them: every lane and every row reaches the host,
and a stop (from a sink, or Ctrl-C) ends every lane where the device ended it.

The step is a learning-rate sweep of gradient descent on one least-squares problem: pure XLA
work, no Python in it.
"""

from __future__ import annotations

import os
import signal
import threading
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxhist_widget as jhw

# Compiles vmapped loops of thousands of lanes: out of the quick subset.
pytestmark = pytest.mark.slow

LANES = 4096


def problem(m, d):
    a = jax.random.normal(jax.random.key(0), (m, d), jnp.float32)
    b = jax.random.normal(jax.random.key(1), (m,), jnp.float32)
    rates = jnp.logspace(-3, 0.3, LANES, dtype=jnp.float32) / float(jnp.linalg.norm(a, 2) ** 2 / m)
    return a, b, rates


def sweep(steps, tol=None, m=32, d=8, **kw):
    """``jit(vmap(...))`` of the sweep, and its rates: a fixed number of steps, or (``tol``)
    until the gradient is small, each lane ending on its own."""
    a, b, rates = problem(m, d)

    def one(lr):
        def body(c):
            i, x, _, _ = c
            r = a @ x - b
            g = (a.T @ r) / m
            return i + 1, x - lr * g, 0.5 * jnp.vdot(r, r) / m, jnp.linalg.norm(g)

        def cond(c):
            more = c[0] < steps
            return more if tol is None else more & ((c[3] > tol) | (c[0] < 2))

        init = (jnp.int32(0), jnp.zeros(d, jnp.float32), jnp.float32(1.0), jnp.float32(1.0))
        return jhw.while_loop(
            cond, body, init, max_steps=steps, record=lambda c: {"loss": c[2], "x": c[1][:4]}, **kw
        )

    return jax.jit(jax.vmap(one)), rates


def streamed(run, leaf):
    """Every lane's streamed rows of ``leaf``, padded with NaN to the longest lane."""
    rows = [run.lane_rows(lane)[leaf] for lane in range(LANES)]
    out = np.full((LANES, max(map(len, rows)), *rows[0].shape[1:]), np.nan, np.float32)
    for lane, r in enumerate(rows):
        out[lane, : len(r)] = r
    return out


def device(hist, leaf):
    values = np.asarray(jax.tree_util.tree_leaves(hist.values)[leaf])
    lengths = np.asarray(hist.length)
    out = np.full(values.shape, np.nan, np.float32)
    for lane, n in enumerate(lengths):
        out[lane, :n] = values[lane, :n]
    return out[:, : lengths.max()]


@pytest.mark.parametrize("tol", [None, 1e-3], ids=["fixed steps", "lanes ending apart"])
def test_every_lane_and_every_row_reaches_a_recorder(tol):
    solve, rates = sweep(300, tol)
    with jhw.Recorder() as rec:
        _, hist = solve(rates)
    [run] = rec.runs
    lengths = np.asarray(hist.length)
    assert run.lanes == LANES and run.counts == lengths.tolist()
    if tol is not None:
        assert len(set(lengths.tolist())) > 10  # lanes really ended apart
    for leaf in (0, 1):
        np.testing.assert_array_equal(streamed(run, leaf), device(hist, leaf))
    assert run.statuses == ["converged"] * LANES  # cond_fun ended each (at 300 steps, or tol)


def test_a_stop_from_a_sink_ends_every_lane_at_the_same_step():
    class StopAt(jhw.Recorder):
        def on_rows(self, run, lanes):
            if max(run.counts) > 100:
                self.stop()

    rec, (solve, rates) = StopAt(), sweep(3000, stream_every=16)
    with rec:
        _, hist = solve(rates)
    [run] = rec.runs
    lengths = np.asarray(hist.length)
    assert len(set(lengths.tolist())) == 1 and 100 < lengths[0] < 3000
    assert run.status == "stopped" and set(run.statuses) == {"stopped"}
    np.testing.assert_array_equal(streamed(run, 0), device(hist, 0))


def test_ctrl_c_during_a_sweep_stops_it_and_keeps_every_lane_s_rows():
    rec = jhw.Recorder()
    solve, rates = sweep(3000, m=256, d=64)  # a few ms a step: seconds for the whole sweep
    solve.lower(rates).compile()  # the press comes while it runs, not while it compiles

    def press_once_running():
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (
            not rec.runs or max(rec.runs[-1].counts or [0]) < 50
        ):
            time.sleep(0.005)
        os.kill(os.getpid(), signal.SIGINT)

    presser = threading.Thread(target=press_once_running, daemon=True)
    with rec:
        presser.start()
        _, hist = solve(rates)  # returns: the press stopped it, nothing raised
    presser.join(5)
    [run] = rec.runs
    lengths = np.asarray(hist.length)
    assert run.status == "stopped" and lengths.min() >= 50 and lengths.max() < 1_000_001
    assert run.counts == lengths.tolist()
    np.testing.assert_array_equal(streamed(run, 0), device(hist, 0))
