"""`LivePlot(store=..., tensorboard=...)`: every run the plot draws is also filed and written as
TensorBoard event files, complete once the block (or `run_async`) that ran it has ended."""

from __future__ import annotations

import asyncio
import threading
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxhist_widget as jhw
from jaxhist_widget._host import HUB

from ...helpers.hub import LAYOUT, flush
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


# ------------------------------------------------- the copies are sinks of the plot's runs
class CopyLog(jhw.Store):
    """A `Store` copy that writes down each hook the hub hands it (in ``log``, shared)."""

    def __init__(self, path, log: list[tuple[str, str]]) -> None:
        super().__init__(path)
        self.log = log

    def _start(self, run: jhw.Run) -> None:
        self.log.append(("store", "start"))
        super()._start(run)

    def on_rows(self, run: jhw.Run, lanes: list[int]) -> None:
        self.log.append(("store", "rows"))
        super().on_rows(run, lanes)

    def _resume(self, run: jhw.Run) -> None:
        self.log.append(("store", "resume"))
        super()._resume(run)

    def _end(self, run: jhw.Run) -> None:
        self.log.append(("store", f"end {run.status}"))
        super()._end(run)


class PlotLog(jhw.LivePlot):
    """A `LivePlot` that writes down each hook the hub hands it (in ``log``, shared)."""

    def __init__(self, log: list[tuple[str, str]], **options) -> None:
        super().__init__(**options)
        self.log = log

    def _start(self, run: jhw.Run) -> None:
        self.log.append(("plot", "start"))
        super()._start(run)

    def on_rows(self, run: jhw.Run, lanes: list[int]) -> None:
        self.log.append(("plot", "rows"))
        super().on_rows(run, lanes)

    def _resume(self, run: jhw.Run) -> None:
        self.log.append(("plot", "resume"))
        super()._resume(run)

    def _end(self, run: jhw.Run) -> None:
        self.log.append(("plot", f"end {run.status}"))
        super()._end(run)


@pytest.mark.usefixtures("sinks_told_in_the_loops_call")
def test_a_copy_gets_every_hook_of_the_plots_runs_just_before_the_plot(tmp_path):
    # A run given up for dead when its block ends (its rows stop coming) that sends rows after
    # all: the copy is told it was taken up (`_resume`: it had none), and each hook reaches the
    # copy, then the plot, as the hub hands them to the sinks of a run.
    log: list[tuple[str, str]] = []
    store = CopyLog(tmp_path / "s.db", log)
    live = PlotLog(log, store=store)
    with live:
        run_id = int(HUB.open_run(LAYOUT)[0])
        flush(run_id, 0, [1.0, 2.0])
    flush(run_id, 2, [3.0])  # alive after all: taken up
    assert store.running and live.running  # a stop of either reaches it now
    flush(run_id, 3, [4.0], status=1)
    HUB.drain(live)
    hooks = ["start", "rows", "end failed", "resume", "rows", "rows", "end converged"]
    for who in ("store", "plot"):
        assert [hook for w, hook in log if w == who] == hooks, log
    # Each hook reaches the copy first (the plot's may come later still: a plot whose
    # drawing proved slow gets its updates on the worker).
    store_at, plot_at = (
        [i for i, (w, _) in enumerate(log) if w == who] for who in ("store", "plot")
    )
    assert all(s < p for s, p in zip(store_at, plot_at, strict=True)), log
    assert not store.running
    store.flush()
    [stored] = jhw.load_runs(tmp_path / "s.db")
    assert stored.status == "converged" and stored.history().tolist() == [1, 2, 3, 4]


class SlowCopy(jhw.TensorBoard):
    """A `TensorBoard` copy whose ``on_rows`` takes ``SLOW`` seconds, and says on which
    thread it ran."""

    SLOW = 0.4

    def __init__(self, logdir) -> None:
        super().__init__(logdir)
        self.threads: list[str] = []

    def on_rows(self, run: jhw.Run, lanes: list[int]) -> None:
        self.threads.append(threading.current_thread().name)
        time.sleep(self.SLOW)
        super().on_rows(run, lanes)


class TimedPlot(jhw.LivePlot):
    """A `LivePlot` that times each of its ``on_rows`` calls."""

    def __init__(self, **options) -> None:
        super().__init__(**options)
        self.took: list[float] = []

    def on_rows(self, run: jhw.Run, lanes: list[int]) -> None:
        t0 = time.perf_counter()
        super().on_rows(run, lanes)
        self.took.append(time.perf_counter() - t0)


def test_a_slow_copy_delays_only_itself(tmp_path):
    # The hub's policy holds for a copy as for any sink: once its on_rows proved slow its
    # updates go to the worker, merged, and the plot's own (in the loop's call) never wait
    # for it. Before, the copies ran inside the plot's on_rows: the plot took the copy's time.
    board = SlowCopy(tmp_path)
    live = TimedPlot(tensorboard=board)
    with live:
        run_id = int(HUB.open_run(LAYOUT)[0])
        for k in range(6):
            flush(run_id, k, [float(k)])
        flush(run_id, 6, [6.0], status=1)
    assert len(live.took) == 7
    assert max(live.took) < SlowCopy.SLOW, live.took
    assert board.threads[0] == threading.current_thread().name  # the first, in the call
    assert set(board.threads[1:]) == {"jaxhist-worker"}  # then on the worker, merged
    assert len(board.threads) < 7
    _, values, _ = read_events(board.run_dirs[0]).scalars["x"]
    assert values.tolist() == list(range(7))  # every row in the files all the same


class ExitingCopy(jhw.Store):
    """A `Store` copy whose ``on_rows`` raises ``KeyboardInterrupt`` (a Ctrl-C landing in it)."""

    def on_rows(self, run: jhw.Run, lanes: list[int]) -> None:
        raise KeyboardInterrupt


def test_a_copy_raising_keyboardinterrupt_stops_the_run_and_the_plots_block_raises_it(tmp_path):
    live = jhw.LivePlot(store=ExitingCopy(tmp_path / "s.db"))
    with pytest.raises(KeyboardInterrupt), live:
        _, hist = jax.jit(halve)(start(2.0**40))
    assert live.runs[-1].status == "stopped"
    assert int(hist.length) < 41  # stopped after the first chunk, not run to its end
