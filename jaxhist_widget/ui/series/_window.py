"""Windows of steps: each run's lines over some steps only, decimated afresh from the rows of
those steps: the "last N steps" (`LivePlot(last_steps=N)`, a window that moves with the run)
and a zoom (`LivePlot(step_range=(lo, hi))`, a drag across a chart: a fixed window).

Numpy only. The whole-run lines (`..reduce.LaneSeries`) keep min/max buckets over the whole run:
a window of 1,000 steps of a 10^6-step run would hold two of their points. So a window reads its
rows from the run (views, `Run.rows_since`) and decimates them (`..reduce.minmax_decimate`):
O(N) per series, whatever the length of the run, and only when the rows in its steps changed
(`StepWindow`: a zoom into the past of a live run costs nothing per update). Its y extent is the
window's own, so each chart's y axis fits what it shows. A smoothed window line (`..reduce.ema`)
averages from far enough before the window that the start no longer counts (the weight to the
power of the lead below `EMA_FORGOTTEN`), so it reads as the whole run's average does, to that
precision.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Real
from typing import Any

import numpy as np

from ..reduce import ema, finite_tail, minmax_decimate, smoothed_budget, values_extent

__all__ = [
    "EMA_FORGOTTEN",
    "StepWindow",
    "check_last_steps",
    "check_step_range",
    "window_lines",
    "window_range",
]

#: A smoothed window line starts its average this far back (in weight**rows) before the window.
EMA_FORGOTTEN = 1e-9

Lines = list[tuple[list[np.ndarray], list[np.ndarray], tuple[float, float, float]]]


def check_last_steps(value: object) -> int:
    """``value`` (None or 0: every step) as an int >= 0, else a TypeError / ValueError."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"last_steps must be an int (0 or None: every step), got {value!r}.")
    if value < 0:
        raise ValueError(f"last_steps must be >= 0 (0: every step), got {value}.")
    return value


def check_step_range(value: object) -> tuple[int, int] | None:
    """``value`` (None: no zoom) as ``(first, last)`` whole steps, ``0 <= first < last``
    (floored and ceiled), else a TypeError / ValueError.

    >>> check_step_range((1000, 2000.5)), check_step_range(None)
    ((1000, 2001), None)
    """
    if value is None:
        return None
    pair = list(value) if isinstance(value, (tuple, list)) else None
    if (
        pair is None
        or len(pair) != 2
        or not all(isinstance(v, Real) and not isinstance(v, bool) for v in pair)
    ):
        raise TypeError(
            f"step_range must be None (every step) or (first, last) steps, e.g. (1000, 2000); "
            f"got {value!r}."
        )
    if not all(math.isfinite(v) for v in pair):
        raise ValueError(f"step_range must hold finite steps, got {value!r}.")
    lo, hi = math.floor(pair[0]), math.ceil(pair[1])
    if not 0 <= lo < hi:
        raise ValueError(
            f"step_range must be (first, last) with 0 <= first < last, got {value!r}; "
            f"None shows every step."
        )
    return lo, hi


def window_range(first: int, last: int, steps: int) -> tuple[int, int]:
    """The steps a window of ``steps`` shows of runs spanning ``first`` .. ``last``.

    >>> window_range(0, 1000, 100), window_range(0, 50, 100)
    ((900, 1000), (0, 50))
    """
    return max(first, last - steps), last


