"""`log`: one row per call from a Python loop over a jitted step, streamed as a run.

Host runtime. A Python loop (``for batch in data: state, loss = train_step(state, batch)``) has
no traced loop to record, so its rows are made here, on the host. Its run is an entry of the
hub's run table like a device loop's (`Hub.open_log_run`; `Hub.log_run` hands the calls of a
block the state of the one they stream to), and its rows reach the hub through the entry point
the device's flushes use (`_wire.receive_chunk`), packed as the device packs them, in the run's
channel (its worker key). Sinks, stores, plots, statuses and stop answers therefore behave
exactly as for a `while_loop`. No lock is held while the hub tells sinks of the run, or while a
call waits.

Keeping the loop asynchronous: JAX returns a jitted step's outputs before the device has
computed them, and ``float(loss)`` each step would make the loop wait for every step. `log`
keeps each call's values as they are at the call without waiting for them (`_log_values`: a
copy in a batch's columns, or on the device) and hands the batch, about as often as the hub
asks for rows (~20 times a second), to the package's worker thread, which fetches what is still
on the device at once (one ``jax.device_get``, waiting there for the device, not in the loop)
and delivers it. The loop itself waits only when the worker is `_worker.MAX_PENDING` batches
behind.

Runs and blocks: the rows of the calls made while the same sinks are attached form one run.
It ends when a block of one of its sinks ends (``with sink:``, ``sink.run(...)``, a
``%%jaxhist`` or auto-mode cell: `end_block`), as ``converged`` (shown as finished; also a
generator logging inside the block that its consumer closed, e.g. by ``break``), ``stopped`` or
``failed`` (the block ended with an exception). A stop (a sink's ``stop()``,
its Stop button, the first ■ / Ctrl-C) makes the next `log` call send every row logged so far,
end the run as ``stopped`` and raise `Stopped`, which the block catches (`Sink.__exit__`). A
stop a sink asks for as it sees rows (in ``on_rows``, on the worker thread) ends the run on the
host with the rows it saw: the hub ends a run on its stop answer. The loop learns of it at a
later call, and the rows it logged meanwhile are not kept.
"""

from __future__ import annotations

import math
import threading
from typing import Any

import jax
import numpy as np

from ... import _wire
from ..._wire import Layout
from ..runtime import HUB, STATUSES, report
from ._log_values import Batch, Leaves

__all__ = ["Stopped", "end_block", "log"]

#: Rows one chunk carries at most (the run's `Layout.chunk`).
CHUNK_ROWS = 4096

_CONVERGED, _STOPPED, _FAILED = (STATUSES.index(s) for s in ("converged", "stopped", "failed"))


class Stopped(Exception):
    """Raised by `jaxhist_widget.log` once its run was stopped (a sink's ``stop()``, the Stop
    button, ■ / Ctrl-C): the rows logged so far are kept and the run reads ``stopped``.

    ``with sink:``, ``sink.run(...)`` and ``sink.run_async(...)`` catch it, so the code after
    the block runs; in a ``%%jaxhist`` or auto-mode cell it ends the cell with one line.
    Until that block ends, every further `log` call raises it again.
    """

    def _render_traceback_(self) -> list[str]:  # IPython shows this instead of a traceback
        return [f"{type(self).__name__}: {self}"]


class _Open:
    """A `jhw.log` run's state on the host: the hub's entry of the run holds it (`Entry.host`;
    `Hub.log_run` hands it to the calls of the block that streams to it)."""

    def __init__(
        self, leaves: Leaves, layout: Layout, run_id: int, interval: int, sinks: tuple
    ) -> None:
        # A leaf lock (see the hub's lock order): the batch, the rows handed over, the end
        # claimed. Nothing is taken, no hook runs and nothing is waited for while it is held.
        self.lock = threading.Lock()
        self.leaves = leaves
        self.layout = layout
        self.run_id = run_id
        self.interval = interval  # rows per chunk the hub asks for (set from its answers)
        self.batch = Batch(leaves, interval)  # rows not handed over yet
        self.full: list[Batch] = []  # batches handed over, to be sent in the run's channel
        self.done = False  # its end is claimed: no row joins it after
        self.sent = 0  # rows the hub received
        self.host_stop = False  # the hub answered stop (a sink, ■, Ctrl-C)
        self.step = -1  # the last step= given (or counted)
        self.sinks = sinks  # those attached when it opened: the block's


