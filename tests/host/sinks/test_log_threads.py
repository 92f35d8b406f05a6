"""`jhw.log` across threads (issue 49): its run is an entry of the hub's run table, and no lock
is held while sinks' hooks run.

It kept a second registry of its own (the open run, the stopped block) under a process-wide
lock, held while it told sinks that a run started or ended and while it waited for the worker:
a hook that waited for another thread's `jhw.log` call waited for ever (here: for `HOLD_S`).
"""

from __future__ import annotations

import threading

import jaxhist_widget as jhw
from jaxhist_widget._host import HUB, Run

#: How long a held hook waits for the other thread's call (it returns in milliseconds where
#: nothing keeps it back).
HOLD_S = 1.0


class HeldAtEnd(jhw.Recorder):
    """A recorder whose first ``on_end`` holds its thread until `release` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.ending = threading.Event()
        self.release = threading.Event()
        self.held = False
        self.released = False  # by the other thread's call, while the hook held this one

    def on_end(self, run: Run) -> None:
        super().on_end(run)
        if not self.held:
            self.held = True
            self.ending.set()
            self.released = self.release.wait(HOLD_S)


def test_a_hook_told_of_a_log_run_s_end_holds_no_other_thread_s_log_call():
    sink = HeldAtEnd()
    logged = threading.Event()

    def other_loop() -> None:
        assert sink.ending.wait(5)
        jhw.log(x=2.0)  # the sink is still attached: a run of its own
        logged.set()
        sink.release.set()

    other = threading.Thread(target=other_loop, daemon=True)
    other.start()
    with sink:
        jhw.log(x=1.0)
        # Leaving the block ends the run: its `on_end` runs in this thread, held until the other
        # thread's call returns.
    other.join(5)
    assert logged.is_set()
    assert sink.released, "the other thread's call waited for this thread's hook"
    first, second = sink.runs
    assert first.status == second.status == "converged"
    assert first.history()["x"].tolist() == [1.0] and second.history()["x"].tolist() == [2.0]
    assert HUB.live_runs() == []
