"""`GridScales`: the axes' scales of a `ChartGrid`: log y (every chart's, or each chart's own),
log steps, the y ranges without outliers, and one step range for every chart."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ._time_axis import GridTime

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


class GridScales(GridTime):
    """The scales part of a `ChartGrid` (which sets `charts`, `log`, `ignore_outliers`,
    `window`, `zoomed` and `_show`)."""

    charts: dict[str, Any]
    log: bool
    auto_log: bool
    ignore_outliers: bool
    window: Any
    zoomed: bool

    @property
    def shown(self) -> list[Any]:
        raise NotImplementedError

    def _show(self) -> None:
        raise NotImplementedError

    def _update_legend(self) -> None:
        raise NotImplementedError

    def set_ignore_outliers(self, on: bool) -> None:
        """Fit each chart's y range to its drawn points without the extreme few percent
        (`..reduce.robust_extent`), or to all of them; scales follow at `update_scales`."""
        self.ignore_outliers = bool(on)
        for chart in self._all():
            chart.ignore_outliers = self.ignore_outliers

    def set_log(self, log: bool) -> None:
        """Switch every chart's y axis (and the charts made later) to a log (or linear) scale:
        the user's choice, which no chart's values change any more (`LiveFigure.auto_log`)."""
        self.log, self.auto_log = log, False
        for chart in self._all():
            chart.auto_log = False
            if chart.log != log:
                chart.set_log(log)
        self._show()

    def set_log_x(self, log: bool) -> None:
        """Put every chart's step axis on a log (or linear) scale; scales follow at
        `update_scales`. A time axis stays linear (the toggle applies to steps)."""
        self.log_x = bool(log)
        self._set_x_scales()

    def set_log_charts(self, keys: Iterable[str]) -> None:
        """Put exactly the charts ``keys`` (titles, see `log_charts`) on a log y axis, the
        others on a linear one: each chart's own log toggle."""
        keys = set(keys)
        for key, chart in self.charts.items():
            if chart.log != (key in keys):
                chart.auto_log = False  # (the user's choice: its values change it no more)
                chart.set_log(key in keys)
        self._show()

    @property
    def log_charts(self) -> list[str]:
        """The keys (titles) of the charts on a log y axis, in grid order."""
        return [k for k, c in self.charts.items() if c.log]

    def update_scales(self, settled: bool = False) -> None:
        """Every chart's scales: one step range for all (a window's, if on), each its y range;
        ``settled``: every run drawn ended (the step axis fits them, without a live headroom)."""
        if self._update_time_scales(settled):
            return
        ranges = [c.step_range() for c in self._all() if c.runs]
        steps = (min(r[0] for r in ranges), max(r[1] for r in ranges)) if ranges else (0, 0)
        hints = self.log_hints
        changed = False
        for chart in self._all():
            chart.update_scales(self.window or steps, exact=self.zoomed, settled=settled)
            changed |= chart.legend_changed
            chart.legend_changed = False
        # a sweep's count of lanes that ran away (`._sweep.mark_runaways`), a log axis offered
        if changed or self.log_hints != hints:
            self._update_legend()

    @property
    def log_hints(self) -> dict[str, int]:
        """The charts on a linear axis whose values span decades (a loss falling from 1 to
        1e-9), by key (title): how many, offered a log axis by the chart's tools."""
        return {k: c.log_hint for k, c in self.charts.items() if c.log_hint and c.has_marks()}

    def log_state(self) -> dict[str, Any]:
        """The panel's traits that say the charts' y scales: `log_charts`, `log_hints`."""
        return {"log_charts": self.log_charts, "log_hints": self.log_hints}

    @property
    def every_log(self) -> bool:
        """Whether every chart shown is on a log y axis (the panel's "log y" then reads on)."""
        return all(c.log for c in self.shown)
