"""A sweep's hyperparameter charts, live: each lane's last and best value of the goal's field
against its swept parameter (`ParamFigure`, ``loss vs lr``), or, for two parameters swept over
a grid, one heatmap of the cells (`ParamGridFigure`, ``loss vs lr × wd``).

A `ParamFigure` is a `PathFigure` (its x axis is no step: its own scale, fitted to the values,
on a log axis where they span two decades or more; the hover's step read-out and the time axis
skip it) whose one mark set is `ParamMarks`, a chart extra held by a run of its own (number 0,
no line of a run is drawn here): a line through the lanes where each has a value of its own,
points alone where lanes share one (swept in another parameter: a line through them would be a
sawtooth), and a star at the lane the goal names best. Its y range fits the lanes that did not
run away (`..reduce.bulk_range`, as the sweep's other charts). A `ParamGridFigure`'s cells are
coloured by the last value (on a log scale where it spans decades), its diverged cells crossed
and its best cell starred (`GridMarks`). The points are `..series.ParamPoints` and
`..series.ParamGrid`; this only draws.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import bqplot
import ipywidgets
import numpy as np

from ..look import (
    CHART_HEIGHT_PX,
    CHART_MIN_PX,
    HEAT_RAMP,
    LINE_WIDTH,
    PALETTE,
    LegendLine,
    format_value,
    js_key,
    ramp_rgb,
    ticks,
)
from ..reduce import bulk_range, encode_png, robust_extent, values_extent
from ._chart import LiveFigure
from ._path_chart import PathFigure
from ._sweep import DIVERGED_COLOR

__all__ = [
    "BEST_COLOR",
    "LOG_SPAN",
    "MARKER_LANES",
    "GridMarks",
    "ParamFigure",
    "ParamGridFigure",
    "ParamMarks",
    "show_params",
]

#: Up to this many lanes each point is drawn as a dot on its line (more would be thousands of
#: SVG elements for the page to redraw at each update: the line alone then).
MARKER_LANES = 256
#: A parameter (or a grid's colour) whose positive values span this factor or more is on a
#: log scale.
LOG_SPAN = 100.0
#: The run number that holds the chart's marks (a plot's runs are numbered from 1).
PARAM_RUN = 0
#: The colour of the star at the best lane (a grid's cell): apart from the cells' scale.
BEST_COLOR = PALETTE[2]
#: Pixels along a grid's picture (each cell a block of them, its side at least one).
CELL_PIXELS = 256
#: The best lane's mark: a star glyph (bqplot's markers have none), centred on its point.
STAR = "★"
_NO_EXTENT = (math.inf, -math.inf, math.inf)


def _star(x_scale: bqplot.Scale, y_scale: bqplot.Scale, color: str) -> bqplot.Label:
    return bqplot.Label(
        scales={"x": x_scale, "y": y_scale},
        x=np.zeros(0),
        y=np.zeros(0),
        text=[STAR],
        colors=[color],
        default_size=20,
        align="middle",
        y_offset=7,  # (a glyph sits on its baseline: its middle on the point)
        preserve_domain={"x": True, "y": True},
    )


def _best_text(field: str, where: str, value: float) -> str:
    """The legend's entry of a best point: ``best: lr=0.01 (loss 0.0123)``."""
    return f"best: {where} ({field} {format_value(float(value))})"


