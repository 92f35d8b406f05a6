"""TensorBoard's event files, written here: TFRecord framing and hand-encoded protobuf messages.

Host runtime, numpy only (no TensorFlow, no protobuf package). An event file is a sequence of
records, each ``length (uint64, little-endian) · masked CRC32C of those 8 bytes · data · masked
CRC32C of the data``. A record's data is one ``tensorboard.Event`` message: a file's first
says ``file_version: "brain.Event:2"``; the others carry a wall time, a step and a ``Summary``
of tagged values (``simple_value`` scalars, ``HistogramProto`` histograms, text tensors).

Rows are encoded many at a time (`RowEncoder`): every row of a run has one message layout (the
length of its step's varint aside), so a batch of rows is a byte matrix filled a column block at
a time, and the CRCs of all its records are computed across the rows at once (`_crc32c`): no
Python runs per row.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import overload

import numpy as np

from ._crc32c import crc32c, crc32c_rows, crc32c_sparse

__all__ = [
    "HISTOGRAM_BUCKETS",
    "RowEncoder",
    "header_event",
    "histograms",
    "masked_crc32c",
    "record",
    "records",
    "text_event",
]

#: Buckets of a histogram summary (TensorBoard's own summaries default to 30; its histogram
#: dashboard redraws them into that many bins anyway).
HISTOGRAM_BUCKETS = 30

_MASK_DELTA = 0xA282EAD8  # TFRecord's CRC mask: rotate right by 15, add this
_DT_STRING = 7  # tensorflow.DataType
_DATA_CLASS_TENSOR = 2  # tensorboard.DataClass


# ---------------------------------------------------------------------------- framing
@overload
def _mask(crc: np.ndarray) -> np.ndarray: ...
@overload
def _mask(crc: int) -> int: ...
def _mask(crc: np.ndarray | int) -> np.ndarray | int:
    if isinstance(crc, np.ndarray):
        return ((crc >> 15) | (crc << 17)) + np.uint32(_MASK_DELTA)  # wraps mod 2**32
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def masked_crc32c(data: bytes) -> int:
    """The masked CRC32C TFRecord stores after a record's length and after its data."""
    return int(_mask(crc32c(data)))


def record(data: bytes) -> bytes:
    """``data`` framed as one TFRecord."""
    length = struct.pack("<Q", len(data))
    return b"".join(
        [
            length,
            struct.pack("<I", masked_crc32c(length)),
            data,
            struct.pack("<I", masked_crc32c(data)),
        ]
    )


def records(datas: Sequence[bytes]) -> list[bytes]:
    """Each of ``datas`` framed as one TFRecord, the CRCs of those of one length at once."""
    out: list[bytes] = [b""] * len(datas)
    by_length: dict[int, list[int]] = {}
    for i, data in enumerate(datas):
        by_length.setdefault(len(data), []).append(i)
    for length, which in by_length.items():
        size = struct.pack("<Q", length)
        head = size + struct.pack("<I", masked_crc32c(size))
        rows = np.frombuffer(b"".join(datas[i] for i in which), np.uint8).reshape(len(which), -1)
        crcs = _mask(crc32c_rows(rows)).astype("<u4")
        for i, crc in zip(which, crcs, strict=True):
            out[i] = head + datas[i] + crc.tobytes()
    return out


# ---------------------------------------------------------------------------- protobuf
def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _key(field: int, wire: int) -> bytes:
    return _varint(field << 3 | wire)


def _field(field: int, payload: bytes) -> bytes:
    """A length-delimited field (a string, bytes, a message, a packed array)."""
    return _key(field, 2) + _varint(len(payload)) + payload


def _event_head(wall_time: float, step: int) -> bytes:
    return _key(1, 1) + struct.pack("<d", wall_time) + _key(2, 0) + _varint(step)


def header_event(wall_time: float) -> bytes:
    """The record data every event file starts with (the format's version)."""
    return _key(1, 1) + struct.pack("<d", wall_time) + _field(3, b"brain.Event:2")


def text_event(wall_time: float, step: int, tag: str, text: str) -> bytes:
    """An event holding ``text`` (Markdown) under ``tag`` for TensorBoard's Text dashboard."""
    metadata = _field(1, _field(1, b"text")) + _key(4, 0) + _varint(_DATA_CLASS_TENSOR)
    tensor = _key(1, 0) + _varint(_DT_STRING) + _field(2, b"") + _field(8, text.encode())
    value = _field(1, tag.encode()) + _field(9, metadata) + _field(8, tensor)
    return _event_head(wall_time, step) + _field(5, _field(1, value))


