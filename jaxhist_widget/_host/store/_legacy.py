"""Reading the runs of store files of format versions 0 to 3: a ``rows`` table with one column
per leaf, NaNs as NULL with their bytes in ``nan_bits``.

Host runtime, numpy only. Such files are read as they are (a reader never writes) and upgraded
to blocks by the first writer (`_migrate`); both read them here, with array operations
over batches of rows (the NaN bytes put back by index, not one by one).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from ..._wire import Layout, np_dtype

__all__ = ["read"]

_BATCH = 1 << 16


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def read(conn: Any, line: Any, layout: Layout, lanes: int) -> tuple[list[np.ndarray], np.ndarray]:
    """The rows of the run of ``line`` as `_blocks.read` gives them: one array per leaf of
    shape ``(lanes, max_rows, *shape)``, and the rows per lane from step 0 up to the first
    missing one."""
    columns, kinds = json.loads(line["columns"]), json.loads(line["kinds"])
    specs = list(zip(layout.shapes, layout.dtypes, strict=True))
    select = ",".join(["lane", "step", *map(_quote, columns)])
    cursor = conn.execute(
        f"SELECT {select} FROM rows WHERE run=? ORDER BY lane, step", (int(line["id"]),)
    )
    lane_parts, step_parts = [], []
    leaf_parts: list[list[np.ndarray]] = [[] for _ in specs]
    while batch := cursor.fetchmany(_BATCH):
        cols = list(zip(*batch, strict=True))
        lane_parts.append(np.array(cols[0], np.int64))
        step_parts.append(np.array(cols[1], np.int64))
        for j, ((shape, dtype), kind) in enumerate(zip(specs, kinds, strict=True)):
            leaf_parts[j].append(_decode(kind, cols[2 + j], shape, np_dtype(dtype)))
    lane = np.concatenate(lane_parts) if lane_parts else np.zeros(0, np.int64)
    step = np.concatenate(step_parts) if step_parts else np.zeros(0, np.int64)
    ok = (lane >= 0) & (lane < lanes)
    lane, step = lane[ok], step[ok]
    values = [np.concatenate(p)[ok] if p else np.zeros((0, *s), np_dtype(d))
              for p, (s, d) in zip(leaf_parts, specs, strict=True)]  # fmt: skip
    counts = _contiguous(lane, step, lanes)
    keep = step < counts[lane]
    lane, step = lane[keep], step[keep]
    max_rows = int(counts.max()) if len(counts) else 0
    arrays = []
    for (shape, dtype), leaf in zip(specs, values, strict=True):
        out = np.zeros((lanes, max_rows, *shape), np_dtype(dtype))
        out[lane, step] = leaf[keep]
        arrays.append(out)
    _put_nans(conn, int(line["id"]), columns, arrays, counts)
    return arrays, counts


def _decode(kind: str, values: tuple[Any, ...], shape: tuple[int, ...], dtype: np.dtype) -> Any:
    if kind == "int":
        return np.array(values, np.int64).astype(dtype)
    if kind == "float":  # NULL (a NaN) comes back as NaN; its bytes are put back after
        return np.array(values, np.float64).astype(dtype)
    flat = np.frombuffer(b"".join(values), dtype)
    return flat.reshape(len(values), *shape)


def _contiguous(lane: np.ndarray, step: np.ndarray, lanes: int) -> np.ndarray:
    """Rows per lane from step 0 up to the first missing one (``lane, step`` sorted)."""
    counts = np.zeros(lanes, np.int64)
    if not len(lane):
        return counts
    starts = np.flatnonzero(np.r_[True, lane[1:] != lane[:-1]])
    index = np.arange(len(lane)) - np.repeat(starts, np.diff(np.r_[starts, len(lane)]))
    gap = np.where(step == index, len(lane), index)  # a row not where it belongs ends its lane
    sizes = np.diff(np.r_[starts, len(lane)])
    counts[lane[starts]] = np.minimum(np.minimum.reduceat(gap, starts), sizes)
    return counts


def _put_nans(
    conn: Any, db_id: int, columns: list[str], arrays: list[np.ndarray], counts: np.ndarray
) -> None:
    """Put each NaN's exact bytes back (``nan_bits``), by index, per column."""
    found: dict[str, tuple[list[int], list[int], list[bytes]]] = {}
    cursor = conn.execute("SELECT lane, step, col, bits FROM nan_bits WHERE run=?", (db_id,))
    for lane, step, col, bits in cursor:
        lanes, steps, values = found.setdefault(col, ([], [], []))
        lanes.append(lane)
        steps.append(step)
        values.append(bits)
    for col, (lanes_, steps_, values_) in found.items():
        if col not in columns:
            continue
        out = arrays[columns.index(col)]
        lane, step = np.array(lanes_, np.int64), np.array(steps_, np.int64)
        ok = (lane >= 0) & (lane < len(counts))
        ok[ok] = step[ok] < counts[lane[ok]]
        bits = np.frombuffer(b"".join(values_), out.dtype)
        out[lane[ok], step[ok]] = bits[ok]
