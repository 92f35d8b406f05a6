"""The hub (`_host/runtime/_hub.py`): the run table's state machine, deferred filing on the
one worker, the ordering promises per run, and what a sink's behaviour tells the hub.

Most tests drive the hub as the traced program does, with flushes encoded here (`flush`); the
loop tests run real compute-bound loops.
"""

from __future__ import annotations

import threading
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxhist_widget as jhw
from jaxhist_widget._host import HUB, Run

from ...helpers.hub import LAYOUT, flush

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


class Log(jhw.Sink):
    """Records the hooks the hub calls, in order."""

    rows_can_wait = True

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, int]] = []

    def on_start(self, run: Run) -> None:
        self.calls.append(("start", run.id))

    def on_rows(self, run: Run, lanes: list[int]) -> None:
        self.calls.append(("rows", max(run.counts)))

    def on_end(self, run: Run) -> None:
        self.calls.append(("end", run.id))


# ---------------------------------------------------------------------- deferred filing
@pytest.fixture
def slow_filing(monkeypatch):
    """Each chunk filed on the worker takes 30 ms (far longer than its steps); records the
    filing threads and how many chunks the loop sent meanwhile."""
    seen = {"threads": set(), "ahead": 0, "calls": 0, "filed": 0}
    real_file, real_receive = HUB._file, HUB.receive_chunk

    def slow(*args):
        seen["threads"].add(threading.current_thread().name)
        time.sleep(0.03)
        seen["ahead"] = max(seen["ahead"], seen["calls"] - seen["filed"])
        real_file(*args)
        seen["filed"] += 1

    def counting(*args):
        seen["calls"] += 1
        return real_receive(*args)

    monkeypatch.setattr(HUB, "_file", slow)
    monkeypatch.setattr(HUB, "receive_chunk", counting)
    return seen


@pytest.mark.slow  # compiles several loops: kept out of the quick subset
def test_the_loop_goes_on_while_rows_are_filed_and_every_row_is_in_when_it_returns(
    slow_filing,
):
    x0 = jnp.asarray(np.random.default_rng(1).uniform(-1, 1, size=(8, N)), jnp.float32)
    f = jax.jit(jax.vmap(solve))
    with jhw.Recorder() as rec:
        _, hist = f(x0)
        jax.block_until_ready(hist)  # where dispatch is asynchronous, the loop runs now
        # Still inside the block (nothing drained yet): the chunk that ended the run waited
        # for every chunk before it, so all rows of all lanes are filed, in order.
        run = rec.runs[-1]
        assert run.ended is not None and run.status == "converged"
        lengths = np.asarray(hist.length).tolist()
        assert run.counts == lengths and len(set(lengths)) > 1
        for host, device in zip(rec.history(), hist.to_numpy(), strict=True):
            jax.tree_util.tree_map(np.testing.assert_array_equal, host, device)
    # Filed off the loop's thread, and the loop did not wait: it sent chunks meanwhile.
    assert "jaxhist-worker" in slow_filing["threads"]
    assert slow_filing["ahead"] >= 2, slow_filing


@pytest.mark.slow  # compiles several loops: kept out of the quick subset
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

    x0 = jnp.full((2, N), 0.99, jnp.float32)
    with rec:
        threading.Thread(target=request_stop, daemon=True).start()
        _, hist = jax.jit(jax.vmap(solve))(x0)
    lengths = np.asarray(hist.length).tolist()
    assert rec.runs[-1].status == "stopped" and lengths[0] < 119
    assert rec.runs[-1].counts == lengths


