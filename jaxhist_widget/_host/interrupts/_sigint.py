"""`InterruptBridge`: Ctrl-C and the notebook's ■ while sinks are armed.

What a press means, from the moment the first sink is armed until the last one is disarmed
(one ``with`` block, one auto-mode cell):

- the **first press**, while runs of armed sinks are in flight: those runs stop at their next
  flush and their calls return the partial results; no exception;
- **any further press** — while that stop is pending, or later in the same block — and a
  first press while nothing of ours runs: what the handler installed before would do
  (``KeyboardInterrupt`` by default; ``SIG_IGN`` ignores it; ``SIG_DFL`` ends the process). Runs
  in flight are stopped too, so a call busy in XLA returns and the exception is raised then
  (or sooner, where JAX's wait for the result runs signal handlers: the stop still holds once
  the block has ended, `Hub.abandon_runs`).

Where SIGINT is ignored when the first sink is armed (``SIG_IGN``: a script started in the
background of a shell without job control, a launcher that handles Ctrl-C itself), nothing is
installed: presses do nothing, as without the package (``sink.stop()`` still stops a run).

Why bytes: a jitted loop whose step is pure XLA work keeps the main thread inside one C++ call,
so a Python handler runs only when the call returns. CPython's C handler, though, writes one
byte per signal at once to the file descriptor given to `signal.set_wakeup_fd`. While armed,
the bridge owns that descriptor (a socket pair) and reads it on every flush (`poll`) and every
`PUMP_S` on the worker, so presses are counted exactly, however fast they come (the Python
handler runs once for all presses that arrived meanwhile). Bytes of other signals go on to the
descriptor that was set before (asyncio's, say) within `PUMP_S`. Taking the handler and the
descriptor, reading and forwarding the bytes, and giving both back is `_sigint_wakeup`'s.

The exception is never raised inside a host callback (XLA would turn it into a
``JaxRuntimeError``: the hub marks its own calls, `host_call`, and JAX's code that runs every
Python callback is known by identity), nor while a block of the package is being entered or
left (`shielded`, and a sink's ``__enter__`` / ``__exit__`` around it: it would leave a sink
attached or the handler installed), nor inside the
handler's own critical section (a second press in a hurry): it is raised as soon as the main
thread is back in plain Python, and runs that start meanwhile are stopped at once
(`aborting`).
"""

from __future__ import annotations

import _thread
import contextlib
import signal
import threading
import types
from collections.abc import Callable, Iterator
from typing import Any, Generic, Protocol, TypeVar

from ._agreement import PressAgreement
from ._sigint_wakeup import WakeupFd, behave_as, let_pending_handlers_run

__all__ = ["InterruptBridge", "Scheduler"]

#: What is armed: a sink, to the bridge only something to hand back (`InterruptBridge.armed`).
S = TypeVar("S")


class Scheduler(Protocol):
    """What the bridge needs of the host's worker: a call in ``delay`` seconds, on another
    thread, that can be cancelled before it runs. (The bridge knows nothing else of the host:
    the hub builds it and imports it, never the other way round.)"""

    def later(self, delay: float, fn: Callable[[], Any]) -> Any: ...


#: While armed, the worker reads the wakeup socket this often (seconds).
PUMP_S = 0.02
#: A press that could not be raised where it landed (in a host callback) is tried again after
#: this long (seconds): at once, from the worker, so that the main thread finds it pending the
#: moment XLA hands back control (CPython runs handlers right after a C call returns), before
#: the user's next statement can start another run.
RETRY_S = 0.0
#: A handler call with no new byte waits at most this long for one (seconds): the C handler
#: trips the Python handler before it writes the byte, and may run on another thread.
BYTE_WAIT_S = 0.05


def _xla_callback_code() -> frozenset[types.CodeType]:
    """The code JAX runs a Python callback in when XLA calls it (every ``pure_callback``,
    ``io_callback``, ``jax.debug.callback`` and the loop's own host calls go through it): a
    frame running it means an exception raised now would reach XLA. Found by identity, once;
    empty where JAX's internals moved (the hub's own marker still holds for its calls)."""
    try:
        from jax._src.callback import emit_python_callback
    except ImportError:  # pragma: no cover - another JAX version
        return frozenset()
    found, todo = set(), [emit_python_callback.__code__]
    while todo:
        code = todo.pop()
        found.add(code)
        todo.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return frozenset(found)


_CALLBACK_CODE = _xla_callback_code()


