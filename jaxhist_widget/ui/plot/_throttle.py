"""`Throttle`: when a `LivePlot` updates its widgets.

At most `MAX_UPDATES_PER_SECOND` updates whatever the step rate, and slower when an update
itself is costly (long runs, many lanes): drawing never takes more than about 1/`PUSH_BUDGET` of
the loop's time. An update's cost is the processor time of the thread making it (`work_clock`),
not the wall time it spans: an update waits for the interpreter (the loop's host calls, the
kernel's threads) and for its messages to be queued more than it works, and counted as its
cost those waits spaced the updates of a 10^6-step loop in a real kernel 90-110 ms apart (9
updates a second; now 13), while the loop ran as fast with the plot as with a `Recorder`
(docs/performance.md, live view).

Rows that come too soon after an update are not lost: a trailing flush (`Flusher`) sends them
shortly after, so a pause (a slow step) never hides the latest rows. It runs on the package's
worker, not on a thread of its own per update: in ipykernel each thread that sends a message
opens its own socket to the iopub thread.
"""

from __future__ import annotations

import itertools
import math
import threading
import time
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from typing import Any

from ..._host import HUB

__all__ = ["MAX_UPDATES_PER_SECOND", "PUSH_BUDGET", "Flusher", "Throttle", "work_clock"]

#: Cap on frontend updates per second (each update: the panel, every line of the current run,
#: and the scales, all at once).
MAX_UPDATES_PER_SECOND = 20.0
#: An update may take at most 1/PUSH_BUDGET of the time between updates.
PUSH_BUDGET = 10.0

#: An update's cost: the processor time of the thread making it; where that clock is coarse
#: (Windows counts it in 15.6 ms ticks, more than an update), wall time.
work_clock: Callable[[], float] = (
    time.thread_time if time.get_clock_info("thread_time").resolution <= 1e-4 else time.perf_counter
)


class Throttle:
    """Decides when to update, measures each update's cost, and owns the trailing flush, which
    calls ``flush`` (on the host runtime's worker, as work of ``key``: draining ``key`` waits
    for it) when rows were held back."""

    def __init__(self, flush: Callable[[], None], key: Hashable) -> None:
        self._flusher = Flusher(flush, key)
        self._last = -math.inf  # when the last update started
        self._cost = 0.0  # smoothed seconds per update, for the adaptive interval
        self._aside_s = 0.0  # of the current update: work not counted (`aside`)
        #: Rows were held back since the last update: the trailing flush has them to send.
        self.held = False

    def due(self, now: float) -> bool:
        """Rows arrived at ``now``: True to update now; else a trailing flush is scheduled (if
        none is) for when an update is due."""
        interval = max(1.0 / MAX_UPDATES_PER_SECOND, PUSH_BUDGET * self._cost)
        wait = self._last + interval - now
        if wait <= 0:
            self._flusher.cancel()
            return True
        self.held = True
        if not self._flusher.pending:
            self._flusher.schedule(wait)
        return False

    def cancel(self) -> None:
        """Drop the trailing flush (an update that supersedes it is being made)."""
        self._flusher.cancel()

    def started(self) -> tuple[float, float]:
        """An update starts: its start time and work clock (hand them to `ended`)."""
        self._aside_s = 0.0
        return time.perf_counter(), work_clock()

    def ended(self, start: tuple[float, float]) -> None:
        """The update begun at ``start`` ended: its cost, less the work set aside (`aside`),
        spaces the next updates."""
        cost = max(0.0, work_clock() - start[1] - self._aside_s)
        # The next update is due an interval after this one *started*: the interval is the
        # time between updates, of which an update takes 1/PUSH_BUDGET. Counted from its end,
        # an update of 9 ms (a kernel's messages) made them 99 ms apart, not 90.
        self._last, self.held = start[0], False
        self._cost = cost if self._cost == 0 else 0.7 * self._cost + 0.3 * cost

    @contextmanager
    def aside(self) -> Iterator[None]:
        """The work done inside is left out of the update's cost, being no cost of updating
        often. Reducing new rows is the same work per row whenever it is done: spacing updates
        out would not save it, only make each update reduce more rows and look costlier,
        spacing them further (ever fewer updates). Making a run's marks is done once:
        counted, one slow first update (on a loaded machine, a fraction of a second) spaced
        the next ones `PUSH_BUDGET` times as far, and a loop of a few seconds showed no update
        between its first and its last."""
        start = work_clock()
        try:
            yield
        finally:
            self._aside_s += work_clock() - start


class Flusher:
    """Calls ``fn`` once, ``wait`` seconds after `schedule`, unless cancelled or rescheduled.

    The call is work of ``key`` (the plot) on the worker: draining the plot waits for it.
    """

    def __init__(self, fn: Callable[[], None], key: Hashable) -> None:
        self._fn, self._key = fn, key
        self._lock = threading.Lock()  # a leaf: `fn` is called outside it
        self._due: int | None = None  # the generation of the scheduled call
        self._timer: Any = None
        self._generations = itertools.count()

    @property
    def pending(self) -> bool:
        """True while a call is scheduled and has not started."""
        return self._due is not None

    def schedule(self, wait: float) -> None:
        with self._lock:
            self._due = generation = next(self._generations)
            old = self._timer
            self._timer = HUB.worker.later(wait, lambda: self._fire(generation), key=self._key)
        if old is not None:
            old.cancel()

    def cancel(self) -> None:
        with self._lock:
            self._due, timer, self._timer = None, self._timer, None
        if timer is not None:
            timer.cancel()  # so that draining the plot does not wait for it

    def _fire(self, generation: int) -> None:
        with self._lock:
            if self._due != generation:  # cancelled, or another call replaced this one
                return
            self._due = None
        self._fn()
