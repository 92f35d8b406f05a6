"""The registry of runs and sinks: the only code the traced program calls back into.

Layer 2 (host). Three entry points are called from host callbacks, on whatever thread XLA runs
them on, so all shared state sits behind one lock and sinks are called outside it:

- `open_run` (once per call of the loop): snapshots the sinks attached *now* and returns a fresh
  run id plus the first flush interval; the traced program passes the id back with every chunk.
- `receive_chunk` (once per chunk, for all vmap lanes at once): decodes the rows, appends them
  to the `Run`, notifies the sinks, and returns ``[stop, next_interval]``; where no sink needs
  the rows before that answer, it answers first and the `backlog` thread files them. Each chunk also
  carries every lane's end status as far as the device knows it (0: still running); the chunk
  after which no lane runs, given this answer, ends the run. There is no separate closing
  call: an effectful callback (``jax.debug.callback``, ``io_callback``) anywhere in a program
  makes XLA's CPU loop ~10% slower per step (measured in benchmarks/overhead.py's problem),
  while a pure callback whose answer the loop needs costs only the call.

Exceptions never propagate into XLA (that would kill the computation and its device history):
they are reported with `warnings.warn` and logged.
"""

from __future__ import annotations

import functools
import itertools
import math
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from . import backlog, delivery, interrupts
from .runs import FAILED, STATUSES, Layout, Run, lane_index, np_dtype

if TYPE_CHECKING:
    from .sink import Sink

__all__ = [
    "HEADER",
    "LANE_FIELDS",
    "abandon_runs",
    "attach",
    "attached",
    "open_run",
    "receive_chunk",
]


#: int32 words before the per-lane words: run id, lanes (-1 = unbatched; 0 = vmap of none),
#: rows per lane in the window (see `Layout.window`).
HEADER = 3
#: int32 words per lane: first row sent, rows sent, slice start on the device, end status code.
LANE_FIELDS = 4
#: Adaptive streaming aims to deliver rows this often (seconds).
TARGET_INTERVAL = 0.05
#: Flush interval meaning "nobody is listening": larger than any run.
NEVER = np.iinfo(np.int32).max
_STOPPED = STATUSES.index("stopped")

_lock = threading.RLock()
_attached: list[Sink] = []
_runs: dict[int, tuple[Run, tuple[Sink, ...], dict[str, float]]] = {}
_ids = itertools.count(1)
_abandoned: dict[int, None] = {}  # ids of open runs given up for dead, oldest first
_MAX_ABANDONED = 256


# ---------------------------------------------------------------------------- attaching
def attach(sink: Sink) -> None:
    """Add ``sink`` to the sinks every new run streams to (see `Sink.attach`)."""
    with _lock:
        if sink not in _attached:
            _attached.append(sink)


def detach(sink: Sink) -> None:
    """Remove ``sink``; runs that already started keep streaming to it."""
    with _lock:
        if sink in _attached:
            _attached.remove(sink)


def attached() -> tuple[Sink, ...]:
    """The sinks a run starting now would stream to."""
    with _lock:
        return tuple(_attached)


def live_runs() -> list[Run]:
    """Runs that started and have not ended (for diagnostics and tests).

    Runs given up for dead (`abandon_runs`) have ended as ``failed`` and are not listed.
    """
    with _lock:
        return [r for rid, (r, _, _) in _runs.items() if rid not in _abandoned]


# ----------------------------------------------------------------- called from the device
def open_run(layout: Layout, token: Any = None) -> np.ndarray:
    """Start a run: returns int32 ``[run_id, first_interval]`` (interval `NEVER` = no sinks).

    ``token`` is unused: it only ties the call to the loop's input (see ``streaming.open_run``).
    """
    try:
        with _lock:
            sinks = tuple(_attached)
            run_id = next(_ids) & 0x7FFFFFFF
            if not sinks:
                return np.array([run_id, NEVER], np.int32)
            run = Run(run_id, layout)
            # rows=1: row 0 (the initial value) is no work done, so it must not count for the rate
            _runs[run_id] = (run, sinks, {"t": time.perf_counter(), "rows": 1, "rate": 0.0})
        for sink in sinks:
            delivery.call(sink, "_start", run)
        # Send the first row(s) at once so a watcher sees the run start; adapt from there.
        first = 1 if layout.every is None else layout.every
        return np.array([run_id, min(first, layout.chunk)], np.int32)
    except Exception as e:  # pragma: no cover - defensive: never raise into XLA
        delivery.report(e, "open_run")
        return np.array([0, NEVER], np.int32)


