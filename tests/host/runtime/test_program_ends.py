"""A run's program as the host sees it (`_host/runtime/_programs.py`, issue 56): a run whose
program died without its last flush ends ``failed`` once the host knows it died, whichever
thread or block it came from, and a run still running on another thread's call is never
reported failed first. (The same on several devices, where dispatch is asynchronous, is in
``test_program_ends_on_devices.py``.)"""

from __future__ import annotations

import contextlib
import threading
import time

import jax
import jax.numpy as jnp

import jaxhist_widget as jhw
from jaxhist_widget._host import HUB, Run

from ...helpers.backends import callback_errors_raise
from ...helpers.hub import LAYOUT, flush
from ...helpers.loops import slow_counter

#: How long after its program died a run must read ended (the watch looks every 0.25 s).
PROMPT_S = 3.0


class EndLog(jhw.Recorder):
    """Records each ``on_end`` with the status it reads."""

    def __init__(self) -> None:
        super().__init__()
        self.ends: list[str] = []

    def on_end(self, run: Run) -> None:
        self.ends.append(run.status)
        super().on_end(run)


def _dying_loop(gate: threading.Event) -> object:
    """A jitted loop whose host step raises at step 30, once ``gate`` is set."""

    def step(x):
        if x > 30:
            gate.wait(30)
            raise ValueError("host step failed")
        time.sleep(0.002)
        return x

    def body(c):
        i, x = c
        x = jax.pure_callback(step, jax.ShapeDtypeStruct((), jnp.float32), x + 1.0)
        return i + 1, x

    return jax.jit(
        lambda x: jhw.while_loop(lambda c: c[0] < 100, body, (0, x), max_steps=100, stream_every=1)
    )


def _ended_soon(run: Run) -> bool:
    deadline = time.monotonic() + PROMPT_S
    while run.status == "running" and time.monotonic() < deadline:
        time.sleep(0.02)
    return run.status != "running"


@callback_errors_raise
def test_a_run_whose_program_dies_on_another_thread_ends_failed_at_once_once():
    # Issue 56 (1): a loop started on a worker thread inside `with rec:` outlived the block
    # (given up as failed while it ran, then taken up again when its rows came); its step then
    # raised: the run read `running`, in the host's run table, for as long as a sink of it was
    # attached (here: the same sink, in a block of its own again).
    gate, raised = threading.Event(), []
    solve = _dying_loop(gate)
    rec = EndLog()

    def work() -> None:
        try:
            solve(jnp.float32(0))
        except Exception as e:  # the computation's own error, in its own thread
            raised.append(e)

    thread = threading.Thread(target=work)
    with rec:
        thread.start()
        while not rec.runs or sum(rec.runs[-1].counts) < 3:
            time.sleep(0.005)
    run = rec.runs[-1]
    time.sleep(0.6)  # a few of the watch's looks while it runs
    assert rec.ends == [] and run.status == "running"  # its thread's call still runs it
    with rec:
        gate.set()  # the step raises: the program dies, its thread gets the error
        thread.join(60)
        assert raised, "the computation did not raise"
        assert _ended_soon(run), "a run whose program died read running"
        assert run.status == "failed" and rec.ends == ["failed"]
        assert run.id not in [r.id for r in HUB.live_runs()]
        assert 30 <= run.counts[0] <= 32  # the rows it sent are kept


class SeesTheFirstRun(EndLog):
    """Notes what the block's first run reads while its second has run 60 steps."""

    first_then: str | None = None

    def on_rows(self, run: Run, lanes: list[int]) -> None:
        if run is not self.runs[0] and run.counts[0] >= 60 and self.first_then is None:
            self.first_then = self.runs[0].status


@callback_errors_raise
def test_a_run_whose_program_died_in_an_open_block_ends_before_the_block_does():
    # Caught inside the block that called it, the run ended only with the block; here the
    # same place then calls a loop that runs on (as a loop over inputs does), while the run
    # of the call that died must read failed.
    gate, rec = threading.Event(), SeesTheFirstRun()
    gate.set()
    slow = slow_counter(step_seconds=0.01, max_steps=150, steps=150)
    with rec:
        for solve in (_dying_loop(gate), slow):
            with contextlib.suppress(Exception):  # the computation's own error
                solve(jnp.float32(0))
        assert rec.first_then == "failed", "the first run read running while the second ran"
    assert [r.status for r in rec.runs] == ["failed", "converged"]
    assert rec.ends == ["failed", "converged"]


def test_a_run_taken_for_dead_that_sends_rows_after_all_is_not_given_up_again(monkeypatch):
    # A program on one CPU device whose first host call came on one of XLA's threads looks
    # asynchronous, but marks do not wait for it: taken for dead, it sends rows after all. It
    # is taken up, and from then on nothing is known of its program (it was given up and taken
    # up again at every look).
    monkeypatch.setattr("jaxhist_widget._host.runtime._hub_orphans.LOOK_S", 0.02)
    sink = EndLog()
    with sink:
        run_id = int(HUB.open_run(LAYOUT)[0])
        program = HUB._runs.get(run_id).program  # (the hub's table, looked at here)
        program.queued = True
        HUB.programs._pass(program.seq)  # as if marks queued after it had run
        deadline = time.monotonic() + PROMPT_S
        while not sink.ends and time.monotonic() < deadline:
            time.sleep(0.01)
        assert sink.ends == ["failed"]  # taken for dead, its block still open
        flush(run_id, 0, [0.0])  # alive after all: taken up
        time.sleep(0.3)  # many looks
        assert sink.ends == ["failed"] and sink.runs[-1].status == "running"
        flush(run_id, 1, [1.0], status=1)
    assert sink.ends == ["failed", "converged"]


def test_marks_are_never_queued_in_a_runs_channel(monkeypatch):
    # Queueing a mark (a tiny program behind the ones running) can wait for the programs
    # running; a host call of the run's program waits for the run's channel once the worker's
    # queue for it is full. The watch queued marks in the run's channel: on 4 loaded CPU devices
    # a sharded loop's collective was left waiting until XLA aborted the process
    # (test_program_ends_on_devices.py's results_dropped, 7 runs of 12 under load).
    monkeypatch.setattr("jaxhist_widget._host.runtime._hub_orphans.LOOK_S", 0.02)
    looked: list[bool] = []  # per look: whether it ran in the run's channel
    run_id = -1
    monkeypatch.setattr(HUB.programs, "look", lambda: looked.append(HUB.worker.holds(run_id)))
    sink = EndLog()
    with sink:
        run_id = int(HUB.open_run(LAYOUT)[0])
        HUB._runs.get(run_id).program.queued = True  # (the hub's table) its end unknown yet
        deadline = time.monotonic() + PROMPT_S
        while len(looked) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        flush(run_id, 0, [0.0], status=1)
    assert len(looked) >= 3 and not any(looked), looked
    assert sink.ends == ["converged"]
