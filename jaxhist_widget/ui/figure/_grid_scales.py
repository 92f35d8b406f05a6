"""`GridScales`: the axes' scales of a `ChartGrid`: log y (every chart's, or each chart's own),
log steps, the y ranges without outliers, and one step range (or time range) for every chart.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import bqplot

from ..look import X_LABELS
from ._chart import LiveFigure
from ._path_chart import PathFigure
from ._time_axis import TimeAxis

__all__ = ["GridScales", "log_notes"]


def log_notes(hints: dict[str, int]) -> list[str]:
    """What the notes under the charts say of the charts offered a log y axis (`log_hints`).

    >>> log_notes({"loss": 9})
    ['loss spans 9 decades: its log button draws it on a log y axis.']
    """
    return [
        f"{key} spans {n} decades: its log button draws it on a log y axis."
        if key
        else f"The values span {n} decades: log y draws them on a log axis."
        for key, n in hints.items()
    ]


class GridScales:
    """The scales of one `ChartGrid`'s charts, which the grid hands it: the scale options
    (log y, log steps, ignore outliers, the window of steps) and each chart's scales from
    them. The x axis is ``time``'s (the grid's): a time axis spans the shown runs' times.

    Parameters
    ----------
    time
        The grid's time axis.
    log_y
        Every chart's y axis on a log scale (True) or a linear one (False), or each going to
        a log axis of itself once its values span decades (None), until a log toggle is used.
    """

    def __init__(self, time: TimeAxis, log_y: bool | None) -> None:
        self.time = time
        self.log = bool(log_y)
        #: Each chart goes to a log y axis of itself once its values span decades
        #: (``log_y=None``), until a log toggle is used (`set_log`).
        self.auto_log = log_y is None
        self.log_x = False
        self.ignore_outliers = False
        #: The steps shown, first and last, while a window is on (else None); ``zoomed``: it is
        #: a zoom, which the step axis spans exactly (a "last N steps" one is rounded out).
        self.window: tuple[int, int] | None = None
        self.zoomed = False
        self.x_scale = bqplot.LinearScale(min=0.0, max=1.0)  # every chart's steps
        self.x_log = bqplot.LogScale(min=1.0, max=10.0)  # the same, on a log step axis

    def fit(self, chart: LiveFigure) -> None:
        """Put a chart made now on the scale options (its x axis, outliers, auto log)."""
        if not isinstance(chart, PathFigure):
            self.fit_x(chart)
        chart.ignore_outliers, chart.auto_log = self.ignore_outliers, self.auto_log

    def fit_x(self, chart: LiveFigure) -> None:
        """Put ``chart``'s x axis on the grid's: its mode and label, its log or linear scale
        (a path chart's x axis is its own)."""
        if isinstance(chart, PathFigure):
            return
        if chart.x_time != self.time.mode:
            chart.x_time = self.time.mode
            chart.x_axis.label = X_LABELS[self.time.mode]
        log = self.log_x and self.time.on_steps
        if chart.log_x != log:
            chart.set_x_scale(self.x_log if log else self.x_scale, log)

    def fit_all_x(self, charts: Iterable[LiveFigure]) -> None:
        for chart in charts:
            self.fit_x(chart)

    def set_window(self, steps: tuple[int, int] | None, zoomed: bool) -> None:
        """Show steps ``steps`` (first, last) only, spanned exactly when ``zoomed`` (None:
        every step); scales follow at `update`."""
        self.window, self.zoomed = steps, zoomed

    def set_ignore_outliers(self, on: bool, charts: Iterable[LiveFigure]) -> None:
        """Fit each chart's y range to its drawn points without the extreme few percent
        (`..reduce.robust_extent`), or to all of them; scales follow at `update`."""
        self.ignore_outliers = bool(on)
        for chart in charts:
            chart.ignore_outliers = self.ignore_outliers

    def set_log(self, log: bool, charts: Iterable[LiveFigure]) -> None:
        """Every chart's y axis (and the charts made later) on a log (or linear) scale: the
        user's choice, which no chart's values change any more (`LiveFigure.auto_log`)."""
        self.log, self.auto_log = log, False
        for chart in charts:
            chart.auto_log = False
            if chart.log != log:
                chart.set_log(log)

    def set_log_x(self, log: bool, charts: Iterable[LiveFigure]) -> None:
        """Every chart's step axis on a log (or linear) scale (a time axis stays linear)."""
        self.log_x = bool(log)
        self.fit_all_x(charts)

    @staticmethod
    def set_log_charts(keys: Iterable[str], charts: Mapping[str, LiveFigure]) -> None:
        """Put exactly the charts ``keys`` on a log y axis, the others on a linear one."""
        keys = set(keys)
        for key, chart in charts.items():
            if chart.log != (key in keys):
                chart.auto_log = False  # (the user's choice: its values change it no more)
                chart.set_log(key in keys)

    @staticmethod
    def log_hints(charts: Mapping[str, LiveFigure]) -> dict[str, int]:
        """The charts on a linear axis whose values span decades, by key: how many."""
        return {k: c.log_hint for k, c in charts.items() if c.log_hint and c.has_marks()}

    def update(self, charts: list[LiveFigure], settled: bool) -> bool:
        """Every chart's scales: on a time axis over the shown runs' times, else one step
        range for all (a window's, if on), each its y range; ``settled``: every run drawn ended
        (the step axis fits them, without a live headroom). Whether a chart's legend changed
        (a sweep's count of lanes that ran away: `._sweep.mark_runaways`)."""
        if not self.time.on_steps:  # (no step window applies)
            span = self.time.time_range(charts)
            for chart in charts:
                chart.update_scales(span, exact=True, settled=settled)
            return False
        ranges = [c.step_range() for c in charts if c.runs]
        steps = (min(r[0] for r in ranges), max(r[1] for r in ranges)) if ranges else (0, 0)
        changed = False
        for chart in charts:
            chart.update_scales(self.window or steps, exact=self.zoomed, settled=settled)
            changed |= chart.legend_changed
            chart.legend_changed = False
        return changed
