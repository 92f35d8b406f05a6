"""The package's one background worker: work that must not hold up a running loop, and the
ordered channel of each run.

Three kinds of work are deferred here: filing a chunk whose rows can wait (the loop goes on at
once), updates for a sink whose ``on_rows`` proved slow (and a store's or a sink's own writing),
and timed calls (a plot's trailing flush, the interrupt bridge's pump). Each task carries a
*key* (a run id, a sink): tasks of one key run one at a time, in the order they were submitted,
while tasks of different keys may run at the same time on another of the worker's few threads.
So one run never waits for another's rows, and a slow sink (a store whose file is locked)
delays only its own work. `drain` waits for the tasks of one key only; a timer given a key is
work of that key from the moment it is scheduled, so `drain` waits for it too.

A thread that is not a worker's can take a key's turn itself (`holding`): it waits for the
key's earlier tasks, then runs its own code as the key's next task, while tasks submitted
meanwhile wait behind it. That makes a key a channel: the hub delivers every notification of a
run (its start, rows, resume, end, its abandonment) in the run's key, from the loop's host call
or from the worker alike, so they never cross.

Threads start on demand (at most `MAX_THREADS`) and end when they have had nothing to do for
`IDLE_S`. While a thread is on a task, one more waits beside it (a spare, started with the
work that found no idle thread) and takes the work that is ready once every busy thread has
been on its task for `STUCK_S`, and due timers at once: so a task that blocks (a locked file)
never holds up another key's work, timers or drains. After a ``fork`` the child starts afresh
(threads do not survive a fork, queued work stays with the parent).
"""

from __future__ import annotations

import collections
import contextlib
import heapq
import itertools
import os
import threading
import time
from collections.abc import Callable, Hashable, Iterator
from typing import Any

from ._report import report

__all__ = ["MAX_PENDING", "MAX_THREADS", "Timer", "Worker"]

#: A thread ends after this long with nothing queued or scheduled (new work starts another).
IDLE_S = 5.0
#: Tasks of one key waiting at most; past that `submit` waits for them (bounded memory when the
#: host files more slowly than the device makes rows).
MAX_PENDING = 16
#: Threads at most. One serves while the work is short (filing a chunk, an update): every
#: thread more that runs costs the interpreter's lock hand-overs. A spare waits beside it and
#: takes ready work only once every busy thread has been on its task for `STUCK_S`, so that
#: one blocked key (a slow sink) does not stall the others.
MAX_THREADS = 4
STUCK_S = 0.02

_Task = tuple[Callable[..., Any], tuple[Any, ...]]


