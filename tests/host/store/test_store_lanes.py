"""Thousands of lanes and long runs: a store files a sweep's chunks with array operations (no
Python loop over lanes or rows), and reads runs back in memory proportional to their values,
NaNs or not. Counted, not timed (the times are `benchmarks/store.py`'s).
"""

from __future__ import annotations

import tracemalloc

import jax
import jax.numpy as jnp
import numpy as np

import jaxhist_widget as jhw
from jaxhist_widget._host import Run

from ...helpers.stores import Stream, record_layout, same_bits


def sweep(lanes, steps):
    """A vmapped loop of ``lanes`` lanes recording a loss and a 4-vector (1 + 4 float32)."""
    rates = jnp.linspace(0.001, 0.1, lanes, dtype=jnp.float32)

    def solve(rate):
        def body(c):
            i, x, _ = c
            x = x - rate * (x - jnp.arange(4.0, dtype=jnp.float32))
            return i + 1, x, jnp.sum(x * x)

        return jhw.while_loop(
            lambda c: c[0] < steps,
            body,
            (jnp.int32(0), jnp.ones(4, jnp.float32), jnp.float32(4.0)),
            max_steps=steps,
            record=lambda c: {"loss": c[2], "x": c[1]},
        )

    return jax.jit(jax.vmap(solve)), rates


def test_a_sweep_of_4096_lanes_is_filed_whole_without_a_loop_over_lanes(tmp_path, monkeypatch):
    calls = {"rows_since": 0, "block": 0}
    for name in calls:
        method = getattr(Run, name)

        def counted(self, *args, _method=method, _name=name, **kwargs):
            calls[_name] += 1
            return _method(self, *args, **kwargs)

        monkeypatch.setattr(Run, name, counted)
    path = tmp_path / "runs.db"
    fn, rates = sweep(4096, 300)
    with jhw.Store(path):
        _, hist = fn(rates)
    calls_filing = dict(calls)
    [run] = jhw.load_runs(path)
    assert run.lanes == 4096 and run.counts == [301] * 4096
    loss, x = run.block(np.arange(4096), 0, 301)  # the reading side: one array per leaf
    same_bits(loss, np.asarray(hist.values["loss"]))
    same_bits(x, np.asarray(hist.values["x"]))
    assert calls_filing["rows_since"] == 0  # never lane by lane
    assert 0 < calls_filing["block"] <= 2 * 301  # per chunk at most, whatever the lanes


def test_reading_back_takes_memory_in_proportion_to_the_values_nans_or_not(tmp_path):
    path = tmp_path / "runs.db"
    steps, lanes = 200_000, 1000
    rng = np.random.default_rng(0)
    with jhw.Store(path):
        long = Stream(record_layout(["a", "b", "c"], ["float32"] * 3, max_steps=steps))
        for _ in range(20):
            long.send([rng.random((1, steps // 20), np.float32) for _ in range(3)])
        long.end(2)
        nan = Stream(record_layout(["loss", "lr"], ["float32"] * 2), lanes=lanes)
        losses = rng.random((lanes, 200), np.float32)
        losses[::2, 50:] = np.nan  # half the lanes diverge
        nan.send([losses, np.ones((lanes, 200), np.float32)])
        nan.end()
    values = steps * 3 * 4 + lanes * 200 * 2 * 4
    tracemalloc.start()
    try:
        first, second = jhw.load_runs(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert first.counts == [steps] and second.counts == [200] * lanes
    same_bits(second.block(np.arange(lanes), 0, 200)[0], losses)
    print(f"peak {peak / values:.2f}x the values")
    assert peak <= 3 * values, (peak / values, peak, values)
