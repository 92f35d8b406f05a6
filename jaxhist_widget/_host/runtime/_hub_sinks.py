"""The hub's calls into sinks: a hook called safely, a question asked, and new rows or a run's
end told to a sink, at once or, while it proves slow, on the worker.

A sink whose ``on_rows`` took longer than `SLOW_S` gets its updates on the worker (keyed by the
sink), merged while it is busy, until `QUICK_AGAIN` handovers in a row were quick: so a slow sink
delays only its own runs. A run's end reaches a sink after any of its updates still queued.

Exceptions never propagate into XLA (that would kill the computation and its device history):
they are reported (`report`) once per sink, run and hook. A ``SystemExit`` or
``KeyboardInterrupt`` is kept (`SinkCalls.take_exit`) and raised again where the sink's block
ends. The state here is guarded by the hub's lock (the lock order is in `_hub`).
"""

from __future__ import annotations

import threading
import time
import weakref
from typing import Any

from ._protocol import HubSink
from ._report import report
from ._run import Run
from ._worker import Worker

__all__ = ["QUICK_AGAIN", "SLOW_S", "SinkCalls"]

#: An ``on_rows`` that takes longer than this (seconds) moves its sink's updates to the worker,
#: until `QUICK_AGAIN` updates in a row took less than half of it.
SLOW_S = 0.05
QUICK_AGAIN = 8


class SinkCalls:
    """The hub's calls into its sinks; see the module docstring.

    ``lock`` is the hub's lock (taken here around this object's own state, never while a hook
    runs); ``worker`` the one worker, where slow sinks' updates go.
    """

    def __init__(self, lock: threading.Lock, worker: Worker) -> None:
        self._lock = lock
        self._worker = worker
        # Slow sinks: the updates not yet handed to each, merged (run -> lanes), whether a task
        # to hand them over is queued, and how many handovers in a row were quick.
        self._notes: weakref.WeakKeyDictionary[Any, dict[Run, set[int]]]
        self._notes = weakref.WeakKeyDictionary()
        self._note_queued: weakref.WeakSet[Any] = weakref.WeakSet()
        self._quick: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()
        # BaseExceptions raised by sinks' hooks, kept from XLA and raised again at block end.
        self._exits: weakref.WeakKeyDictionary[Any, BaseException]
        self._exits = weakref.WeakKeyDictionary()

    def notify_rows(self, sink: HubSink, run: Run, lanes: list[int]) -> None:
        """Tell ``sink`` of new rows: now, or on the worker while it proves slow."""
        with self._lock:
            notes = self._notes.get(sink)
            if notes is not None:
                notes.setdefault(run, set()).update(lanes)
                queue = sink not in self._note_queued
                self._note_queued.add(sink)
        if notes is not None:
            if queue:
                self._worker.submit(sink, self._hand_notes, sink)
            return
        t0 = time.perf_counter()
        self.call(sink, "on_rows", run, lanes)
        if time.perf_counter() - t0 > SLOW_S:
            with self._lock:
                self._notes.setdefault(sink, {})
                self._quick[sink] = 0

    def _hand_notes(self, sink: HubSink) -> None:
        with self._lock:
            notes, self._notes[sink] = self._notes[sink], {}
            self._note_queued.discard(sink)
        t0 = time.perf_counter()
        for run, lanes in notes.items():
            self.call(sink, "on_rows", run, sorted(lanes))
        quick = time.perf_counter() - t0 < SLOW_S / 2
        with self._lock:
            self._quick[sink] = self._quick.get(sink, 0) + 1 if quick else 0
            if self._quick[sink] >= QUICK_AGAIN and not self._notes[sink]:
                # Quick again for a while: back to updates in the loop's own call.
                del self._notes[sink], self._quick[sink]

    def notify_end(self, sink: HubSink, run: Run) -> bool:
        """End ``run`` for ``sink``, after any update of its still queued on the worker;
        whether it was queued there too (it is told once the sink's key is drained)."""
        if self._worker.pending(sink):
            self._worker.submit(sink, self.call, sink, "_end", run)
            return True
        self.call(sink, "_end", run)
        return False

    def call(self, sink: HubSink, method: str, run: Run, *args: Any) -> None:
        """``sink.method(run, *args)``; an exception is reported (once per sink, run and hook),
        never raised into the loop. A ``SystemExit`` or ``KeyboardInterrupt`` stops the sink's
        runs and is raised again where its block ends (inside XLA it would become an XLA
        error)."""
        try:
            getattr(sink, method)(run, *args)
        except Exception as e:
            where = f"{type(sink).__name__}.{method.lstrip('_')}"
            report(e, where, once=(id(sink), run.id, method))
        except BaseException as e:
            with self._lock:
                self._exits.setdefault(sink, e)
            sink.stop()

    def rows_can_wait(self, sinks: tuple[HubSink, ...]) -> bool:
        """Whether no sink of a run needs to see a chunk's rows before the loop goes on."""
        return all(self.ask(s, "_rows_can_wait", default=False) for s in sinks)

    def stop_asked(self, sinks: tuple[HubSink, ...], run: Run) -> bool:
        """Whether a sink of ``run`` asks it to stop now."""
        return any(self.ask(s, "_should_stop", run) for s in sinks)

    @staticmethod
    def ask(sink: HubSink, name: str, run: Run | None = None, default: bool = False) -> bool:
        """A sink's answer to the hub's question ``name`` (a method given ``run``, or a
        property); ``default`` if asking fails (reported once)."""
        try:
            value = getattr(sink, name)
            return bool(value(run) if run is not None else value)
        except Exception as e:
            report(e, f"{type(sink).__name__}.{name.lstrip('_')}", once=(id(sink), name))
            return default

    def take_exit(self, sink: HubSink) -> BaseException | None:
        """The `BaseException` one of ``sink``'s hooks raised inside a callback, if any."""
        with self._lock:
            return self._exits.pop(sink, None)
