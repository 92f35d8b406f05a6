"""`Ahead`: a plot's work between its updates, so that the loop never waits for the plot.

Rows reach a `LivePlot` in the loop's own host call. An update made there pauses the loop for as
long as it takes (on purpose: it does not compete with the loop for the cores, and its cost
spaces the next updates, `._throttle`). But most of an update on a sweep is reducing its new
rows (a band over every lane is a sort of each step's values), the same work per row whenever it
is done. So between updates the rows that came are reduced on the host runtime's worker while
the loop runs on (`queue`), and the update, when due, has little left. While the worker reduces
or updates, rows that come do not wait for it: they are noted (`note_if_busy`) and taken up as
it ends (`working`).

Its flags are guarded by a leaf lock of its own; the plot's lock is taken around `working` and
the reduction (never while that leaf lock is held).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Hashable, Iterator

from ..._host import HUB

__all__ = ["Ahead"]


class Ahead:
    """Runs ``reduce`` on the worker, one at a time, holding ``lock`` (the plot's), then
    ``rows`` if rows came meanwhile.

    Its tasks have a worker key of their own, not the plot's ``key``: the hub hands a run's
    end to a sink on the worker while the sink has work queued there, so a reduction queued
    under the plot's key would put off drawing the end until after the loop's last call. A
    reduction left queued when a run ended finds nothing to do."""

    def __init__(
        self,
        reduce: Callable[[], None],
        lock: threading.RLock,
        rows: Callable[[], None],
        key: Hashable,
    ) -> None:
        self._reduce, self._plot_lock, self._rows = reduce, lock, rows
        self._key = (key, "ahead")
        self._lock = threading.Lock()  # a leaf
        self._depth = 0  # nested updates or reductions being made (busy while > 0)
        self._came = False  # rows came meanwhile
        self._queued = False  # a reduction is queued on the worker

    def note_if_busy(self) -> bool:
        """Rows came: True (and noted) if the plot is busy, so that the caller leaves them."""
        with self._lock:
            if self._depth:
                self._came = True
            return bool(self._depth)

    def queue(self) -> None:
        """Reduce the rows that came, on the worker (once, however often asked before)."""
        with self._lock:
            queued, self._queued = self._queued, True
        if not queued:
            HUB.worker.submit(self._key, self._run)

    def _run(self) -> None:
        with self._lock:
            self._queued = False
        with self._plot_lock, self.working() as came:
            self._reduce()
        if came():
            self._rows()

    @contextlib.contextmanager
    def working(self) -> Iterator[Callable[[], bool]]:
        """Mark the plot busy for the block (hold the plot's lock around it; blocks may nest,
        on the thread that holds it). Yields a function that, once the outermost block has
        ended, tells whether rows came meanwhile (an inner block's tells False)."""
        with self._lock:
            self._depth += 1
        came = [False]
        try:
            yield lambda: came[0]
        finally:
            with self._lock:
                self._depth -= 1
                if not self._depth:
                    came[0], self._came = self._came, False
