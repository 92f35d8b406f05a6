"""A line as it grows: one series of one lane, reduced once as rows arrive (`LaneSeries`), a
sweep's drawn lanes extended all at once (`extend_lines`), and the extent of values a chart's y
axis fits.

Numpy only. `LaneSeries` keeps min/max buckets (`._decimate.MinMaxBuckets`), so an update costs
the new rows and the point budget, not the length of the run.

A sweep draws up to 64 lanes per series, each its own `LaneSeries`; extending them one by one
costs a dozen small array operations per lane and series, which made most of a sweep plot's
decimation time. Lanes in lockstep (as many rows each, every value finite) have buckets alike,
so one pass of array operations over all of them (`._decimate.extend_together`) gives each line
exactly what its own `LaneSeries.extend` would; any other lanes are extended one by one.
"""

from __future__ import annotations

import math

import numpy as np

from ._decimate import MinMaxBuckets, extend_together

__all__ = ["LaneSeries", "extend_lines", "finite_tail", "values_extent"]


class LaneSeries:
    """One series of one lane as it grows: its min/max buckets and the extent of its values.

    Each value is reduced once, when it arrives (`extend`); `points` then costs the point
    budget, not the length of the run.
    """

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._line = MinMaxBuckets(budget)
        # Extent of the finite values so far: min, max, smallest positive (for a log axis).
        self._lo, self._hi, self._lo_pos = math.inf, -math.inf, math.inf
        #: The last finite value's row and value (-1, NaN: none yet): where a line that ends
        #: at NaN or ±inf (a diverged lane) is flagged, its decimated points aside.
        self.end: tuple[int, float] = (-1, math.nan)

    @property
    def size(self) -> int:
        """Rows received so far."""
        return self._line.n

    @property
    def last(self) -> float:
        """The latest value (NaN before the first row)."""
        return self._line.last

    @property
    def work(self) -> int:
        """Values reduced and buckets touched so far (see `MinMaxBuckets.work`)."""
        return self._line.work

    @property
    def extent(self) -> tuple[float, float, float]:
        """Min, max and smallest positive of the finite values so far (``inf`` / ``-inf``:
        none)."""
        return self._lo, self._hi, self._lo_pos

    @property
    def diverged(self) -> bool:
        """Whether the line has rows and its latest value is NaN or ±inf."""
        return self.size > 0 and not math.isfinite(self.last)

    def extend(self, values: np.ndarray) -> None:
        """Append the values of the new rows."""
        finite = np.flatnonzero(np.isfinite(values))
        if finite.size:
            self.end = (self.size + int(finite[-1]), float(values[finite[-1]]))
        lo, hi = self._line.extend(values)
        self._lo, self._hi = min(self._lo, lo), max(self._hi, hi)
        if lo > 0:  # (a loss) the smallest value is the smallest positive one
            self._lo_pos = min(self._lo_pos, lo)
        elif hi > 0:  # a sign change: one more pass, over the new values only
            self._lo_pos = min(self._lo_pos, float(values[(values > 0) & (values <= hi)].min()))

    def points(self, x0: int) -> tuple[np.ndarray, np.ndarray, tuple[float, float, float]]:
        """The points to draw (int64 steps from ``x0``, float64 values, NaN at gaps, never
        ending in NaN) and the extent (min, max, smallest positive) of the finite values,
        ``inf`` / ``-inf`` when there is none."""
        steps, y = self._line.points()
        x, y = finite_tail(steps + x0 if x0 else steps, y)
        return x, y, self.extent


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
        extremes = extend_together([series[k]._line for k in together], values[together])
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
        key = s._line.lockstep_key() if finite[k] else None
        if key is not None:
            keys.setdefault(key, []).append(k)
    most = max(keys.values(), key=len, default=[])
    return most if len(most) > 1 else []


def finite_tail(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Drop trailing non-finite points: bqplot puts a line's label at its last point, and a NaN
    there is an invalid SVG transform (a console error per update). Gaps inside stay."""
    finite = np.flatnonzero(np.isfinite(y))
    end = finite[-1] + 1 if finite.size else 0
    return x[:end], y[:end]


def values_extent(values: np.ndarray) -> tuple[float, float, float]:
    """Min, max and smallest positive of the finite ``values`` (``inf`` / ``-inf``: none)."""
    finite = values[np.isfinite(values)]
    if not finite.size:
        return math.inf, -math.inf, math.inf
    positive = finite[finite > 0]
    return (
        float(finite.min()),
        float(finite.max()),
        float(positive.min()) if positive.size else math.inf,
    )
