"""The package's one background worker: work that must not hold up a running loop, and the
ordered channel of each run.

Three kinds of work are deferred here: filing a chunk whose rows can wait (the loop goes on at
once), updates for a sink whose ``on_rows`` proved slow (and a store's or a sink's own writing),
and timed calls (a plot's trailing flush, the interrupt bridge's pump, the hub's look at a quiet
run). Each task carries a *key* (a run id, a sink): tasks of one key run one at a time, in the
order they were submitted, while tasks of different keys run on different threads. So one run
never waits for another's rows, and a slow sink (a store whose file is locked) delays only its
own work. `drain` waits for the tasks of one key only; a timer given a key is work of that key
from the moment it is scheduled, so `drain` waits for it too.

A thread that is not a worker's can take a key's turn itself (`holding`): it waits for the
key's earlier tasks, then runs its own code as the key's next task, while tasks submitted
meanwhile wait behind it. That makes a key a channel: the hub delivers every notification of a
run (its start, rows, resume, end, its abandonment) in the run's key, from the loop's host call
or from the worker alike, so they never cross.

How: a key with work is *served* by exactly one thread at a time (or held by a `holding` one).
Work for a key nobody serves hands the key to a thread: one left idle by an earlier key, else a
new one while fewer than `MOST_THREADS` run tasks, else it waits its turn (`_ready`) and the next
thread done with its key takes it. That thread runs the key's tasks until none is left (or passes
the key's turn to a thread waiting in `hold`), then waits `IDLE_S` to be handed another key
before it ends. A task that blocks holds up its own key only: while keys wait their turn and
none got a thread for `THREAD_WAIT_S` (every thread blocked: a store's locked file, a task
waiting for another key's work), the timers' thread starts one more for the longest waiting.
So many runs busy at once (1,500 runs filed while their loops are in flight) share a few
threads: a thread each made the interpreter switch among a thousand, and took a run ~70 ms.
Timed calls wait on one thread of their own (``jaxhist-timers``), which hands each to its key
as a task when it is due. After a ``fork`` the child starts afresh (threads do not survive a
fork, queued work stays with the parent).
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

from .._floats import use_ieee
from ._report import report

__all__ = ["IDLE_S", "MAX_PENDING", "MOST_THREADS", "THREAD_WAIT_S", "Timer", "Worker"]

#: A thread ends after this long with nothing handed to it (new work starts another).
IDLE_S = 5.0
#: Tasks of one key waiting at most; past that `submit` waits for them (bounded memory when the
#: host files more slowly than the device makes rows).
MAX_PENDING = 16
#: Threads that run tasks, before a key with work waits for one to be done with its key.
MOST_THREADS = 8
#: While keys wait for a thread and none got one for this long, a thread more starts (for the
#: longest waiting): tasks that block never keep the other keys waiting for good.
THREAD_WAIT_S = 0.02

_Task = tuple[Callable[..., Any], tuple[Any, ...]]
#: What an idle thread holds until it is handed a key (None is no key: a key may be anything).
_NO_KEY: Any = object()


def _hand_over(turn: threading.Event) -> None:
    """What `Worker.hold` queues in a key's turn: `_pass_on` hands the turn over there."""
    turn.set()


class Timer:
    """A call scheduled with `Worker.later`; `cancel` before it runs drops it."""

    __slots__ = ("_worker", "cancelled", "drained", "due", "fired", "fn", "key")

    def __init__(
        self, worker: Worker, due: float, fn: Callable[[], Any], key: Hashable | None, drained: bool
    ) -> None:
        self._worker, self.due, self.fn, self.key = worker, due, fn, key
        self.drained = key is not None and drained  # a drain of its key waits for it
        self.cancelled = self.fired = False

    def cancel(self) -> None:
        """Drop the call if it has not started (a key's `drain` then stops waiting for it)."""
        self._worker._cancel(self)


class _Idle:
    """A thread waiting to be handed a key (`Worker._await_key`)."""

    __slots__ = ("handed", "key")

    def __init__(self, lock: threading.RLock) -> None:
        self.handed = threading.Condition(lock)
        self.key: Any = _NO_KEY


