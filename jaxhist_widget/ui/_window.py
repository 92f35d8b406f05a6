"""The "last N steps" window: each run's lines over the latest N steps only, decimated afresh
from the rows of those steps (`LivePlot(last_steps=N)`).

Layer 3 (widget) by role, numpy only. The whole-run lines (`._series.LaneSeries`) keep min/max
buckets over the whole run: a window of the last 1,000 steps of a 10^6-step run would hold two
of their points. So the window reads its rows from the run (views, `Run.rows_since`) at each
update and decimates them (`._decimate.minmax_decimate`): O(N) per series and update, whatever
the length of the run. Its y extent is the window's own, so each chart's y axis fits what it
shows. A smoothed window line (`._smoothing`) averages from far enough before the window that
the start no longer counts (the weight to the power of the lead below `EMA_FORGOTTEN`), so it
reads as the whole run's average does, to that precision.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._decimate import minmax_decimate
from ._series import finite_tail
from ._smoothing import ema, smoothed_budget

__all__ = ["EMA_FORGOTTEN", "check_last_steps", "window_lines", "window_range"]

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


def window_range(first: int, last: int, steps: int) -> tuple[int, int]:
    """The steps a window of ``steps`` shows of runs spanning ``first`` .. ``last``.

    >>> window_range(0, 1000, 100), window_range(0, 50, 100)
    ((900, 1000), (0, 50))
    """
    return max(first, last - steps), last


def window_lines(drawing: Any, lo: int, weight: float = 0.0) -> tuple[Lines, Lines | None]:
    """Run ``drawing``'s lines (a `._drawing.RunDrawing`) from plot step ``lo`` on, one per
    field as `RunDrawing.lines` gives them, and its smoothed lines (with ``weight`` > 0)."""
    d = drawing
    start = max(0, lo - d.x0)  # the run's first row in the window
    lead = _ema_lead(weight)
    empty = (math.inf, -math.inf, math.inf)
    raw: Lines = [([], [], empty) for _ in d.specs]
    smooth: Lines | None = [([], [], empty) for _ in d.specs] if weight > 0 else None
    for lane in range(d.lanes):
        first = max(0, start - lead) if smooth is not None else start
        rows = d.run.rows_since(lane, first)
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
                x, y, extent = d.series[i, lane].points(d.x0)
                raw[i][0].append(x)
                raw[i][1].append(y)
                raw[i] = (raw[i][0], raw[i][1], _joint(raw[i][2], extent))
                if smooth is not None:
                    smooth[i][0].append(np.zeros(0, np.int64))
                    smooth[i][1].append(np.zeros(0))
                continue
            values = spec.values(rows)
            budget = d.series[i, lane].budget
            shown = values[skip:]
            x, y = _decimated(steps, shown, budget)
            xs, ys, extent = raw[i]
            xs.append(x)
            ys.append(y)
            raw[i] = (xs, ys, _joint(extent, _extent(shown)))
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


def _extent(values: np.ndarray) -> tuple[float, float, float]:
    finite = values[np.isfinite(values)]
    if not finite.size:
        return math.inf, -math.inf, math.inf
    positive = finite[finite > 0]
    return (
        float(finite.min()),
        float(finite.max()),
        float(positive.min()) if positive.size else math.inf,
    )


def _joint(
    a: tuple[float, float, float], b: tuple[float, float, float]
) -> tuple[float, float, float]:
    return min(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2])
