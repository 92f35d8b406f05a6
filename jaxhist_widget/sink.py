"""`Sink`: the base every host-side receiver of streamed rows derives from.

Layer 2 (host). A sink is attached for the duration of a ``with`` block (or a `Sink.run` call);
every `jaxhist_widget.while_loop` that *starts* while it is attached streams to it. The traced
program never holds a sink: it holds a run id, and `jaxhist_widget.registry` maps the id to the
sinks that were attached when that run started (so the jit cache cannot keep a stale sink).

Sinks also own the stop request. `stop()` sets a flag that the next chunk flush of every run
streaming to this sink reads back into the loop, which then ends after the current step with its
partial history intact. While attached in the main thread, a sink turns the first interrupt
(Ctrl-C, the notebook's ■) during a run into such a stop instead of an exception.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from . import delivery, interrupts, registry
from .runs import Run

__all__ = ["Sink"]

T = TypeVar("T")


class Sink:
    """Base class of host sinks: attach/detach, stop requests, and the run helpers.

    Subclasses override any of `on_start`, `on_rows`, `on_end`; they are called from whatever
    thread runs the loop's host callbacks, so they must be quick and thread-safe. An exception
    they raise is reported as a warning and never reaches the JAX computation.

    A subclass that defines `on_rows` sees each chunk's rows before the loop goes on, so a stop
    it asks for there ends the loop right after those rows (as in the example). Where no sink
    of a run needs that (``_rows_can_wait``, e.g. `Recorder`), the loop goes on at once and the
    rows are filed on a worker thread meanwhile; either way every row is in when the call
    returns.

    Examples
    --------
    A sink that stops the loop once the value drops below 1, from inside its callback:

    >>> import jaxhist_widget as jhw
    >>> class StopBelowOne(jhw.Sink):
    ...     def on_rows(self, run, lanes):
    ...         last = run.rows_since(0, run.counts[0] - 1)  # the newest row only: cheap
    ...         if last[0][-1] < 1.0:
    ...             self.stop()
    >>> sink = StopBelowOne()
    >>> final, hist = sink.run(
    ...     jhw.while_loop, lambda x: x > 0, lambda x: x / 2, 100.0, max_steps=50, stream_every=1
    ... )
    >>> float(final), int(hist.length)
    (0.78125, 8)
    """

    #: Whether the loop may go on before this sink has seen a chunk's rows (no stop it asks
    #: for depends on them). False for any subclass that defines its own `on_rows` (or
    #: `_should_stop`), unless it says so itself.
    _rows_can_wait: bool = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        watches = "on_rows" in cls.__dict__ or "_should_stop" in cls.__dict__
        if watches and "_rows_can_wait" not in cls.__dict__:
            cls._rows_can_wait = False

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._in_flight: set[int] = set()  # ids of runs streaming here that have not ended
        self._stopping: set[int] = set()  # ids of those asked to stop
        self._attach_depth = 0
        self._armed: list[bool] = []  # per `with` level: did it arm interrupts?

    # ----------------------------------------------------------------- sink callbacks
    def on_start(self, run: Run) -> None:
        """Called when a run starts streaming to this sink."""

    def on_rows(self, run: Run, lanes: list[int]) -> None:
        """Called after ``run`` received new rows for ``lanes`` (already appended to ``run``)."""

    def on_end(self, run: Run) -> None:
        """Called once when ``run`` ended (``run.status`` tells how)."""

    # called by the registry; wrap the public hooks with the bookkeeping every sink needs
    def _start(self, run: Run) -> None:
        with self._lock:
            self._in_flight.add(run.id)
        self.on_start(run)

    def _end(self, run: Run) -> None:
        with self._lock:
            self._in_flight.discard(run.id)
            self._stopping.discard(run.id)  # a stop request ends with its run
        self.on_end(run)

    def _resume(self, run: Run) -> None:
        """A run that was given up for dead (see `registry.abandon_runs`) sent more rows."""
        with self._lock:
            self._in_flight.add(run.id)

    def _should_stop(self, run: Run) -> bool:
        return run.id in self._stopping

    # --------------------------------------------------------------------- stopping
    def stop(self) -> None:
        """Ask every run streaming to this sink now to stop after its current step.

        Safe from any thread. The loop sees the request at its next chunk flush; the call that
        ran it returns normally with the partial history. The request applies to the runs in
        flight when it is made and ends with them: a stop while nothing runs does nothing, and
        a later run always starts fresh.
        """
        with self._lock:
            self._stopping |= self._in_flight

    @property
    def stop_requested(self) -> bool:
        """True once `stop` was called, until the runs it applies to have ended."""
        with self._lock:
            return bool(self._stopping)

    @property
    def running(self) -> bool:
        """True while a run streaming to this sink has started and not ended."""
        with self._lock:
            return bool(self._in_flight)

    @property
    def attached(self) -> bool:
        """True while attached (inside ``with sink:``, `run` or `run_async`)."""
        with self._lock:
            return self._attach_depth > 0

    # ----------------------------------------------------------- attach / interrupts
    def attach(self) -> None:
        """Attach this sink: runs that start from now on stream to it. Prefer ``with sink:``."""
        with self._lock:
            self._attach_depth += 1
            first = self._attach_depth == 1
        if first:
            registry.attach(self)

    def detach(self) -> None:
        """Detach this sink. Runs already started keep streaming to it until they end; once the
        last block that attached it ended, runs that can no longer end (their computation
        raised) are closed as ``failed`` (see `registry.abandon_runs`)."""
        with self._lock:
            self._attach_depth = max(0, self._attach_depth - 1)
            last = self._attach_depth == 0
        if last:
            registry.detach(self)
            registry.abandon_runs(self)

    def __enter__(self) -> Any:
        self.attach()
        # In the main thread an interrupt (Ctrl-C, ■) during a run becomes a stop request
        # (see `jaxhist_widget.interrupts`); elsewhere interrupts are left alone.
        self._armed.append(interrupts.arm(self))
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            registry.effects_barrier()
            delivery.drain(self)  # a slow sink has seen every row and the end when we return
        finally:
            if self._armed and self._armed.pop():
                interrupts.disarm(self)
            self.detach()

    # ------------------------------------------------------------------------ runners
    def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Call ``fn(*args, **kwargs)`` with this sink attached and return its result.

        An interrupt (Ctrl-C / the notebook's ■) during a run stops the loop at its next
        check and returns the partial result instead of raising.
        """
        with self:
            result = fn(*args, **kwargs)
            registry.block_until_ready(result)
        return result

    async def run_async(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Like `run`, but awaitable: the call runs in a worker thread while the event loop
        stays free, so widget messages (the Stop button) are handled during the run.

        A cancellation of the awaiting task (how an interrupt reaches an awaiting cell) stops
        the loop and still returns the partial result.
        """
        self.attach()
        try:
            done = threading.Event()
            box: dict[str, Any] = {}

            def work() -> None:
                try:
                    box["result"] = fn(*args, **kwargs)
                    registry.block_until_ready(box["result"])
                    delivery.drain(self)
                except BaseException as e:  # re-raised in the awaiting task
                    box["error"] = e
                finally:
                    done.set()

            threading.Thread(target=work, name="jaxhist-run", daemon=True).start()
            # Poll rather than await a future: a cancelled await must not abandon the thread.
            while not done.is_set():
                try:
                    await asyncio.sleep(0.02)
                except asyncio.CancelledError:
                    self.stop()
            if "error" in box:
                raise box["error"]
            return box["result"]
        finally:
            self.detach()
