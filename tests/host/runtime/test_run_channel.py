"""One ordered channel per run (issue 49): every notification of a run (its start, rows, resume,
end, the orphan watch, an abandon) goes through the run's own worker key and re-checks the
run's state there, so a run ends once with its true status whatever the interleaving.

Each race is made to happen, not hoped for: a sink's hook holds the thread that is giving a run
up at the named line (`Hub` asks the run's sinks ``_should_stop`` after choosing the run and
before telling them it ended) until the run's next rows came, or for a second where they
cannot come first.
"""

from __future__ import annotations

import threading
import time

import jaxhist_widget as jhw
from jaxhist_widget._host import HUB, Run

from ...helpers.hub import LAYOUT, flush

#: How long a held hook waits for the rows that would cross it (they come in milliseconds
#: where nothing keeps them back).
HOLD_S = 1.0
#: How long a step of these tests may wait for the hub's threads: only a bound on a hang (the
#: orphan watch waits for 20 times a run's longest gap, which a starved machine stretches).
HANG_S = 60


class HeldWhileGivingUp(jhw.Sink):
    """Records each ``on_end`` with the status it reads; while `hold` says so for the calling
    thread, its ``_should_stop`` (asked as a run is given up) waits for rows to come."""

    rows_can_wait = True

    def __init__(self) -> None:
        super().__init__()
        self.ends: list[str] = []
        self.rows = threading.Event()
        self.giving_up = threading.Event()
        self.hold = lambda: False

    def on_rows(self, run: Run, lanes: list[int]) -> None:
        self.rows.set()

    def on_end(self, run: Run) -> None:
        self.ends.append(run.status)

    def _should_stop(self, run: Run) -> bool:
        if self.hold():
            self.hold = lambda: False
            self.rows.clear()
            self.giving_up.set()
            self.rows.wait(HOLD_S)  # the race: the run's rows come while it is given up
        return super()._should_stop(run)


def _live(run_id: int) -> bool:
    return run_id in [r.id for r in HUB.live_runs()]


def _flush_when_giving_up(sink: HeldWhileGivingUp, run_id: int, first: int) -> threading.Thread:
    """The loop's next flush, sent as soon as the run is being given up."""

    def send() -> None:
        assert sink.giving_up.wait(HANG_S)
        flush(run_id, first, [float(first)])

    thread = threading.Thread(target=send, daemon=True)
    thread.start()
    return thread


def test_a_run_given_up_at_its_block_s_end_as_its_rows_come_ends_once_with_its_true_status():
    sink = HeldWhileGivingUp()
    main = threading.current_thread()
    with sink:
        run_id = int(HUB.open_run(LAYOUT)[0])
        flush(run_id, 0, [0.0])
        sink.hold = lambda: threading.current_thread() is main  # the block's end gives it up
        loop = _flush_when_giving_up(sink, run_id, 1)
    loop.join(HANG_S)
    HUB.worker.drain(run_id)  # its rows filed (they can wait: the sink asks nothing of them)
    # Its end reached the sink while it read failed; its rows came after, and took it up.
    assert sink.ends == ["failed"]
    assert sink.running and _live(run_id)
    sink.stop()  # reaches the run taken up: its next flush is answered stop
    assert flush(run_id, 2, [2.0])[0] == 1
    flush(run_id, 3, [], status=3)
    HUB.drain(sink)  # (its end waits there behind its rows if a call of its proved slow)
    assert sink.ends == ["failed", "stopped"]
    assert not sink.running and not _live(run_id)


def test_a_run_the_orphan_watch_gives_up_as_its_rows_come_ends_once_with_its_true_status(
    monkeypatch,
):
    monkeypatch.setattr("jaxhist_widget._host.runtime._hub_orphans.ORPHAN_S", 0.05)
    sink = HeldWhileGivingUp()
    with sink:
        run_id = int(HUB.open_run(LAYOUT)[0])
    assert sink.ends == ["failed"]  # given up at the block's end
    worker = threading.current_thread
    sink.hold = lambda: worker().name.startswith("jaxhist-worker")  # the watch gives it up
    flush(run_id, 0, [0.0])  # the loop was alive after all: taken up, and watched
    loop = _flush_when_giving_up(sink, run_id, 1)
    loop.join(HANG_S)
    deadline = time.monotonic() + HANG_S
    while len(sink.ends) < 2 and time.monotonic() < deadline:  # the watch is done telling
        time.sleep(0.01)
    HUB.worker.drain(run_id)
    assert sink.ends == ["failed", "failed"]
    assert sink.running and _live(run_id)
    flush(run_id, 2, [], status=1)
    assert sink.ends == ["failed", "failed", "converged"]
    assert not sink.running and not _live(run_id)


def test_a_slow_sinks_next_run_starts_after_its_last_run_ended_for_it():
    # A sink whose on_rows proved slow gets its updates, and a run's end, on the worker; the
    # next run's start came in that run's first host call, before the last run's end had
    # reached the sink (a plot continuing its step axis placed the next run at the last one's
    # start: CI's oldest environment, starved beside the browser tests).
    events: list[tuple[str, int]] = []

    class Slow(jhw.Recorder):
        def on_start(self, run: Run) -> None:
            events.append(("start", run.id))

        def on_rows(self, run: Run, lanes: list[int]) -> None:
            time.sleep(0.08)  # past the hub's SLOW_S: its updates move to the worker

        def on_end(self, run: Run) -> None:
            time.sleep(0.2)  # still queued when the next run opens
            events.append(("end", run.id))

    with Slow():
        first = int(HUB.open_run(LAYOUT)[0])
        flush(first, 0, [0.0])
        flush(first, 1, [1.0])
        flush(first, 2, [2.0], status=1)
        second = int(HUB.open_run(LAYOUT)[0])
        flush(second, 0, [0.0], status=1)
    assert events == [("start", first), ("end", first), ("start", second), ("end", second)]
