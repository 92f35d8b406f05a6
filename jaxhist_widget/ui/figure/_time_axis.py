"""`GridTime`: the x axis of a `ChartGrid` in time: each run's steps placed at the times its
rows reached the host (`..look.X_AXES`: ``"relative"``, ``"wall"``).

The grid's series are drawn in steps (`jaxhist_widget.ui.series`): this maps them, per run, by
the clock the plot gives it (`set_clock`: steps -> seconds since the epoch), as they are set on
the charts, and spans the axis over the shown runs' times. A path chart's x axis is its x
series: it never changes. The log step toggle applies to steps: a time axis stays linear.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import bqplot
import numpy as np

from ..look import X_LABELS
from ._path_chart import PathFigure

__all__ = ["GridTime"]


class GridTime:
    """The time-axis part of a `ChartGrid` (which sets `x_time`, `log_x`, `_clocks`,
    `_runs`, `_paths`, `_x_scale`, `_x_log` and `_all`)."""

    x_time: str
    log_x: bool
    _clocks: dict[int, Callable[[np.ndarray], np.ndarray]]
    _runs: dict[int, int]
    _paths: dict[str, str]
    _x_scale: bqplot.LinearScale
    _x_log: bqplot.LogScale

    def _all(self) -> list[Any]:
        raise NotImplementedError

    def _set_x_scales(self) -> None:
        for chart in self._all():
            self._fit_x(chart)

    def _fit_x(self, chart: Any) -> None:
        """Put ``chart``'s x axis on the grid's: its mode and label, its log or linear scale
        (a path chart's x axis is its own)."""
        if isinstance(chart, PathFigure):
            return
        if chart.x_time != self.x_time:
            chart.x_time = self.x_time
            chart.x_axis.label = X_LABELS[self.x_time]
        log = self.log_x and self.x_time == "step"
        if chart.log_x != log:
            chart.set_x_scale(self._x_log if log else self._x_scale, log)

    def set_clock(self, number: int, clock: Callable[[np.ndarray], np.ndarray]) -> None:
        """When run ``number``'s steps reached the host: ``clock(steps)`` (steps from its
        ``x0``, as drawn) in seconds since the epoch, for a time axis."""
        self._clocks[number] = clock

    def set_x_time(self, mode: str) -> None:
        """What the x axis counts (`..look.X_AXES`): steps, seconds since each run's first
        row, or the wall clock. The lines are placed anew as they are next set (the plot
        redraws them); a band or heatmap at its next draw."""
        self.x_time = mode
        self._set_x_scales()
        for chart in self._all():
            for r in chart.runs.values():
                for extra in r.extras:
                    if hasattr(extra, "x_map"):
                        extra._drawn = None  # its x values are now the new axis's

    def x_of(self, number: int, steps: np.ndarray) -> np.ndarray:
        """Run ``number``'s ``steps`` as the x axis counts them: the steps, or seconds (since
        its first row, or since the epoch); NaN where no time is known."""
        if self.x_time == "step":
            return steps
        steps = np.asarray(steps, np.float64)
        clock = self._clocks.get(number)
        if clock is None:
            return np.full(steps.shape, np.nan)
        seconds = clock(steps)
        if self.x_time == "relative":
            seconds = seconds - clock(np.array([float(self._runs.get(number, 0))]))[0]
        return seconds

    def _placed(self, number: int, key: str, line: tuple) -> tuple:
        """One series' ``(xs, ys, extent)`` with its xs as the x axis counts them (a path
        chart's xs are its x series: left as they are)."""
        xs, ys, extent = line
        if self.x_time == "step" or key in self._paths:
            return line
        return [self.x_of(number, x) for x in xs], ys, extent

    def _time_range(self) -> tuple[float, float]:
        """The first and last time of the shown runs' drawn rows (seconds on the axis)."""
        ends = []
        for chart in self._all():
            for r in chart._shown_runs():
                ends.append(self.x_of(r.number, np.array([r.x0, r.x0 + r.last_step], float)))
        points = np.concatenate(ends) if ends else np.zeros(0)
        points = points[np.isfinite(points)]
        return (float(points.min()), float(points.max())) if points.size else (0.0, 1.0)

    def _placed_flags(self, number: int, key: str, flags: np.ndarray) -> np.ndarray:
        """A series' diverged-end flags (rows of step, value) placed as `_placed` does."""
        flags = np.reshape(flags, (-1, 2))
        if self.x_time == "step" or key in self._paths:
            return flags
        return np.column_stack([self.x_of(number, flags[:, 0]), flags[:, 1]])

    def _update_time_scales(self, settled: bool) -> bool:
        """On a time axis, every chart's scales over the shown runs' times (no step window
        applies), and True; False on a step axis."""
        if self.x_time == "step":
            return False
        span = self._time_range()
        for chart in self._all():
            chart.update_scales(span, exact=True, settled=settled)
        return True
