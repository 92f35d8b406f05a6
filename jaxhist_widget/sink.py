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
import contextlib
import signal
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from . import registry
from .runs import Run

__all__ = ["Sink"]

T = TypeVar("T")


class Sink:
    """Base class of host sinks: attach/detach, stop requests, and the run helpers.

    Subclasses override any of `on_start`, `on_rows`, `on_end`; they are called from whatever
    thread runs the loop's host callbacks, so they must be quick and thread-safe. An exception
    they raise is reported as a warning and never reaches the JAX computation.

    Examples
    --------
    A sink that stops the loop once the value drops below 1, from inside its callback:

    >>> import jaxhist_widget as jhw
    >>> class StopBelowOne(jhw.Sink):
    ...     def on_rows(self, run, lanes):
    ...         if run.lane_rows(0)[0][-1] < 1.0:
    ...             self.stop()
    >>> sink = StopBelowOne()
    >>> final, hist = sink.run(
    ...     jhw.while_loop, lambda x: x > 0, lambda x: x / 2, 100.0, max_steps=50, stream_every=1
    ... )
    >>> float(final), int(hist.length)
    (0.78125, 8)
    """

    def __init__(self) -> None:
        self._stop_event = threading.Event()
        self._lock = threading.RLock()
        self._active = 0  # runs streaming to this sink that have not ended
        self._attach_depth = 0
        self._saved_handlers: list[Any] = []

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
            self._active += 1
        self.on_start(run)

    def _end(self, run: Run) -> None:
        with self._lock:
            self._active = max(0, self._active - 1)
            if self._active == 0:
                # A stop request is for the runs in flight; the next run starts fresh.
                self._stop_event.clear()
        self.on_end(run)

    # --------------------------------------------------------------------- stopping
    def stop(self) -> None:
        """Ask every run streaming to this sink to stop after its current step.

        Safe from any thread. The loop sees the request at its next chunk flush; the call that
        ran it returns normally with the partial history. The request ends with the last run in
        flight (or is cleared when the sink is next entered), so the next run starts fresh.
        A request while the sink is neither attached nor running does nothing, so a stale
        stop never ends a later run.
        """
        with self._lock:
            if self._attach_depth == 0 and self._active == 0:
                return
            self._stop_event.set()

    @property
    def stop_requested(self) -> bool:
        """True once `stop` was called, until the runs in flight ended."""
        return self._stop_event.is_set()

    @property
    def running(self) -> bool:
        """True while a run streaming to this sink has started and not ended."""
        with self._lock:
            return self._active > 0

    # ----------------------------------------------------------- attach / interrupts
    def attach(self) -> None:
        """Attach this sink: runs that start from now on stream to it. Prefer ``with sink:``."""
        with self._lock:
            self._attach_depth += 1
            first = self._attach_depth == 1
        if first:
            self._stop_event.clear()
            registry.attach(self)

    def detach(self) -> None:
        """Detach this sink (runs already started keep streaming to it until they end)."""
        with self._lock:
            self._attach_depth = max(0, self._attach_depth - 1)
            last = self._attach_depth == 0
        if last:
            registry.detach(self)

    def __enter__(self) -> Any:
        self.attach()
        self._install_interrupt_handler()
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        try:
            registry.effects_barrier()
        finally:
            if exc_type is not None:  # the computation died: its runs will never close
                registry.fail_runs(self)
            self._restore_interrupt_handler()
            self.detach()

    def _install_interrupt_handler(self) -> None:
        # Python delivers SIGINT to the main thread only, and on CPU a jitted call with host
        # callbacks runs on the calling thread, so the handler runs inside our own callback.
        # Raising there would kill the XLA computation (and its history); setting a flag does not.
        if threading.current_thread() is not threading.main_thread():
            self._saved_handlers.append(None)
            return
        previous = signal.getsignal(signal.SIGINT)

        def on_interrupt(signum: int, frame: Any) -> None:
            if self.running and not self.stop_requested:
                self.stop()
                return
            # No run of ours is active (or a stop is already pending and the user insists):
            # behave as before we were attached.
            if previous is signal.SIG_IGN:
                return
            if callable(previous):
                previous(signum, frame)
            else:
                raise KeyboardInterrupt

        try:
            signal.signal(signal.SIGINT, on_interrupt)
        except ValueError:  # not the main interpreter
            previous = None
        self._saved_handlers.append(previous)

    def _restore_interrupt_handler(self) -> None:
        previous = self._saved_handlers.pop() if self._saved_handlers else None
        if previous is not None:
            with contextlib.suppress(ValueError):
                signal.signal(signal.SIGINT, previous)

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
                registry.fail_runs(self)
                raise box["error"]
            return box["result"]
        finally:
            self.detach()
