"""`PathFigure`: a chart of one series against another (an optimizer's path), live.

A `LiveFigure` whose x axis is a series, not the steps: its own x scale, fitted
to the x values drawn, labelled with the x series' name, ticks as on a y axis. Each run draws one
line per lane (points from `..reduce.PathSeries`, which keep every bucket's extremes, so the
drawn points' extent is the path's), a ring where each lane's path starts and a dot where it is
now (`._extras.PathEnds`). The hover read-out skips it (its x is not a step): the figure has the
CSS class ``jhw-path``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from ..look import d3_format, ticks
from ._chart import Lines, LiveFigure
from ._extras import PathEnds

__all__ = ["PathFigure"]


class PathFigure(LiveFigure):
    """One path chart: ``title`` (``"y vs x"``), its x axis labelled ``x_label``."""

    def __init__(self, log_y: bool, title: str, height: int, x_label: str) -> None:
        super().__init__(log_y, title=title, height=height, titled=True)
        self.x_axis.label = x_label
        self.x_axis.tick_format = ",~g"
        self.figure.add_class("jhw-path")
        self._x_extent: dict[int, tuple[float, float]] = {}  # run -> its x values' min, max

    def add_marks(self, number: int, *args: Any, **kwargs: Any) -> None:
        """`LiveFigure.add_marks`, then the path's ends in the colours of its lines."""
        super().add_marks(number, *args, **kwargs)
        r = self._runs[number]
        line_colors = [c for mark in r.marks for c in mark.colors]
        self.add_extra(number, PathEnds(number, line_colors))

    def set_lines(self, number: int, lines: Lines, last_step: int) -> None:
        super().set_lines(number, lines, last_step)
        lo, hi = math.inf, -math.inf
        starts, ends = [], []
        for xs, ys, _ in lines:
            for x, y in zip(xs, ys, strict=True):
                ok = np.isfinite(x) & np.isfinite(y)
                if not ok.any():
                    continue
                fx = x[ok]
                lo, hi = min(lo, float(fx.min())), max(hi, float(fx.max()))
                first, last = np.flatnonzero(ok)[[0, -1]]
                starts.append((x[first], y[first]))
                ends.append((x[last], y[last]))
        self._x_extent[number] = (lo, hi)
        for extra in self._runs[number].extras:
            if isinstance(extra, PathEnds):
                extra.set(np.array(starts).reshape(-1, 2), np.array(ends).reshape(-1, 2))

    def _smoothed_lines(self, r: Any) -> list:
        return []  # a path is drawn as it went: no smoothed twin

    def drop_runs(self, numbers: Iterable[int]) -> None:
        numbers = list(numbers)
        for n in numbers:
            self._x_extent.pop(n, None)
        super().drop_runs(numbers)

    def _x_limits(
        self, first: float, last: float, exact: bool = False, settled: bool = False
    ) -> tuple[float, float]:
        # Fitted to the x series drawn: a path is not zoomed by step, nor has it a headroom.
        lo = min((e[0] for e in self._x_extent.values()), default=math.inf)
        hi = max((e[1] for e in self._x_extent.values()), default=-math.inf)
        return ticks.linear_limits(lo, hi)

    def _x_ticks(
        self, x_lo: float, x_hi: float, plot: float | None
    ) -> tuple[list[float], str, dict[str, str] | None]:
        # The widest label of a first guess sets how many fit, as for the steps.
        guess = ticks.linear_ticks(x_lo, x_hi, 4)
        chars = max(len(d3_format(ticks.tick_format(guess)[0], t)) for t in guess)
        values = ticks.linear_ticks(x_lo, x_hi, ticks.x_intervals(plot, chars))
        return values, ticks.tick_format(values)[0], None  # (never a time axis)