def receive_chunk(layout: Layout, head: np.ndarray, *windows: np.ndarray) -> np.ndarray:
    """Deliver one chunk (ending the run if no lane runs on); returns ``[stop, next_interval]``.

    ``head`` and ``windows`` are the arguments ``streaming._pack`` made (see `decode`).

    The device ends each lane exactly as decided here: a lane it reports running (status 0)
    is stopped if any sink asks, else it runs on; the others keep the status they carry.
    """
    try:
        arrived = time.perf_counter()
        interrupts.poll()  # an interrupt becomes a stop request here, mid-run (see there)
        run_id, lanes, lane_words, leaves = decode(layout, head, windows)
        with _lock:
            entry = _runs.get(run_id)
        if entry is None:
            return np.array([0, NEVER], np.int32)
        run, sinks, clock = entry
        # Rows on the host once this chunk is filed (those of lanes with none new included).
        rows = max((w[0] + w[1] for w in lane_words), default=0)
        if _answer_first(run, sinks, lane_words):
            backlog.submit(_file, run_id, lanes, lane_words, leaves)
            return np.array([0, _next_interval(layout, rows, clock, arrived)], np.int32)
        backlog.drain()  # earlier chunks first: rows are filed in order
        _deliver(run_id, lanes, lane_words, leaves)
        # After the rows: a sink may ask for a stop when it sees them.
        stop = any(s._should_stop(run) for s in sinks)
        codes = [w[3] or (_STOPPED if stop else 0) for w in lane_words]
        if all(codes):  # every lane has ended (also a vmap over no lanes)
            _end(run_id, codes)
        return np.array([int(stop), _next_interval(layout, rows, clock, arrived)], np.int32)
    except Exception as e:
        delivery.report(e, "receive_chunk")
        return np.array([0, layout.chunk], np.int32)


def _answer_first(run: Run, sinks: tuple[Sink, ...], lane_words: list[tuple[int, ...]]) -> bool:
    """Whether the device may have its answer (run on) before this chunk's rows are filed: some
    lane runs on, no stop is asked, and no sink needs to see the rows first (see `Sink`)."""
    try:
        return (
            any(w[3] == 0 for w in lane_words)
            and all(s._rows_can_wait for s in sinks)
            and not any(s._should_stop(run) for s in sinks)
        )
    except Exception:  # asked again once the rows are filed, and reported then: none is lost
        return False


def _file(
    run_id: int, lanes: int | None, lane_words: list[tuple[int, ...]], leaves: list[np.ndarray]
) -> None:
    """`_deliver` on the backlog's thread (see `receive_chunk`)."""
    try:
        _deliver(run_id, lanes, lane_words, leaves)
    except Exception as e:
        delivery.report(e, "receive_chunk")


def abandon_runs(sink: Sink) -> None:
    """End, as ``failed``, the unclosed runs of ``sink`` that nobody attached waits for any more.

    Called when the last block that attached ``sink`` ends, once rows still being filed
    (`backlog`) are in. On the CPU a call returns only after its loop closed, so a run still
    open then is one whose computation raised (caught or not):
    no close will ever come. Its sinks learn that it ended, the rows received so far stay
    readable, and its stop request is dropped. A run that some other sink still attached (in
    another thread) streams to is left alone: that thread may still be running it. Should an
    abandoned run send rows after all (its computation was alive in another thread), it is taken
    up again and ends with its real status: rows are never dropped.
    """
    backlog.drain()
    with _lock:
        dead = [
            rid
            for rid, (_, sinks, _) in _runs.items()
            if sink in sinks and rid not in _abandoned and not any(s.attached for s in sinks)
        ]
        for rid in dead:
            _abandoned[rid] = None
        while len(_abandoned) > _MAX_ABANDONED:  # the oldest will not come back
            _runs.pop(next(iter(_abandoned)), None)
            del _abandoned[next(iter(_abandoned))]
        entries = [_runs[rid] for rid in dead]
    for run, sinks, _ in entries:
        run._finish([FAILED] * max(1, len(run.statuses)))
        for s in sinks:
            delivery.notify_end(s, run)


# --------------------------------------------------------------------------- internals
def decode(
    layout: Layout, head: np.ndarray, windows: Sequence[np.ndarray]
) -> tuple[int, int | None, list[tuple[int, ...]], list[np.ndarray]]:
    """Unpack the host-call arguments made by ``streaming._pack`` (uint32 words).

    ``head`` holds the header (`HEADER` words) and `LANE_FIELDS` words per lane; ``windows``
    one window of rows per leaf. Returns ``(run_id, lanes, lane_words, leaves)`` where
    ``lane_words`` holds ``(first_row, count, slice_start, status)`` per lane and each leaf has
    shape ``(lanes_or_1, window, *leaf_shape)`` (``window``: `Layout.window` rows, sent in the
    header). ``lanes`` is None for an unbatched run, and may be 0 (a vmap over an empty batch:
    no lane words, no rows).
    """
    head = np.asarray(head).view(np.int32).reshape(-1)
    run_id, lanes, k = head[:HEADER].tolist()
    b = 1 if lanes < 0 else lanes
    words = head[HEADER:].reshape(b, LANE_FIELDS).tolist()
    leaves = []
    sent = iter(windows)  # zero-size leaves have none: no buffer, no words
    for shape, dt, elem_words in _leaf_plan(layout):
        raw = np.asarray(next(sent)).reshape(-1) if elem_words else np.zeros(0, np.uint32)
        if dt == np.bool_:
            leaf = raw.astype(bool)
        elif dt.itemsize < 4:
            # Zero-extended on the device from the same-width unsigned bits: narrow back, then
            # reinterpret (sub-byte types such as int4 occupy the low bits of one byte).
            leaf = raw.astype(np.dtype(f"u{dt.itemsize}")).view(dt)
        else:
            leaf = raw.view(dt)
        leaves.append(leaf.reshape(b, k, *shape))
    return run_id, (None if lanes < 0 else lanes), [tuple(w) for w in words], leaves