class InterruptBridge(Generic[S]):
    """Turns presses into stop requests or exceptions; see the module docstring.

    ``on_press(abort)`` stops the runs in flight of the armed sinks (all of them when
    ``abort``, else those not yet asked to stop) and says whether there were any.
    """

    def __init__(self, on_press: Callable[[bool], bool], worker: Scheduler) -> None:
        self._on_press = on_press
        self._worker = worker
        # Reentrant: the Python handler runs on the main thread between any two bytecodes,
        # also while the main thread holds this lock (arming, disarming).
        self._lock = threading.RLock()
        self._sinks: list[tuple[S, object]] = []  # (sink, token) per arm; blocks may nest
        self._wakeup = WakeupFd()  # SIGINT's handler and the wakeup fd, while installed
        self._busy = False  # the main thread is arming or disarming
        self._shield = 0  # depth of `shielded` sections of the main thread
        self._held = False  # someone is inside the lock
        self._presses = 0  # SIGINT presses counted (from bytes) since installed
        self._handled = 0  # presses the Python handler has accounted for
        self._signalled = 0  # handler calls not yet settled
        self._owed = 0  # bytes to skip: those of simulated presses (`_retry_later`)
        self._raise = False  # a press must reach the previous handler
        self._pump: Any = None
        self._handling = False  # the main thread is inside `_on_sigint`'s critical section
        self._host_calls = threading.local()  # per thread: inside a host call of the loop's
        self._agreement = PressAgreement()  # across the processes of a jax.distributed job
        #: Presses that stopped runs (ever): a cell compares it before and after it ran.
        self.stops = 0

    # -------------------------------------------------------------------------- public
    def armed(self) -> list[S]:
        with self._locked():
            return list(dict.fromkeys(sink for sink, _ in self._sinks))

    @contextlib.contextmanager
    def shielded(self, undo: Callable[[], None] | None = None) -> Iterator[None]:
        """A section of the main thread (entering or leaving a block) that no press may cut
        short: presses meanwhile are counted, and the one to raise is raised at its end, after
        ``undo()`` (which takes back what the section did, e.g. entering a block). An exception
        inside the section also runs ``undo`` first."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        self._shield += 1
        try:
            yield
        except BaseException:
            if undo is not None:
                undo()
            raise
        finally:
            # Settled where the outermost section ends (an `attach` inside `__enter__`).
            previous = self._settle_shield() if self._shield == 1 else _NONE
            if previous is not _NONE and undo is not None:
                undo()
            self._shield -= 1
        if previous is not _NONE:
            behave_as(previous, signal.SIGINT, None)

    def arm(self, sink: S) -> object | None:
        """Make presses stop ``sink``'s runs; a token for `disarm`, or None where that cannot
        work (not the main thread, where signal handlers cannot be installed: there
        ``sink.stop()`` is the way) or must not (SIGINT ignored: presses stay ignored)."""
        if threading.current_thread() is not threading.main_thread():
            return None
        with self._locked(busy=True):
            if not self._wakeup.installed and not self._install():
                return None
            token = object()
            self._sinks.append((sink, token))
            return token

    def disarm(self, token: object | None) -> None:
        """Undo the `arm` that gave ``token`` (nothing if it is not armed); the last one
        restores the handler and the wakeup fd. A press to raise is left to `shielded`."""
        with self._locked(busy=True):
            self._sinks = [(s, t) for s, t in self._sinks if t is not token]
            if self._sinks or not self._wakeup.installed:
                return
            self._read()
            # A handler call still pending (a press already read, or a simulated one whose
            # byte was): let it run now (it only counts, we are busy), or it would reach the
            # restored handler as a fresh press.
            let_pending_handlers_run()
            if self._account() is not _NONE:
                self._raise = True  # for `_settle_shield`, once uninstalled
            self._uninstall()

    @contextlib.contextmanager
    def host_call(self) -> Iterator[None]:
        """Mark the calling thread as inside one of the loop's host calls (the hub's entry
        points): a press that lands on it there is raised once it is back in plain Python."""
        depth = getattr(self._host_calls, "depth", 0)
        self._host_calls.depth = depth + 1
        try:
            yield
        finally:
            self._host_calls.depth = depth

    def in_host_call(self) -> bool:
        """Whether the calling thread is inside one of the loop's host calls (`host_call`)."""
        return bool(getattr(self._host_calls, "depth", 0))

    def poll(self) -> None:
        """Count the presses that arrived (any thread; one non-blocking ``recv`` if none)."""
        with self._locked():
            if self._wakeup.installed:
                self._read()

    # ----------------------------------------------------------------------- internals
    @contextlib.contextmanager
    def _locked(self, busy: bool = False) -> Iterator[None]:
        with self._lock:
            held, was_busy = self._held, self._busy
            self._held, self._busy = True, busy or was_busy
            try:
                yield
            finally:
                self._held, self._busy = held, was_busy

    def _read(self) -> None:
        """Account for wakeup bytes; forward those of other signals (caller holds the lock)."""
        data = self._wakeup.read()
        forward = bytearray()
        for signum in data:
            if signum != signal.SIGINT:
                forward.append(signum)
            elif self._owed:
                self._owed -= 1
            elif self._decide():  # the previous owner's press: its fd learns of it too
                forward.append(signum)
        self._wakeup.forward(bytes(forward))

    def _decide(self) -> bool:
        """One more press (caller holds the lock); whether it goes to the previous handler."""
        self._presses += 1
        stop = self._agreement.follow(self._presses)  # another process decides, if any
        if stop is None:
            stop = self._presses == 1 and self._on_press(False)
            self._agreement.publish(self._presses, stop)
        elif stop:
            self._on_press(False)  # its runs, if any: the decider's stop reaches them anyway
        if stop:
            self.stops += 1
            return False  # a stop: the calls return their partial results
        self._on_press(True)  # so that a call busy in XLA returns and the press can be raised
        self._raise = True
        return True

    def _account(self) -> Any:
        """Settle the handler's calls against the bytes (caller holds the lock); the handler
        to behave as when a press must be raised, else `_NONE`."""
        self._read()
        if self._signalled and self._presses == self._handled and self._wakeup.wait(BYTE_WAIT_S):
            # The handler ran and no press was counted since it last did: either a press whose
            # byte is yet to come (its C handler, on another thread, trips the Python handler
            # before it writes the byte), or a simulated press (`_retry_later`) whose byte was
            # read already and whose call is none of the user's. Only a byte tells them apart:
            # counting the call as a press would make a phantom second press of the latter.
            self._read()
        self._signalled = 0
        self._handled = self._presses
        if not self._raise:
            return _NONE
        self._raise = False
        return self._wakeup.previous

    def _settle_shield(self) -> Any:
        """At the end of a shielded section: the handler to behave as for a press that came
        meanwhile and must be raised, else `_NONE`."""
        with self._locked(busy=True):
            if self._wakeup.installed:
                return self._account()
            # Not installed (any more): a press meanwhile is the current handler's.
            pending = self._raise or self._signalled > 0
            self._raise, self._signalled = False, 0
            return signal.getsignal(signal.SIGINT) if pending else _NONE

    def _on_sigint(self, signum: int, frame: Any) -> None:
        """The Python-level SIGINT handler while installed (main thread)."""
        self._signalled += 1
        if self._busy or self._shield:  # settled where that section ends
            return
        if (
            self._in_callback(frame)
            or self._at_block_edge(frame)
            or self._held
            or self._handling
            or not self._lock.acquire(blocking=False)
        ):
            # Inside a host callback (a raised exception would reach XLA), a block being
            # entered or left, the bridge's own bookkeeping, or this very handler (a second
            # press landed in the first one's critical section: the lock, reentrant, would let
            # it in): ask again shortly. Meanwhile the runs are stopped and new ones stop at
            # once (`aborting`), so the main thread soon is back in plain Python.
            self._retry_later()
            return
        self._handling = True
        try:
            previous = self._account() if self._wakeup.installed else _NONE
        finally:
            self._handling = False
            self._lock.release()
        if previous is not _NONE:
            behave_as(previous, signum, frame)

    def _in_callback(self, frame: Any) -> bool:
        """Whether the main thread is inside a host callback: one of the loop's (the hub's
        marker) or any other XLA runs (a ``jax.debug.callback`` in the step)."""
        if getattr(self._host_calls, "depth", 0):
            return True
        while frame is not None:
            if frame.f_code in _CALLBACK_CODE:
                return True
            frame = frame.f_back
        return False

    def _at_block_edge(self, frame: Any) -> bool:
        """Whether the main thread is entering or leaving the block of an armed sink, outside
        its `shielded` section: a press raised there would leave ``__enter__`` before the
        block is entered (or ``__exit__`` before it detached), so that no ``__exit__`` ever
        runs and the sink stays attached and armed, the handler installed. The press is
        settled where that section ends, or (after it) tried again in plain Python."""
        sinks = [sink for sink, _ in self._sinks]
        while frame is not None:
            if frame.f_code.co_name in ("__enter__", "__exit__"):
                owner = frame.f_locals.get("self")
                if any(owner is sink for sink in sinks):
                    return True
            frame = frame.f_back
        return False

    @property
    def aborting(self) -> bool:
        """A press is to be raised: runs that start meanwhile are stopped at once."""
        return self._raise

    def _retry_later(self) -> None:
        # Ask the main thread again shortly, by simulating a press (its byte is owed: it is
        # not one of the user's presses).
        def again() -> None:
            with self._locked():
                if not (self._wakeup.installed and (self._signalled or self._raise)):
                    return
                # Under the lock, so that its byte is written while installed and is there
                # for the next read: disarming in between would hand the simulated press to
                # the restored handler (a KeyboardInterrupt after the block).
                self._owed += 1
                _thread.interrupt_main(signal.SIGINT)

        self._worker.later(RETRY_S, again)

    def _pump_tick(self) -> None:
        with self._locked():
            if not self._wakeup.installed:
                return
            self._read()
            self._pump = self._worker.later(PUMP_S, self._pump_tick)

    def _install(self) -> bool:
        if not self._wakeup.install(self._on_sigint):
            return False
        self._presses = self._handled = self._owed = 0
        self._agreement.begin_block()
        self._raise = False
        self._pump = self._worker.later(PUMP_S, self._pump_tick)
        return True

    def _uninstall(self) -> None:
        """Restore the handler and the wakeup fd (caller holds the lock)."""
        if self._pump is not None:
            self._pump.cancel()
        self._wakeup.uninstall(self._on_sigint)


_NONE = object()  # no press to raise