def test_two_runs_in_two_threads_do_not_wait_for_each_other(monkeypatch):
    # R5: the end of a run waits for its own deferred chunks only. Run 1's filing is held
    # up; run 2 (another thread) must end meanwhile.
    release = threading.Event()
    real_file = HUB._file

    def held(entry, chunk):
        if entry.run.id == first.id:
            release.wait(10)
        real_file(entry, chunk)

    monkeypatch.setattr(HUB, "_file", held)
    a, b = jhw.Recorder(), jhw.Recorder()
    with a:
        id1 = int(HUB.open_run(LAYOUT)[0])
    first = a.runs[-1]
    flush(id1, 0, [1.0, 2.0])  # deferred, and held
    with b:
        id2 = int(HUB.open_run(LAYOUT)[0])
    done = threading.Event()

    def second_run():
        flush(id2, 0, [5.0, 6.0], status=1)  # ends run 2 at once
        done.set()

    threading.Thread(target=second_run, daemon=True).start()
    try:
        assert done.wait(5), "run 2's end waited for run 1's filing"
        assert b.runs[-1].status == "converged" and b.runs[-1].counts == [2]
    finally:
        release.set()
    flush(id1, 2, [3.0], status=1)
    assert first.status == "converged" and first.history().tolist() == [1.0, 2.0, 3.0]


# ------------------------------------------------------------------- the state machine
def test_a_run_taken_up_while_it_is_being_abandoned_stays_reachable(monkeypatch):
    # R3: abandoning chooses runs and ends them under one lock. A chunk that arrives while a
    # run is being abandoned takes it up afterwards: the sink sees end, then resume; a stop
    # reaches the run and the run ends once more, with its real status.
    log = Log()
    with log:
        run_id = int(HUB.open_run(LAYOUT)[0])
    # The block ended while the run was open (its loop runs in another thread, say): the
    # run was abandoned as failed. Open a second one and race a chunk against abandoning it.
    assert log.calls[-1] == ("end", run_id)
    log.attach()
    run_id = int(HUB.open_run(LAYOUT)[0])
    run = next(r for r in HUB.live_runs() if r.id == run_id)
    rows = HUB._runs.get(run_id).rows  # the run's writer: the hub's, looked at here
    real_finish = rows.finish
    finishing = threading.Event()

    def slow_finish(codes):
        finishing.set()
        time.sleep(0.2)  # a chunk arrives meanwhile
        real_finish(codes)

    monkeypatch.setattr(rows, "finish", slow_finish)
    chunk = threading.Thread(target=lambda: finishing.wait(5) and flush(run_id, 0, [1.0, 2.0]))
    chunk.start()
    log.detach()  # abandons the run
    chunk.join()
    HUB.worker.drain(run_id)  # the chunk is filed on the worker (its rows can wait)
    assert run.status == "running", "the run took rows after being abandoned, yet reads ended"
    assert log.running, "a stop can no longer reach the run"
    log.stop()
    answer = flush(run_id, 2, [3.0])
    assert answer[0] == 1  # the stop reached it
    flush(run_id, 3, [], status=3)
    assert run.status == "stopped"
    HUB.drain(log)  # (its end waits there behind its rows if a call of its proved slow)
    ends = [c for c in log.calls if c == ("end", run_id)]
    assert len(ends) == 2  # abandoned, then its real end after it was taken up


def test_every_hook_comes_in_order_for_a_slow_sink():
    # A sink slower than the loop gets its updates on the worker, merged; its end still comes
    # after its last rows.
    class Slow(Log):
        def on_rows(self, run, lanes):
            time.sleep(0.06)
            super().on_rows(run, lanes)

    slow = Slow()
    with slow:
        run_id = int(HUB.open_run(LAYOUT)[0])
        for i in range(0, 12, 2):
            flush(run_id, i, [float(i), float(i + 1)])
        flush(run_id, 12, [12.0], status=1)
    kinds = [k for k, _ in slow.calls]
    assert kinds[0] == "start" and kinds[-1] == "end" and set(kinds[1:-1]) == {"rows"}
    assert slow.calls[-2] == ("rows", 13)  # the last rows, before the end
    assert len(kinds) < 2 + 7, "updates that piled up were not merged"