@functools.lru_cache(maxsize=256)
def _leaf_plan(layout: Layout) -> tuple[tuple[tuple[int, ...], np.dtype, int], ...]:
    """Per leaf: shape, numpy dtype and uint32 words per row, worked out once per layout (a
    chunk arrives every few ms; redoing this per chunk cost a third of `decode`)."""
    plan = []
    for shape, dtype in zip(layout.shapes, layout.dtypes, strict=True):
        dt = np_dtype(dtype)  # a name: ml_dtypes types (float8_*, int4, ...) keep their type
        # words: one per element, two for 64-bit types
        plan.append((tuple(shape), dt, math.prod(shape) * max(1, dt.itemsize // 4)))
    return tuple(plan)


def _deliver(
    run_id: int, lanes: int | None, lane_words: list[tuple[int, ...]], leaves: list[np.ndarray]
) -> Any:
    """Append a decoded chunk's rows to its run and tell the sinks; the run's entry, or None."""
    with _lock:
        entry = _runs.get(run_id)
    if entry is None:
        return None
    run, sinks, _ = entry
    if run_id in _abandoned:
        _take_up_again(run_id, run, sinks)
    run._ensure_lanes(lanes)
    # Lanes that share where their rows start and end (under vmap every running lane steps in
    # lockstep, so usually all of them) are appended together: one copy per leaf.
    groups: dict[tuple[int, int, int], list[int]] = {}
    for lane, (first, count, slice_start, _status) in enumerate(lane_words):
        if count > 0:
            groups.setdefault((first, count, first - slice_start), []).append(lane)
    touched = []
    window = leaves[0].shape[1]  # every layout has a leaf (while_loop refuses an empty record)
    for (first, count, lo), group in groups.items():
        # `lo`: the device clamps slice starts near the end of the buffer
        if lo < 0 or lo + count > window:
            raise RuntimeError(
                f"run {run_id} lanes {group}: rows {first}..{first + count} are not in the "
                f"window sent (rows {first - lo}..{first - lo + window}); please report this"
            )
        at = lane_index(group)
        run.append_lanes(group, first, [leaf[at, lo : lo + count] for leaf in leaves])
        touched.extend(group)
    touched.sort()
    if touched:
        for sink in sinks:
            delivery.notify_rows(sink, run, touched)
    return entry


def _end(run_id: int, codes: list[int]) -> None:
    """End the run with each lane's status code, and tell its sinks (once)."""
    with _lock:
        entry = _runs.pop(run_id, None)
    if entry is None:
        return
    run, sinks, _ = entry
    run._finish(codes)
    for sink in sinks:
        delivery.notify_end(sink, run)


def _take_up_again(run_id: int, run: Run, sinks: tuple[Sink, ...]) -> None:
    with _lock:
        if _abandoned.pop(run_id, 0) is None:
            run._reopen()
            for s in sinks:
                s._resume(run)


def _next_interval(layout: Layout, rows: int, clock: dict[str, float], arrived: float) -> int:
    """Rows until the next flush: fixed, or sized so a flush happens every ~TARGET_INTERVAL.

    The rate counts only the device's time, from the end of the previous host call to the
    start of this one: time spent here (decoding, sinks) is not the loop's, and counting it
    would shrink chunks whenever a sink is slow, making it slower still.
    """
    if layout.every is not None:
        return min(layout.every, layout.chunk)
    dt, drows = arrived - clock["t"], rows - clock["rows"]
    clock["t"], clock["rows"] = time.perf_counter(), rows
    if dt > 0 and drows > 0:
        rate = drows / dt
        # smooth, but let a sudden slowdown (a slow step) win at once so latency stays bounded
        clock["rate"] = (
            rate if clock["rate"] == 0 or rate < clock["rate"] else 0.5 * (clock["rate"] + rate)
        )
    return int(min(max(clock["rate"] * TARGET_INTERVAL, 1), layout.chunk))


# ---------------------------------------------------------------------------- helpers
def effects_barrier() -> None:
    """Wait until every host callback issued so far has run, and filed its rows."""
    import jax

    jax.effects_barrier()
    backlog.drain()


def block_until_ready(result: Any, poll: float = 0.01) -> None:
    """Wait for ``result`` and for its callbacks, so a runner returns only when rows are in.

    Polls instead of blocking in C++: where dispatch is asynchronous (GPU) the main thread keeps
    running Python meanwhile, so an interrupt reaches the sink's handler (a stop) at once.
    On CPU a call with host callbacks has already finished when it returns.
    """
    import jax

    arrays = [x for x in jax.tree_util.tree_leaves(result) if isinstance(x, jax.Array)]
    while not all(x.is_ready() for x in arrays):
        time.sleep(poll)
    effects_barrier()
