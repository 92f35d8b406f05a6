"""The device↔host contract: what one host call carries, and how each side reads it.

The traced loop (the device side) and the host runtime agree here, and nowhere else, on:

- `Layout`: what a row looks like (leaf names, shapes, dtypes), fixed at trace time;
- the byte budgets that size a *window* (the static number of rows per lane one host call
  carries: a whole window per *flush*, only the rows new since the last flush valid) —
  `CHUNK_BYTES`, `LANES_CHUNK_BYTES`, `window_rows`;
- the *header* of a flush — `HEADER` words (`Header`), then `LANE_FIELDS` words per lane
  (`LaneWords`, a lane's status one of `STATUSES`) — and the windows after it, one per leaf,
  made on the device (`lane_words`, `words`: traced JAX), the header joined on the host
  (`pack_head`), all unpacked there (`decode`);
- the host's answer — ``[stop, next_interval]`` (`answer`), the *interval* being the rows until
  the next flush (`NEVER` when nobody listens);
- the two host entry points the device calls (`open_run`, `receive_chunk`), served by whatever
  host runtime `connect` was given (the device layer never imports the host's threads).

A *chunk* is the rows one flush delivers.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Sequence
from typing import Any, NamedTuple, Protocol

import jax
import jax.numpy as jnp
import ml_dtypes  # noqa: F401 - registers bfloat16, float8_*, int4, ... as numpy dtype names
import numpy as np
from jax import lax

__all__ = [
    "ACCEL_CHUNK_BYTES",
    "ACCEL_LANES_CHUNK_BYTES",
    "CHUNK_BYTES",
    "HEADER",
    "LANES_CHUNK_BYTES",
    "LANE_FIELDS",
    "NEVER",
    "STATUSES",
    "Chunk",
    "Endpoint",
    "Header",
    "LaneWords",
    "Layout",
    "Packing",
    "answer",
    "connect",
    "decode",
    "element_words",
    "itemsize_bits",
    "lane_words",
    "np_dtype",
    "open_run",
    "pack_head",
    "receive_chunk",
    "whole_blocks",
    "window_rows",
    "words",
]

#: Auto streaming: one host call's window holds at most this many packed bytes (one lane),
#: at least two rows. A flush of one row still sends a whole (static) window: sizing it by bytes
#: bounds that waste, and lets tiny rows use long windows (few calls).
CHUNK_BYTES = 1 << 18

#: The same budget for several vmap lanes (or devices), all together. Larger: a call has a fixed
#: cost besides its bytes, and 64 lanes of 100 floats would otherwise get 10-row windows
#: (`benchmarks/overhead.py` (c)). Under 4 MiB: on a CPU an argument that large costs the host
#: call a fresh allocation, several times slower per byte (`benchmarks/lanes.py`, 4096 lanes).
LANES_CHUNK_BYTES = 2 << 20

#: The budgets on an accelerator (a TPU, a GPU), where a host call stops the device ~1 ms
#: whatever it carries (a TPU v5e: 1.1 ms empty, 8 MiB in 4.4 ms): fewer, larger windows
#: (docs/performance.md has the numbers).
ACCEL_CHUNK_BYTES = 2 << 20
ACCEL_LANES_CHUNK_BYTES = 8 << 20


def np_dtype(name: str) -> np.dtype:
    """The numpy dtype of a `Layout.dtypes` entry (a name such as ``"float8_e4m3fn"``)."""
    return np.dtype(name)


def itemsize_bits(dtype) -> int:
    """Bits per element of ``dtype`` (4 for int4 / float4_e2m1fn, where ``itemsize`` says 1).

    >>> itemsize_bits(jnp.int4), itemsize_bits(jnp.bfloat16), itemsize_bits(jnp.bool_)
    (4, 16, 8)
    """
    return jax.dtypes.itemsize_bits(dtype)


def element_words(dtype) -> int:
    """uint32 words one element takes on the wire: one up to 32 bits (narrower types are
    zero-extended), two for a 64-bit type. See `words`.

    >>> element_words("int4"), element_words("bfloat16"), element_words("float64")
    (1, 1, 2)
    """
    return max(1, np_dtype(dtype).itemsize // 4)


def window_rows(row_bytes: int, max_rows: int, lanes: int = 1, accelerated: bool = False) -> int:
    """Rows per lane in one auto-streaming host call: the byte budget (an accelerator's where
    ``accelerated``) shared by ``lanes``, at least two rows (the first flush holds rows 0 and 1).

    >>> window_rows(4, 10**6), window_rows(4, 10**6, accelerated=True), window_rows(4, 10)
    (65536, 524288, 10)
    """
    if accelerated:
        budget = ACCEL_CHUNK_BYTES if lanes <= 1 else ACCEL_LANES_CHUNK_BYTES
    else:
        budget = CHUNK_BYTES if lanes <= 1 else LANES_CHUNK_BYTES
    share = budget // max(1, lanes * row_bytes)
    return int(min(max_rows, max(2, share)))


def whole_blocks(rows: int, block: int) -> int:
    """``rows`` rounded down to whole blocks of ``block`` rows, when it holds one at least.

    >>> whole_blocks(50, 16), whole_blocks(10, 16), whole_blocks(50, 1)
    (48, 10, 50)
    """
    return rows // block * block if rows >= block > 1 else rows


@dataclasses.dataclass(frozen=True)
class Packing:
    """Where each leaf of a row lives among the row's buffers, fixed at trace time.

    A loop keeps its history, and a flush carries its rows, in a few buffers instead of one
    per leaf: every leaf of one dtype shares a buffer (`by_dtype`), its elements a run of that
    buffer's columns. Per leaf a buffer costs XLA a kernel to fill, one to write each step and
    a host-call argument, so a record of hundreds of leaves (a parameter tree, a metrics dict)
    compiled several times slower than the loop itself; packed, their number follows the
    dtypes. A buffer's rows are ``(..., rows, width)``; `columns` gives a leaf's part of it.

    Attributes
    ----------
    shapes, dtypes
        Shape and dtype name of each leaf's row.
    groups
        Per leaf, the index of its buffer; -1 for a zero-size leaf, which has none (XLA folds a
        zero-size buffer into a constant whose compile time grows with its rows).
    starts
        Per leaf, its first column in that buffer.

    Examples
    --------
    >>> p = Packing.by_dtype(((), (3,), (), (0,)), ("float32", "float32", "int32", "float32"))
    >>> p.groups, p.starts, p.widths, p.buffer_dtypes
    ((0, 0, 1, -1), (0, 1, 0, 0), (4, 1), ('float32', 'int32'))
    """

    shapes: tuple[tuple[int, ...], ...]
    dtypes: tuple[str, ...]
    groups: tuple[int, ...]
    starts: tuple[int, ...]

    @classmethod
    def by_dtype(
        cls, shapes: Sequence[tuple[int, ...]], dtypes: Sequence[str], keys: Sequence[Any] = ()
    ) -> Packing:
        """Leaves of one dtype in one buffer, in leaf order; where ``keys`` are given, only
        leaves whose keys are equal too (a loop keeps the leaves it never writes apart, whose
        buffer stays row 0 repeated, unbatched under vmap, and a large leaf alone, which a
        sharded computation may keep sharded)."""
        found: dict[tuple[str, Any], int] = {}
        width: list[int] = []
        groups, starts = [], []
        for i, (shape, dtype) in enumerate(zip(shapes, dtypes, strict=True)):
            size = math.prod(shape)
            if not size:
                groups.append(-1)
                starts.append(0)
                continue
            g = found.setdefault((dtype, keys[i] if keys else None), len(found))
            if g == len(width):
                width.append(0)
            groups.append(g)
            starts.append(width[g])
            width[g] += size
        return cls(tuple(map(tuple, shapes)), tuple(dtypes), tuple(groups), tuple(starts))

    @classmethod
    def per_leaf(cls, shapes: Sequence[tuple[int, ...]], dtypes: Sequence[str]) -> Packing:
        """A buffer of its own for each leaf of some size (how `jaxhist_widget.log` sends).

        >>> Packing.per_leaf(((), (0,), (2,)), ("float32", "float32", "float32")).groups
        (0, -1, 1)
        """
        groups, n = [], 0
        for shape in shapes:
            groups.append(n if math.prod(shape) else -1)
            n += bool(math.prod(shape))
        return cls(tuple(map(tuple, shapes)), tuple(dtypes), tuple(groups), (0,) * len(groups))

    @property
    def widths(self) -> tuple[int, ...]:
        """Elements of one row in each buffer."""
        return _buffers(self)[0]

    @property
    def buffer_dtypes(self) -> tuple[str, ...]:
        """The dtype name of each buffer (that of its leaves)."""
        return _buffers(self)[1]

    def members(self, group: int) -> tuple[int, ...]:
        """The leaves in buffer ``group``, in column order."""
        return tuple(i for i, g in enumerate(self.groups) if g == group)

    def columns(self, leaf: int) -> slice:
        """The columns leaf ``leaf`` takes in its buffer."""
        start = self.starts[leaf]
        return slice(start, start + math.prod(self.shapes[leaf]))

    def unpack(self, buffers: Sequence[Any], lead: tuple[int, ...], zeros: Any) -> list[Any]:
        """Each leaf from ``buffers`` (``(*lead, width)`` each; numpy or JAX arrays): the
        columns of its buffer shaped ``(*lead, *shape)``; ``zeros(shape, dtype)`` makes a
        zero-size leaf. Slicing and reshaping only: numpy gives views where it can."""
        out = []
        for i, (shape, dtype, g) in enumerate(
            zip(self.shapes, self.dtypes, self.groups, strict=True)
        ):
            if g < 0:
                out.append(zeros((*lead, *shape), np_dtype(dtype)))
            else:
                out.append(buffers[g][..., self.columns(i)].reshape(*lead, *shape))
        return out


@functools.lru_cache(maxsize=256)
def _per_leaf(shapes: tuple, dtypes: tuple) -> Packing:
    return Packing.per_leaf(shapes, dtypes)


@functools.lru_cache(maxsize=256)
def _buffers(packing: Packing) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """Each buffer's width and dtype name, worked out once per packing (asked per chunk and per
    trace; kept out of the frozen instance, whose fields are all it holds)."""
    width = [0] * (max(packing.groups, default=-1) + 1)
    dtypes = [""] * len(width)
    for shape, dtype, g, start in zip(
        packing.shapes, packing.dtypes, packing.groups, packing.starts, strict=True
    ):
        if g >= 0:
            width[g] = max(width[g], start + math.prod(shape))
            dtypes[g] = dtype
    return tuple(width), tuple(dtypes)


@dataclasses.dataclass(frozen=True)
class Layout:
    """Static description of one row, fixed at trace time.

    Attributes
    ----------
    names
        One name per leaf of ``record(carry)``, e.g. ``("loss", "x")`` for a dict record.
    shapes, dtypes
        Shape and dtype name of each leaf's row (``"float32"``, ``"bfloat16"``,
        ``"float8_e4m3fn"``, ``"int4"``, ...; `np_dtype` gives the numpy dtype).
    treedef
        The record's pytree structure, to rebuild rows as ``History.to_numpy()`` gives them.
    max_steps
        The loop's static step cap; 0 when there is none (the rows of `jaxhist_widget.log`).
    chunk
        The static number of rows one host call carries per lane (its window); under vmap
        with auto streaming the lanes share the byte budget: see `window`.
    every
        The fixed flush interval in rows, or None for adaptive (``stream_every="auto"``).
    step_counters
        The leaves that count the steps (``i + 1`` each step, recorded as is): a plot leaves
        them out by default, since its step axis shows them already.
    stand_ins
        Leaves whose row 0 is no value (what a scan records of its ``y``): plots skip it.
    order
        The leaves (indices into `names`) in the order the record was written, which JAX's
        flatten order is not (it sorts a dict's keys): a plot draws its charts so, the headline
        metric first. Empty: the flatten order is the written one.
    accelerated
        Traced for an accelerator (a TPU, a GPU): windows by `ACCEL_CHUNK_BYTES`'s budgets.
    block
        Steps an accelerator takes at a time with no predicate read between them (a counting loop's
        blocks; 1: step by step). Intervals and batched windows of that many rows or more are
        whole blocks, so that chunks end where blocks do.
    ends_itself
        The sender ends the run with a last chunk carrying its end status (`jaxhist_widget.log`),
        so a stop answer asks it to stop and does not end the run: rows logged after it still
        arrive. A device loop stops on the answer and sends nothing after: it ends the run.
    packing
        How the leaves share a flush's windows (`Packing`): a device loop sends one window per
        buffer of its history (`Packing.by_dtype`); None: one per leaf of some size, as
        `jaxhist_widget.log` sends them (see `packed`).
    """

    names: tuple[str, ...]
    shapes: tuple[tuple[int, ...], ...]
    dtypes: tuple[str, ...]
    treedef: Any
    max_steps: int
    chunk: int
    every: int | None
    step_counters: tuple[int, ...] = ()
    block: int = 1
    ends_itself: bool = False
    accelerated: bool = False
    stand_ins: tuple[int, ...] = ()
    order: tuple[int, ...] = ()
    packing: Packing | None = None

    @property
    def packed(self) -> Packing:
        """The `Packing` of a flush's windows (`packing`, or one window per leaf)."""
        if self.packing is not None:
            return self.packing
        return _per_leaf(self.shapes, self.dtypes)

    @property
    def row_nbytes(self) -> int:
        return sum(
            int(np.prod(s, dtype=np.int64)) * np_dtype(d).itemsize
            for s, d in zip(self.shapes, self.dtypes, strict=True)
        )

    @property
    def packed_row_nbytes(self) -> int:
        """Bytes of one row as packed for the host (narrow types travel as 32-bit words)."""
        return sum(
            int(np.prod(s, dtype=np.int64)) * 4 * element_words(d)
            for s, d in zip(self.shapes, self.dtypes, strict=True)
        )

    def window(self, lanes: int | None) -> int:
        """Rows per lane one host call carries for ``lanes`` vmap lanes (None: unbatched).

        `chunk`, except under vmap with auto streaming, where all lanes share the byte budget
        (`LANES_CHUNK_BYTES`): 64 lanes of tiny rows must not send 64 windows of 256 KiB a call.
        """
        if lanes is None or self.every is not None:
            return self.chunk
        rows = window_rows(self.packed_row_nbytes, self.max_steps + 1, lanes, self.accelerated)
        return whole_blocks(min(self.chunk, rows), self.block)


# ------------------------------------------------------------------------------- header
#: Flush interval meaning "nobody is listening": larger than any run.
NEVER = int(np.iinfo(np.int32).max)


class Header(NamedTuple):
    """The int32 words a flush starts with, in this order."""

    run_id: int
    lanes: int  #: -1: unbatched; 0: a vmap over no lanes
    window: int  #: rows per lane in each window (see `Layout.window`)


class LaneWords(NamedTuple):
    """One lane's int32 words of a flush, in order, after the `Header` (arrays in `lane_words`)."""

    first: Any  #: the lane's first row in this chunk
    count: Any  #: rows of the lane in this chunk (0: none new)
    slice_start: Any  #: the row the window starts at on the device (clamped near the end)
    status: Any  #: the lane's end status as the device knows it: its index in `STATUSES`


#: A lane's statuses, coded on the wire by index (0: running; the device knows two ends, the
#: host decides "stopped" and "failed"). Every other spelling derives from this one: `Run.status`,
#: the panel's, the words and colours of ``ui/look/look.json`` (checked in tests/ui/look).
STATUSES = ("running", "converged", "max_steps", "stopped", "failed")

#: int32 words before the per-lane words.
HEADER = len(Header._fields)
#: int32 words per lane.
LANE_FIELDS = len(LaneWords._fields)
#: The column of each lane word in `Chunk.words`.
_COLUMN = LaneWords(*range(LANE_FIELDS))


class Chunk(NamedTuple):
    """A decoded flush. Its lane words are one int32 array, a column per `LaneWords` field: a
    host handles thousands of lanes with array operations, never a Python object per lane."""

    run_id: int
    lanes: int | None  #: None for an unbatched run; may be 0 (a vmap over an empty batch)
    words: np.ndarray  #: int32 ``(lanes_or_1, LANE_FIELDS)``
    leaves: list[np.ndarray]  #: per leaf, shape ``(lanes_or_1, window, *leaf_shape)``

    @property
    def first(self) -> np.ndarray:
        """Each lane's first row in this chunk."""
        return self.words[:, _COLUMN.first]

    @property
    def count(self) -> np.ndarray:  # type: ignore[override]  # (not tuple.count: a lane word)
        """Rows of each lane in this chunk (0: none new)."""
        return self.words[:, _COLUMN.count]

    @property
    def slice_start(self) -> np.ndarray:
        """The row each lane's window starts at on the device (clamped near the end)."""
        return self.words[:, _COLUMN.slice_start]

    @property
    def status(self) -> np.ndarray:
        """Each lane's end status (`STATUSES` by code) as the device knows it."""
        return self.words[:, _COLUMN.status]

    @property
    def rows(self) -> int:
        """Rows on the host once this chunk is filed (lanes with none new included)."""
        return int((self.first + self.count).max(initial=0))


def answer(stop: bool, interval: int) -> np.ndarray:
    """The host's answer to a flush: stop the running lanes or not, rows until the next."""
    return np.array([int(stop), interval], np.int32)


# ------------------------------------------------------------------------- encode (device)
# Traced JAX, called by the device layer while it builds a flush; `decode` below undoes each.
_UNSIGNED = {2: jnp.uint2, 4: jnp.uint4, 8: jnp.uint8, 16: jnp.uint16}


def words(x: jax.Array) -> jax.Array:
    """Any array as flat uint32 words, bit-exact (`element_words` per element).

    Words, not bytes: XLA's bitcast to uint8 widens every element into a new minor axis, which
    packs far slower. Narrow types are zero-extended to a word each; 64-bit types take two.

    >>> words(jnp.array([1.0, -2.0], jnp.bfloat16)).tolist(), words(jnp.int4(-1)).tolist()
    ([16256, 49152], [15])
    """
    if x.dtype == jnp.bool_:
        x = x.astype(jnp.uint8)
    bits = itemsize_bits(x.dtype)
    if bits < 32:
        # Bitcast to the same-width unsigned type (elementwise, also for int4 / float4, where
        # a bitcast to uint8 would pack elements), then zero-extend: bit-exact, and no float op
        # touches a narrow float (see `lanes.as_bits` on why that matters).
        return lax.bitcast_convert_type(x, _UNSIGNED[bits]).astype(jnp.uint32).reshape(-1)
    # 4 bytes: one word per element; 8 bytes: a trailing axis of two words per element
    return lax.bitcast_convert_type(x, jnp.uint32).reshape(-1)


def lane_words(
    first: jax.Array, count: jax.Array, slice_start: jax.Array, status: jax.Array
) -> jax.Array:
    """The `LaneWords` of every lane, as int32 ``(lanes, LANE_FIELDS)`` (each argument
    ``(lanes,)``)."""
    fields = LaneWords(first=first, count=count, slice_start=slice_start, status=status)
    return jnp.stack(fields, axis=1).astype(jnp.int32)


def pack_head(run_id: int, lanes: int | None, window: int, per_lane: np.ndarray) -> np.ndarray:
    """A flush's head as `decode` reads it, made on the host: the `Header` (``lanes`` None:
    unbatched), then ``per_lane`` (`lane_words`, sent by the device), as uint32 words.

    The device sends only the lane words: the header's are static or the host's own (the run
    id), and every word the device packs is a kernel XLA compiles for each new loop.
    """
    header = Header(int(run_id), -1 if lanes is None else int(lanes), int(window))
    words = np.concatenate([np.array(header, np.int32), np.asarray(per_lane, np.int32).ravel()])
    return words.view(np.uint32)


# ------------------------------------------------------------------------- decode (host)
def decode(layout: Layout, head: np.ndarray, windows: Sequence[np.ndarray]) -> Chunk:
    """Unpack the host-call arguments made with `pack_head` and `words` (uint32 words).

    ``head`` holds the `Header` and `LANE_FIELDS` words per lane; ``windows`` one window of
    rows per buffer of `Layout.packed` (``window``: `Layout.window` rows, sent in the header),
    each leaf then a view of its columns there where numpy can make one.
    """
    head = np.asarray(head).view(np.int32).reshape(-1)
    run_id, lanes, k = Header(*head[:HEADER].tolist())
    b = 1 if lanes < 0 else lanes
    words = head[HEADER:].reshape(b, LANE_FIELDS)
    packing = layout.packed
    buffers = []
    for (dt, width), window in zip(_buffer_plan(packing), windows, strict=True):
        raw = np.asarray(window).reshape(-1)
        if dt == np.bool_:
            buf = raw.astype(bool)
        elif dt.itemsize < 4:
            # Zero-extended on the device from the same-width unsigned bits: narrow back, then
            # reinterpret (sub-byte types such as int4 occupy the low bits of one byte).
            buf = raw.astype(np.dtype(f"u{dt.itemsize}")).view(dt)
        else:
            buf = raw.view(dt)
        buffers.append(buf.reshape(b, k, width))
    leaves = packing.unpack(buffers, (b, k), np.zeros)
    return Chunk(run_id, None if lanes < 0 else lanes, words, leaves)


@functools.lru_cache(maxsize=256)
def _buffer_plan(packing: Packing) -> tuple[tuple[np.dtype, int], ...]:
    """Per window: its numpy dtype and row width, worked out once per packing (a chunk arrives
    every few ms, and redoing this per chunk was a large part of `decode`)."""
    # a name: ml_dtypes types (float8_*, int4, ...) keep their type
    return tuple(
        (np_dtype(d), w) for d, w in zip(packing.buffer_dtypes, packing.widths, strict=True)
    )


# ---------------------------------------------------------------------------- endpoint
class Endpoint(Protocol):
    """The host runtime's side of the contract (see `connect`)."""

    def open_run(self, layout: Layout, token: Any) -> np.ndarray: ...

    def receive_chunk(
        self, layout: Layout, head: np.ndarray, *windows: np.ndarray
    ) -> np.ndarray: ...


_endpoint: Endpoint | None = None


def connect(endpoint: Endpoint) -> None:
    """Serve the device's host calls with ``endpoint`` (the package does this on import)."""
    global _endpoint
    _endpoint = endpoint


def open_run(layout: Layout, token: Any = None) -> np.ndarray:
    """Start a run: int32 ``[run_id, first_interval]`` (`NEVER`: nobody listens); ``token``
    only ties the call to the loop's input (see ``streaming.open_run``)."""
    if _endpoint is None:
        return np.array([0, NEVER], np.int32)
    return _endpoint.open_run(layout, token)


def receive_chunk(layout: Layout, head: np.ndarray, *windows: np.ndarray) -> np.ndarray:
    """Deliver one flush; returns `answer` ``[stop, next_interval]``."""
    if _endpoint is None:
        return answer(False, NEVER)
    return _endpoint.receive_chunk(layout, head, *windows)