def test_a_failing_sink_is_reported_once_per_run(caplog):
    class Failing(jhw.Sink):
        rows_can_wait = True

        def on_rows(self, run, lanes):
            raise ValueError("broken on_rows")

    with pytest.warns(RuntimeWarning, match="broken on_rows"), Failing():
        for _ in range(2):
            run_id = int(HUB.open_run(LAYOUT)[0])
            for i in range(0, 10, 2):
                flush(run_id, i, [0.0, 1.0])
            flush(run_id, 10, [0.0], status=1)
    shown = [r for r in caplog.records if "Failing.on_rows failed" in r.getMessage()]
    assert len(shown) == 2  # one traceback per run, not one per chunk


# ------------------------------------------------------------------- what sinks need
class OnRows:
    def on_rows(self, run, lanes):
        pass


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
        rows_can_wait = True

        def on_rows(self, run, lanes):
            pass

    class Mixed(OnRows, jhw.Sink):  # on_rows from a mixin
        pass

    assigned = jhw.Recorder()
    assigned.on_rows = lambda run, lanes: None  # on_rows set on the instance

    for accelerated in (False, True):
        waits = lambda sink, on=accelerated: sink._rows_can_wait(on)  # noqa: E731
        assert waits(jhw.Recorder())
        assert waits(Quiet()) and waits(Declared())
        # a stop these ask for may depend on the rows: it must end the loop right after them
        assert not waits(Watching()) and not waits(WatchingRecorder())
        assert not waits(StopsOnRows())
        assert not waits(Mixed()) and not waits(assigned)
    # a plot's pushes pause a loop on a CPU (see there), never a chip
    assert not jhw.LivePlot()._rows_can_wait(False)
    assert jhw.LivePlot()._rows_can_wait(True)


@pytest.mark.slow  # compiles several loops: kept out of the quick subset
def test_a_failing_stop_check_loses_no_row(slow_filing):
    class Broken(jhw.Recorder):
        rows_can_wait = True  # claims so, then fails when asked

        def _should_stop(self, run):
            raise ValueError("broken sink")

    x0 = jnp.asarray(np.random.default_rng(2).uniform(-1, 1, size=(4, N)), jnp.float32)
    with pytest.warns(RuntimeWarning, match="broken sink"), Broken() as rec:
        _, hist = jax.jit(jax.vmap(solve))(x0)
    assert rec.runs[-1].counts == np.asarray(hist.length).tolist()
    for host, device in zip(rec.history(), hist.to_numpy(), strict=True):
        jax.tree_util.tree_map(np.testing.assert_array_equal, host, device)


@pytest.mark.usefixtures("sinks_told_in_the_loops_call")
@pytest.mark.parametrize("how", ["class", "mixin"])
@pytest.mark.slow  # compiles several loops: kept out of the quick subset
def test_a_sink_that_watches_rows_sees_them_before_the_loop_goes_on(slow_filing, how):
    # Attached beside a Recorder, a sink with its own on_rows makes every chunk wait for it:
    # its stop after row 10 ends each lane at the first chunk boundary after it.
    class StopAfterTen:
        def on_rows(self, run, lanes):
            if max(run.counts) > 10:
                self.stop()

    sink = type("S", (StopAfterTen, jhw.Sink) if how == "mixin" else (jhw.Sink,), {})()
    if how == "class":
        sink.on_rows = lambda run, lanes: StopAfterTen.on_rows(sink, run, lanes)
    x0 = jnp.full((3, N), 0.99, jnp.float32)  # lanes that would run 119 steps
    with jhw.Recorder() as rec, sink:
        _, hist = jax.jit(jax.vmap(solve))(x0)
    # chunks end at 4, 8, 12 rows: the one after row 10 is the last
    assert np.asarray(hist.length).tolist() == [12, 12, 12]
    assert rec.runs[-1].counts == [12, 12, 12]
    assert "jaxhist-worker" not in slow_filing["threads"]  # filed in the call, every chunk


