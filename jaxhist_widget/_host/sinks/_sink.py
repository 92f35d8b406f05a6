"""`Sink`: the base every host-side receiver of streamed rows derives from.

Host runtime. A sink is attached for the duration of a ``with`` block (or a `Sink.run` call);
every `jaxhist_widget.while_loop` that *starts* while it is attached streams to it. Where a
jitted call returns before its loop has run (a TPU, a GPU, several CPU devices), the block
waits for the device as it ends, and as it starts (`Programs.wait`): a loop called inside the
block is the block's, wherever the device runs it, whether or not its result is kept. In a
sink's hook it does not wait (`_wait_for_device`). The traced
program never holds a sink: it holds a run id, and the hub (`_hub.Hub`) maps the id to the
sinks that were attached when that run started (so the jit cache cannot keep a stale sink).

Sinks also own the stop request. `stop()` sets a flag that the next chunk flush of every run
streaming to this sink reads back into the loop, which then ends after the current step with its
partial history intact. While attached in the main thread, a sink turns the first interrupt
(Ctrl-C, the notebook's ■) during a run into such a stop instead of an exception (see
`_sigint.InterruptBridge` for every press after it).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from ..runtime import HUB, Run, call_name, check_name, wait_for
from . import _log

__all__ = ["Sink", "name_runs"]

T = TypeVar("T")


class Sink:
    """Base class of host sinks: attach/detach, stop requests, and the run helpers.

    Subclasses override any of `on_start`, `on_rows`, `on_end`; they are called from whatever
    thread runs the loop's host callbacks, so they must be quick and thread-safe. An exception
    they raise is reported (once per run) as a warning and never reaches the JAX computation;
    a ``SystemExit`` or ``KeyboardInterrupt`` they raise stops their runs and is raised again
    where the block (or `run`) ends.

    A sink with an `on_rows` of its own (from its class, a mixin or set on the instance) sees
    each chunk's rows before the loop goes on, so a stop it asks for there ends the loop right
    after those rows (as in the example). Where no sink of a run needs that (`rows_can_wait`,
    e.g. `Recorder`), the loop goes on at once and the rows are filed on the package's worker
    thread meanwhile; either way every row is in when the call returns.

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

    _name: str | None = None

    @property
    def name(self) -> str | None:
        """The name given to the runs that start while this sink is attached, unless a `named`
        block or a runner's ``name=`` names them (`Run.name`; None: a name made up from the
        runner's call or the cell, else the plot's ``run N``). `Store` takes it as ``name=``.

        Set inside a block, it names the loops called after it: where dispatch is asynchronous
        (a TPU, a GPU) a loop called before may not have started yet, so setting it waits for
        them first.
        """
        return self._name

    @name.setter
    def name(self, value: str | None) -> None:
        self._wait_for_earlier_loops()
        self._name = value

    #: Whether the loop may go on before this sink has seen a chunk's rows (no stop it asks
    #: for depends on them). None: decided from what the sink does — False when it has an
    #: `on_rows` or `_should_stop` of its own (from its class, a mixin or the instance).
    rows_can_wait: bool | None = None

    def _rows_can_wait(self, accelerated: bool) -> bool:
        """`rows_can_wait` as the hub asks it, for a loop on an accelerator (a chip stopped
        while the host works) or not; a subclass may decide by it (`LivePlot` does)."""
        if self.rows_can_wait is not None:
            return self.rows_can_wait
        own = vars(self)
        return (
            type(self).on_rows is Sink.on_rows
            and type(self)._should_stop is Sink._should_stop
            and "on_rows" not in own
            and "_should_stop" not in own
        )

    @property
    def _companions(self) -> tuple[Sink, ...]:
        """Sinks that get every run this one gets, with it (a plot's store and TensorBoard
        copies): the hub joins them to the run, before this sink (`HubSink._companions`)."""
        return ()

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._in_flight: set[int] = set()  # ids of runs streaming here that have not ended
        self._stopping: set[int] = set()  # ids of those asked to stop
        self._attach_depth = 0
        self._armed = threading.local()  # per thread, per `with` level: did it arm?
        # The names of the open named blocks, innermost last: (name, given by the user).
        self._names: list[tuple[str, bool]] = []

    # ---------------------------------------------------------------------- naming
    @contextlib.contextmanager
    def named(self, name: str) -> Iterator[Any]:
        """Attach this sink (as ``with sink:`` does) and name the runs that start in the block.

        Every sink the run streams to sees that name (`Run.name`): a `LivePlot` lists and labels
        the run by it, a `Store` files it under it. Several runs of one block share the name
        (a plot tells them apart as ``adam (2)``).

        Examples
        --------
        >>> import jaxhist_widget as jhw
        >>> rec = jhw.Recorder()
        >>> with rec.named("halving"):
        ...     _ = jhw.while_loop(lambda x: x > 1.0, lambda x: x / 2, 10.0, max_steps=9)
        >>> rec.runs[-1].name
        'halving'
        """
        with self._naming(check_name(name), given=True), self:
            yield self

    def _wait_for_earlier_loops(self) -> None:
        """Before a name changes while attached, let the loops called before open their runs
        under the names they were called under (where dispatch is asynchronous they may not
        have started yet; unattached, `__enter__` waits for them)."""
        if getattr(self, "_attach_depth", 0):
            _wait_for_device()

    @contextlib.contextmanager
    def _naming(self, name: str | None, given: bool) -> Iterator[None]:
        """Name the runs that start until the block ends (``given``: by the user; else made up
        by a runner or a cell, which a sink's own `name` overrides)."""
        if name is None:
            yield
            return
        entry = (name, given)
        self._wait_for_earlier_loops()
        with self._lock:
            self._names.append(entry)
        try:
            yield
        finally:
            with self._lock:
                if entry in self._names:
                    # the last of its kind: blocks of other threads may have opened since
                    del self._names[len(self._names) - 1 - self._names[::-1].index(entry)]

    def _run_names(self) -> tuple[str | None, str | None, str | None]:
        """What this sink offers to name a run starting now (see `_naming.run_name`): the
        innermost given name, its own `name`, the innermost made-up one."""
        names = list(getattr(self, "_names", ()))  # (a subclass may skip Sink.__init__)
        given = next((n for n, g in reversed(names) if g), None)
        made = next((n for n, g in reversed(names) if not g), None)
        return given, self.name, made

    # ----------------------------------------------------------------- sink callbacks
    def on_start(self, run: Run) -> None:
        """Called when a run starts streaming to this sink."""

    def on_rows(self, run: Run, lanes: list[int]) -> None:
        """Called after ``run`` received new rows for ``lanes`` (already appended to ``run``)."""

    def on_end(self, run: Run) -> None:
        """Called once when ``run`` ended (``run.status`` tells how)."""

    # The hub's interface to a sink: the public hooks, with the bookkeeping every sink needs.
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
        """A run that was given up for dead (see `Hub.abandon_runs`) sent more rows."""
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
        """Attach this sink: runs that start from now on stream to it. Prefer ``with sink:``,
        which also waits for the loops dispatched before it (still running on an accelerator)
        to start, so that none of them streams to the block's sink."""
        with HUB.interrupts.shielded():  # a press cannot leave it half attached
            with self._lock:
                self._attach_depth += 1
                first = self._attach_depth == 1
            if first:
                HUB.attach(self)

    def detach(self) -> None:
        """Detach this sink. Runs already started keep streaming to it until they end; once the
        last block that attached it ended, runs that can no longer end (their computation
        raised) are closed as ``failed`` (see `Hub.abandon_runs`)."""
        with HUB.interrupts.shielded():  # a press cannot leave it half detached
            with self._lock:
                self._attach_depth = max(0, self._attach_depth - 1)
                last = self._attach_depth == 0
            if last:
                _log.end_block(self, None)
                HUB.detach(self)
                HUB.abandon_runs(self)

    def __enter__(self) -> Any:
        # Loops dispatched before the block, still running on the device (dispatch may be
        # asynchronous), are not the block's: they open their runs before it attaches. Waited
        # for outside the shielded section, so that a press meanwhile raises as usual.
        _wait_for_device()
        # In the main thread an interrupt (Ctrl-C, ■) during a run becomes a stop request;
        # elsewhere interrupts are left alone. A press while entering cannot leave the sink
        # half-entered: the section is shielded, and a press to raise undoes it first.
        arms = self._arms()
        depth = len(arms)

        def undo() -> None:
            while len(arms) > depth:
                HUB.interrupts.disarm(arms.pop())
                self.detach()

        with HUB.interrupts.shielded(undo):
            token = HUB.interrupts.arm(self)
            arms.append(token)
            self.attach()
        return self

    def __exit__(self, *exc: Any) -> bool:
        # Shielded too: a press while leaving is raised once nothing stays attached or armed.
        with HUB.interrupts.shielded():
            token = self._arms().pop() if self._arms() else None
            try:
                _log.end_block(self, exc[1] if len(exc) > 1 else None)  # a `jhw.log` run
                # Dispatch may be asynchronous (TPU, GPU, several CPU devices): the loops the
                # block started may still run, or not have started, on the device. Their rows
                # come while the sink is still attached and armed (a press stops them).
                _wait_for_device()
                HUB.drain(self)  # every row is in, and a slow sink has seen them
            finally:
                try:
                    self.detach()
                finally:
                    HUB.interrupts.disarm(token)
        raised = HUB.take_exit(self)
        if raised is not None:
            raise raised
        # `jhw.log` ended the block's loop on a stop: the code after the block runs.
        return isinstance(exc[1] if len(exc) > 1 else None, _log.Stopped)

    @property
    def _interrupts_armed(self) -> bool:
        """Whether a press (Ctrl-C, ■) reaches this sink's runs (armed in the main thread)."""
        return self in HUB.interrupts.armed()

    def _arms(self) -> list[object | None]:
        """This thread's arming tokens, one per open block (threads never share them)."""
        arms = getattr(self._armed, "stack", None)
        if arms is None:
            arms = self._armed.stack = []
        return arms

    # ------------------------------------------------------------------------ runners
    def run(
        self, fn: Callable[..., T], *args: Any, name: str | None = None, **kwargs: Any
    ) -> T | None:
        """Call ``fn(*args, **kwargs)`` with this sink attached and return its result.

        An interrupt (Ctrl-C / the notebook's ■) during a run stops the loop at its next
        check and returns the partial result instead of raising.

        ``name`` names the runs ``fn`` starts (see `named`; it is not passed to ``fn``: give
        a ``name`` of ``fn``'s own through `functools.partial`). Without it they are named
        after the call, e.g. ``solve(3, lr=0.001)`` (numbers as themselves, arrays as
        ``f32[8,2]``), unless `name` is set.

        A Python loop in ``fn`` that `jaxhist_widget.log` ended on a stop (`Stopped`) makes
        this return None, its rows kept.
        """
        label = check_name(name) if name is not None else call_name(fn, args, kwargs)
        result = None  # what a loop `jhw.log` stopped (`Stopped`, caught by the block) returns
        with self._naming(label, given=name is not None), self:
            result = fn(*args, **kwargs)
            _block_until_ready(result)
        return result

    async def run_async(
        self, fn: Callable[..., T], *args: Any, name: str | None = None, **kwargs: Any
    ) -> T | None:
        """Like `run`, but awaitable: the call runs in the event loop's executor while the
        loop stays free, so widget messages (the Stop button) are handled during the run.

        A cancellation of the awaiting task (how an interrupt reaches an awaiting cell) stops
        the loop and still returns the partial result. ``name`` as in `run`.
        """
        label = check_name(name) if name is not None else call_name(fn, args, kwargs)
        with self._naming(label, given=name is not None):
            return await self._run_async(fn, args, kwargs)

    async def _run_async(self, fn: Callable[..., T], args: Any, kwargs: Any) -> T | None:

        def work() -> T | None:
            try:
                result = fn(*args, **kwargs)
            except _log.Stopped:  # a loop `jhw.log` stopped: its rows are kept
                result = None
            except BaseException as e:
                _log.end_block(self, e)  # a `jhw.log` run ends as failed
                raise
            _block_until_ready(result)
            _log.end_block(self, None)
            HUB.drain(self)
            return result

        _wait_for_device()  # loops dispatched before are not this call's (see `__enter__`)
        self.attach()
        try:
            future = asyncio.get_running_loop().run_in_executor(None, work)
            while not future.done():
                try:
                    # Wake up now and then: a signal taken by another thread reaches this
                    # thread's handler (and so the task, as a cancellation) only when it runs
                    # Python. A cancelled wait leaves the work running: it is stopped instead.
                    await asyncio.wait({future}, timeout=0.02)
                except asyncio.CancelledError:
                    self.stop()
            raised = HUB.take_exit(self)
            if raised is not None:
                raise raised
            return future.result()
        finally:
            self.detach()


