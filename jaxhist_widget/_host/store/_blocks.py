"""A run's rows as the ``blocks`` of a store file, and back (see `_schema` for the format).

Host runtime, numpy only. Filing and reading are array operations: a group of lanes that share
their rows is cut into blocks with numpy slices (a loop over blocks of up to a few KB, never
over lanes or rows), and a run read back is assembled in place, one array per leaf.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..._wire import Layout, np_dtype
from ..runtime import Run
from . import _schema as schema

__all__ = ["INSERT", "encode", "field_lines", "groups", "read"]

INSERT = "INSERT INTO blocks VALUES (?,?,?,?,?,?,?,?)"
#: Rows read from a run at once while filing (all its lanes together), in bytes at most.
_WINDOW_BYTES = 16 << 20
#: The data of one block line at most: small enough to stay within one page of the file (4 KiB),
#: so a reader of the ``history`` view gets at a value's bytes without copying the block from
#: overflow pages each time (``benchmarks/store_format.py``).
BLOCK_DATA = 3500


def field_lines(db_id: int, layout: Layout) -> list[tuple[Any, ...]]:
    """The ``fields`` lines of a run: name (as UTF-8), dtype, shape and how the view decodes."""
    lines = []
    for leaf, (name, dtype, shape) in enumerate(
        zip(layout.names, layout.dtypes, layout.shapes, strict=True)
    ):
        c = schema.codec(dtype, tuple(shape))
        rest = [c[k] for k in ("itemsize", "rowbytes", "bits", "nexp", "nmant", "bias")]
        lines.append(
            (db_id, leaf, schema.display(name), c["dtype"], c["shape"], c["codec"], *rest,
             c["special"])
        )  # fmt: skip
    return lines


def pairs_per_block(rowbytes: int) -> int:
    """(lane, row) pairs one block of a leaf holds: `BLOCK_DATA` bytes, at least one row, at
    most `schema.BLOCK_PAIRS` (what the view can number)."""
    return max(1, min(schema.BLOCK_PAIRS, BLOCK_DATA // max(rowbytes, 1)))


def groups(written: np.ndarray, counts: np.ndarray) -> list[tuple[np.ndarray, int, int]]:
    """The lanes with rows not yet filed, grouped by where those rows start and end:
    ``(lanes, start, stop)`` each (under vmap the running lanes step together: one group, plus
    one for each end row of the lanes that ended since)."""
    todo = np.flatnonzero(counts > written)
    if not len(todo):
        return []
    keys = written[todo] * (int(counts.max()) + 1) + counts[todo]
    uniq, inverse = np.unique(keys, return_inverse=True)
    order = np.argsort(inverse, kind="stable")
    bounds = np.cumsum(np.bincount(inverse, minlength=len(uniq)))[:-1]
    out = []
    for lanes in np.split(todo[order], bounds):
        out.append((lanes, int(written[lanes[0]]), int(counts[lanes[0]])))
    return out


def encode(
    run: Run, db_id: int, todo: list[tuple[np.ndarray, int, int]]
) -> Iterator[tuple[Any, ...]]:
    """The ``blocks`` lines of rows ``start .. stop`` of each group of lanes in ``todo``
    (`groups`), read from ``run`` a window at a time, so that what filing holds at once is
    bounded whatever is waiting."""
    layout = run.layout
    rowbytes = [
        int(np.prod(s, dtype=np.int64)) * np_dtype(d).itemsize
        for s, d in zip(layout.shapes, layout.dtypes, strict=True)
    ]
    per_row = max(1, sum(rowbytes))
    for lanes, start, stop in todo:
        window = max(1, _WINDOW_BYTES // (per_row * len(lanes)))
        for w0 in range(start, stop, window):
            w1 = min(stop, w0 + window)
            for leaf, rows in enumerate(run.block(lanes, w0, w1)):
                yield from _cut(db_id, leaf, rows, lanes, w0, pairs_per_block(rowbytes[leaf]))


def _cut(
    db_id: int, leaf: int, rows: np.ndarray, lanes: np.ndarray, first: int, pairs: int
) -> Iterator[tuple[Any, ...]]:
    """``rows`` (lanes, n, *shape) cut into blocks of at most ``pairs`` (lane, row) pairs:
    whole rows of several lanes where a lane's rows are fewer (the blocks are then consecutive
    pieces of the array's bytes, sliced from one copy), else runs of one lane's rows."""
    n = rows.shape[1]
    if n == 0 or not len(lanes):
        return
    per_lane = min(n, pairs)
    if per_lane == n:  # whole rows of several lanes a block
        lanes_per = max(1, pairs // n)
        data = memoryview(np.ascontiguousarray(rows).tobytes())
        step = lanes_per * (len(data) // len(lanes))
        for k, l0 in enumerate(range(0, len(lanes), lanes_per)):
            sub = lanes[l0 : l0 + lanes_per]
            lo = int(sub[0])
            blob = None if int(sub[-1]) - lo == len(sub) - 1 else sub.astype("<i4").tobytes()
            piece = bytes(data[k * step : (k + 1) * step])
            yield (db_id, leaf, first, n, lo, len(sub), blob, piece)
        return
    for j, lane in enumerate(lanes.tolist()):  # long runs of few lanes: a lane at a time
        data = memoryview(np.ascontiguousarray(rows[j]).tobytes())
        step = per_lane * (len(data) // n)
        for k, r0 in enumerate(range(0, n, per_lane)):
            chunk = bytes(data[k * step : (k + 1) * step])
            yield (db_id, leaf, first + r0, min(per_lane, n - r0), lane, 1, None, chunk)


def read(
    conn: Any, db_id: int, layout: Layout, lanes: int, max_rows: int, byteorder: str | None
) -> tuple[list[np.ndarray], np.ndarray]:
    """A run's rows from its blocks: one array per leaf of shape ``(lanes, max_rows, *shape)``
    and the rows per lane that every leaf has from row 0 on (a block that would leave a gap is
    not taken: a store only ever files a lane's rows in order)."""
    specs = list(zip(layout.shapes, layout.dtypes, strict=True))
    arrays = [np.empty((lanes, max_rows, *s), np_dtype(d)) for s, d in specs]
    filled = np.zeros((len(specs), lanes), np.int64)
    swap = byteorder is not None and byteorder != sys.byteorder
    cursor = conn.execute(
        "SELECT leaf, first, nrows, lane0, nlanes, lanes, data FROM blocks WHERE run=? "
        "ORDER BY leaf, rowid",
        (db_id,),
    )
    for leaf, first, nrows, lane0, nlanes, blob, data in cursor:
        if leaf >= len(specs) or first + nrows > max_rows:
            continue
        shape, dtype = specs[leaf]
        sel: Any = slice(lane0, lane0 + nlanes) if blob is None else np.frombuffer(blob, "<i4")
        at = filled[leaf, sel]
        if not (at == first).all():
            if blob is None:
                sel = np.arange(lane0, lane0 + nlanes)
            keep = at == first
            values = _values(data, dtype, nlanes, nrows, shape, swap)[keep]
            sel = np.asarray(sel)[keep]
        else:
            values = _values(data, dtype, nlanes, nrows, shape, swap)
        arrays[leaf][sel, first : first + nrows] = values
        filled[leaf, sel] = first + nrows
    counts = filled.min(axis=0) if specs else np.zeros(lanes, np.int64)
    return arrays, counts


def _values(
    data: bytes, dtype: str, nlanes: int, nrows: int, shape: tuple[int, ...], swap: bool
) -> np.ndarray:
    values = np.frombuffer(data, np_dtype(dtype)).reshape(nlanes, nrows, *shape)
    return values.byteswap() if swap else values
