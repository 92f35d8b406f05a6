"""`TimeAxis`: what a `ChartGrid`'s x axis counts, and where each run's steps fall on it: the
steps, or the times its rows reached the host (`..look.X_AXES`: ``"relative"``, ``"wall"``).

The grid's series are drawn in steps (`jaxhist_widget.ui.series`): this maps them, per run, by
the clock the plot gives it (`set_clock`: steps -> seconds since the epoch), as they are set on
the charts, and spans the axis over the shown runs' times. A path chart's x axis is its x
series: the grid leaves its lines as they are. The log step toggle applies to steps: a time
axis stays linear (`._grid_scales.GridScales.fit_x`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from ._chart import LiveFigure
from ._extras import BandExtra, HeatmapExtra

__all__ = ["Clock", "TimeAxis"]

#: When a run's steps reached the host: steps (from its ``x0``, as drawn) -> seconds since the
#: epoch.
Clock = Callable[[np.ndarray], np.ndarray]


class TimeAxis:
    """What the x axis of one `ChartGrid` counts (`mode`) and each run's steps placed on it.

    The grid tells it the runs it draws (`add_run`, `drop_runs`) and their clocks
    (`set_clock`); it places their lines (`place`), their flags (`place_flags`) and spans
    the axis over the charts it is handed (`time_range`).
    """

    def __init__(self) -> None:
        #: What the x axis counts (`..look.X_AXES`).
        self.mode = "step"
        self._clocks: dict[int, Clock] = {}
        self._x0: dict[int, int] = {}  # run number -> its first step

    @property
    def on_steps(self) -> bool:
        """Whether the axis counts steps (else seconds)."""
        return self.mode == "step"

    def add_run(self, number: int, x0: int) -> None:
        """Run ``number`` is drawn from step ``x0`` (its relative time counts from there)."""
        self._x0[number] = x0

    def drop_runs(self, numbers: Iterable[int]) -> None:
        for n in numbers:
            self._x0.pop(n, None)
            self._clocks.pop(n, None)

    def set_clock(self, number: int, clock: Clock) -> None:
        """When run ``number``'s steps reached the host: ``clock(steps)`` (steps from its
        ``x0``, as drawn) in seconds since the epoch, for a time axis."""
        self._clocks[number] = clock

    def set_mode(self, mode: str, charts: Iterable[LiveFigure]) -> None:
        """Count ``mode`` (`..look.X_AXES`): the bands and heatmaps of ``charts`` are placed
        anew at their next draw (the lines as they are next set)."""
        self.mode = mode
        for chart in charts:
            for r in chart.runs.values():
                for extra in r.extras:
                    if isinstance(extra, BandExtra | HeatmapExtra):
                        extra.moved()

    def x_of(self, number: int, steps: np.ndarray) -> np.ndarray:
        """Run ``number``'s ``steps`` as the x axis counts them: the steps, or seconds (since
        its first row, or since the epoch); NaN where no time is known."""
        if self.on_steps:
            return steps
        steps = np.asarray(steps, np.float64)
        clock = self._clocks.get(number)
        if clock is None:
            return np.full(steps.shape, np.nan)
        seconds = clock(steps)
        if self.mode == "relative":
            seconds = seconds - clock(np.array([float(self._x0.get(number, 0))]))[0]
        return seconds

    def place(self, number: int, line: tuple) -> tuple:
        """One series' ``(xs, ys, extent)`` of run ``number`` with its xs as the axis counts
        them."""
        xs, ys, extent = line
        if self.on_steps:
            return line
        return [self.x_of(number, x) for x in xs], ys, extent

    def place_flags(self, number: int, flags: np.ndarray) -> np.ndarray:
        """A series' diverged-end flags (rows of step, value) placed as `place` does."""
        flags = np.reshape(flags, (-1, 2))
        if self.on_steps:
            return flags
        return np.column_stack([self.x_of(number, flags[:, 0]), flags[:, 1]])

    def time_range(self, charts: Iterable[LiveFigure]) -> tuple[float, float]:
        """The first and last time of the rows drawn of ``charts``' shown runs (seconds on
        the axis)."""
        ends = []
        for chart in charts:
            for r in chart.shown_runs():
                ends.append(self.x_of(r.number, np.array([r.x0, r.x0 + r.last_step], float)))
        points = np.concatenate(ends) if ends else np.zeros(0)
        points = points[np.isfinite(points)]
        return (float(points.min()), float(points.max())) if points.size else (0.0, 1.0)