def name_runs(sink: Sink, name: str | None, given: bool) -> contextlib.AbstractContextManager:
    """Name the runs that start while ``sink`` is attached until the block ends, as
    ``sink.named`` does without attaching it (``given``: the user's name; else a made-up one,
    which the sink's own `Sink.name` overrides; None: no name). For the %%jaxhist magic:
    ``--name``, and ``cell 7`` for a cell's runs."""
    return sink._naming(name, given)


def _wait_for_device(poll: float = 0.01) -> None:
    """Wait until the device has passed the loops dispatched so far (`Programs.wait`), unless
    this is a sink's hook (inside the loop's host call, or on the worker): the device may be
    waiting for this very thread there (the loop's next host call). A loop called there is
    done when its call returns on a CPU (a program called inside a host call runs inline)."""
    if not (HUB.worker.on_worker_thread() or HUB.interrupts.in_host_call()):
        HUB.programs.wait(poll)


def _block_until_ready(result: Any, poll: float = 0.01) -> None:
    """Wait for ``result`` and for the device work dispatched before it, so a runner returns
    only when rows are in (see `_wait_for_device`); raise the error of a computation that
    failed, as ``jax.block_until_ready`` would (on an accelerator the call returned before)."""
    import jax

    arrays = [x for x in jax.tree_util.tree_leaves(result) if isinstance(x, jax.Array)]
    wait_for(arrays, poll)
    _wait_for_device(poll)
    jax.block_until_ready([x for x in arrays if not x.is_deleted()])
