"""Min/max-preserving decimation of a line for plotting.

Numpy only. A plot cannot show more points than it has pixels, and a widget update's size (and
the browser's redraw time) grows with the points sent, so long histories are reduced before they
travel. Plain striding would hide exactly what a user watches a loss curve for (a spike, a NaN),
so each bucket keeps its minimum and its maximum, in step order, and a bucket holding a
non-finite value keeps a NaN there so the line shows a gap.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["MinMaxBuckets", "extend_together", "minmax_decimate"]


def minmax_decimate(x: ArrayLike, y: ArrayLike, max_points: int) -> tuple[np.ndarray, np.ndarray]:
    """Reduce the line ``(x, y)`` to at most ``max_points`` points, keeping every bucket's extremes.

    The points are split into consecutive buckets of (nearly) equal count. Each bucket keeps the
    point of its smallest and of its largest finite ``y``, in their original order, so spikes and
    dips stay visible at any zoom-out. Non-finite ``y`` (NaN, ±inf) are never chosen as extremes;
    a bucket that holds one also keeps that point with ``y = NaN``, which a plot draws as a gap.
    The first and the last point are always kept, so the line spans the whole range and ends at
    the latest value.

    Parameters
    ----------
    x, y
        1-d arrays of equal length; ``x`` is assumed sorted (step numbers).
    max_points
        Upper bound on the returned length (>= 5: first, last, a bucket's min, max and gap).

    Returns
    -------
    x, y
        float64 arrays of equal length ``<= max_points``; ``y`` has NaN where the input was
        non-finite. Inputs already short enough are returned whole (with ±inf turned into NaN).

    Examples
    --------
    >>> import numpy as np
    >>> y = np.zeros(10_000)
    >>> y[1234] = 50.0
    >>> y[7000] = np.nan
    >>> xs, ys = minmax_decimate(np.arange(y.size), y, 100)
    >>> len(xs) <= 100, 50.0 in ys, bool(np.isnan(ys).any()), float(xs[-1])
    (True, True, True, 9999.0)
    """
    xs = np.asarray(x, dtype=np.float64).reshape(-1)
    ys = np.asarray(y, dtype=np.float64).reshape(-1)
    if xs.shape != ys.shape:
        raise ValueError(f"x and y must have the same length, got {xs.size} and {ys.size}.")
    if max_points < 5:
        raise ValueError(f"max_points must be >= 5, got {max_points}.")
    finite = np.isfinite(ys)
    ys = np.where(finite, ys, np.nan)
    n = ys.size
    if n <= max_points:
        return xs, ys

    size = _bucket_size(n, finite, max_points)
    buckets = -(-n // size)
    pad = buckets * size - n
    grid_finite = np.concatenate([finite, np.zeros(pad, bool)]).reshape(buckets, size)
    grid = np.concatenate([ys, np.full(pad, np.nan)]).reshape(buckets, size)

    lo = np.where(grid_finite, grid, np.inf)
    hi = np.where(grid_finite, grid, -np.inf)
    offsets = np.arange(buckets) * size
    i_min = lo.argmin(axis=1) + offsets
    i_max = hi.argmax(axis=1) + offsets
    has_value = grid_finite.any(axis=1)
    gap_mask = ~grid_finite
    gap_mask[-1, size - pad :] = False  # padding is not a gap
    has_gap = gap_mask.any(axis=1)
    i_gap = gap_mask.argmax(axis=1) + offsets

    picks = np.concatenate(
        [
            i_min[has_value],
            i_max[has_value],
            i_gap[has_gap],
            [0, n - 1],
        ]
    )
    picks = np.unique(picks)  # sorted, and min == max (flat bucket) kept once
    return xs[picks], ys[picks]


def _bucket_size(n: int, finite: np.ndarray, max_points: int) -> int:
    """Points per bucket such that the output fits in ``max_points``.

    Two slots go to the first and last point, two to each bucket (min, max), and one more to
    each bucket that holds a non-finite value (its gap). Buckets have equal size (the ceiling),
    so one reshape handles them all.
    """
    bad = np.flatnonzero(~finite)
    buckets = max(1, (max_points - 2) // 2)
    for _ in range(3):
        size = -(-n // buckets)
        gaps = len(np.unique(bad // size)) if bad.size else 0
        if 2 * -(-n // size) + gaps + 2 <= max_points:
            return size
        buckets = max(1, (max_points - 2 - gaps) // 2)
    # Many scattered gaps: budget 3 slots per bucket, which always fits.
    return -(-n // max(1, (max_points - 2) // 3))


# Rows of a bucket table (`MinMaxBuckets`): the step and value of the bucket's smallest and
# largest finite value (step -1 and value +inf / -inf when it has none), and the step of its
# first non-finite value (-1 when none). Steps are exact in float64 up to 2**53.
_LO_I, _LO_V, _HI_I, _HI_V, _GAP_I = range(5)


class MinMaxBuckets:
    """Min/max decimation of a line that grows, at a cost per append of the new points only.

    The line's points ``0 .. n-1`` are split into buckets of ``size`` consecutive points
    (``size`` a power of two, bucket ``j`` holds points ``j*size .. (j+1)*size - 1``). Every
    complete bucket is kept as its extremes: the index and value of its smallest and of its
    largest finite value, and the index of its first non-finite value (a gap). The last,
    partial bucket is kept the same way. New points are reduced once, as they arrive; when the
    buckets would need more than ``max_points`` points, adjacent pairs are merged (the min of
    the two mins, the max of the two maxes, the first gap) and ``size`` doubles. A point is
    thus reduced once and a bucket merged at most once per doubling: an append costs
    O(new points + max_points), amortised, whatever the length of the line.

    What `points` returns is what `minmax_decimate` would keep with these buckets: each
    bucket's min and max (so every spike), a NaN at each bucket's first non-finite value, the
    first and the latest point, in step order.

    Parameters
    ----------
    max_points
        Upper bound on the number of points `points` returns (>= 5).

    Examples
    --------
    >>> import numpy as np
    >>> line = MinMaxBuckets(100)
    >>> y = np.zeros(100_000)
    >>> y[31_234] = 50.0
    >>> for chunk in np.split(y, 100):  # arriving 1000 points at a time
    ...     lo, hi = line.extend(chunk)  # the new points' finite extremes
    >>> x, yd = line.points()
    >>> len(x) <= 100, float(yd.max()), int(x[yd.argmax()]), int(x[-1])
    (True, 50.0, 31234, 99999)
    """

    def __init__(self, max_points: int) -> None:
        if max_points < 5:
            raise ValueError(f"max_points must be >= 5, got {max_points}.")
        self.max_points = max_points
        #: Points per bucket (a power of two).
        self.size = 1
        #: Points appended so far.
        self.n = 0
        #: Work done so far: points reduced plus buckets touched by merges and by `points`
        #: (counts, not time: what the tests bound per update).
        self.work = 0
        self._buckets = np.empty((5, 0))  # complete buckets, one column each
        self._partial = _empty_bucket()  # the last, incomplete bucket (fewer than size points)
        self._first = math.nan
        self._last = math.nan
        self._cache: tuple[np.ndarray, np.ndarray] | None = None

    @property
    def last(self) -> float:
        """The latest point's value as given (NaN before the first point)."""
        return self._last

    def extend(self, y: ArrayLike) -> tuple[float, float]:
        """Append points ``n .. n + len(y) - 1`` with values ``y``.

        Returns the smallest and the largest finite value of ``y`` (``inf``, ``-inf`` if none),
        read off the buckets made (no further pass over ``y``).
        """
        y = np.asarray(y, dtype=np.float64).reshape(-1)
        if not y.size:
            return math.inf, -math.inf
        tables = []
        self.work += y.size
        self._cache = None
        if self.n == 0:
            self._first = float(y[0]) if math.isfinite(y[0]) else math.nan
        self._last = float(y[-1])
        # Buckets that will certainly be merged (each holds >= 1 point to draw) are never made:
        # a long append goes straight to the bucket size it needs.
        limit = self._limit()
        while self._buckets.shape[1] and (self.n + y.size) // self.size > limit:
            self._merge()
        while (self.n + y.size) // self.size > limit and not self._buckets.shape[1]:
            # Nothing complete yet to merge: widen the (partial) bucket itself.
            self.size *= 2
        start, used = self.n, 0
        filled = self.n - self._buckets.shape[1] * self.size  # points in the partial bucket
        if filled:  # top up the partial bucket first
            take = min(y.size, self.size - filled)
            tables.append(_reduce(y[:take], start, take))
            self._partial = _merge_pair(self._partial, tables[-1][:, 0])
            used = take
            if filled + take == self.size:
                self._buckets = np.concatenate([self._buckets, self._partial[:, None]], axis=1)
                self._partial = _empty_bucket()
        whole = (y.size - used) // self.size * self.size
        if whole:
            block = _reduce(y[used : used + whole], start + used, self.size)
            tables.append(block)
            self._buckets = np.concatenate([self._buckets, block], axis=1)
            used += whole
        if used < y.size:
            rest = y.size - used
            tables.append(_reduce(y[used:], start + used, rest))
            self._partial = _merge_pair(self._partial, tables[-1][:, 0])
        self.n += y.size
        # Gaps need a third point in a bucket: merge further (a bucket draws at most three
        # points, so up to limit // 3 buckets cannot be too many: no count needed).
        while self._buckets.shape[1] > limit // 3 and _count(self._buckets) > limit:
            self._merge()
        lo = min(float(t[_LO_V].min()) for t in tables)
        hi = max(float(t[_HI_V].max()) for t in tables)
        return lo, hi

    def points(self) -> tuple[np.ndarray, np.ndarray]:
        """The kept points: int64 indices (sorted) and float64 values (NaN at gaps)."""
        if self._cache is not None:
            return self._cache
        if not self.n:
            return np.zeros(0, np.int64), np.zeros(0)
        b = np.concatenate([self._buckets, self._partial[:, None]], axis=1)
        self.work += b.shape[1]
        idx = np.concatenate([b[_LO_I], b[_HI_I], b[_GAP_I], [0, self.n - 1]])
        val = np.concatenate(
            [
                b[_LO_V],
                b[_HI_V],
                np.full(b.shape[1], np.nan),
                [self._first, self._last if math.isfinite(self._last) else math.nan],
            ]
        )
        keep = idx >= 0
        steps, where = np.unique(idx[keep], return_index=True)
        self._cache = (steps.astype(np.int64), val[keep][where])
        return self._cache

    def lockstep_key(self) -> tuple[int, int, int, int] | None:
        """What lines extended together (`extend_together`) have alike: points, bucket size,
        complete buckets and budget; None for a line with a gap (it goes on alone)."""
        if self._partial[_GAP_I] >= 0 or (self._buckets[_GAP_I] >= 0).any():
            return None
        return self.n, self.size, self._buckets.shape[1], self.max_points

    def _limit(self) -> int:
        # The first and the last point, and up to three points of the partial bucket, are
        # drawn besides the complete buckets.
        return self.max_points - 5

    def _merge(self) -> None:
        """Merge adjacent pairs of complete buckets; an odd last one joins the partial bucket."""
        b = self._buckets
        self.work += b.shape[1]
        pairs = b.shape[1] // 2
        merged = _merge_pair(b[:, 0 : 2 * pairs : 2], b[:, 1 : 2 * pairs : 2])
        if b.shape[1] % 2:
            self._partial = _merge_pair(b[:, -1], self._partial)
        self._buckets = merged
        self.size *= 2


def extend_together(lines: list[MinMaxBuckets], y: np.ndarray) -> np.ndarray:
    """`MinMaxBuckets.extend` of each of ``lines`` with its row of ``y`` ``(lines, points)``,
    for all of them at once: the same buckets, counts and extremes, in array operations over
    the lines instead of a dozen small ones per line (a sweep draws 64 lanes per series).

    The lines are alike (one `MinMaxBuckets.lockstep_key`: as many points, buckets of one
    size, one budget, no gap; and every new value finite); where they come to merge their
    buckets differently, each group goes on apart. Returns the new points' smallest and
    largest value per line, ``(2, lines)``. Kept here, with the buckets it writes: a sweep's
    drawn lanes in lockstep are extended so (`.._lines.extend_lines`).
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


def _empty_bucket() -> np.ndarray:
    return np.array([-1.0, np.inf, -1.0, -np.inf, -1.0])


def _reduce(y: np.ndarray, start: int, size: int) -> np.ndarray:
    """The bucket table of ``y`` (a multiple of ``size`` points, the first at index ``start``)."""
    grid = y.reshape(-1, size)
    offsets = start + np.arange(grid.shape[0]) * size
    if np.isfinite(y).all():  # the usual case, in three passes over the values
        return _finite_table(grid, offsets)
    rows = np.arange(grid.shape[0])
    out = np.empty((5, grid.shape[0]))
    finite = np.isfinite(grid)
    lo = np.where(finite, grid, np.inf)
    hi = np.where(finite, grid, -np.inf)
    i_lo, i_hi = lo.argmin(axis=1), hi.argmax(axis=1)
    has = finite.any(axis=1)
    bad = ~finite
    out[_LO_I] = np.where(has, offsets + i_lo, -1)
    out[_LO_V] = lo[rows, i_lo]
    out[_HI_I] = np.where(has, offsets + i_hi, -1)
    out[_HI_V] = hi[rows, i_hi]
    out[_GAP_I] = np.where(bad.any(axis=1), offsets + bad.argmax(axis=1), -1)
    return out


def _finite_table(grid: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """The bucket tables of finite values ``grid`` ``(..., buckets, size)`` whose buckets start
    at points ``offsets`` ``(buckets,)``: ``(5, ..., buckets)`` (any leading axes: lines)."""
    flat = grid.reshape(-1, grid.shape[-1])
    rows = np.arange(len(flat))
    i_lo, i_hi = flat.argmin(axis=1), flat.argmax(axis=1)
    out = np.empty((5, len(flat)))
    out[_LO_V], out[_HI_V] = flat[rows, i_lo], flat[rows, i_hi]
    out = out.reshape(5, *grid.shape[:-1])
    out[_LO_I] = offsets + i_lo.reshape(grid.shape[:-1])
    out[_HI_I] = offsets + i_hi.reshape(grid.shape[:-1])
    out[_GAP_I] = -1
    return out


def _merge_pair(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Buckets ``a`` followed by ``b`` (columns, or one bucket each) as one: ties keep ``a``'s
    point, the earlier one, as ``argmin`` / ``argmax`` over both would."""
    if a.ndim == 1:  # one bucket each (the partial one): scalars, not five array operations
        lo_i, lo_v, hi_i, hi_v, gap = a.tolist()
        b_lo_i, b_lo_v, b_hi_i, b_hi_v, b_gap = b.tolist()
        if b_lo_v < lo_v:
            lo_i, lo_v = b_lo_i, b_lo_v
        if b_hi_v > hi_v:
            hi_i, hi_v = b_hi_i, b_hi_v
        return np.array([lo_i, lo_v, hi_i, hi_v, b_gap if gap < 0 else gap])
    out = a.copy()
    lo = b[_LO_V] < a[_LO_V]
    hi = b[_HI_V] > a[_HI_V]
    gap = a[_GAP_I] < 0
    out[_LO_I] = np.where(lo, b[_LO_I], a[_LO_I])
    out[_LO_V] = np.where(lo, b[_LO_V], a[_LO_V])
    out[_HI_I] = np.where(hi, b[_HI_I], a[_HI_I])
    out[_HI_V] = np.where(hi, b[_HI_V], a[_HI_V])
    out[_GAP_I] = np.where(gap, b[_GAP_I], a[_GAP_I])
    return out


def _count(buckets: np.ndarray) -> int:
    """Points the buckets draw: min, max (once when the same point), gap."""
    lo, hi = buckets[_LO_I], buckets[_HI_I]
    return int((lo >= 0).sum() + ((hi >= 0) & (hi != lo)).sum() + (buckets[_GAP_I] >= 0).sum())
