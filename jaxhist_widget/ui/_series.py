"""What a `LivePlot` draws of a run: the plotted series (`Spec`) and, per lane, their points.

Layer 3 (widget) by role, numpy only. `._plan.plan` turns the `LivePlot` options into the
specs of a run's layout. `LaneSeries` holds
one series of one vmap lane as it grows: the values of the new rows are reduced once, as they
arrive, into min/max buckets (`jaxhist_widget.decimate.MinMaxBuckets`), so an update costs the
new rows and the point budget, not the length of the run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._band import row_quantiles
from ._decimate import MinMaxBuckets

__all__ = ["LaneSeries", "Spec", "check_fields", "finite_tail"]


@dataclass(frozen=True)
class Spec:
    """One plotted series of a run: a scalar leaf, one component, a vector leaf's norm or median
    (drawn over its band or heatmap: `under`), or a path (`xy`: its x and y series)."""

    label: str
    leaf: int
    kind: str  # "scalar" | "norm" | "component" | "median" | "path"
    index: int = 0  # flat component index for kind == "component"
    chart: str = ""  # the chart it is drawn on, when not the one titled with its label
    under: str = ""  # what a median is drawn over: "band" | "heatmap"
    xy: tuple[Spec, Spec] | None = None  # a path's x and y series

    @property
    def key(self) -> str:
        """The chart it is drawn on (a vector's components and median: the leaf's name)."""
        return self.chart or self.label

    def values(self, rows: list[np.ndarray]) -> np.ndarray:
        """This series' float64 values of ``rows`` (one array per leaf, as `Run` hands out);
        for a path, ``(rows, 2)``: x and y."""
        if self.xy is not None:
            x, y = self.xy
            return np.stack([x.values(rows), y.values(rows)], axis=1)
        if self.kind == "scalar":
            return self.components(rows)[:, 0]
        if self.kind == "component":
            return self.components(rows)[:, self.index]
        if self.kind == "median":  # NaN where a component is: the panel flags it as diverged
            values = self.components(rows)
            (median,) = row_quantiles(values, (50.0,))
            return np.where(np.isfinite(values).all(axis=1), median, np.nan)
        return np.linalg.norm(self.components(rows), axis=1)

    def components(self, rows: list[np.ndarray]) -> np.ndarray:
        """Every value of this series' leaf in ``rows``, flat: float64 ``(rows, components)``."""
        new = rows[self.leaf]
        return new.reshape(len(new), -1).astype(np.float64, copy=False)


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

    def extend(self, values: np.ndarray) -> None:
        """Append the values of the new rows."""
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
        return x, y, (self._lo, self._hi, self._lo_pos)


def finite_tail(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Drop trailing non-finite points: bqplot puts a line's label at its last point, and a NaN
    there is an invalid SVG transform (a console error per update). Gaps inside stay."""
    finite = np.flatnonzero(np.isfinite(y))
    end = finite[-1] + 1 if finite.size else 0
    return x[:end], y[:end]


def check_fields(fields: Any) -> tuple[str, ...] | None:
    """Validate ``LivePlot(fields=...)``: None, a str, or a non-empty sequence of str."""
    if fields is None:
        return None
    if isinstance(fields, str):
        return (fields,)
    try:
        items = tuple(fields)
    except TypeError:
        raise TypeError(f"fields must be None, a str or a list of str, got {fields!r}.") from None
    if not items or not all(isinstance(f, str) for f in items):
        raise TypeError(f"fields must be None, a str or a non-empty list of str, got {fields!r}.")
    return items
