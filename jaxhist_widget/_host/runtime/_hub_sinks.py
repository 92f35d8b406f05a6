"""The hub's calls into sinks: each hook and question of `HubSink` called as a typed method
under one guard (`SinkCalls`), and new rows or a run's end told to a sink at once or, while
it proves slow, on the worker.

A sink whose ``on_rows`` took longer than `SLOW_S` gets its updates on the worker (keyed by the
sink), merged while it is busy, until `QUICK_AGAIN` handovers in a row were quick: so a slow sink
delays only its own runs. A run's end reaches a sink after any of its updates still queued.

The guard: an exception never propagates into XLA (that would kill the computation and its
device history): it is reported (`report`) once per sink, run and hook (once per sink and
question); a question that failed gets its default answer. A ``SystemExit`` or
``KeyboardInterrupt`` is kept (`SinkCalls.take_exit`), the sink is stopped, and it is raised
again where the sink's block ends. The state here is guarded by the hub's lock (the lock order
is in `_hub`).
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from ._protocol import HubSink
from ._report import report
from ._run import Run
from ._worker import Worker

__all__ = ["QUICK_AGAIN", "SLOW_S", "SinkCalls"]

T = TypeVar("T")

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

    # ------------------------------------------------------------------------ hooks
    def start(self, sink: HubSink, run: Run) -> None:
        """``run`` starts streaming to ``sink``, after whatever of its earlier runs is still
        queued for it on the worker (a slow sink's last rows and end: a plot continuing its
        step axis places the new run after the last one's end)."""
        if self._worker.pending(sink):
            self._worker.drain(sink)
        self._guard(sink, "start", (run.id, "start"), lambda: sink._start(run), None)

    def resume(self, sink: HubSink, run: Run) -> None:
        """``run``, given up for dead, sent rows after all."""
        self._guard(sink, "resume", (run.id, "resume"), lambda: sink._resume(run), None)

    def rows(self, sink: HubSink, run: Run, lanes: list[int]) -> None:
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
        self._on_rows(sink, run, lanes)
        if time.perf_counter() - t0 > SLOW_S:
            with self._lock:
                self._notes.setdefault(sink, {})
                self._quick[sink] = 0

    def end(self, sink: HubSink, run: Run) -> bool:
        """End ``run`` for ``sink``, after any update of its still queued on the worker;
        whether it was queued there too (it is told once the sink's key is drained)."""
        if self._worker.pending(sink):
            self._worker.submit(sink, self._end, sink, run)
            return True
        self._end(sink, run)
        return False

    def _end(self, sink: HubSink, run: Run) -> None:
        self._guard(sink, "end", (run.id, "end"), lambda: sink._end(run), None)

    def _on_rows(self, sink: HubSink, run: Run, lanes: list[int]) -> None:
        self._guard(sink, "on_rows", (run.id, "on_rows"), lambda: sink.on_rows(run, lanes), None)

    def _hand_notes(self, sink: HubSink) -> None:
        with self._lock:
            notes, self._notes[sink] = self._notes[sink], {}
            self._note_queued.discard(sink)
        t0 = time.perf_counter()
        for run, lanes in notes.items():
            self._on_rows(sink, run, sorted(lanes))
        quick = time.perf_counter() - t0 < SLOW_S / 2
        with self._lock:
            self._quick[sink] = self._quick.get(sink, 0) + 1 if quick else 0
            if self._quick[sink] >= QUICK_AGAIN and not self._notes[sink]:
                # Quick again for a while: back to updates in the loop's own call.
                del self._notes[sink], self._quick[sink]

    # -------------------------------------------------------------------- questions
    def rows_can_wait(self, sinks: tuple[HubSink, ...], accelerated: bool) -> bool:
        """Whether no sink of a run needs to see a chunk's rows before the loop goes on
        (``accelerated``: the loop runs on an accelerator, which waits while the host works)."""
        return all(self._can_wait(s, accelerated) for s in sinks)

    def stop_asked(self, sinks: tuple[HubSink, ...], run: Run) -> bool:
        """Whether a sink of ``run`` asks it to stop now."""
        return any(self._should_stop(s, run) for s in sinks)

    def _can_wait(self, sink: HubSink, accelerated: bool) -> bool:
        return self._guard(
            sink,
            "rows_can_wait",
            ("rows_can_wait",),
            lambda: sink._rows_can_wait(accelerated),
            False,
        )

    def _should_stop(self, sink: HubSink, run: Run) -> bool:
        return self._guard(
            sink, "should_stop", ("should_stop",), lambda: sink._should_stop(run), False
        )

    def running(self, sink: HubSink) -> bool:
        """Whether a run streaming to ``sink`` has started and not ended (False if asking
        fails)."""
        return self._guard(sink, "running", ("running",), lambda: sink.running, False)

    def stop_requested(self, sink: HubSink) -> bool:
        """Whether ``sink`` was asked to stop its runs (False if asking fails)."""
        return self._guard(
            sink, "stop_requested", ("stop_requested",), lambda: sink.stop_requested, False
        )

    def companions(self, sink: HubSink) -> tuple[HubSink, ...]:
        """The sinks that get every run of ``sink`` with it (none if asking fails)."""
        return self._guard(sink, "companions", ("companions",), lambda: sink._companions, ())

    def streams(self, sinks: tuple[HubSink, ...]) -> tuple[HubSink, ...]:
        """The sinks a run of ``sinks`` streams to: each after its companions (a plot's store
        has a chunk before the plot draws it), each once."""
        out: dict[HubSink, None] = {}
        for sink in sinks:
            out.update(dict.fromkeys((*self.companions(sink), sink)))
        return tuple(out)

    # ------------------------------------------------------------------------ guard
    def _guard(
        self,
        sink: HubSink,
        hook: str,
        once: tuple[Hashable, ...],
        call: Callable[[], T],
        default: T,
    ) -> T:
        """``call()``, a hook or question of ``sink``'s; an exception is reported (once per
        sink and ``once``) and ``default`` returned, never raised into the loop. A
        ``SystemExit`` or ``KeyboardInterrupt`` stops the sink's runs and is raised again where
        its block ends (inside XLA it would become an XLA error)."""
        try:
            return call()
        except Exception as e:
            report(e, f"{type(sink).__name__}.{hook}", once=(id(sink), *once))
        except BaseException as e:
            with self._lock:
                self._exits.setdefault(sink, e)
            sink.stop()
        return default

    def take_exit(self, sink: HubSink) -> BaseException | None:
        """The `BaseException` one of ``sink``'s hooks raised inside a callback, if any."""
        with self._lock:
            return self._exits.pop(sink, None)
