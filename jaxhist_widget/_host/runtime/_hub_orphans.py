"""The hub's runs whose program may have ended without its last flush: a run is given up
(ended as ``failed``, its rows kept) once its program is known to have ended, or, where that
cannot be known, once nobody waits for it.

A run ends with its loop's last flush. One whose program failed first (a host callback of the
user's raised) sends nothing more. So while a run of the device sends nothing, it is looked at
every `LOOK_S` (`watch`): once `Programs` knows its program has ended, it is given up, whether
or not a block still waits for it. A run whose program cannot be known (`Programs.ended` is
None) is given up once it has been quiet for `ORPHAN_GAPS` times its longest wait between two
flushes (at least `ORPHAN_S`) and none of its sinks is attached, and when the last block of its
sinks ends (`settle`). Should a run given up send rows after all, the hub takes it up again
(`Hub._file`) and watches it again.

Everything here runs in the run's channel (its worker key, see `_hub`), so a give-up never
crosses the run's rows: it re-checks the run's state, and every sink is told the end before the
channel goes on. The state is the hub's, guarded by the hub's lock (the lock order is in
`_hub`).
"""

from __future__ import annotations

import functools
import threading
import time

from ._hub_runs import ABANDONED, OPEN, Entry, RunTable
from ._hub_sinks import SinkCalls
from ._programs import Programs
from ._run import FAILED
from ._worker import Worker

__all__ = ["LOOK_S", "ORPHAN_GAPS", "ORPHAN_S", "Orphans"]

#: How often a run that sends nothing is looked at.
LOOK_S = 0.25
#: A run whose program cannot be known is given up, while none of its sinks is attached, once
#: it has sent nothing for `ORPHAN_GAPS` times the longest wait it has had between two flushes,
#: and at least `ORPHAN_S` seconds: its computation has most likely raised since (nothing else
#: ends a run without a last flush). Should rows come later still, it is taken up again.
ORPHAN_S = 2.0
ORPHAN_GAPS = 20


class Orphans:
    """Gives up the hub's runs whose program ended without a last flush; ``lock``, ``runs``,
    ``worker``, ``calls`` and ``programs`` are the hub's."""

    def __init__(
        self,
        lock: threading.Lock,
        runs: RunTable,
        worker: Worker,
        calls: SinkCalls,
        programs: Programs,
    ) -> None:
        self._lock, self._runs, self._worker = lock, runs, worker
        self._calls, self._programs = calls, programs

    def give_up(self, entry: Entry, ended: bool = False) -> bool:
        """End an open run as ``failed`` (in its channel): its program has ``ended``, or no
        attached sink waits for it. It is chosen, finished and told to every sink before any
        later chunk of it comes in."""
        with self._lock:
            if entry.state != OPEN or (not ended and any(s.attached for s in entry.sinks)):
                return False
            self._runs.move(entry, ABANDONED)
            entry.rows.finish([FAILED] * max(1, len(entry.run.statuses)))
        # Asked before the sinks' `_end` drops their requests: should it come back, it stops.
        entry.stop = entry.stop or self._calls.stop_asked(entry.sinks, entry.run)
        for s in entry.sinks:
            if self._calls.end(s, entry.run):  # queued behind the sink's updates:
                self._worker.drain(s)  # told before the channel goes on (a resume, say)
        return True

    def settle(self, entry: Entry) -> None:
        """The last block of one of the run's sinks ended (in the run's channel, its rows so
        far filed): give the run up unless its program is known to run on."""
        ended = self._programs.ended(entry.program)
        if ended is not False:  # a run of another thread's call: it streams on to its end
            self.give_up(entry, ended=bool(ended))

    def watch(self, entry: Entry) -> None:
        """Look at a device run every `LOOK_S` while it is open (`_look`, in its channel)."""
        self._look_later(entry, entry.chunks, time.monotonic())

    def _look_later(self, entry: Entry, chunks: int, quiet_since: float) -> None:
        look = functools.partial(self._look, entry, chunks, quiet_since)
        # A task of the run's key when due; draining the run does not wait for it before.
        self._worker.later(LOOK_S, look, key=entry.run.id, drained=False)

    def _look(self, entry: Entry, chunks: int, quiet_since: float) -> None:
        with self._lock:
            if entry.state != OPEN:  # ended, or given up (a resume watches it again)
                return
        now = time.monotonic()
        if entry.chunks != chunks:  # it sends: alive
            self._look_later(entry, entry.chunks, now)
            return
        ended = self._programs.ended(entry.program)
        if ended:
            self.give_up(entry, ended=True)
            return
        if ended is None:
            if entry.program is not None and entry.program.queued:
                # Marks, to tell at a later look: queued off the run's channel. Dispatching one
                # can wait for the programs running (on several CPU devices, under load), and
                # a host call of this run's program waits for its channel once the worker's
                # queue for it is full: in the channel, that was a deadlock (the devices left
                # in a collective, which XLA ends by aborting the process).
                self._worker.later(0.0, self._programs.look)
            quiet = max(ORPHAN_S, ORPHAN_GAPS * entry.pace.longest_gap)
            if now - quiet_since >= quiet and self.give_up(entry):
                return
        self._look_later(entry, chunks, quiet_since)