def _hand_over(turn: threading.Event) -> None:
    """The task a `Worker.holding` thread queues: its turn has come (it runs its own code)."""
    turn.set()


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
        self._running: set[Hashable] = set()  # by a worker thread or a `holding` one
        # Per key: tasks queued or running, plus timers scheduled and not yet run; and the
        # timers alone.
        self._unfinished: collections.Counter[Hashable] = collections.Counter()
        self._scheduled: collections.Counter[Hashable] = collections.Counter()
        self._timers: list[tuple[float, int, Timer]] = []
        self._seq = itertools.count()
        self._threads: set[threading.Thread] = set()
        self._idle = 0  # threads waiting for work
        self._busy: dict[threading.Thread, float] = {}  # thread -> when its task started
        self._local = threading.local()  # the keys this thread runs a task of, innermost last

    # ------------------------------------------------------------------------- public
    def on_worker_thread(self) -> bool:
        """Whether the calling thread is one of this worker's (a sink's hook runs there)."""
        with self._cond:
            return threading.current_thread() in self._threads

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
        if self.holds(key):
            return
        with self._cond:
            while self._unfinished[key] > 0:
                self._finished.wait(0.1)

    def holds(self, key: Hashable) -> bool:
        """Whether this thread is running a task of ``key`` (a worker's, or `holding` it)."""
        return key in getattr(self._local, "keys", ())

    @contextlib.contextmanager
    def holding(self, key: Hashable) -> Iterator[None]:
        """Run the block in this thread as the next task of ``key``: after the key's tasks
        submitted before (waited for), before those submitted meanwhile (they wait behind it).
        Inside a task of ``key`` already, the block simply runs."""
        if self.holds(key):
            yield
            return
        self.hold(key)
        try:
            yield
        finally:
            self.release(key)

    def hold(self, key: Hashable) -> None:
        """Take ``key``'s turn in this thread (see `holding`; `release` gives it back). A key
        nothing was ever submitted to is taken at once, without waiting: so it may be taken
        under a lock that the key's tasks never take."""
        self._after_fork()
        turn = threading.Event()
        with self._cond:
            if key in self._running or self._queues.get(key):
                self._enqueue(key, (_hand_over, (turn,)))  # a worker hands the turn over
            else:
                self._running.add(key)
                self._unfinished[key] += 1
                turn.set()
        turn.wait()
        self._enter(key)

    def release(self, key: Hashable) -> None:
        """Give back the turn of ``key`` that `hold` took."""
        self._leave(key)
        with self._cond:
            self._next_of(key)

    # ---------------------------------------------------------------------- internals
    def _after_fork(self) -> None:
        if self._pid != os.getpid():
            self._reset()

    def _enter(self, key: Hashable) -> None:
        keys = getattr(self._local, "keys", None)
        if keys is None:
            keys = self._local.keys = []
        keys.append(key)

    def _leave(self, key: Hashable) -> None:
        self._local.keys.remove(key)

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

    def _next_of(self, key: Hashable) -> None:
        # Caller holds the condition: a task of ``key`` has ended. A thread waiting in
        # `hold` for the turn after it gets it now; else the key's next task waits its turn.
        queue = self._queues.get(key)
        if queue and queue[0][0] is _hand_over:
            queue.popleft()[1][0].set()  # still running: by the holding thread from now on
        else:
            self._running.discard(key)
            if queue:
                self._ready.append(key)  # its next task, after the other keys' turn
                self._wake()
        if queue is not None and not queue:
            del self._queues[key]
        self._done(key)

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
        # Caller holds the condition. An idle thread looks (it takes the work, or waits until
        # the busy ones are stuck); where none is idle, a new one starts, as the spare.
        if self._idle:
            self._cond.notify()
        elif (self._ready or self._timers) and len(self._threads) < MAX_THREADS:
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
        """The next key to serve and its task (waiting for one); None when idle long enough.
        Ready work waits while another thread's task is younger than `STUCK_S` (that thread
        takes it next), and is taken once every busy thread is stuck."""
        idle_since = time.monotonic()
        me = threading.current_thread()
        with self._cond:
            while True:
                now = time.monotonic()
                self._due_timers(now)
                fresh = [t + STUCK_S for t in self._busy.values() if now - t < STUCK_S]
                if self._ready and not fresh:
                    key = self._ready.popleft()
                    self._running.add(key)
                    self._busy[me] = now
                    return key, self._queues[key].popleft()
                if not self._timers and not self._ready and now - idle_since >= IDLE_S:
                    self._threads.discard(me)
                    return None
                wakes = [self._timers[0][0]] if self._timers else []
                wakes += [min(fresh)] if self._ready else []
                wait = min(wakes) - now if wakes else IDLE_S
                self._idle += 1
                try:
                    self._cond.wait(max(0.0, min(wait, IDLE_S)))
                finally:
                    self._idle -= 1

    def _work(self) -> None:
        me = threading.current_thread()
        while (item := self._next()) is not None:
            key, (fn, args) = item
            self._enter(key)
            try:
                fn(*args)
            except BaseException as e:  # one failed task never stops the next
                report(e, getattr(fn, "__qualname__", "deferred work"))
            finally:
                self._leave(key)
                with self._cond:
                    del self._busy[me]
                    self._next_of(key)
