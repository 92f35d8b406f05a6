"""A sweep's drawn lanes in lockstep: their lines extended all at once (`extend_lines`).

Numpy only. A sweep draws up to 64 lanes per series, each its own `LaneSeries`; extending them
one by one costs a dozen small array operations per lane and series, which made most of a
sweep plot's decimation time. Lanes in lockstep (as many rows each, every value finite) have
buckets alike, so one pass of array operations over all of them gives each line exactly what
its own `LaneSeries.extend` would; any other lanes are extended one by one, as before.
"""

from __future__ import annotations

import numpy as np

from ._decimate import (
    _GAP_I,
    _HI_I,
    _HI_V,
    _LO_I,
    _LO_V,
    MinMaxBuckets,
    _empty_bucket,
    _finite_table,
    _merge_pair,
)
from ._lines import LaneSeries

__all__ = ["extend_lines"]


def extend_lines(series: list[LaneSeries], values: np.ndarray) -> None:
    """``s.extend(row)`` for each of ``series`` and its row of ``values`` ``(series, rows, ...)``:
    all at once for the lines alike (see the module docstring), the others (a lane that
    diverged, a `PathSeries`) one by one.

    >>> import numpy as np
    >>> lines = [LaneSeries(100) for _ in range(3)]
    >>> extend_lines(lines, np.array([[3.0, 1.0], [2.0, 5.0], [-1.0, 4.0]]))
    >>> [line.points(0)[1].tolist() for line in lines], lines[2].points(0)[2]
    ([[3.0, 1.0], [2.0, 5.0], [-1.0, 4.0]], (-1.0, 4.0, 4.0))
    """
    values = np.asarray(values, dtype=np.float64)
    together = _alike(series, values)
    if together:
        extremes = _extend_alike([series[k]._line for k in together], values[together])
        # every value finite: each line ends at its last row; its smallest positive value is
        # its new rows' (inf: none), as `LaneSeries.extend` finds it
        rows = values[together]
        positive = np.where(rows > 0, rows, np.inf).min(axis=1).tolist()
        lows, highs = extremes.tolist()
        for k, lo, hi, pos in zip(together, lows, highs, positive, strict=True):
            s = series[k]
            s.end = (s.size - 1, float(values[k, -1]))
            s._lo, s._hi, s._lo_pos = min(s._lo, lo), max(s._hi, hi), min(s._lo_pos, pos)
    taken = set(together)
    for k, s in enumerate(series):
        if k not in taken:
            s.extend(values[k])


def _alike(series: list[LaneSeries], values: np.ndarray) -> list[int]:
    """The lines of ``series`` to extend at once: lines (not paths) whose new values and
    buckets so far are all finite: the largest group of them bucketed alike (none unless it
    holds two)."""
    if values.ndim != 2 or not values.shape[1] or len(series) < 2:
        return []
    if not all(type(s) is LaneSeries for s in series):
        return []
    finite = np.isfinite(values).all(axis=1).tolist()
    keys: dict[tuple[int, int, int, int], list[int]] = {}
    for k, s in enumerate(series):
        line = s._line
        if finite[k] and line._partial[_GAP_I] < 0 and not (line._buckets[_GAP_I] >= 0).any():
            key = (line.n, line.size, line._buckets.shape[1], line.max_points)
            keys.setdefault(key, []).append(k)
    most = max(keys.values(), key=len, default=[])
    return most if len(most) > 1 else []


def _extend_alike(lines: list[MinMaxBuckets], y: np.ndarray) -> np.ndarray:
    """`MinMaxBuckets.extend` of each of ``lines`` with its row of ``y`` ``(lines, points)``,
    for all of them at once: the same buckets, counts and extremes, in array operations over
    the lines instead of a dozen small ones per line (a sweep draws 64 lanes per series).

    The lines are alike (`_alike`: as many points, buckets of one size, one budget, every
    value old and new finite); where they come to merge their buckets differently, each group
    goes on apart. Returns the new points' smallest and largest value per line,
    ``(2, lines)``.
    """
    one = lines[0]
    buckets = np.stack([b._buckets for b in lines], axis=1)  # (5, lines, buckets)
    partial = np.stack([b._partial for b in lines], axis=1)  # (5, lines)
    n, size, m, limit, work = one.n, one.size, y.shape[1], one._limit(), y.shape[1]

    def merge(buckets, partial):  # `MinMaxBuckets._merge` of every line
        pairs = buckets.shape[2] // 2
        merged = _merge_pair(buckets[:, :, 0 : 2 * pairs : 2], buckets[:, :, 1 : 2 * pairs : 2])
        if buckets.shape[2] % 2:
            partial = _merge_pair(buckets[:, :, -1], partial)
        return merged, partial, buckets.shape[2]

    while buckets.shape[2] and (n + m) // size > limit:
        buckets, partial, touched = merge(buckets, partial)
        size, work = size * 2, work + touched
    while (n + m) // size > limit and not buckets.shape[2]:
        size *= 2
    tables, used = [], 0
    filled = n - buckets.shape[2] * size
    if filled:  # top up the partial buckets first
        used = min(m, size - filled)
        tables.append(_reduce_lines(y[:, :used], n, used))
        partial = _merge_pair(partial, tables[-1][:, :, 0])
        if filled + used == size:
            buckets = np.concatenate([buckets, partial[:, :, None]], axis=2)
            partial = np.repeat(_empty_bucket()[:, None], len(lines), axis=1)
    whole = (m - used) // size * size
    if whole:
        tables.append(_reduce_lines(y[:, used : used + whole], n + used, size))
        buckets = np.concatenate([buckets, tables[-1]], axis=2)
        used += whole
    if used < m:
        tables.append(_reduce_lines(y[:, used:], n + used, m - used))
        partial = _merge_pair(partial, tables[-1][:, :, 0])

    def settle(at: np.ndarray, buckets, partial, size: int, work: int) -> None:
        # Gaps need a third point in a bucket: merge further (no gaps here: a bucket draws
        # its min, and its max unless the same point). Lines that part ways settle apart.
        while buckets.shape[2] > limit // 3:
            over = buckets.shape[2] + (buckets[_HI_I] != buckets[_LO_I]).sum(axis=1) > limit
            if not over.any():
                break
            if not over.all():
                for part in (over, ~over):
                    settle(at[part], buckets[:, part], partial[:, part], size, work)
                return
            buckets, partial, touched = merge(buckets, partial)
            size, work = size * 2, work + touched
        for j, k in enumerate(at.tolist()):
            line = lines[k]
            if not line.n:
                line._first = float(y[k, 0])
            line.n, line.size, line.work = n + m, size, line.work + work
            line._buckets, line._partial = buckets[:, j], partial[:, j]
            line._last, line._cache = float(y[k, -1]), None

    settle(np.arange(len(lines)), buckets, partial, size, work)
    lo = np.min([t[_LO_V].min(axis=1) for t in tables], axis=0)
    hi = np.max([t[_HI_V].max(axis=1) for t in tables], axis=0)
    return np.stack([lo, hi])


def _reduce_lines(y: np.ndarray, start: int, size: int) -> np.ndarray:
    """`_reduce` of each row of finite ``y`` ``(lines, points)``: ``(5, lines, buckets)``."""
    grid = y.reshape(len(y), -1, size)
    return _finite_table(grid, start + np.arange(grid.shape[1]) * size)
