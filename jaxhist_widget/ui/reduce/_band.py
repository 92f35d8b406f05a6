"""The band of a large vector leaf: per step, the spread of its components, reduced as it grows.

Numpy only. A vector of 50 per-class losses is drawn as its median line (an ordinary
`._lines.LaneSeries` of the ``median`` spec) over two bands: the middle half of the components
(25th to 75th percentile) and all of them (min to max). Each band edge is the line of one
percentile per step, reduced once as rows arrive into min/max buckets
(`._decimate.MinMaxBuckets`) like any plotted line: a step's extreme component stays drawn
however long the run, and an update costs the new rows and the point budget.

A band is drawn as a closed polygon (its lower edge forward, its upper edge back), so both
edges keep their own decimated points; a step where no component is finite is bridged.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ._decimate import MinMaxBuckets

__all__ = ["BAND_PERCENTILES", "BandSeries", "row_quantiles"]

#: The band edges: the outer band is min–max, the inner one the quartiles.
BAND_PERCENTILES = (0.0, 25.0, 75.0, 100.0)
#: Above this many float64 values a row's percentiles come from numpy's partition, not a sort.
_SORT_MOST = 1000


class BandSeries:
    """The band of one vector leaf of one lane as it grows (or of a field over a sweep's lanes).

    Parameters
    ----------
    budget
        Points one band polygon may have (each of its two edges gets half).
    median
        Keep its median per step too, as a line (`median_points`): a sweep's band, whose
        median is no series of its own (a vector's is: its ``median`` spec).
    """

    def __init__(self, budget: int, median: bool = False) -> None:
        edge = max(5, budget // 2)
        self._edges = [MinMaxBuckets(edge) for _ in BAND_PERCENTILES]
        self._median = MinMaxBuckets(edge) if median else None
        self._lo, self._hi, self._lo_pos = math.inf, -math.inf, math.inf
        #: Lanes (of a band over a sweep's lanes) left out of it at a step for a NaN or ±inf
        #: value there: a diverged lane. Set by its owner; its legend entry says how many.
        self.left_out = 0

    @property
    def size(self) -> int:
        """Rows received so far."""
        return self._edges[0].n

    @property
    def work(self) -> int:
        """Values reduced and buckets touched so far (see `MinMaxBuckets.work`)."""
        return sum(e.work for e in self._edges)

    @property
    def extent(self) -> tuple[float, float, float]:
        """Min, max and smallest positive value of the band (``inf`` / ``-inf``: none yet)."""
        return self._lo, self._hi, self._lo_pos

    def extend(self, components: np.ndarray) -> np.ndarray:
        """Append the rows ``components`` (float ``(rows, components)``); return their
        median (of the same sort), NaN where a component is not finite (as the median line
        draws it: the panel flags such a value as diverged)."""
        if not len(components):
            return np.zeros(0)
        q = row_quantiles(components, (*BAND_PERCENTILES[:2], 50.0, *BAND_PERCENTILES[2:]))
        edges = (q[0], q[1], q[3], q[4])
        lo, _ = self._edges[0].extend(edges[0])
        for edge, values in zip(self._edges[1:-1], edges[1:-1], strict=True):
            edge.extend(values)
        _, hi = self._edges[-1].extend(edges[-1])
        if self._median is not None:  # (of the finite values: a diverged lane left out)
            self._median.extend(q[2])
        self._lo, self._hi = min(self._lo, lo), max(self._hi, hi)
        positive = q[(q > 0) & np.isfinite(q)]
        if positive.size:
            self._lo_pos = min(self._lo_pos, float(positive.min()))
        return np.where(np.isfinite(components).all(axis=1), q[2], np.nan)

    @property
    def has_median(self) -> bool:
        """Whether it keeps its median per step as a line (``median=True``)."""
        return self._median is not None

    def median_points(self, x0: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """Its median per step as a line's points (steps from ``x0``; NaN at a step of no
        finite value); empty without ``median=True``."""
        if self._median is None:
            return np.zeros(0, np.int64), np.zeros(0)
        x, y = self._median.points()
        return x + x0, y

    def polygons(self, x0: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
        """The outer (min–max) and the inner (quartiles) band as closed polygons: int64 steps
        from ``x0`` and float64 values, the lower edge forward then the upper edge back."""
        out = []
        for lower, upper in ((0, 3), (1, 2)):
            xl, yl = _finite(*self._edges[lower].points())
            xu, yu = _finite(*self._edges[upper].points())
            x = np.concatenate([xl, xu[::-1]]) + x0
            y = np.concatenate([yl, yu[::-1]])
            out.append((x, y))
        return out


def row_quantiles(components: np.ndarray, percentiles: tuple[float, ...]) -> np.ndarray:
    """Per row, the ``percentiles`` of its finite values (linear between the two nearest, as
    `numpy.percentile` by default), NaN for a row with none: ``(len(percentiles), rows)``.

    One sort of each row: quicker than `numpy.percentile` (whose partition along the last axis
    goes row by row) for rows of up to a thousand float64 values, and of any length in float32
    (a sweep's thousands of lanes per step sort as float32 in a third of percentile's time);
    longer float64 rows go to percentile.

    >>> row_quantiles(np.array([[4.0, 1, 3, 2], [np.nan, 5, np.inf, 1]]), (0, 50, 100)).tolist()
    [[1.0, 1.0], [2.5, 3.0], [4.0, 5.0]]
    """
    finite = np.isfinite(components)
    every = bool(finite.all())
    if components.shape[1] > _SORT_MOST and components.dtype.itemsize > 4:
        if every:
            return np.percentile(components, percentiles, axis=1)
        with warnings.catch_warnings():  # a row without a finite value: NaN, as documented
            warnings.simplefilter("ignore", RuntimeWarning)
            return np.nanpercentile(np.where(finite, components, np.nan), percentiles, axis=1)
    out = np.full((len(percentiles), len(components)), np.nan)
    if not components.shape[1]:  # no component: no finite value
        return out
    if every:  # (a sweep's usual rows) every row as long: one column per order statistic
        ordered = np.sort(components, axis=1)
        top = components.shape[1] - 1
        for k, q in enumerate(percentiles):
            at = q / 100.0 * top
            lo = math.floor(at)
            a = ordered[:, lo].astype(np.float64)
            b = ordered[:, min(lo + 1, top)].astype(np.float64)
            out[k] = a + (at - lo) * (b - a)
        return out
    ordered = np.sort(np.where(finite, components, np.nan), axis=1)  # NaN last
    count = finite.sum(axis=1)
    top = np.maximum(count - 1, 0)
    for k, q in enumerate(percentiles):
        at = q / 100.0 * top
        lo = np.floor(at).astype(np.int64)
        hi = np.minimum(lo + 1, top)
        a = np.take_along_axis(ordered, lo[:, None], axis=1)[:, 0].astype(np.float64)
        b = np.take_along_axis(ordered, hi[:, None], axis=1)[:, 0].astype(np.float64)
        out[k] = a + (at - lo) * (b - a)
    out[:, count == 0] = np.nan
    return out


def _finite(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # A NaN inside a closed path would split it into pieces each filled on its own.
    keep = np.isfinite(y)
    return x[keep], y[keep]