def test_a_run_taken_up_that_then_goes_quiet_is_given_up_again(monkeypatch):
    # Item 10: a run taken up after its block ended, whose computation then raises, sends
    # nothing more: it must not read `running` forever.
    monkeypatch.setattr("jaxhist_widget._host.runtime._hub_orphans.ORPHAN_S", 0.1)
    log = Log()
    with log:
        run_id = int(HUB.open_run(LAYOUT)[0])
    flush(run_id, 0, [1.0, 2.0])  # taken up: the loop was alive after all
    HUB.worker.drain(run_id)
    assert log.running
    deadline = time.monotonic() + 5
    while log.running and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not log.running and run_id not in [r.id for r in HUB.live_runs()]
    assert [c for c in log.calls if c[0] == "end"] == [("end", run_id)] * 2


def test_a_stop_asked_of_a_run_holds_after_it_was_abandoned():
    # A KeyboardInterrupt can leave a block while its loop still runs (JAX's waits for a result
    # run signal handlers): the press that raised it asked the run to stop, and the block's end
    # abandoned the run, which made its sink forget the request. At the loop's next flush the
    # stop must still reach it, or it runs on to max_steps with nobody waiting for it (a
    # process exiting meanwhile waits for it: a two-process job hung for minutes).
    log = Log()
    with log:
        run_id = int(HUB.open_run(LAYOUT)[0])
        run = next(r for r in HUB.live_runs() if r.id == run_id)
        flush(run_id, 0, [1.0, 2.0])
        log.stop()  # what the press did; then the KeyboardInterrupt left the block
    assert run.status == "failed" and not log.stop_requested
    answer = flush(run_id, 2, [3.0])  # the loop was alive after all
    assert answer[0] == 1, "the stop asked before the run was abandoned was lost"
    flush(run_id, 3, [], status=3)
    assert run.status == "stopped" and run.history().tolist() == [1.0, 2.0, 3.0]


@pytest.mark.parametrize("error", [SystemExit, KeyboardInterrupt])
def test_a_base_exception_in_a_sink_is_raised_at_the_end_of_its_block(error):
    # Item 11: raised inside a callback it would reach XLA as a JaxRuntimeError. It stops the
    # sink's runs instead and is raised, as itself, where the block ends.
    class Quits(jhw.Recorder):
        def on_rows(self, run, lanes):
            if max(run.counts) > 10:
                raise error("from on_rows")

    f = jax.jit(lambda x: jhw.while_loop(lambda x: x < 1e9, lambda x: x + 1, x, max_steps=500))
    rec = Quits()
    with pytest.raises(error, match="from on_rows"), rec:
        _, hist = f(0.0)
    assert rec.runs[-1].status == "stopped" and rec.runs[-1].counts == [int(hist.length)]
    assert not rec.attached and HUB.interrupts.armed() == []


# --------------------------------------------------- many lanes, a hub of one's own, slow sinks
def _python_calls(fn) -> int:
    """Python-level calls (functions and builtins) made while ``fn()`` runs, on every thread."""
    import sys

    count = [0]

    def prof(frame, event, arg):
        if event in ("call", "c_call"):
            count[0] += 1

    threading.setprofile(prof)
    sys.setprofile(prof)
    try:
        fn()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    return count[0]


@pytest.mark.usefixtures("sinks_told_in_the_loops_call")
def test_a_chunk_of_4096_lanes_costs_the_host_no_python_per_lane():
    # Issue 38: the host handled a chunk lane by lane (a LaneWords per lane, per-lane loops when
    # filing): 5.5 ms a call at 4096 lanes on a GPU. Counted, not timed: the Python calls a chunk
    # makes must not grow with its lanes (its bytes are moved by numpy).
    from jaxhist_widget._host import Hub

    from ...helpers.hub import lanes_flush

    layout = LAYOUT.__class__(**{**LAYOUT.__dict__, "every": 8})

    class Watches(jhw.Recorder):  # rows filed in the loop's call, where they can be counted
        def on_rows(self, run, lanes):
            pass

    def calls(lanes: int) -> int:
        hub, sink = Hub(), Watches()
        hub.attach(sink)
        run_id = int(hub.open_run(layout)[0])
        rows = np.arange(lanes * 8, dtype=np.float32).reshape(lanes, 8)
        lanes_flush(hub, layout, run_id, 0, rows)  # warm: the run's storage is made
        n = _python_calls(lambda: lanes_flush(hub, layout, run_id, 8, rows))
        lanes_flush(hub, layout, run_id, 16, rows[:, :1], status=1)
        [run] = sink.runs
        assert run.counts == [17] * lanes and run.status == "converged"
        np.testing.assert_array_equal(run.lane_rows(lanes - 1)[0][8:16], rows[-1])
        return n

    few, many = calls(64), calls(4096)
    assert many <= few + 10, f"{few} Python calls for 64 lanes, {many} for 4096"