class Worker:
    """Daemon threads running keyed tasks (in order per key) and timed calls when due.

    A task's exception is reported (`report`) and never stops a thread.
    """

    def __init__(self, name: str = "jaxhist-worker", timers: str = "jaxhist-timers") -> None:
        self._name, self._timers_name = name, timers
        self._reset()

    def _reset(self) -> None:
        self._pid = os.getpid()
        # Reentrant: the interrupt bridge's signal handler schedules retries (`later`) on the
        # main thread, which may be inside `submit` or `later` already when the signal lands.
        self._lock = threading.RLock()
        self._finished = threading.Condition(self._lock)  # a key's work ended: drains look
        self._timed = threading.Condition(self._lock)  # the timers changed: their thread looks
        self._queues: dict[Hashable, collections.deque[_Task]] = {}  # not started yet, by key
        self._served: set[Hashable] = set()  # by a worker thread or a `holding` one
        self._scheduled: collections.Counter[Hashable] = collections.Counter()  # keyed timers
        self._timers: list[tuple[float, int, Timer]] = []
        self._seq = itertools.count()
        self._idle: list[_Idle] = []
        self._ready: collections.deque[Hashable] = collections.deque()  # served, no thread yet
        self._moved = 0.0  # when a key waiting in `_ready` last got a thread
        self._threads: set[threading.Thread] = set()  # those that run tasks
        self._timing: threading.Thread | None = None
        self._local = threading.local()  # the keys this thread runs a task of, innermost last

    # ------------------------------------------------------------------------- public
    def on_worker_thread(self) -> bool:
        """Whether the calling thread is one of this worker's (a sink's hook runs there)."""
        with self._lock:
            return threading.current_thread() in self._threads

    def submit(self, key: Hashable, fn: Callable[..., Any], *args: Any) -> None:
        """Run ``fn(*args)`` on a worker thread, after every task of ``key`` submitted before."""
        self._after_fork()
        with self._lock:
            full = len(self._queues.get(key, ())) >= MAX_PENDING
        if full:
            self.drain(key)
        with self._lock:
            self._enqueue(key, (fn, args))

    def later(
        self, delay: float, fn: Callable[[], Any], key: Hashable | None = None, drained: bool = True
    ) -> Timer:
        """Run ``fn()`` in ``delay`` seconds, unless the timer is cancelled. With a ``key`` it
        runs as a task of that key (after the key's earlier tasks) and `drain` of the key waits
        for it (unless not ``drained``: then only once it is due); without, it runs on its own."""
        self._after_fork()
        timer = Timer(self, time.monotonic() + delay, fn, key, drained)
        with self._lock:
            heapq.heappush(self._timers, (timer.due, next(self._seq), timer))
            if timer.drained:
                self._scheduled[key] += 1
            self._wake_timers()
        return timer

    def pending(self, key: Hashable) -> bool:
        """Whether tasks of ``key`` are queued or running (timers not yet due aside: a call
        that must follow a key's queued work need not wait for its timers)."""
        with self._lock:
            return key in self._served

    def drain(self, key: Hashable, timeout: float | None = None) -> bool:
        """Wait until every task of ``key`` submitted (and timer of it scheduled) so far has
        run, at most ``timeout`` seconds; whether they have.

        From a task of ``key`` itself it returns at once: the task waiting for itself would
        never end.
        """
        if self.holds(key):
            return True
        with self._lock:
            return self._finished.wait_for(
                lambda: not (key in self._served or self._scheduled[key]), timeout
            )

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
        nobody serves is taken at once, without waiting: so it may be taken under a lock that
        the key's tasks never take."""
        self._after_fork()
        turn = None
        with self._lock:
            if key in self._served:  # whoever serves it passes the turn on (`_pass_on`)
                turn = threading.Event()
                self._queues.setdefault(key, collections.deque()).append((_hand_over, (turn,)))
            else:
                self._served.add(key)
        if turn is not None:
            turn.wait()
        self._enter(key)

    def release(self, key: Hashable) -> None:
        """Give back the turn of ``key`` that `hold` took."""
        self._leave(key)
        with self._lock:
            queue = self._queues.get(key)
            if queue and queue[0][0] is not _hand_over:
                self._hand(key)  # the tasks queued meanwhile: a worker thread runs them
            else:
                self._pass_on(key)

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

    def _start(self, target: Callable[..., None], name: str, *args: Any) -> threading.Thread:
        def run() -> None:
            use_ieee()  # not XLA's modes, when started inside a host call (see _floats)
            target(*args)

        thread = threading.Thread(target=run, name=name, daemon=True)
        thread.start()
        return thread

    def _enqueue(self, key: Hashable, task: _Task) -> None:
        # Caller holds the lock. Work for a key nobody serves: a thread serves it from now on.
        self._queues.setdefault(key, collections.deque()).append(task)
        if key not in self._served:
            self._served.add(key)
            self._hand(key)

    def _hand(self, key: Hashable) -> None:
        # Caller holds the lock; ``key`` is served and has tasks queued: the thread that runs
        # them is an idle one, else a new one, else the next one done with its key.
        if self._idle:
            idle = self._idle.pop()
            idle.key = key
            idle.handed.notify()
        elif len(self._threads) < MOST_THREADS:
            self._threads.add(self._start(self._serve, self._name, key))
        else:
            if not self._ready:
                self._moved = time.monotonic()  # (the wait counts from the first key's)
            self._ready.append(key)
            self._wake_timers()

    def _next_ready(self) -> Any:
        """The key waiting longest for a thread, taken (caller holds the lock), or `_NO_KEY`."""
        if not self._ready:
            return _NO_KEY
        self._moved = time.monotonic()
        return self._ready.popleft()

    def _wake_timers(self) -> None:
        # Caller holds the lock: the timers' thread looks again (started if none runs).
        if self._timing is None:
            self._timing = self._start(self._time, self._timers_name)
        else:
            self._timed.notify()

    def _pass_on(self, key: Hashable) -> _Task | None:
        """The turn of ``key`` ended (caller holds the lock): its next task, for the caller to
        run; or None, the turn handed to a thread waiting in `hold`, or the key left unserved
        when nothing of it is queued."""
        queue = self._queues.get(key)
        if not queue:
            self._queues.pop(key, None)
            self._served.discard(key)
            self._finished.notify_all()
            return None
        task = queue.popleft()
        if not queue:
            del self._queues[key]
        if task[0] is _hand_over:
            _hand_over(*task[1])  # still served: by the holding thread from now on
            return None
        return task

    def _serve(self, key: Hashable) -> None:
        # A worker thread: serve the key handed to it, then any key handed to it while idle.
        # A key done, it waits idle in the same hold of the lock: never a moment when work
        # could find it neither serving nor idle (a thread more would start).
        while True:
            with self._lock:
                task = self._pass_on(key)
                if task is None:
                    key = self._next_ready()
                    if key is _NO_KEY:
                        key = self._await_key()
                    if key is _NO_KEY:
                        return
                    continue
            fn, args = task
            self._enter(key)
            try:
                fn(*args)
            except BaseException as e:  # one failed task never stops the next
                report(e, getattr(fn, "__qualname__", "deferred work"))
            finally:
                self._leave(key)

    def _await_key(self) -> Any:
        """Wait idle to be handed a key (`_hand`; caller holds the lock); `_NO_KEY` after
        `IDLE_S`, and the thread ends."""
        idle = _Idle(self._lock)
        self._idle.append(idle)
        idle.handed.wait_for(lambda: idle.key is not _NO_KEY, IDLE_S)
        if idle.key is _NO_KEY:  # not handed one (`_hand` takes it off the list first)
            self._idle.remove(idle)
            self._threads.discard(threading.current_thread())
        return idle.key

    def _time(self) -> None:
        # The timers' thread: due timers become tasks of their keys, and keys that waited
        # `THREAD_WAIT_S` for a thread while none got one get a thread more; it ends when there
        # is nothing to look at for `IDLE_S` (`_wake_timers` starts another).
        with self._lock:
            while True:
                now = time.monotonic()
                while self._timers and (self._timers[0][2].cancelled or self._timers[0][0] <= now):
                    timer = heapq.heappop(self._timers)[2]
                    if timer.cancelled:
                        continue
                    timer.fired = True
                    if timer.key is None:  # unkeyed: a key of its own, nobody drains it
                        self._enqueue(timer, (timer.fn, ()))
                    else:  # the key's work still: queued before it stops being scheduled
                        self._enqueue(timer.key, (timer.fn, ()))
                        if timer.drained:
                            self._unschedule(timer.key)
                if self._ready and now - self._moved >= THREAD_WAIT_S:
                    key = self._next_ready()  # every thread is held up: one more
                    self._threads.add(self._start(self._serve, self._name, key))
                looks = [self._timers[0][0]] if self._timers else []
                if self._ready:
                    looks.append(self._moved + THREAD_WAIT_S)
                if looks:
                    self._timed.wait(max(0.0, min(looks) - now))
                elif not self._timed.wait(IDLE_S) and not (self._timers or self._ready):
                    self._timing = None
                    return

    def _cancel(self, timer: Timer) -> None:
        with self._lock:
            if timer.cancelled or timer.fired:
                return
            timer.cancelled = True
            if timer.drained:
                self._unschedule(timer.key)

    def _unschedule(self, key: Hashable) -> None:
        # Caller holds the lock.
        self._scheduled[key] -= 1
        if not self._scheduled[key]:
            del self._scheduled[key]
            self._finished.notify_all()