def log(*, step: int | None = None, **values: Any) -> None:
    """Log one row of a Python loop's values to the sinks attached now, as one run per block.

    For a Python ``for`` loop over a jitted step: inside ``with sink:``, ``sink.run(...)``, a
    ``%%jaxhist`` cell or auto mode, each call adds a row (``loss=loss, acc=acc``) to the
    block's run, which a `Recorder`, `Store` or ``LivePlot`` receives as it receives a
    `while_loop`'s: the same charts, rows and statuses. With no sink attached it does nothing.

    Parameters
    ----------
    **values
        The row: each value a ``jax.Array`` (as a jitted step returns it), a numpy array or a
        number, the same names and shapes every call, and each name one kind of number: the
        first call's dtype is the run's, and a later value of a wider kind (a float where the
        first was an int, a number where it was a bool) is refused rather than cast. Each value
        is kept as it is at the call: a numpy array updated in place afterwards, or a
        ``jax.Array`` that a later step donates (``donate_argnums``), is logged at its value
        then. Arrays are not waited for: the package's worker thread fetches them in batches,
        waiting for the device in the loop's stead, so the loop keeps JAX's asynchronous
        dispatch (no ``float(loss)`` a step).
    step
        Your step number for the row, kept as a leaf ``step`` (a plot leaves it out while its
        values are the rows' 0, 1, 2, ..., which its step axis counts, and draws other steps as
        a chart); given on a run's first call, give it on every call.

    Raises
    ------
    TypeError
        For a value that is not numbers (a dict: ``jhw.log(**metrics)``; None; a str), names
        other than the first call's, or a value of a wider kind than the first call's (see
        ``values``); the message says what to log instead. Nothing of that call is kept.
    ValueError
        For a shape other than the first call's, or an integer (a Python int, or a numpy or
        jax integer of a wider dtype) that the first call's integer dtype cannot hold: it
        would wrap around (``np.int64(2**40)`` into int32 is 0). The run keeps its first
        dtype; start the name at one that holds every value.
    Stopped
        Once the run was stopped: a sink's ``stop()``, the plot's Stop button, ■ / Ctrl-C (the
        first press). Every row logged so far is kept and the run reads ``stopped``; the
        block (``with sink:``, ``sink.run``) catches it and the code after it runs.

    Notes
    -----
    The run ends when the block ends (``finished``; ``failed`` if it ends with an exception;
    a generator that logs inside the block and that its consumer closes, by ``break`` or
    ``close()``, finishes), or when another sink's block begins or ends around the calls (each
    block its own run).

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> import jaxhist_widget as jhw
    >>> step = jax.jit(lambda w: (w - 0.1 * 2 * w, jnp.sum(w**2)))
    >>> w = jnp.ones(3)
    >>> with jhw.Recorder() as rec:
    ...     for _ in range(5):
    ...         w, loss = step(w)
    ...         jhw.log(loss=loss)
    >>> [round(float(v), 2) for v in rec.history()["loss"]], rec.runs[-1].status
    ([3.0, 1.92, 1.23, 0.79, 0.5], 'converged')
    """
    if not values:
        raise TypeError("jhw.log needs at least one value to log, e.g. jhw.log(loss=loss).")
    sinks = HUB.attached()
    if not sinks:
        return  # nobody listens: nothing to keep
    while True:
        run = _open_run(sinks, values, step)
        if run is None:
            continue  # another thread opened one for other sinks: ended on the next turn
        stop = run.host_stop or _stop_asked(sinks)  # asked before the run's (leaf) lock
        with run.lock:
            if run.done:
                continue  # its block ended meanwhile (another thread): the run open now
            if run.leaves.step_index is not None:
                row_step = run.step + 1 if step is None else int(step)
            elif step is not None:
                raise TypeError(
                    "jhw.log: step= was not given on this run's first call; give it always."
                )
            else:
                row_step = 0
            run.batch.add(run.leaves, values, row_step)  # raises for a bad call, adding nothing
            run.step = row_step
            handed = not stop and run.batch.n >= run.batch.capacity
            if handed:
                run.full.append(run.batch)
                run.batch = Batch(run.leaves, run.interval)
        break
    if stop:
        HUB.stop_log_run(run, sinks)
        _finish(run, _STOPPED)
        raise Stopped("the run was stopped; the rows logged so far are kept")
    if handed:
        HUB.worker.submit(run.run_id, _deliver, run)  # waits while MAX_PENDING are behind


def end_block(sink: Any, error: BaseException | None) -> None:
    """A block of ``sink`` ends (``error``: the exception it ends with): end the run of its
    calls with every row logged, as ``converged`` (also a generator closed by its consumer),
    ``stopped`` (a stop, an interrupt) or ``failed`` (another exception). Never raises."""
    run: _Open | None = HUB.end_log_block(sink)  # claimed: this call ends it
    if run is None:
        return
    stopped = isinstance(error, (Stopped, KeyboardInterrupt))
    if stopped or _stop_asked(run.sinks):
        status = _STOPPED
    else:
        # A generator whose consumer stopped taking from it (``break``, ``close()``, its
        # last reference dropped) ends with GeneratorExit at its ``yield``: nothing failed.
        fine = error is None or isinstance(error, GeneratorExit)
        status = _CONVERGED if fine else _FAILED
    try:
        _finish(run, status)
    except Exception as e:  # the block's own exception, if any, is the one to see
        report(e, "jhw.log")


