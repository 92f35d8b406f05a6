"""The package's one background worker: work that must not hold up a running loop.

Three kinds of work are deferred here: filing a chunk whose rows can wait (the loop goes on at
once), updates for a sink whose ``on_rows`` proved slow (and a store's or a sink's own writing),
and timed calls (a plot's trailing flush, the interrupt bridge's pump). Each task carries a
*key* (a run id, a sink): tasks of one key run one at a time, in the order they were submitted,
while tasks of different keys may run at the same time on another of the worker's few threads.
So one run never waits for another's rows, and a slow sink (a store whose file is locked)
delays only its own work. `drain` waits for the tasks of one key only; a timer given a key is
work of that key from the moment it is scheduled, so `drain` waits for it too.

Threads start on demand (at most `MAX_THREADS`) and end when they have had nothing to do for
`IDLE_S`; after a ``fork`` the child starts afresh (threads do not survive a fork, queued work
stays with the parent).
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

__all__ = ["MAX_THREADS", "Timer", "Worker"]

#: A thread ends after this long with nothing queued or scheduled (new work starts another).
IDLE_S = 5.0
#: Tasks of one key waiting at most; past that `submit` waits for them (bounded memory when the
#: host files more slowly than the device makes rows).
MAX_PENDING = 16
#: Threads at most. One serves while the work is short (filing a chunk, an update): every
#: thread more costs the interpreter's lock hand-overs. Another starts only when work waits
#: and every thread has been on its task for `STUCK_S`, so that one blocked key (a slow sink)
#: does not stall the others.
MAX_THREADS = 4
STUCK_S = 0.02

_Task = tuple[Callable[..., Any], tuple[Any, ...]]


class Timer:
    """A call scheduled with `Worker.later`; `cancel` before it runs drops it."""

    __slots__ = ("_worker", "cancelled", "due", "fired", "fn", "key")

    def __init__(self, worker: Worker, due: float, fn: Callable[[], Any], key: Hashable) -> None:
        self._worker, self.due, self.fn, self.key = worker, due, fn, key
        self.cancelled = self.fired = False

    def cancel(self) -> None:
        """Drop the call if it has not started (a key's `drain` then stops waiting for it)."""
        self._worker._cancel(self)


class Worker:
    """A few daemon threads running keyed tasks (in order per key) and timed calls when due.

    A task's exception is reported (`report`) and never stops a thread.
    """

    def __init__(self, name: str = "jaxhist-worker") -> None:
        self._name = name
        self._reset()

    def _reset(self) -> None:
        self._pid = os.getpid()
        # Reentrant: the interrupt bridge's signal handler schedules retries (`later`) on the
        # main thread, which may be inside `submit` or `later` already when the signal lands.
        lock = threading.RLock()
        self._cond = threading.Condition(lock)  # work arrived: one idle thread wakes
        self._finished = threading.Condition(lock)  # a key's work finished: drains re-check
        self._queues: dict[Hashable, collections.deque[_Task]] = {}
        self._ready: collections.deque[Hashable] = collections.deque()  # queued, not running
        self._running: set[Hashable] = set()
        # Per key: tasks queued or running, plus timers scheduled and not yet run; and the
        # timers alone.
        self._unfinished: collections.Counter[Hashable] = collections.Counter()
        self._scheduled: collections.Counter[Hashable] = collections.Counter()
        self._timers: list[tuple[float, int, Timer]] = []
        self._seq = itertools.count()
        self._threads: set[threading.Thread] = set()
        self._idle = 0  # threads waiting for work
        self._busy: dict[threading.Thread, float] = {}  # thread -> when its task started
        self._local = threading.local()  # the key a worker thread is running

    # ------------------------------------------------------------------------- public
    def submit(self, key: Hashable, fn: Callable[..., Any], *args: Any) -> None:
        """Run ``fn(*args)`` on a worker thread, after every task of ``key`` submitted before."""
        self._after_fork()
        if self._unfinished[key] >= MAX_PENDING:
            self.drain(key)
        with self._cond:
            self._enqueue(key, (fn, args))

    def later(self, delay: float, fn: Callable[[], Any], key: Hashable | None = None) -> Timer:
        """Run ``fn()`` in ``delay`` seconds, unless the timer is cancelled. With a ``key`` it
        runs as a task of that key (after the key's earlier tasks) and `drain` of the key waits
        for it; without, it runs on its own."""
        self._after_fork()
        key = Timer if key is None else key  # the class: a key no caller uses (never drained)
        timer = Timer(self, time.monotonic() + delay, fn, key)
        with self._cond:
            heapq.heappush(self._timers, (timer.due, next(self._seq), timer))
            if key is not Timer:
                self._unfinished[key] += 1
                self._scheduled[key] += 1
            self._wake()
        return timer

    def pending(self, key: Hashable) -> bool:
        """Whether tasks of ``key`` are queued or running (timers not yet due aside: a call
        that must follow a key's queued work need not wait for its timers)."""
        with self._cond:
            return self._unfinished[key] - self._scheduled[key] > 0

    def drain(self, key: Hashable) -> None:
        """Wait until every task of ``key`` submitted (and timer of it scheduled) so far has run.

        From a task of ``key`` itself it returns at once: the task waiting for itself would
        never end.
        """
        if getattr(self._local, "key", _NO_KEY) == key:
            return
        with self._cond:
            while self._unfinished[key] > 0:
                self._finished.wait(0.1)

    # ---------------------------------------------------------------------- internals
    def _after_fork(self) -> None:
        if self._pid != os.getpid():
            self._reset()

    def _enqueue(self, key: Hashable, task: _Task) -> None:
        # Caller holds the condition.
        queue = self._queues.get(key)
        if queue is None:
            queue = self._queues[key] = collections.deque()
        if not queue and key not in self._running:
            self._ready.append(key)
        queue.append(task)
        if key is not Timer:
            self._unfinished[key] += 1
        self._wake()

    def _cancel(self, timer: Timer) -> None:
        with self._cond:
            if timer.cancelled or timer.fired:
                return
            timer.cancelled = True
            self._unschedule(timer.key)
            self._done(timer.key)

    def _unschedule(self, key: Hashable) -> None:
        # Caller holds the condition.
        self._scheduled[key] -= 1
        if not self._scheduled[key]:
            del self._scheduled[key]

    def _done(self, key: Hashable) -> None:
        # Caller holds the condition.
        if key is Timer:
            return
        self._unfinished[key] -= 1
        if not self._unfinished[key]:
            del self._unfinished[key]
            self._finished.notify_all()

    def _wake(self) -> None:
        # Caller holds the condition. An idle thread takes the work (or re-reads the timers);
        # a new thread when there is none, or when work waits and every thread is stuck.
        if self._idle:
            self._cond.notify()
            return
        stuck = all(time.monotonic() - t >= STUCK_S for t in self._busy.values())
        if (
            (self._ready or self._timers)
            and len(self._threads) < MAX_THREADS
            and (not self._threads or stuck)
        ):
            thread = threading.Thread(target=self._work, name=self._name, daemon=True)
            self._threads.add(thread)
            thread.start()

    def _due_timers(self, now: float) -> None:
        # Caller holds the condition: due timers become tasks of their keys.
        while self._timers and (self._timers[0][2].cancelled or self._timers[0][0] <= now):
            timer = heapq.heappop(self._timers)[2]
            if timer.cancelled:
                continue
            timer.fired = True
            key = timer.key if timer.key is not Timer else timer  # unkeyed: a key of its own
            self._enqueue(key, (timer.fn, ()))
            if timer.key is not Timer:
                self._unschedule(timer.key)
                self._done(timer.key)  # counted once: as a task from now on

    def _next(self) -> tuple[Hashable, _Task] | None:
        """The next key to serve and its task (waiting for one); None when idle long enough."""
        idle_since = time.monotonic()
        with self._cond:
            while True:
                now = time.monotonic()
                self._due_timers(now)
                if self._ready:
                    key = self._ready.popleft()
                    self._running.add(key)
                    return key, self._queues[key].popleft()
                if not self._timers and now - idle_since >= IDLE_S:
                    self._threads.discard(threading.current_thread())
                    return None
                wait = self._timers[0][0] - now if self._timers else IDLE_S
                self._idle += 1
                try:
                    self._cond.wait(max(0.0, min(wait, IDLE_S)))
                finally:
                    self._idle -= 1

    def _work(self) -> None:
        while (item := self._next()) is not None:
            key, (fn, args) = item
            self._local.key = key
            me = threading.current_thread()
            with self._cond:
                self._busy[me] = time.monotonic()
            try:
                fn(*args)
            except BaseException as e:  # one failed task never stops the next
                report(e, getattr(fn, "__qualname__", "deferred work"))
            finally:
                self._local.key = _NO_KEY
                with self._cond:
                    del self._busy[me]
                    self._running.discard(key)
                    if self._queues[key]:
                        self._ready.append(key)  # its next task, after the other keys' turn
                    else:
                        del self._queues[key]
                    self._done(key)


_NO_KEY = object()
