"""The package's one background thread: work that must not hold up a running loop.

Three kinds of work are deferred here, all in one queue so their order is the order they were
submitted: filing a chunk whose rows can wait (the loop goes on at once), updates for a sink
whose ``on_rows`` proved slow, and timed calls (a plot's trailing flush). Each task carries a
key (a run id, a sink); `drain` waits for the tasks of one key only, so one run never waits for
another's rows.

The thread starts on first use and ends when it has had nothing to do for `IDLE_S`; after a
``fork`` the child starts a new one (threads do not survive a fork, queued work stays with the
parent).
"""

from __future__ import annotations

import collections
import heapq
import itertools
import os
import threading
import time
from collections.abc import Callable, Hashable
from typing import Any

from ._report import report

__all__ = ["Timer", "Worker"]

#: The thread ends after this long with nothing queued or scheduled (a new task starts another).
IDLE_S = 5.0
#: Tasks of one key waiting at most; past that `submit` waits for them (bounded memory when the
#: host files more slowly than the device makes rows).
MAX_PENDING = 16


class Timer:
    """A call scheduled with `Worker.later`; `cancel` before it runs drops it."""

    __slots__ = ("cancelled", "due", "fn")

    def __init__(self, due: float, fn: Callable[[], Any]) -> None:
        self.due, self.fn, self.cancelled = due, fn, False

    def cancel(self) -> None:
        self.cancelled = True


class Worker:
    """One daemon thread running submitted tasks in order, and timed calls when due.

    A task's exception is reported (`report`) and never stops the thread.
    """

    def __init__(self, name: str = "jaxhist-worker") -> None:
        self._name = name
        self._reset()

    def _reset(self) -> None:
        self._pid = os.getpid()
        # Reentrant: the interrupt bridge's signal handler schedules retries (`later`) on the
        # main thread, which may be inside `submit` or `later` already when the signal lands.
        self._cond = threading.Condition(threading.RLock())
        self._tasks: collections.deque[tuple[Hashable, Callable[..., Any], tuple[Any, ...]]]
        self._tasks = collections.deque()
        self._unfinished: collections.Counter[Hashable] = collections.Counter()
        self._timers: list[tuple[float, int, Timer]] = []
        self._seq = itertools.count()
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------------- public
    def submit(self, key: Hashable, fn: Callable[..., Any], *args: Any) -> None:
        """Run ``fn(*args)`` on the thread, after every task submitted before."""
        self._after_fork()
        if self._unfinished[key] >= MAX_PENDING:
            self.drain(key)
        with self._cond:
            self._tasks.append((key, fn, args))
            self._unfinished[key] += 1
            self._wake()

    def later(self, delay: float, fn: Callable[[], Any]) -> Timer:
        """Run ``fn()`` on the thread in ``delay`` seconds, unless the timer is cancelled."""
        self._after_fork()
        timer = Timer(time.monotonic() + delay, fn)
        with self._cond:
            heapq.heappush(self._timers, (timer.due, next(self._seq), timer))
            self._wake()
        return timer

    def pending(self, key: Hashable) -> bool:
        """Whether tasks of ``key`` are queued or running."""
        with self._cond:
            return self._unfinished[key] > 0

    def drain(self, key: Hashable) -> None:
        """Wait until every task of ``key`` submitted so far has run (at once if none waits).

        On the thread itself it returns at once: the thread waiting for itself would never end.
        """
        if threading.current_thread() is self._thread:
            return
        with self._cond:
            while self._unfinished[key] > 0:
                self._cond.wait(0.1)

    # ---------------------------------------------------------------------- internals
    def _after_fork(self) -> None:
        if self._pid != os.getpid():
            self._reset()

    def _wake(self) -> None:
        # Caller holds the condition.
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name=self._name, daemon=True)
            self._thread.start()
        self._cond.notify_all()

    def _next(self) -> tuple[Hashable, Callable[..., Any], tuple[Any, ...]] | None:
        """The next task or due timer (waiting for it); None when idle long enough to end."""
        idle_since = time.monotonic()
        with self._cond:
            while True:
                now = time.monotonic()
                while self._timers and self._timers[0][2].cancelled:
                    heapq.heappop(self._timers)
                if self._timers and self._timers[0][0] <= now:
                    timer = heapq.heappop(self._timers)[2]
                    return None, timer.fn, ()
                if self._tasks:
                    return self._tasks.popleft()
                if not self._timers and now - idle_since >= IDLE_S:
                    self._thread = None
                    return None
                wait = self._timers[0][0] - now if self._timers else IDLE_S
                self._cond.wait(max(0.0, min(wait, IDLE_S)))

    def _work(self) -> None:
        while (task := self._next()) is not None:
            key, fn, args = task
            try:
                fn(*args)
            except BaseException as e:  # one failed task never stops the next
                report(e, getattr(fn, "__qualname__", "deferred work"))
            finally:
                if key is not None:
                    with self._cond:
                        self._unfinished[key] -= 1
                        if not self._unfinished[key]:
                            del self._unfinished[key]
                        self._cond.notify_all()