# --------------------------------------------------------------------------- histograms
def histograms(
    x: np.ndarray, buckets: int = HISTOGRAM_BUCKETS
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each row of ``x`` (rows, n) as a histogram of its finite values: ``stats`` (rows, 5):
    min, max, count, sum, sum of squares; ``limits`` and ``counts`` (rows, buckets): equal
    buckets from min to max, each bucket's right edge and count. A row with no finite value
    has count 0 and all zeros."""
    x = np.asarray(x, np.float64)
    rows = len(x)
    finite = np.isfinite(x)
    everywhere = bool(finite.all())  # the usual case: no masking
    if everywhere:
        clean, num = x, np.full(rows, float(x.shape[1]))
        lo, hi = x.min(axis=1, initial=np.inf), x.max(axis=1, initial=-np.inf)
    else:
        num = finite.sum(axis=1).astype(np.float64)
        lo = np.where(finite, x, np.inf).min(axis=1, initial=np.inf)
        hi = np.where(finite, x, -np.inf).max(axis=1, initial=-np.inf)
    empty = num == 0
    lo[empty] = hi[empty] = 0.0
    if not everywhere:
        clean = np.where(finite, x, lo[:, None])  # in the first bucket, then not counted
    zeroed = clean if everywhere else np.where(finite, x, 0.0)
    stats = np.stack([lo, hi, num, zeroed.sum(axis=1), np.einsum("ij,ij->i", zeroed, zeroed)], 1)
    width = hi - lo
    limits = lo[:, None] + width[:, None] * (np.arange(1, buckets + 1) / buckets)
    limits[:, -1] = hi  # exactly the max, whatever the rounding above
    scale = np.divide(buckets, width, out=np.zeros_like(width), where=width > 0)
    at = ((clean - lo[:, None]) * scale[:, None]).astype(np.int64)  # >= 0: truncation floors
    np.minimum(at, buckets - 1, out=at)
    at += np.arange(rows)[:, None] * buckets
    counts = np.bincount(at.ravel() if everywhere else at[finite], minlength=rows * buckets)
    return stats, limits, counts.reshape(rows, buckets).astype(np.float64)


# --------------------------------------------------------------------------------- rows
class RowEncoder:
    """Encodes rows as framed event records: per row one ``Event`` with its step, a wall time,
    and a ``Summary`` of one ``simple_value`` per scalar tag and one ``HistogramProto`` per
    histogram tag (`HISTOGRAM_BUCKETS` buckets), in that order.

    Examples
    --------
    >>> enc = RowEncoder(["loss"], [])
    >>> buf, ends = enc.encode(np.arange(3), np.zeros(3), np.ones((3, 1), np.float32), [])
    >>> len(ends), int(ends[-1]) == len(buf)
    (3, True)
    """

    def __init__(self, scalar_tags: Sequence[str], histogram_tags: Sequence[str]) -> None:
        self.scalar_tags, self.histogram_tags = list(scalar_tags), list(histogram_tags)
        parts: list[bytes] = []
        size = 0
        self._scalar_at: list[int] = []  # where each scalar's 4 bytes go in the summary
        self._histo_at: list[int] = []  # where each histogram's first double goes
        for tag in self.scalar_tags:
            value = _field(1, tag.encode()) + _key(2, 5) + bytes(4)
            entry = _field(1, value)
            parts.append(entry)
            self._scalar_at.append(size + len(entry) - 4)
            size += len(entry)
        k = HISTOGRAM_BUCKETS
        for tag in self.histogram_tags:
            stats = b"".join(_key(f, 1) + bytes(8) for f in range(1, 6))
            histo = stats + _field(6, bytes(8 * k)) + _field(7, bytes(8 * k))
            value = _field(1, tag.encode()) + _field(5, histo)
            entry = _field(1, value)
            parts.append(entry)
            self._histo_at.append(size + len(entry) - len(histo))
            size += len(entry)
        self._summary = np.frombuffer(b"".join(parts), np.uint8)
        self._summary_head = _key(5, 2) + _varint(len(self._summary))
        self._array_head = len(_field(6, bytes(8 * k))) - 8 * k  # key and length of an array

    def encode(
        self,
        steps: np.ndarray,
        wall_times: np.ndarray,
        scalars: np.ndarray,
        histogram_rows: Sequence[np.ndarray],
    ) -> tuple[np.ndarray, np.ndarray]:
        """Framed records of rows at ``steps`` (ints >= 0), one after the other in the order
        given, as one uint8 buffer, and the byte offset where each record ends.

        ``scalars`` (rows, scalar tags) float32 (written bit for bit); ``histogram_rows`` one
        (rows, n) array per histogram tag; ``wall_times`` (rows,) seconds since the epoch.
        """
        steps = np.asarray(steps, np.int64)
        rows = len(steps)
        scalars = np.ascontiguousarray(scalars, np.float32).reshape(rows, len(self.scalar_tags))
        hists = [histograms(h) for h in histogram_rows]
        widths = _varint_widths(steps)
        lengths = np.empty(rows, np.int64)
        groups = []
        low, high = (int(widths.min()), int(widths.max())) if rows else (1, 0)
        for width in range(low, high + 1):
            take = slice(None) if low == high else widths == width
            if not isinstance(take, slice) and not take.any():  # a slice when low == high
                continue
            records = self._records(int(width), steps[take], wall_times[take], scalars[take],
                                    [tuple(a[take] for a in h) for h in hists])  # fmt: skip
            lengths[take] = records.shape[1]
            groups.append((None if low == high else take, records))
        ends = np.cumsum(lengths)
        if len(groups) == 1:
            return groups[0][1].reshape(-1), ends
        # Rows of several widths (a lane's steps passing 128, 16384, ...): the records go back
        # in the rows' order a stretch of one width at a time (a few a lane, each a slice).
        cuts = np.flatnonzero(np.diff(widths)) + 1
        starts, stops = np.concatenate([[0], cuts]), np.concatenate([cuts, [rows]])
        taken = {int(w): 0 for w in np.unique(widths)}
        by_width = {int(widths[0] if take is None else widths[take][0]): r for take, r in groups}
        pieces = []
        for a, b in zip(starts.tolist(), stops.tolist(), strict=True):
            width = int(widths[a])
            at = taken[width]
            pieces.append(by_width[width][at : at + b - a].reshape(-1))
            taken[width] = at + b - a
        return np.concatenate(pieces), ends

    def _records(
        self,
        width: int,
        steps: np.ndarray,
        wall_times: np.ndarray,
        scalars: np.ndarray,
        hists: list[tuple[np.ndarray, ...]],
    ) -> np.ndarray:
        """Framed records of rows whose steps' varints are ``width`` bytes: (rows, length)."""
        rows = len(steps)
        head = 1 + 8 + 1 + width + len(self._summary_head)  # wall time, step, summary's head
        size = head + len(self._summary)  # the event's length
        one_time = bool(np.all(wall_times == wall_times[0]))
        # Every row starts as the same bytes (one contiguous fill); then what differs.
        length = struct.pack("<Q", size)
        shared = b"".join(
            [
                length,
                struct.pack("<I", masked_crc32c(length)),
                _key(1, 1),
                struct.pack("<d", float(wall_times[0]) if one_time else 0.0),
                _key(2, 0),
                bytes(width),
                self._summary_head,
                self._summary.tobytes(),
                bytes(4),
            ]
        )
        out = np.empty((rows, len(shared)), np.uint8)
        out[:] = np.frombuffer(shared, np.uint8)
        event = out[:, 12 : 12 + size]
        if not one_time:
            event[:, 1:9] = np.ascontiguousarray(wall_times, "<f8").view(np.uint8).reshape(rows, 8)
        shifts = np.arange(0, 7 * width, 7)
        varint = ((steps[:, None] >> shifts) & 0x7F) | np.where(shifts < 7 * (width - 1), 0x80, 0)
        event[:, 10 : 10 + width] = varint  # 7 bits a byte, low first
        summary = event[:, head:]
        as_bytes = scalars.astype("<f4", copy=False).view(np.uint8).reshape(rows, -1, 4)
        for j, at in enumerate(self._scalar_at):
            summary[:, at : at + 4] = as_bytes[:, j]
        k, skip = HISTOGRAM_BUCKETS, self._array_head
        for at, (stats, limits, counts) in zip(self._histo_at, hists, strict=True):
            stat_bytes = np.ascontiguousarray(stats, "<f8").view(np.uint8).reshape(rows, 5, 8)
            for f in range(5):  # each double after its one-byte key
                summary[:, at + 9 * f + 1 : at + 9 * f + 9] = stat_bytes[:, f]
            at += 45 + skip
            summary[:, at : at + 8 * k] = np.ascontiguousarray(limits, "<f8").view(np.uint8)
            at += 8 * k + skip
            summary[:, at : at + 8 * k] = np.ascontiguousarray(counts, "<f8").view(np.uint8)
        crc = _mask(self._crc(event, width, size, one_time))
        out[:, 12 + size :] = crc.astype("<u4").view(np.uint8).reshape(rows, 4)
        return out

    def _crc(self, event: np.ndarray, width: int, size: int, one_time: bool) -> np.ndarray:
        """CRC32C of each event: only over the bytes that differ between rows when those are
        few (scalars; the wall time when one for all), else over every byte."""
        if self._histo_at or len(event) < 2:
            return crc32c_rows(event)
        head = 1 + 8 + 1 + width + len(self._summary_head)
        varying = [np.arange(10, 10 + width)]  # the step
        if not one_time:
            varying.append(np.arange(1, 9))
        varying += [head + at + np.arange(4) for at in self._scalar_at]
        columns = np.concatenate(varying)
        if 3 * len(columns) > size:
            return crc32c_rows(event)
        return crc32c_sparse(event, columns)


def _varint_widths(steps: np.ndarray) -> np.ndarray:
    """Bytes of each (non-negative) step's varint."""
    widths = np.ones(len(steps), np.int8)
    top = int(steps.max()) if len(steps) else 0
    for bits in range(7, 63, 7):
        if top < 1 << bits:
            break
        widths += steps >= (1 << bits)
    return widths
