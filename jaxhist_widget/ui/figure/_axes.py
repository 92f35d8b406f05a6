"""`FigureAxes`: the axes of one chart (`._chart.LiveFigure`): its scales' limits, tick values
and formats, and the margins that fit their labels.

Tick values and formats are set here, not left to bqplot: its defaults mix
formats on one axis and put as many x ticks on a 330 px plot as on a 1400 px one. The
arithmetic is the look's (`..look.ticks`); this class applies it to the bqplot scales and axes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import bqplot
import numpy as np

from ..look import X_LABELS, d3_format, js_key, ticks, time_limits, time_ticks

__all__ = ["AXIS_TEXT", "Extent", "FigureAxes", "Lines"]

#: Extent of a mark's finite values: min, max, smallest positive (for a log axis); ``inf`` /
#: ``-inf`` when there is none.
Extent = tuple[float, float, float]
#: The points of a run's marks, one ``(xs, ys, extent)`` per mark: an x and a y array per lane.
Lines = Sequence[tuple[list[np.ndarray], list[np.ndarray], Extent]]
#: How far before its first step the step axis starts when a point is drawn there, as a fraction
#: of the axis (6-28 px of a 320-1400 px chart: a marker's radius and more).
POINT_PAD = 0.02
#: Axis text follows JupyterLab's theme (bqplot's own dark style made the label orange).
AXIS_TEXT = "var(--jp-ui-font-color1)"  # (bqplot refuses a var() with a fallback)


class FigureAxes:
    """The axes part of a `LiveFigure` (which sets `figure`, `x_scale`, `y_lin`, `y_log`,
    `x_axis`, `y_axis`, `log`, `log_x`, `_extent` and `_width`)."""

    figure: bqplot.Figure
    x_scale: bqplot.Scale
    y_lin: bqplot.LinearScale
    y_log: bqplot.LogScale
    x_axis: bqplot.Axis
    y_axis: bqplot.Axis
    log: bool
    log_x: bool
    #: What the x axis counts (`..look.X_AXES`): steps, or seconds (relative, wall clock).
    x_time: str = "step"
    _extent: Extent
    _width: float | None

    @property
    def y_scale(self) -> bqplot.Scale:
        """The y scale in use (log or linear)."""
        return self.y_log if self.log else self.y_lin

    def _x_limits(
        self, first: float, last: float, exact: bool = False, settled: bool = False
    ) -> tuple[float, float]:
        """The step scale's limits: from ``first`` to a round step at or past ``last`` (on a
        log axis from step 1 at least: from step 1, out to the next eighth of a decade, a
        decade at least; from a later step, a window's, the nearer of that and the linear
        axis's round end); ``exact``: to ``last`` itself (a zoom shows the steps asked for);
        ``settled`` (every run ended): fitting ``last`` closely (`ticks.x_limits`). On a time
        axis ``first`` and ``last`` are seconds, spanned as they are."""
        if self.x_time != "step":
            return time_limits(first, last)
        if self.log_x:
            x_lo = float(max(1, first))
            if exact:
                return x_lo, float(max(last, x_lo + 1))
            if x_lo == 1:  # a run from its start: a decade at least, so the axis reads as log
                return x_lo, _eighth_decade(max(last, 10))
            # A decade past a window's first step would be ~10x past its last one; a window of
            # under a decade is near linear, and rounds as a linear axis does.
            top = max(last, x_lo + 1)
            return x_lo, min(_eighth_decade(top), ticks.x_limits(int(x_lo), int(top))[1])
        if exact:
            return float(first), float(max(last, first + 1))
        if last <= first:  # one row (no step taken): its point in the middle, not on the y axis
            return first - 0.5, first + 0.5
        return ticks.x_limits(first, last, settled)

    def _set_x_limits(
        self,
        first: float,
        last: float,
        exact: bool = False,
        settled: bool = False,
        point: bool = False,
    ) -> None:
        """`_x_limits`; ``point``: a run of one row is drawn at ``first`` (its marker), which
        the axis then starts a little before, so the marker is not half under the y axis."""
        x_lo, x_hi = self._x_limits(first, last, exact, settled)
        if point and x_lo == first and x_hi > x_lo and self.x_time == "step" and not self.log_x:
            x_lo -= POINT_PAD * (x_hi - x_lo)
        if (self.x_scale.min, self.x_scale.max) != (x_lo, x_hi):
            with self.x_scale.hold_sync():
                self.x_scale.min, self.x_scale.max = x_lo, x_hi

    def _set_y_limits(self) -> None:
        """Limits of the y scale in use (the other one is set when the toggle selects it: one
        message less per update)."""
        lo, hi, lo_pos = self._extent
        scale = self.y_scale
        with scale.hold_sync():
            scale.min, scale.max = (
                ticks.log_limits(lo_pos, hi) if self.log else ticks.linear_limits(lo, hi)
            )

    def set_width(self, pixels: float) -> None:
        """The figure's width in a view (its `LivePanel` reports it; 0: unknown): the number of
        x ticks follows it, so a wide plot is not left with three."""
        width = float(pixels) if pixels and pixels > 0 else None
        if width != self._width:
            self._width = width
            self._update_ticks()

    def _update_ticks(self) -> None:
        """Round tick values and one compact format per axis; the left margin fits the y labels,
        the right margin half of the last x label (centred on the plot's right edge)."""
        x_lo, x_hi = float(self.x_scale.min), float(self.x_scale.max)
        margin = self.figure.fig_margin
        plot = None if self._width is None else self._width - margin["left"] - margin["right"]
        x_ticks, x_format, x_labels = self._x_ticks(x_lo, x_hi, plot)
        lo, hi = float(self.y_scale.min), float(self.y_scale.max)
        y_ticks, y_format, y_labels = self._y_ticks(lo, hi)
        width = (
            max(map(len, y_labels.values()), default=1)
            if y_labels
            else ticks.tick_format(y_ticks, log=self.log)[1]
        )
        for axis, values, fmt, log, own in (
            # (steps: SI prefixes, log or not; a time axis: its own labels)
            (self.x_axis, x_ticks, x_format, False, x_labels),
            (self.y_axis, y_ticks, y_format, self.log, y_labels),
        ):
            # The format first, in a message of its own: bqplot redraws new tick values a frame
            # later with the format its view has by then, but a new format at once; in one
            # message (whose keys the view may apply in either order) the late redraw could
            # write the new ticks in the old format and keep them so.
            labels = own if own is not None else ticks.tick_labels(fmt, values, log)
            if (axis.tick_labels or {}) != labels:
                axis.tick_labels = labels
            axis.tick_format = fmt
            if list(axis.tick_values) != values:
                axis.tick_values = np.array(values, float)
        last = len(d3_format(x_format, x_ticks[-1])) if x_ticks else 1
        if x_labels:  # a time axis: its labels are its own
            last = len(x_labels[js_key(x_ticks[-1])])
        new = {"left": ticks.left_margin(width), "right": ticks.right_margin(last)}
        if any(margin.get(k) != v for k, v in new.items()):
            self.figure.fig_margin = {**margin, **new}

    def _y_ticks(self, lo: float, hi: float) -> tuple[list[float], str, dict[str, str] | None]:
        """Tick values and format of the y axis over ``[lo, hi]``, and labels of its own (by
        `..look.js_key`; None: the format's)."""
        y_ticks = ticks.log_ticks(lo, hi) if self.log else ticks.linear_ticks(lo, hi, 6)
        return y_ticks, ticks.tick_format(y_ticks, log=self.log)[0], None

    def _x_ticks(
        self, x_lo: float, x_hi: float, plot: float | None
    ) -> tuple[list[float], str, dict[str, str] | None]:
        """Tick values and format of the x axis over ``[x_lo, x_hi]``, ``plot`` px wide, and
        the labels of a time axis's ticks (by `..look.js_key`; None on a step axis)."""
        if self.x_time != "step":
            wall = self.x_time == "wall"
            chars = 8 if wall else 6  # "12:34:56", "90 min"
            values, texts = time_ticks(x_lo, x_hi, ticks.x_intervals(plot, chars), wall)
            return values, ",.0f", {js_key(v): t for v, t in zip(values, texts, strict=True)}
        # The label width depends on the ticks and the ticks on it: one refinement is enough
        # (a label of the axis end is the widest the axis can have, to a character).
        chars = len(d3_format(ticks.tick_format([x_lo, x_hi], si=True)[0], x_hi))
        if self.log_x:
            x_ticks = ticks.log_ticks(x_lo, x_hi, ticks.x_intervals(plot, chars) + 1)
        else:
            x_ticks = ticks.linear_ticks(x_lo, x_hi, ticks.x_intervals(plot, chars), integer=True)
        return x_ticks, ticks.tick_format(x_ticks, si=True)[0], None

    def _new_y_axis(self) -> bqplot.Axis:
        return bqplot.Axis(
            scale=self.y_scale,
            side="left",
            color=AXIS_TEXT,
            grid_lines="dashed",
            # Never a tick at 0 on a log scale (a NaN position); `_update_ticks` sets the real ones.
            tick_values=np.array([0.1, 1.0, 10.0] if self.log else [0.0, 0.5, 1.0]),
            tick_format=",~g",
        )

    def _new_x_axis(self) -> bqplot.Axis:
        return bqplot.Axis(
            scale=self.x_scale,
            side="bottom",
            label=X_LABELS[self.x_time],
            label_color=AXIS_TEXT,
            color=AXIS_TEXT,
            grid_lines="dashed",
            tick_values=np.array([1.0, 10.0] if self.log_x else [0.0, 1.0]),
            tick_format=",.0f",
        )


def _eighth_decade(step: float) -> float:
    """The next eighth of a decade at or past ``step`` (> 0): a log axis's round end."""
    return float(10 ** (math.ceil(8 * math.log10(step)) / 8))
