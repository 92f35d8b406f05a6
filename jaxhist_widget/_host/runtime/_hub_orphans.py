"""The hub's runs that nobody waits for: giving a run up as ``failed``, and watching a run taken
up again while none of its sinks is attached.

A run still open when the last block of its sinks ended is most likely one whose computation
raised: no close will come, so it is given up (`Hub.abandon_runs`). Should it send rows after
all, the hub takes it up again (`Hub._file`) and watches it (`watch_later`): once it goes
quiet, it is given up once more. Everything here runs in the run's channel (its worker key,
see `_hub`), so a give-up never crosses the run's rows: it re-checks the run's state, and
every sink is told the end before the channel goes on. The state is the hub's, guarded by the
hub's lock (the lock order is in `_hub`).
"""

from __future__ import annotations

import functools
import threading

from ._hub_runs import ABANDONED, OPEN, Entry, RunTable
from ._hub_sinks import SinkCalls
from ._run import FAILED
from ._worker import Worker

__all__ = ["ORPHAN_GAPS", "ORPHAN_S", "Orphans"]

#: A run taken up again while none of its sinks is attached is given up once more if it sends
#: nothing for `ORPHAN_GAPS` times the longest wait it has had between two flushes, and at
#: least `ORPHAN_S` seconds: its computation has most likely raised since (nothing else ends a
#: run without a last flush), and nobody would close it. Should rows come later still, it is
#: taken up again.
ORPHAN_S = 2.0
ORPHAN_GAPS = 20


class Orphans:
    """Gives up the hub's runs that nobody waits for; ``lock``, ``runs``, ``worker`` and
    ``calls`` are the hub's."""

    def __init__(
        self, lock: threading.Lock, runs: RunTable, worker: Worker, calls: SinkCalls
    ) -> None:
        self._lock, self._runs, self._worker, self._calls = lock, runs, worker, calls

    def give_up(self, entry: Entry) -> bool:
        """End an open run that no attached sink waits for as ``failed`` (in its channel): it
        is chosen, finished and told to every sink before any later chunk of it comes in."""
        with self._lock:
            if entry.state != OPEN or any(s.attached for s in entry.sinks):
                return False
            self._runs.move(entry, ABANDONED)
            entry.run._finish([FAILED] * max(1, len(entry.run.statuses)))
        # Asked before the sinks' `_end` drops their requests: should it come back, it stops.
        entry.stop = entry.stop or self._calls.stop_asked(entry.sinks, entry.run)
        for s in entry.sinks:
            if self._calls.notify_end(s, entry.run):  # queued behind the sink's updates:
                self._worker.drain(s)  # told before the channel goes on (a resume, say)
        return True

    def watch_later(self, entry: Entry, rows_then: int) -> None:
        """Look again at a taken-up run in a while, in its channel (`_watch`)."""
        wait = max(ORPHAN_S, ORPHAN_GAPS * entry.pace.longest_gap)
        look = functools.partial(self._watch, entry, rows_then)
        # An unkeyed timer, so that draining the run does not wait for it; the look itself
        # is a task of the run's key.
        self._worker.later(wait, lambda: self._worker.submit(entry.run.id, look))

    def _watch(self, entry: Entry, rows_then: int) -> None:
        rows = sum(entry.run.counts)
        if rows == rows_then:  # quiet since: given up, unless it ended or a sink is back
            self.give_up(entry)
            return
        with self._lock:
            watched = entry.state == OPEN and not any(s.attached for s in entry.sinks)
        if watched:
            self.watch_later(entry, rows)