# ------------------------------------------------------------------------------ internals
def _open_run(sinks: tuple, values: dict[str, Any], step: int | None) -> _Open | None:
    """The run this call of ``sinks`` streams to: the open one, or a new one (None: one of
    other sinks was opened meanwhile); `Stopped` in a block whose run was."""
    turn = HUB.log_run(sinks)
    if turn.stopped:
        raise Stopped("this block's run was stopped; the rows logged so far are kept")
    if turn.ended is not None:  # a block began or ended since: a run of its own
        _finish(turn.ended, _CONVERGED)
    return turn.host if turn.host is not None else _start(sinks, values, step)


def _start(sinks: tuple, values: dict[str, Any], step: int | None) -> _Open | None:
    leaves = Leaves(values, step)  # raises for values that cannot be logged
    names = leaves.names
    layout = Layout(
        names=names,
        shapes=tuple(leaf.shape for leaf in leaves.leaves),
        dtypes=tuple(leaf.dtype.name for leaf in leaves.leaves),
        treedef=jax.tree_util.tree_structure(dict.fromkeys(names, 0)),
        max_steps=0,  # not known: a Python loop runs until it ends
        chunk=CHUNK_ROWS,
        every=None,
        step_counters=(leaves.step_index,) if leaves.step_index is not None else (),
        ends_itself=True,
    )

    def state(run_id: int, interval: int) -> _Open:
        return _Open(leaves, layout, run_id, max(1, min(interval, CHUNK_ROWS)), sinks)

    return HUB.open_log_run(layout, sinks, state)


def _deliver(run: _Open) -> None:
    """In the run's channel (its worker key): fetch the batches handed over (waiting for the
    device here, not in the loop) and send them. The run is ours to end (`Layout.ends_itself`):
    a stop answer only tells the next `log` to end the loop, and `_finish` sends every row
    logged until then."""
    with run.lock:
        batches, run.full = run.full, []
    for batch in batches:
        if _send(run, _windows(run, batch), batch.n, 0):
            run.host_stop = True


def _finish(run: _Open, status: int) -> None:
    """Send every row not sent yet with the run's end ``status``, which ends it on the host
    (once: a run whose end another thread claimed is left to it). The caller took the run
    out of the table."""
    with run.lock:
        if run.done:
            return
        run.done = True
        last, run.batch = run.batch, Batch(run.leaves, 1)
    with HUB.worker.holding(run.run_id):  # after the batches handed over so far, in order
        _deliver(run)
        _send(run, _windows(run, last), last.n, status)


def _windows(run: _Open, batch: Batch) -> list[np.ndarray]:
    """A batch's rows as the wire carries them: one array per leaf of some size (the device
    copies among them fetched: that waits until the device has made them)."""
    shapes = run.layout.shapes
    return [
        _on_wire(col)
        for col, shape in zip(batch.columns(), shapes, strict=True)
        if math.prod(shape)
    ]  # a zero-size leaf travels as nothing (see `_wire.decode`)


def _send(run: _Open, windows: list[np.ndarray], count: int, status: int) -> bool:
    """One chunk of ``count`` rows (with ``status``: 0 runs on) through the wire; whether the
    hub answered stop."""
    first = run.sent
    per_lane = np.array([[first, count, first, status]], np.int32)
    head = _wire.pack_head(run.run_id, None, count, per_lane)
    stop, interval = (int(v) for v in _wire.receive_chunk(run.layout, head, *windows))
    run.sent += count
    run.interval = max(1, min(interval, CHUNK_ROWS))
    return bool(stop)


def _on_wire(leaf: np.ndarray) -> np.ndarray:
    """A window as the device sends it (`streaming._on_wire`, `_wire.words`): 32- and 64-bit
    values as they are, narrower ones (and bools) zero-extended to one uint32 word each."""
    flat = leaf.reshape(-1)
    if flat.dtype == np.bool_:
        return flat.astype(np.uint32)
    size = flat.dtype.itemsize
    if size >= 4:
        return flat
    return flat.view(np.dtype(f"u{size}")).astype(np.uint32)


def _stop_asked(sinks: tuple) -> bool:
    """Whether a sink of the run asks for a stop (asked at every call: kept to one loop)."""
    for sink in sinks:
        try:
            if sink.stop_requested:
                return True
        except Exception as e:  # a sink's failure never breaks the loop
            report(e, f"{type(sink).__name__}.stop_requested", once=(id(sink), "stop_requested"))
    return False
