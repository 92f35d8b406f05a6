"""`Hub`: the one owner of the host's state — attached sinks, the run table, the worker and
the interrupt bridge.

The traced program calls the hub (through `jaxhist_widget._wire`) from host callbacks, on
whatever thread XLA runs them: `open_run` once per call of the loop, `receive_chunk` once per
flush. The program never holds a sink, only a run id: the hub maps it to the sinks that were
attached when the run started, so the jit cache cannot keep a stale sink.

A run moves through an explicit state machine, always under the hub's lock::

    OPEN --(every lane ended)--> ENDED
    OPEN --(its blocks ended, no chunk will come)--> ABANDONED --(rows came after all)--> OPEN

Three ordering promises hold per run, kept here and only here: rows are filed in the order they
came; a sink's ``on_end`` follows its last ``on_rows``; every row is in when the call that ran
the loop returns. A chunk whose rows no sink needs before the loop goes on is filed on the
worker (keyed by its run), and the chunk that ends a run first waits for that run's earlier
chunks; a sink whose ``on_rows`` proved slow gets its updates on the worker (keyed by the sink),
merged while it is busy.

Lock order, the one place it is written: the hub's lock, then a sink's lock, then a run's lock;
the interrupt bridge's lock, then a sink's lock (a press stops sinks); a `TensorBoard` sink's
notes lock, then the worker's condition (it queues its writes). The worker's condition, the
error reporter's lock and a plot's flusher lock are leaves; a plot's state lock is taken only
inside its own hooks. No lock is held while a sink's hooks or user code run, or while
waiting for the worker.

Exceptions never propagate into XLA (that would kill the computation and its device history):
they are reported (`report`) once per sink, run and hook.
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import threading
import time
import weakref
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import _wire
from .._wire import NEVER, Chunk, Layout, answer
from ._naming import run_name
from ._report import report
from ._run import FAILED, STATUSES, Run, lane_index
from ._sigint import InterruptBridge
from ._worker import Worker

if TYPE_CHECKING:
    from ._sink import Sink

__all__ = ["HUB", "Hub"]

#: Adaptive streaming aims to deliver rows this often (seconds).
TARGET_INTERVAL = 0.05
#: An ``on_rows`` that takes longer than this (seconds) moves its sink's updates to the worker.
SLOW_S = 0.05
#: Abandoned runs remembered (to take them up again should rows come); the oldest are dropped.
MAX_ABANDONED = 256
#: A run taken up again while none of its sinks is attached is given up once more if it sends
#: nothing for this long (seconds): its computation may have raised since, and nobody would
#: close it. Should rows come later still, it is taken up again.
ORPHAN_S = 30.0
_STOPPED = STATUSES.index("stopped")

OPEN, ABANDONED, ENDED = "open", "abandoned", "ended"
_MOVES = {(OPEN, ENDED), (OPEN, ABANDONED), (ABANDONED, OPEN), (ABANDONED, ENDED)}


@dataclasses.dataclass(eq=False)
class _Entry:
    """One run in the table: its rows, its sinks, its state and its flush clock."""

    run: Run
    sinks: tuple[Sink, ...]
    state: str = OPEN
    # The flush clock: when the last host call ended, rows then, smoothed rows per second.
    # rows=1: row 0 (the initial value) is no work done, so it must not count for the rate.
    t: float = dataclasses.field(default_factory=time.perf_counter)
    rows: int = 1
    rate: float = 0.0

    def next_interval(self, layout: Layout, rows: int, arrived: float) -> int:
        """Rows until the next flush: fixed, or sized so a flush comes every ~TARGET_INTERVAL.

        The rate counts only the device's time, from the end of the previous host call to the
        start of this one: time spent on the host is not the loop's, and counting it would
        shrink chunks whenever a sink is slow, making it slower still.
        """
        if layout.every is not None:
            return min(layout.every, layout.chunk)
        dt, drows = arrived - self.t, rows - self.rows
        self.t, self.rows = time.perf_counter(), rows
        if dt > 0 and drows > 0:
            rate = drows / dt
            # Smooth, but let a sudden slowdown win at once so latency stays bounded.
            slower = self.rate == 0 or rate < self.rate
            self.rate = rate if slower else 0.5 * (self.rate + rate)
        return int(min(max(self.rate * TARGET_INTERVAL, 1), layout.chunk))


class Hub:
    """Attached sinks, the run table, deferred work and interrupts: see the module docstring."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._attached: list[Sink] = []
        self._runs: dict[int, _Entry] = {}
        self._abandoned: collections.OrderedDict[int, None] = collections.OrderedDict()
        self._ids = itertools.count(1)
        # Slow sinks: the updates not yet handed to each, merged (run -> lanes), and whether a
        # task to hand them over is queued.
        self._notes: weakref.WeakKeyDictionary[Sink, dict[Run, set[int]]]
        self._notes = weakref.WeakKeyDictionary()
        self._note_queued: weakref.WeakSet[Sink] = weakref.WeakSet()
        # BaseExceptions raised by sinks' hooks, kept from XLA and raised again at block end.
        self._exits: weakref.WeakKeyDictionary[Sink, BaseException]
        self._exits = weakref.WeakKeyDictionary()
        self.worker = Worker()
        self.interrupts = InterruptBridge(self._press, self.worker)

    # ------------------------------------------------------------------------ attaching
    def attach(self, sink: Sink) -> None:
        with self._lock:
            if sink not in self._attached:
                self._attached.append(sink)

    def detach(self, sink: Sink) -> None:
        with self._lock:
            if sink in self._attached:
                self._attached.remove(sink)

    def attached(self) -> tuple[Sink, ...]:
        """The sinks a run starting now would stream to."""
        with self._lock:
            return tuple(self._attached)

    def live_runs(self) -> list[Run]:
        """Runs that started and have not ended (abandoned ones have ended as ``failed``)."""
        with self._lock:
            return [e.run for e in self._runs.values() if e.state == OPEN]

    def _move(self, entry: _Entry, state: str) -> None:
        # Caller holds the lock: the one place a run changes state.
        if (entry.state, state) not in _MOVES:
            raise RuntimeError(f"run {entry.run.id}: no move from {entry.state} to {state}")
        entry.state = state
        if state == ABANDONED:
            self._abandoned[entry.run.id] = None
            while len(self._abandoned) > MAX_ABANDONED:  # the oldest will not come back
                self._runs.pop(self._abandoned.popitem(last=False)[0], None)
        else:
            self._abandoned.pop(entry.run.id, None)
        if state == ENDED:
            self._runs.pop(entry.run.id, None)

    # ------------------------------------------------------------ called from the device
    def open_run(self, layout: Layout, token: Any = None) -> np.ndarray:
        """Start a run: int32 ``[run_id, first_interval]`` (`NEVER`: no sinks)."""
        try:
            with self._lock:
                sinks = tuple(self._attached)
                run_id = next(self._ids) & 0x7FFFFFFF
                if not sinks:
                    return np.array([run_id, NEVER], np.int32)
                run = Run(run_id, layout)
                self._runs[run_id] = _Entry(run, sinks)
            run.name, run.name_given = run_name(sinks)  # before any sink sees the run
            for sink in sinks:
                _call(sink, "_start", run)
            if self.interrupts.aborting:  # a press is on its way to the main thread: let it
                self._press(True)
            # Send the first row(s) at once so a watcher sees the run start; adapt from there.
            first = 1 if layout.every is None else layout.every
            return np.array([run_id, min(first, layout.chunk)], np.int32)
        except Exception as e:  # never raise into XLA
            report(e, "open_run")
            return np.array([0, NEVER], np.int32)

    def receive_chunk(self, layout: Layout, head: np.ndarray, *windows: np.ndarray) -> np.ndarray:
        """Deliver one flush (ending the run if no lane runs on); returns `_wire.answer`.

        The device ends each lane exactly as decided here: a lane it reports running (status
        0) is stopped if any sink asks, else it runs on; the others keep the status they carry.
        """
        try:
            arrived = time.perf_counter()
            self.interrupts.poll()  # a press becomes a stop request here, mid-run
            chunk = _wire.decode(layout, head, windows)
            with self._lock:
                entry = self._runs.get(chunk.run_id)
            if entry is None:
                return answer(False, NEVER)
            interval = entry.next_interval(layout, chunk.rows, arrived)
            if self._rows_can_wait(entry, chunk):
                self.worker.submit(entry.run.id, self._file, entry, chunk)
                return answer(False, interval)
            self.worker.drain(entry.run.id)  # earlier chunks first: rows are filed in order
            self._file(entry, chunk)
            # After the rows: a sink may ask for a stop when it sees them.
            stop = any(_ask(s, "_should_stop", entry.run) for s in entry.sinks)
            codes = [w.status or (_STOPPED if stop else 0) for w in chunk.lane_words]
            if all(codes):  # every lane has ended (also a vmap over no lanes)
                self._end(entry, codes)
            return answer(stop, interval)
        except Exception as e:
            report(e, "receive_chunk")
            return answer(False, layout.chunk)

    def _rows_can_wait(self, entry: _Entry, chunk: Chunk) -> bool:
        """Whether the device may have its answer (run on) before this chunk's rows are filed:
        some lane runs on, no stop is asked, and no sink needs to see the rows first."""
        return (
            any(w.status == 0 for w in chunk.lane_words)
            and all(_ask(s, "_rows_can_wait", default=False) for s in entry.sinks)
            and not any(_ask(s, "_should_stop", entry.run) for s in entry.sinks)
        )

    def _file(self, entry: _Entry, chunk: Chunk) -> None:
        """Append a chunk's rows to its run and tell the sinks."""
        run = entry.run
        with self._lock:
            resumed = entry.state == ABANDONED
            if resumed:  # it was given up for dead, and is alive after all
                self._move(entry, OPEN)
                run._reopen()
        for sink in entry.sinks if resumed else ():
            _call(sink, "_resume", run)
        if resumed:
            self._watch_orphan(entry, -1)
        run._ensure_lanes(chunk.lanes)
        # Lanes that share where their rows start and end (under vmap every running lane steps
        # in lockstep, so usually all of them) are appended together: one copy per leaf.
        groups: dict[tuple[int, int, int], list[int]] = {}
        for lane, w in enumerate(chunk.lane_words):
            if w.count > 0:
                groups.setdefault((w.first, w.count, w.first - w.slice_start), []).append(lane)
        touched = []
        window = chunk.leaves[0].shape[1]  # a loop recording no leaf streams nothing
        for (first, count, lo), group in groups.items():
            # `lo`: the device clamps slice starts near the end of the buffer
            if lo < 0 or lo + count > window:
                raise RuntimeError(
                    f"run {run.id} lanes {group}: rows {first}..{first + count} are not in the "
                    f"window sent (rows {first - lo}..{first - lo + window}); please report this"
                )
            at = lane_index(group)
            run.append_lanes(group, first, [leaf[at, lo : lo + count] for leaf in chunk.leaves])
            touched.extend(group)
        if touched:
            touched.sort()
            for sink in entry.sinks:
                self._notify_rows(sink, run, touched)

    def _end(self, entry: _Entry, codes: list[int]) -> None:
        """End the run with each lane's status code, and tell its sinks (once)."""
        with self._lock:
            if entry.state == ENDED:
                return
            self._move(entry, ENDED)
            entry.run._finish(codes)
        for sink in entry.sinks:
            self._notify_end(sink, entry.run)

    # ---------------------------------------------------------------- called by sinks
    def abandon_runs(self, sink: Sink) -> None:
        """End, as ``failed``, the open runs of ``sink`` that nobody attached waits for.

        Called when the last block that attached ``sink`` ends, once its rows are in. On the
        CPU a call returns only after its loop closed, so a run still open then is one whose
        computation raised: no close will ever come. Its sinks learn that it ended and the rows
        received so far stay readable. A run some other attached sink streams to is left alone
        (another thread may still run it); should an abandoned run send rows after all, it is
        taken up again (`_file`) and ends with its real status.
        """
        self.drain(sink)
        with self._lock:
            dead = [
                e
                for e in self._runs.values()
                if e.state == OPEN and sink in e.sinks and not any(s.attached for s in e.sinks)
            ]
            for e in dead:  # chosen and finished under one lock: no chunk comes in between
                self._move(e, ABANDONED)
                e.run._finish([FAILED] * max(1, len(e.run.statuses)))
        for e in dead:
            for s in e.sinks:
                self._notify_end(s, e.run)

    def _watch_orphan(self, entry: _Entry, rows_then: int) -> None:
        """Give up a taken-up run that nobody waits for once it has sent nothing for a while."""
        rows = sum(entry.run.counts)
        with self._lock:
            if entry.state != OPEN or any(s.attached for s in entry.sinks):
                return
            idle = rows == rows_then
            if idle:
                self._move(entry, ABANDONED)
                entry.run._finish([FAILED] * max(1, len(entry.run.statuses)))
        if idle:
            for s in entry.sinks:
                self._notify_end(s, entry.run)
        else:
            self.worker.later(ORPHAN_S, lambda: self._watch_orphan(entry, rows))

    def take_exit(self, sink: Sink) -> BaseException | None:
        """A `BaseException` (``SystemExit``, ``KeyboardInterrupt``) one of ``sink``'s hooks
        raised inside a callback, to be raised again where the sink's block or call ends."""
        with self._lock:
            return self._exits.pop(sink, None)

    def drain(self, sink: Sink) -> None:
        """Wait until the rows of ``sink``'s runs are filed and it was given every update."""
        with self._lock:
            ids = [rid for rid, e in self._runs.items() if sink in e.sinks]
        for rid in ids:
            self.worker.drain(rid)
        self.worker.drain(sink)

    # ------------------------------------------------------------------------ sinks
    def _notify_rows(self, sink: Sink, run: Run, lanes: list[int]) -> None:
        """Tell ``sink`` of new rows: now, or on the worker once it proved slow."""
        with self._lock:
            notes = self._notes.get(sink)
            if notes is not None:
                notes.setdefault(run, set()).update(lanes)
                queue = sink not in self._note_queued
                self._note_queued.add(sink)
        if notes is not None:
            if queue:
                self.worker.submit(sink, self._hand_notes, sink)
            return
        t0 = time.perf_counter()
        _call(sink, "on_rows", run, lanes)
        if time.perf_counter() - t0 > SLOW_S:
            with self._lock:
                self._notes.setdefault(sink, {})

    def _hand_notes(self, sink: Sink) -> None:
        with self._lock:
            notes, self._notes[sink] = self._notes[sink], {}
            self._note_queued.discard(sink)
        for run, lanes in notes.items():
            _call(sink, "on_rows", run, sorted(lanes))

    def _notify_end(self, sink: Sink, run: Run) -> None:
        """End ``run`` for ``sink``, after any update of its still queued on the worker."""
        if self.worker.pending(sink):
            self.worker.submit(sink, _call, sink, "_end", run)
        else:
            _call(sink, "_end", run)

    # ---------------------------------------------------------------------- interrupts
    def _press(self, abort: bool) -> bool:
        """A press while sinks are armed: stop the runs in flight of armed sinks (all of them
        when ``abort``); False if there was none to stop."""
        targets = [
            s
            for s in self.interrupts.armed()
            if _ask(s, "running", default=False) and (abort or not s.stop_requested)
        ]
        for sink in targets:
            sink.stop()
        return bool(targets)


def _call(sink: Sink, method: str, run: Run, *args: Any) -> None:
    """``sink.method(run, *args)``; an exception is reported (once per sink, run and hook),
    never raised into the loop. A ``SystemExit`` or ``KeyboardInterrupt`` stops the sink's runs
    and is raised again where its block ends (inside XLA it would become an XLA error)."""
    try:
        getattr(sink, method)(run, *args)
    except Exception as e:
        where = f"{type(sink).__name__}.{method.lstrip('_')}"
        report(e, where, once=(id(sink), run.id, method))
    except BaseException as e:
        with HUB._lock:
            HUB._exits.setdefault(sink, e)
        sink.stop()


def _ask(sink: Sink, name: str, run: Run | None = None, default: bool = False) -> bool:
    """A sink's answer to the hub's question ``name`` (a method given ``run``, or a property);
    ``default`` if asking fails (reported once)."""
    try:
        value = getattr(sink, name)
        return bool(value(run) if run is not None else value)
    except Exception as e:
        report(e, f"{type(sink).__name__}.{name.lstrip('_')}", once=(id(sink), name))
        return default


#: The process's hub.
HUB = Hub()
