"""Handing rows to sinks without letting a slow sink hold up the loop.

Layer 2 (host). The registry tells sinks about new rows from inside the loop's host callback,
and the device waits for that callback to return. A quick sink (a `Recorder`, a throttled
`LivePlot`) is called right there, which keeps its view exactly in step with the loop. A sink
whose update once took longer than `SLOW_S` (a plot redrawn in full, a file on a network disk)
gets a courier thread from then on: the callback only leaves a note and returns, and notes that
pile up while the sink is busy are merged (the lanes that have new rows, per run), so the sink
sees fewer, larger updates. Rows are never dropped: they are in the `Run` before any sink is
told. ``on_end`` follows the sink's last ``on_rows``; `drain` waits for both.
"""

from __future__ import annotations

import logging
import threading
import time
import warnings
import weakref
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .runs import Run
    from .sink import Sink

__all__ = ["SLOW_S", "drain", "notify_end", "notify_rows"]

log = logging.getLogger("jaxhist_widget")

#: An ``on_rows`` that takes longer than this (seconds) moves its sink to a courier thread.
SLOW_S = 0.05
#: A courier with nothing to do for this long ends (a new note starts another).
_IDLE_S = 1.0

_lock = threading.Lock()
_couriers: weakref.WeakKeyDictionary[Sink, _Courier] = weakref.WeakKeyDictionary()


def notify_rows(sink: Sink, run: Run, lanes: list[int]) -> None:
    """Tell ``sink`` that ``run`` has new rows in ``lanes`` (now, or through its courier)."""
    with _lock:
        courier = _couriers.get(sink)
    if courier is not None:
        courier.post_rows(run, lanes)
        return
    t0 = time.perf_counter()
    call(sink, "on_rows", run, lanes)
    if time.perf_counter() - t0 > SLOW_S:
        with _lock:
            _couriers.setdefault(sink, _Courier(sink))


def notify_end(sink: Sink, run: Run) -> None:
    """End ``run`` for ``sink``, after any update of its still waiting in the courier."""
    with _lock:
        courier = _couriers.get(sink)
    if courier is None or not courier.post_end(run):
        call(sink, "_end", run)


def drain(sink: Sink) -> None:
    """Wait until ``sink`` has been given every update posted so far (its own pace)."""
    with _lock:
        courier = _couriers.get(sink)
    if courier is not None:
        courier.wait_idle()


def call(sink: Sink, method: str, *args: Any) -> None:
    """Call ``sink.method(*args)``; an exception is reported, never raised into the loop."""
    try:
        getattr(sink, method)(*args)
    except Exception as e:
        report(e, f"{type(sink).__name__}.{method.lstrip('_')}")


def report(error: BaseException, where: str) -> None:
    log.exception("jaxhist_widget: %s failed", where, exc_info=error)
    warnings.warn(
        f"jaxhist_widget: {where} raised {type(error).__name__}: {error}. "
        "The loop and its device history are unaffected.",
        RuntimeWarning,
        stacklevel=3,
    )


class _Courier:
    """One slow sink's updates, delivered in order on a thread of their own, merged meanwhile."""

    def __init__(self, sink: Sink) -> None:
        self._sink = weakref.ref(sink)
        self._cond = threading.Condition()
        self._rows: dict[Run, set[int]] = {}  # run -> lanes with rows not yet told, in order
        self._ends: list[Run] = []
        self._busy = False
        self._thread: threading.Thread | None = None

    def post_rows(self, run: Run, lanes: list[int]) -> None:
        with self._cond:
            self._rows.setdefault(run, set()).update(lanes)
            self._wake()

    def post_end(self, run: Run) -> bool:
        """Queue ``run``'s end behind its rows; False if nothing is queued (end it now)."""
        with self._cond:
            if not (self._rows or self._ends or self._busy):
                return False
            self._ends.append(run)
            self._wake()
            return True

    def wait_idle(self) -> None:
        with self._cond:
            while self._rows or self._ends or self._busy:
                self._cond.wait(0.1)

    def _wake(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name="jaxhist-sink", daemon=True)
            self._thread.start()
        self._cond.notify_all()

    def _work(self) -> None:
        while True:
            with self._cond:
                deadline = time.monotonic() + _IDLE_S
                while not (self._rows or self._ends):
                    left = deadline - time.monotonic()
                    if left <= 0:
                        self._thread = None
                        return
                    self._cond.wait(left)
                rows, self._rows = self._rows, {}
                ends, self._ends = self._ends, []
                self._busy = True
            sink = self._sink()
            try:
                if sink is not None:
                    for run, lanes in rows.items():
                        call(sink, "on_rows", run, sorted(lanes))
                    for run in ends:
                        call(sink, "_end", run)
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()
