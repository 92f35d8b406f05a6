"""Min/max-preserving decimation of a line for plotting.

Layer 2 (host): numpy only. A plot cannot show more points than it has pixels, and a widget
update's size (and the browser's redraw time) grows with the points sent, so long histories are
reduced before they travel. Plain striding would hide exactly what a user watches a loss curve
for (a spike, a NaN), so each bucket keeps its minimum and its maximum, in step order, and a
bucket holding a non-finite value keeps a NaN there so the line shows a gap.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["minmax_decimate"]


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