def window_lines(
    drawing: Any, lo: int, weight: float = 0.0, hi: int | None = None
) -> tuple[Lines, Lines | None]:
    """Run ``drawing``'s lines (a `._drawing.RunDrawing`) from plot step ``lo`` on (to step
    ``hi`` if given), one per field as `RunDrawing.lines` gives them, and its smoothed lines
    (with ``weight`` > 0). A path's lines are whole: its chart has no step axis."""
    d = drawing
    start = max(0, lo - d.x0)  # the run's first row in the window
    stop = None if hi is None else max(0, hi - d.x0 + 1)  # and the row after its last
    lead = _ema_lead(weight)
    empty = (math.inf, -math.inf, math.inf)
    raw: Lines = [([], [], empty) for _ in d.specs]
    smooth: Lines | None = [([], [], empty) for _ in d.specs] if weight > 0 else None
    for j, lane in enumerate(d.drawn_lanes):  # j: the drawn lane's place
        first = max(0, start - lead) if smooth is not None else start
        rows = d.reads.rows_since(lane, first, stop)
        if len(rows[0]) <= start - first:  # the lane ended before the window
            for lines in (raw, smooth or []):
                for xs, ys, _ in lines:
                    xs.append(np.zeros(0, np.int64))
                    ys.append(np.zeros(0))
            continue
        skip = start - first
        steps = d.x0 + first + skip + np.arange(len(rows[0]) - skip)
        for i, spec in enumerate(d.specs):
            if spec.xy is not None:  # a path's chart has no step axis: drawn whole
                x, y, extent = d.series[i, j].points(d.x0)
                raw[i][0].append(x)
                raw[i][1].append(y)
                raw[i] = (raw[i][0], raw[i][1], _joint(raw[i][2], extent))
                if smooth is not None:
                    smooth[i][0].append(np.zeros(0, np.int64))
                    smooth[i][1].append(np.zeros(0))
                continue
            values = spec.values(rows)
            budget = d.series[i, j].budget
            shown = values[skip:]
            x, y = _decimated(steps, shown, budget)
            xs, ys, extent = raw[i]
            xs.append(x)
            ys.append(y)
            raw[i] = (xs, ys, _joint(extent, values_extent(shown)))
            if smooth is not None:
                averaged = ema(values, weight)[skip:]
                sx, sy = _decimated(steps, averaged, smoothed_budget(budget))
                smooth[i][0].append(sx)
                smooth[i][1].append(sy)
    return raw, smooth


def _ema_lead(weight: float) -> int:
    """Rows before the window a smoothed line starts from (0 without smoothing)."""
    if not weight > 0:
        return 0
    return math.ceil(math.log(EMA_FORGOTTEN) / math.log(weight))


def _decimated(steps: np.ndarray, values: np.ndarray, budget: int) -> tuple[np.ndarray, np.ndarray]:
    if not len(values):
        return np.zeros(0, np.int64), np.zeros(0)
    x, y = minmax_decimate(steps, values, budget)
    return finite_tail(x.astype(np.int64), y)


def _joint(
    a: tuple[float, float, float], b: tuple[float, float, float]
) -> tuple[float, float, float]:
    return min(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2])


class StepWindow:
    """The steps every chart shows: every step, the last ``last_steps`` (a window that moves
    with the runs) or the fixed ``step_range`` (a zoom: it wins over ``last_steps`` until it is
    reset). While either is on, the plot draws the runs' lines over its steps (`window_lines`),
    a run anew only when the rows in those steps `changed`."""

    def __init__(self) -> None:
        self.last_steps = 0
        self.step_range: tuple[int, int] | None = None
        self._keys: dict[int, tuple] = {}  # run number -> what its lines were drawn from

    @property
    def on(self) -> bool:
        """Whether the charts show a window of steps (not every step)."""
        return bool(self.last_steps) or self.step_range is not None

    @property
    def zoomed(self) -> bool:
        """Whether the window is a zoom (fixed steps, shown exactly) rather than the last N."""
        return self.step_range is not None

    def bounds(self, drawn: Sequence[Any], hidden: set[int]) -> tuple[int, int]:
        """The first and last step shown: the zoom's, else the last steps of the shown runs
        (of ``drawn``, `RunDrawing` s, those not in ``hidden``)."""
        if self.step_range is not None:
            return self.step_range
        shown = [d for d in drawn if d.number not in hidden] or list(drawn)
        first = min((d.x0 for d in shown), default=0)
        last = max((d.x0 + d.last_step for d in shown), default=first)
        return window_range(first, last, self.last_steps)

    def changed(self, d: Any, bounds: tuple[int, int], weight: float) -> bool:
        """Whether run ``d`` (a `RunDrawing`) must be drawn anew over the window ``bounds``
        (first, last) with smoothing ``weight``: its rows in those steps changed since it last
        was (a path's: any of its rows; its chart has no step axis)."""
        lo, hi = bounds
        stop = max(0, hi - d.x0 + 1)
        paths = any(s.xy is not None for s in d.specs)
        counts = d.run.counts
        rows = tuple(counts[k] if paths else min(counts[k], stop) for k in d.drawn_lanes)
        key = (lo, hi, weight, d.drawn_lanes, rows)
        if self._keys.get(d.number) == key:
            return False
        self._keys[d.number] = key
        return True

    def forget(self) -> None:
        """Every run has `changed` (its marks were made anew, or drawn whole)."""
        self._keys = {}