class ParamMarks:
    """Each lane's last value (a line through the lanes in order of the parameter, a dot per
    lane up to `MARKER_LANES`; dots alone where lanes share a value) and its best one (its
    lowest or highest: `..series.ParamPoints`; dashed, faint), and a star at the lane the goal
    names best, as a chart extra."""

    above = True
    label = ""

    def __init__(self, color: str) -> None:
        self.color = color
        self.points: Any = None  # the `..series.ParamPoints` drawn
        self.marks: list[bqplot.Mark] = []
        self.fitted = _NO_EXTENT  #: the y extent of the lanes that did not run away
        self.kept = np.zeros(0)  #: their last and best values
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
        self.marks.append(_star(x_scale, y_scale, BEST_COLOR))
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
        self.kept = ys  #: the values of the lanes that did not run away
        for mark, which in zip(self.marks[:2], ("last", "best"), strict=True):
            mark.labels = [self._label(which)]

    def extent(self, steps: tuple[int, int] | None = None) -> tuple[float, float, float]:
        return self.fitted

    def draw(self, y_limits: tuple[float, float], log: bool) -> None:
        p = self.points
        if p is None or not self.marks:
            return
        key = (log, p.joined, p.best_at, p.x.tobytes(), p.last.tobytes(), p.best.tobytes())
        if key == self._drawn:
            return
        self._drawn = key
        # Points alone where lanes share a value: a line through them joins other parameters'
        # lanes (every dot then, a line's dot's size).
        dots = "circle" if len(p.x) <= MARKER_LANES or not p.joined else None
        for mark, ys in zip(self.marks[:2], (p.last, p.best), strict=True):
            y = np.asarray(ys, np.float64)
            if log:  # a value <= 0 has no place on a log axis: a gap
                y = np.where(y > 0, y, np.nan)
            with mark.hold_sync():
                mark.x, mark.y = np.asarray(p.x, np.float64), y
                mark.marker = dots if mark is self.marks[0] or not p.joined else None
                mark.stroke_width = LINE_WIDTH if p.joined else 0.0
        at = self._best()
        if at is not None and log and not p.last[at] > 0:
            at = None  # (where a log axis cannot place it: no star, an invalid SVG transform)
        star = self.marks[2]
        with star.hold_sync():
            star.x = np.array([p.x[at]], float) if at is not None else np.zeros(0)
            star.y = np.array([p.last[at]], float) if at is not None else np.zeros(0)

    def _best(self) -> int | None:
        """The point of the best lane, where it has a value the axis can place."""
        p = self.points
        at = p.best_at if p is not None else None
        if at is None or not math.isfinite(float(p.last[at])):
            return None
        return at

    def set_colors(self, colors: Sequence[str]) -> None:
        pass  # the chart's own colour

    def legend(self) -> list[LegendLine]:
        if self.points is None:
            return []
        p, at = self.points, self._best()
        out = [
            LegendLine(self._label("last"), None, self.color, "solid", 1.0),
            LegendLine(
                self._label("best") + f" ({self._best_word()})", None, self.color, "dashed", 0.6
            ),
        ]
        if at is not None:
            where = f"{p.param}={format_value(float(p.x[at]))}"
            text = _best_text(p.field, where, p.last[at])
            out.append(LegendLine(text, None, BEST_COLOR, "goal", 1.0))
        return out

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
        self.params: Any = self._marks()
        self.add_run(PARAM_RUN, 0, title, PALETTE[0])
        self.add_extra(PARAM_RUN, self.params)

    def _marks(self) -> Any:
        return ParamMarks(PALETTE[0])

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
        runs = [r for r in self.shown_runs() if r.number != PARAM_RUN]
        first = min((r.x0 for r in runs), default=0)
        return first, max((r.x0 + r.last_step for r in runs), default=first)

    def update_scales(self, *args: Any, **kwargs: Any) -> None:
        if self.params.points is not None:  # the y range of its points on the axis in use
            self.params.set(self.params.points, self.log)
        super().update_scales(*args, **kwargs)

    def _values_drawn(self, runs: list[Any]) -> list[np.ndarray]:
        return [self.params.kept]  # (its lanes' points but the runaways': no line of a run)

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


