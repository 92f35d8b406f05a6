"""`ParamFigure`: a sweep's hyperparameter chart, each lane's last and best value of its ranked
field against its swept parameter (``loss vs lr``), live.

A `PathFigure` (its x axis is no step: its own scale, fitted to the values, on a log axis where
they span two decades or more; the hover's step read-out and the time axis skip it) whose one
mark set is `ParamMarks`, a chart extra held by a run of its own (number 0, no line of a run is
drawn here). Its y range fits the lanes that did not run away (`..reduce.bulk_range`, as the
sweep's other charts). The points are `..series.ParamPoints`; this only draws.

`LaneProbe`: a lane of a sweep past its drawn-lane limit (no line of its own, only inside the
band) drawn over the step charts while its point here is pointed at (`show_lane_probe`; the
page asks with the ``lane_probe`` control), named as a drawn lane's line (``loss · lr=0.1 ·
run 1``) for the page's highlight to light it; hidden when none is, never in the static picture
(a pointer's) nor in the legend.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import bqplot
import numpy as np

from ..look import CHART_HEIGHT_PX, LINE_WIDTH, PALETTE, LegendLine, ticks
from ..reduce import bulk_range, values_extent
from ._path_chart import PathFigure
from ._run_marks import set_points

__all__ = [
    "LOG_SPAN",
    "MARKER_LANES",
    "LaneProbe",
    "ParamFigure",
    "ParamMarks",
    "show_lane_probe",
    "show_params",
]

#: Up to this many lanes each point is drawn as a dot on its line (more would be thousands of
#: SVG elements for the page to redraw at each update: the line alone then).
MARKER_LANES = 256
#: A parameter whose positive values span this factor or more is drawn on a log axis.
LOG_SPAN = 100.0
#: The run number that holds the chart's marks (a plot's runs are numbered from 1).
PARAM_RUN = 0
_NO_EXTENT = (math.inf, -math.inf, math.inf)


class ParamMarks:
    """Each lane's last value (a line through the lanes in order of the parameter, a dot per
    lane up to `MARKER_LANES`) and its best one (its lowest or highest: `..series.ParamPoints`;
    dashed, faint), as a chart extra."""

    above = True
    label = ""

    def __init__(self, color: str) -> None:
        self.color = color
        self.points: Any = None  # the `..series.ParamPoints` drawn
        self.marks: list[bqplot.Lines] = []
        self.fitted = _NO_EXTENT  #: the y extent of the lanes that did not run away
        self._drawn: tuple | None = None

    def make(self, x_scale: bqplot.Scale, y_scale: bqplot.Scale) -> list[bqplot.Mark]:
        old = self.marks
        self.marks = [
            bqplot.Lines(
                scales={"x": x_scale, "y": y_scale},
                colors=[self.color],
                stroke_width=LINE_WIDTH,
                line_style=style,
                opacities=[opacity],
                marker_size=16,
                display_legend=False,
                preserve_domain={"x": True, "y": True},
                labels=[self._label(which)],
            )
            for which, style, opacity in (("last", "solid", 1.0), ("best", "dashed", 0.6))
        ]
        self._drawn = None
        return old

    def _label(self, which: str) -> str:
        field = self.points.field if self.points is not None else ""
        return f"{field} {which}".strip()

    def set(self, points: Any, log: bool) -> None:
        """Draw ``points`` (at the next `draw`); the y range fits the lanes that did not run
        away (on a ``log`` y axis, in decades)."""
        self.points = points
        p = points
        lo = p.lo if p.lo is not None else p.best
        bulk = bulk_range(lo, p.hi, p.lo_pos, p.last, p.gone, log)
        keep = ~(bulk.above | bulk.below)  # (an accuracy's runaways go below)
        ys = np.concatenate([points.last[keep], points.best[keep]])
        self.fitted = values_extent(ys)
        for mark, which in zip(self.marks, ("last", "best"), strict=False):
            mark.labels = [self._label(which)]

    def extent(self, steps: tuple[int, int] | None = None) -> tuple[float, float, float]:
        return self.fitted

    def draw(self, y_limits: tuple[float, float], log: bool) -> None:
        p = self.points
        if p is None or not self.marks:
            return
        key = (log, p.x.tobytes(), p.last.tobytes(), p.best.tobytes())
        if key == self._drawn:
            return
        self._drawn = key
        marker = "circle" if len(p.x) <= MARKER_LANES else None
        for mark, ys in zip(self.marks, (p.last, p.best), strict=True):
            y = np.asarray(ys, np.float64)
            if log:  # a value <= 0 has no place on a log axis: a gap
                y = np.where(y > 0, y, np.nan)
            with mark.hold_sync():
                mark.x, mark.y = np.asarray(p.x, np.float64), y
                mark.marker = marker if mark is self.marks[0] else None

    def set_colors(self, colors: Sequence[str]) -> None:
        pass  # the chart's own colour

    def legend(self) -> list[LegendLine]:
        if self.points is None:
            return []
        return [
            LegendLine(self._label("last"), None, self.color, "solid", 1.0),
            LegendLine(
                self._label("best") + f" ({self._best_word()})", None, self.color, "dashed", 0.6
            ),
        ]

    def _best_word(self) -> str:
        return "highest" if getattr(self.points, "best_is", "min") == "max" else "lowest"

    def close(self) -> None:
        for mark in self.marks:
            mark.close()


class ParamFigure(PathFigure):
    """One hyperparameter chart: ``title`` (``"loss vs lr"``), its x axis the parameter
    ``x_label``, logarithmic when ``log_x`` (its values positive and spanning decades)."""

    def __init__(self, log_y: bool, title: str, height: int, x_label: str, log_x: bool) -> None:
        super().__init__(log_y, title=title, height=height, x_label=x_label)
        self.figure.add_class("jhw-params")
        self.log_x = log_x  # (its own parameter axis: the grid's log step toggle leaves it)
        if log_x:
            old = self.x_scale
            self.x_scale = bqplot.LogScale(min=1.0, max=10.0)
            self.x_axis = self._new_x_axis()
            self.x_axis.label, self.x_axis.tick_format = x_label, ",~g"
            self.figure.axes = [self.x_axis, self.y_axis]
            old.close()
        self.params = ParamMarks(PALETTE[0])
        self.add_run(PARAM_RUN, 0, title, PALETTE[0])
        self.add_extra(PARAM_RUN, self.params)

    def set_points(self, points: Any) -> None:
        """Draw ``points`` (`..series.ParamPoints`); scales follow at `update_scales`."""
        self.params.set(points, self.log)
        x = np.asarray(points.x, np.float64)
        x = x[x > 0] if self.log_x else x
        lo, hi = (float(x.min()), float(x.max())) if x.size else (math.inf, -math.inf)
        self._x_extent[PARAM_RUN] = (lo, hi)

    def has_marks(self) -> bool:
        return self.params.points is not None

    def step_range(self) -> tuple[int, int]:
        # (its run of its own is no run of steps: the grid's step range is the others')
        runs = [r for r in self._shown_runs() if r.number != PARAM_RUN]
        first = min((r.x0 for r in runs), default=0)
        return first, max((r.x0 + r.last_step for r in runs), default=first)

    def update_scales(self, *args: Any, **kwargs: Any) -> None:
        if self.params.points is not None:  # the y range of its points on the axis in use
            self.params.set(self.params.points, self.log)
        super().update_scales(*args, **kwargs)

    def _x_limits(
        self, first: float, last: float, exact: bool = False, settled: bool = False
    ) -> tuple[float, float]:
        lo, hi = self._x_extent.get(PARAM_RUN, (math.inf, -math.inf))
        if not self.log_x:
            return ticks.linear_limits(lo, hi)
        return ticks.log_limits(lo, hi) if math.isfinite(lo) else (1.0, 10.0)

    def _x_ticks(
        self, x_lo: float, x_hi: float, plot: float | None
    ) -> tuple[list[float], str, dict[str, str] | None]:
        if not self.log_x:
            return super()._x_ticks(x_lo, x_hi, plot)
        # (plain numbers, 0.001 · 0.01 · 0.1: a rate reads as it was typed)
        values = ticks.log_ticks(x_lo, x_hi, ticks.x_intervals(plot, 6) + 1)
        return values, ticks.tick_format(values)[0], None


def show_params(grid: Any, points: Sequence[Any]) -> bool:
    """Draw a hyperparameter chart per `..series.ParamPoints` of ``points`` on ``grid`` (a
    `ChartGrid`), keyed by its title, after the other charts; one no longer given is closed.
    Scales follow at `update_scales`. Returns whether a chart came or went."""
    titles = {p.title for p in points}
    gone = [k for k, c in grid.charts.items() if isinstance(c, ParamFigure) and k not in titles]
    for key in gone:
        grid.charts.pop(key).close()
    made = False
    for p in points:
        chart = grid.charts.get(p.title)
        if not isinstance(chart, ParamFigure):
            x = np.asarray(p.x, np.float64)
            x = x[np.isfinite(x)]
            log_x = bool(x.size and (x > 0).all() and x.max() >= LOG_SPAN * x.min())
            chart = ParamFigure(grid.log, p.title, CHART_HEIGHT_PX, p.param, log_x)
            for number, x0 in grid._runs.items():
                chart.add_run(number, x0, *grid._looks[number])
            grid.charts[p.title] = chart
            made = True
        chart.set_points(p)
    if made or gone:
        grid._show()
    return bool(made or gone)


# A lane pointed at in the hyperparameter chart, past a sweep's drawn-lane limit: `LaneProbe`.
class LaneProbe:
    """The pointed-at lane's lines on one step chart (one per series of its run there), over every
    other mark; hidden while none is."""

    above = True
    label = ""

    def __init__(self, color: str) -> None:
        self.color = color
        self.marks: list[bqplot.Lines] = []
        #: What it draws: per series its label, steps and values; [] hidden.
        self.lines: list[tuple[str, np.ndarray, np.ndarray]] = []
        self.log_x = self.log_y = False

    def make(self, x_scale: bqplot.Scale, y_scale: bqplot.Scale) -> list[bqplot.Mark]:
        old = self.marks
        self.marks = [
            bqplot.Lines(
                scales={"x": x_scale, "y": y_scale},
                x=np.zeros(0),
                y=np.zeros(0),
                colors=[self.color],
                stroke_width=LINE_WIDTH,
                display_legend=False,
                visible=False,
                preserve_domain={"x": True, "y": True},
            )
        ]
        self.log_x = type(x_scale).__name__ == "LogScale"
        self._put()
        return old

    def set(self, lines: Sequence[tuple[str, np.ndarray, np.ndarray]], log_y: bool) -> None:
        """Draw ``lines`` (per series: its label, steps, values), or hide ([])."""
        self.lines, self.log_y = list(lines), log_y
        self._put()

    def _put(self) -> None:
        if not self.marks:
            return
        (mark,) = self.marks
        if not self.lines:
            if mark.visible:
                mark.visible = False
            return
        labels = [label for label, _, _ in self.lines]
        xs = [np.asarray(x) for _, x, _ in self.lines]
        ys = [np.asarray(y, np.float64) for _, _, y in self.lines]
        with mark.hold_sync():
            mark.labels = labels
            set_points(mark, xs, ys, True, log_x=self.log_x, log_y=self.log_y)
            mark.visible = True

    def extent(self, steps: tuple[int, int] | None = None) -> tuple[float, float, float]:
        return _NO_EXTENT  # a pointer's: the axes stay the plot's

    def draw(self, y_limits: tuple[float, float], log: bool) -> None:
        if log != self.log_y and self.lines:  # the y axis went log (or back): placed anew
            self.log_y = log
            self._put()

    def set_colors(self, colors: Sequence[str]) -> None:
        pass  # the run's colour

    def legend(self) -> list[LegendLine]:
        return []

    def close(self) -> None:
        for mark in self.marks:
            mark.close()


def show_lane_probe(
    grid: Any, number: int | None, lines: Sequence[tuple[int, str, np.ndarray, np.ndarray]]
) -> None:
    """Draw ``lines`` of run ``number`` (per series, in `ChartGrid.add_marks` order: its index,
    label, steps and values) on the charts of that series, each over every other mark; every
    other chart's probe hidden (all of them when ``lines`` is empty)."""
    by_series = {i: (label, x, y) for i, label, x, y in lines}
    wanted: dict[str, list[tuple[str, np.ndarray, np.ndarray]]] = {}
    for key, idx in grid._groups.get(number, []) if lines else []:
        wanted[key] = [by_series[i] for i in idx if i in by_series]
    for key, chart in grid.charts.items():
        for n, r in chart.runs.items():
            probe = next((e for e in r.extras if isinstance(e, LaneProbe)), None)
            show = wanted.get(key, []) if n == number else []
            if probe is None and show:
                probe = LaneProbe(r.color)
                chart.add_extra(n, probe)
            if probe is not None and (show or probe.lines):
                probe.set(show, chart.log)
