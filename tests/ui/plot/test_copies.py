"""`LivePlot(store=..., tensorboard=...)`: every run the plot draws is also filed and written as
TensorBoard event files, complete once the block (or `run_async`) that ran it has ended."""

from __future__ import annotations

import asyncio
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxhist_widget as jhw
from jaxhist_widget._host import HUB

from ...helpers.tensorboard import read_events, run_names

pytest.importorskip("tensorboard")


def halve(x):
    def body(c):
        return {"x": c["x"] / 2, "loss": c["loss"] * 0.9}

    return jhw.while_loop(lambda c: c["x"] > 1, body, x, max_steps=4000, stream_every=7)


def start(x):
    return {"x": jnp.float32(x), "loss": jnp.float32(1.0)}


def busy_writer(board: jhw.TensorBoard, seconds: float = 0.5) -> None:
    """The board's writes wait behind this on the worker (each key's work runs in order), as
    they do behind a slow disk: only a block that waits for them finds them written."""
    HUB.worker.submit(board, time.sleep, seconds)


def test_tensorboard_and_store_get_every_row_of_the_runs_drawn(tmp_path):
    solve = jax.jit(halve)
    live = jhw.LivePlot(keep_runs=True, tensorboard=tmp_path / "tb", store=tmp_path / "s.db")
    with live:
        busy_writer(live._copies.tensorboard)
        with live.named("adam"):
            _, first = solve(start(2.0**40))
        with live.named("sgd"):
            _, second = solve(start(2.0**20))
    # No wait after the block: leaving it waited for the files.
    assert sorted(run_names(tmp_path / "tb")) == ["adam", "sgd"]
    for name, hist in [("adam", first), ("sgd", second)]:
        steps, values, _ = read_events(tmp_path / "tb" / name).scalars["loss"]
        want = np.asarray(hist.to_numpy()["loss"], np.float32)
        np.testing.assert_array_equal(steps, np.arange(len(want)))
        np.testing.assert_array_equal(values, want)
    stored = {r.name: r for r in jhw.load_runs(tmp_path / "s.db")}
    assert {n: r.counts[0] for n, r in stored.items()} == {"adam": 41, "sgd": 21}


def test_run_async_waits_for_the_files_too_and_a_sink_object_is_taken_as_given(tmp_path):
    board = jhw.TensorBoard(tmp_path, name="given")
    live = jhw.LivePlot(tensorboard=board)
    assert live._copies.tensorboard is board

    async def main():
        busy_writer(board)
        return await live.run_async(jax.jit(halve), start(2.0**30))

    _, hist = asyncio.run(main())
    (run_dir,) = board.run_dirs
    assert run_dir.name == "given"
    steps, _, _ = read_events(run_dir).scalars["x"]
    assert len(steps) == len(hist.to_numpy()["x"]) == 31