class GridMarks:
    """A grid's cells as one image (each cell a pixel of its colour: the last value along
    `..look.HEAT_RAMP`, log where the values span `LOG_SPAN`; a cell of no value grey), a cross
    on each diverged cell and a star on the best one, as a chart extra."""

    above = True
    label = ""

    def __init__(self) -> None:
        self.points: Any = None  # the `..series.ParamGrid` drawn
        self.image = ipywidgets.Image(value=b"", format="png")
        self.png = b""  #: the cells' picture as drawn
        self.columns = np.zeros(0)  #: the first parameter's values, left to right
        self.rows = np.zeros(0)  #: the second's, bottom to top
        self.values = np.zeros((0, 0))  #: each cell's last value (NaN: none)
        self.gone = np.zeros((0, 0), bool)  #: each cell's lane went NaN or ±inf
        self.log_color = False  #: the colours on a log scale of the values
        self.color_range = (math.nan, math.nan)  #: the values at the scale's two ends
        self.best: tuple[int, int] | None = None  #: the best cell (row, column)
        self.marks: list[bqplot.Mark] = []

    def make(self, x_scale: bqplot.Scale, y_scale: bqplot.Scale) -> list[bqplot.Mark]:
        old = self.marks
        self.marks = [
            bqplot.Image(
                image=self.image,
                scales={"x": x_scale, "y": y_scale},
                x=[-0.5, 0.5],
                y=[-0.5, 0.5],
                pixelated=True,
                preserve_domain={"x": True, "y": True},
            ),
            bqplot.Scatter(
                scales={"x": x_scale, "y": y_scale},
                x=np.zeros(0),
                y=np.zeros(0),
                marker="cross",
                colors=[DIVERGED_COLOR],
                stroke="white",
                stroke_width=1.0,
                default_size=96,
                display_legend=False,
                preserve_domain={"x": True, "y": True},
            ),
            _star(x_scale, y_scale, BEST_COLOR),
        ]
        self._put()
        return old

    def set(self, grid: Any) -> None:
        """Draw ``grid`` (a `..series.ParamGrid`) now."""
        self.points = grid
        self.columns, self.rows, at = grid.cells()
        self.values = np.where(np.isfinite(grid.last[at]), grid.last[at], np.nan)
        self.gone = np.asarray(grid.gone, bool)[at]
        self.best = None
        if grid.best_at is not None:
            r, c = np.argwhere(at == grid.best_at)[0]
            self.best = (int(r), int(c))
        rgba = self._rgba()[::-1]  # (the top row of a picture is the highest value)
        # Each cell a block of pixels: a picture scaled smoothly (the static one, a renderer
        # that ignores "pixelated") would blur one pixel a cell into its neighbours.
        k = max(1, CELL_PIXELS // max(rgba.shape[:2]))
        self.png = encode_png(np.repeat(np.repeat(rgba, k, axis=0), k, axis=1))
        old, self.image = self.image, ipywidgets.Image(value=self.png, format="png")
        self._put()
        old.close()

    def _rgba(self) -> np.ndarray:
        # The scale spans the cells that did not diverge, far outliers left out (a lane on its
        # way to 1e36 would make every other cell one colour): those take its end colour.
        values = self.values
        kept = values[np.isfinite(values) & ~self.gone]
        positive = kept[kept > 0]
        self.log_color = bool(
            positive.size == kept.size > 1 and positive.max() >= LOG_SPAN * positive.min()
        )
        lo, hi, _ = robust_extent([kept], log=self.log_color)
        if not lo <= hi:
            lo, hi = 0.0, 1.0
        self.color_range = (lo, hi)
        if self.log_color:
            values, lo, hi = (
                np.log10(np.where(values > 0, values, np.nan)),
                np.log10(lo),
                np.log10(hi),
            )
        t = (values - lo) / (hi - lo) if hi > lo else np.zeros_like(values)
        out = np.zeros((*values.shape, 4), np.uint8)
        ok = np.isfinite(t)
        out[ok, :3] = np.round(ramp_rgb(t[ok], HEAT_RAMP)).astype(np.uint8)
        out[~ok, :3] = 189  # (a cell of no value: grey)
        out[..., 3] = 255
        return out

    def _put(self) -> None:
        if not self.marks or self.points is None:
            return
        image, crosses, star = self.marks
        rows, cols = self.values.shape
        with image.hold_sync():
            image.image, image.x, image.y = self.image, [-0.5, cols - 0.5], [-0.5, rows - 0.5]
        r, c = np.nonzero(self.gone)
        with crosses.hold_sync():
            crosses.x, crosses.y = c.astype(float), r.astype(float)
        with star.hold_sync():
            star.x = np.array([self.best[1]], float) if self.best else np.zeros(0)
            star.y = np.array([self.best[0]], float) if self.best else np.zeros(0)

    def extent(self, steps: tuple[int, int] | None = None) -> tuple[float, float, float]:
        return _NO_EXTENT  # (its axes are its cells: `ParamGridFigure`)

    def draw(self, y_limits: tuple[float, float], log: bool) -> None:
        pass  # drawn as set

    def set_colors(self, colors: Sequence[str]) -> None:
        pass  # the cells' own scale

    def legend(self) -> list[LegendLine]:
        g = self.points
        if g is None:
            return []
        lo, hi = self.color_range
        scale = " (log)" if self.log_color else ""
        text = f"{g.field} last: {format_value(lo)} … {format_value(hi)}{scale}"
        out = [LegendLine(text, None, "heat", "band", 1.0)]
        if self.best is not None:
            r, c = self.best
            where = ", ".join(
                f"{name}={format_value(float(v))}"
                for name, v in zip(g.params, (self.columns[c], self.rows[r]), strict=True)
            )
            text = _best_text(g.field, where, self.values[r, c])
            out.append(LegendLine(text, None, BEST_COLOR, "goal", 1.0))
        if self.gone.any():
            text = f"diverged: {int(self.gone.sum())} cells"
            out.append(LegendLine(text, None, DIVERGED_COLOR, "flag", 1.0))
        return out

    def close(self) -> None:
        for mark in self.marks:
            mark.close()
        self.image.close()


class ParamGridFigure(ParamFigure):
    """The heatmap of a sweep of two parameters over a grid: ``title`` (``"loss vs lr × wd"``),
    a column per value of the first parameter (``x_label``), a row per value of the second
    (``y_label``), each axis labelled with the values; never a log axis (its cells are)."""

    def __init__(self, title: str, height: int, x_label: str, y_label: str) -> None:
        super().__init__(False, title, height, x_label, log_x=False)
        self.y_axis.label = y_label
        self.y_axis.label_color = self.x_axis.label_color

    def _marks(self) -> Any:
        return GridMarks()

    def set_points(self, points: Any) -> None:
        """Draw ``points`` (`..series.ParamGrid`); its axes follow at `update_scales`."""
        self.params.set(points)
        self._x_extent[PARAM_RUN] = (-0.5, len(self.params.columns) - 0.5)

    def update_scales(self, *args: Any, **kwargs: Any) -> None:
        self.auto_log = False  # (its cells are its axes: no y of points, never a log axis)
        LiveFigure.update_scales(self, *args, **kwargs)

    def _x_limits(
        self, first: float, last: float, exact: bool = False, settled: bool = False
    ) -> tuple[float, float]:
        return -0.5, len(self.params.columns) - 0.5

    def _set_y_limits(self) -> None:
        with self.y_lin.hold_sync():
            self.y_lin.min, self.y_lin.max = -0.5, len(self.params.rows) - 0.5

    def _x_ticks(
        self, x_lo: float, x_hi: float, plot: float | None
    ) -> tuple[list[float], str, dict[str, str] | None]:
        return _category_ticks(self.params.columns, plot)

    def _y_ticks(self, lo: float, hi: float) -> tuple[list[float], str, dict[str, str] | None]:
        return _category_ticks(self.params.rows, CHART_HEIGHT_PX - 60, chars=1)


def _category_ticks(
    values: np.ndarray, plot: float | None, chars: int | None = None
) -> tuple[list[float], str, dict[str, str] | None]:
    """A tick per category (every k-th where they would crowd ``plot`` px), labelled with its
    value (`..look.format_value`), at the category's index."""
    # (two significant digits: 0.0027, not 0.002683, side by side under narrow cells)
    texts = [format_value(float(f"{float(v):.2g}")) for v in values]
    wide = max((len(t) for t in texts), default=1) if chars is None else chars
    room = max(1, int((plot or CHART_MIN_PX - 80) // (wide * 7 + 12)))
    every = max(1, math.ceil(len(texts) / room))
    at = list(range(0, len(texts), every))
    return [float(k) for k in at], ",.0f", {js_key(float(k)): texts[k] for k in at}


def show_params(grid: Any, points: Sequence[Any]) -> bool:
    """Draw a hyperparameter chart per `..series.ParamPoints` (a `ParamGrid` a heatmap) of
    ``points`` on ``grid`` (a `ChartGrid`), keyed by its title, after the other charts; one no
    longer given is closed. Scales follow at `update_scales`. Returns whether a chart came or
    went."""
    titles = {p.title for p in points}
    gone = [k for k, c in grid.charts.items() if isinstance(c, ParamFigure) and k not in titles]
    for key in gone:
        grid.charts.pop(key).close()
    made = False
    for p in points:
        chart = grid.charts.get(p.title)
        if not isinstance(chart, ParamFigure):
            if hasattr(p, "params"):  # a grid of two parameters
                chart = ParamGridFigure(p.title, CHART_HEIGHT_PX, *p.params)
            else:
                x = np.asarray(p.x, np.float64)
                x = x[np.isfinite(x)]
                log_x = bool(x.size and (x > 0).all() and x.max() >= LOG_SPAN * x.min())
                chart = ParamFigure(grid.scales.log, p.title, CHART_HEIGHT_PX, p.param, log_x)
                chart.auto_log = grid.scales.auto_log
            grid.add_runs_to(chart)
            grid.charts[p.title] = chart
            made = True
        chart.set_points(p)
    if made or gone:
        grid.show_charts()
    else:  # (their legends name the best lane and the colour scale: they move with the rows)
        grid.update_legends()
    return bool(made or gone)