def test_a_hub_of_one_s_own_drives_a_sink_as_the_package_s_does():
    from jaxhist_widget._host import Hub

    hub, rec = Hub(), jhw.Recorder()
    hub.attach(rec)  # a sink meets a hub through its hooks alone
    run_id = int(hub.open_run(LAYOUT)[0])
    window = np.array([1, 2, 3, 0, 0, 0, 0, 0], np.float32)
    head = np.array([run_id, -1, LAYOUT.chunk, 0, 3, 0, 1], np.int32)
    hub.receive_chunk(LAYOUT, head.view(np.uint32), window.view(np.uint32))
    hub.drain(rec)
    assert rec.history().tolist() == [1.0, 2.0, 3.0] and rec.runs[-1].status == "converged"
    assert HUB.live_runs() == [] or all(r.id != run_id for r in HUB.live_runs())


def test_a_slow_sink_delays_only_its_own_runs():
    # Issue 33: one worker served every run's work in order, so a sink slow in on_rows held up
    # the filing of runs it has nothing to do with.
    from jaxhist_widget._host.runtime import _hub_sinks

    release, first = threading.Event(), [True]

    class Slow(jhw.Sink):
        def on_rows(self, run, lanes):
            if first[0]:  # slow once in the loop's call: its updates move to the worker
                first[0] = False
                time.sleep(2 * _hub_sinks.SLOW_S)
            else:  # and then stuck there
                release.wait(10)

    slow, rec = Slow(), jhw.Recorder()
    with slow:
        slow_id = int(HUB.open_run(LAYOUT)[0])
    flush(slow_id, 0, [1.0, 2.0])
    flush(slow_id, 2, [3.0])  # its update waits on the worker, stuck
    time.sleep(0.05)
    t = time.perf_counter()
    with rec:
        other = int(HUB.open_run(LAYOUT)[0])
        flush(other, 0, [5.0, 6.0])
        flush(other, 2, [7.0], status=1)
    waited = time.perf_counter() - t
    release.set()
    assert rec.history().tolist() == [5.0, 6.0, 7.0] and rec.runs[-1].status == "converged"
    assert waited < 2.0, f"the other run's block waited {waited:.1f} s for a slow sink"
    flush(slow_id, 3, [4.0], status=1)
    HUB.drain(slow)


def test_a_sink_slow_once_gets_its_updates_in_the_loop_s_call_again_when_quick():
    # Issue 33: the slow-sink mode, set by timing, never switched back.
    from jaxhist_widget._host.runtime import _hub_sinks

    seen_on = []
    slow_now = [True]

    class Once(jhw.Sink):
        def on_rows(self, run, lanes):
            seen_on.append(threading.current_thread().name)
            if slow_now[0]:
                slow_now[0] = False
                time.sleep(2 * _hub_sinks.SLOW_S)

    sink = Once()
    with sink:
        run_id = int(HUB.open_run(LAYOUT)[0])
        for k in range(_hub_sinks.QUICK_AGAIN + 6):
            flush(run_id, 4 * k, [float(k)] * 4)
            HUB.drain(sink)
        flush(run_id, 4 * (_hub_sinks.QUICK_AGAIN + 6), [0.0], status=1)
    main = threading.current_thread().name
    assert seen_on[0] == main  # in the loop's call first
    assert seen_on[1] != main  # slow once: on the worker
    assert seen_on[-1] == main, seen_on  # quick again for a while: back in the loop's call
