"""`Flusher`: a plot's trailing flush, on the host runtime's one worker thread.

A throttled plot skips updates that come too soon after the last one; the trailing flush sends
the skipped rows shortly after, so a pause (a slow step) never hides the latest rows. It runs on
the package's worker, not on a thread of its own per update: in ipykernel each thread that sends
a message opens its own socket to the iopub thread.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Hashable
from typing import Any

from ..._host import HUB

__all__ = ["Flusher"]


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
