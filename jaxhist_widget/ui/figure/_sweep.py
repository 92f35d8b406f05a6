"""What a chart draws of a vmap sweep besides its lines: the drawn lanes' names, which change as
the lanes drawn for a role are chosen anew (`rename_lanes`), and a flag at the end of each line
that ends at NaN or ±inf (`DivergedEnds`, a chart extra as `._extras`'s are).

The lanes and the flags' points are the series' (`jaxhist_widget.ui.series`); this only draws.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import bqplot
import numpy as np

from ..look import BADGE_COLORS, LegendLine

__all__ = ["DIVERGED_COLOR", "DivergedEnds", "flag_ends", "rename_lanes"]

#: A diverged line's end flag: the colour of the panel's *diverged* badge.
DIVERGED_COLOR = BADGE_COLORS["diverged"][0]
_NO_EXTENT = (np.inf, -np.inf, np.inf)


def rename_lanes(
    chart: Any,
    number: int,
    names: Sequence[str],
    roles: Sequence[str],
    ids: Sequence[int] = (),
    hidden: Collection[int] = (),
) -> None:
    """Name run ``number``'s drawn lanes ``names`` on ``chart`` (a `LiveFigure`), each drawn for
    ``roles`` ("" for none), with their lane indices ``ids`` and the ``hidden`` ones (the
    legend's toggles): its hover labels, colours and legend follow."""
    r = chart._runs.get(number)
    if r is None or not r.marks:
        return
    r.lane_names, r.lane_roles = list(names), list(roles)
    r.lane_ids, r.hidden_lanes = list(ids), set(hidden)
    for i, mark in enumerate(r.marks):
        mark.labels = r.labels(i)
    for i, mark in enumerate(r.smoothed):
        mark.labels = r.labels(i, " · smoothed")
    chart.restyle()


def flag_ends(chart: Any, number: int, flags: Sequence[np.ndarray]) -> None:
    """Flag run ``number``'s lines on ``chart`` that end at NaN or ±inf at ``flags`` (per
    series drawn there, ``(n, 2)`` steps and values); its `DivergedEnds` is made once one
    does."""
    points = np.concatenate([np.reshape(f, (-1, 2)) for f in flags] or [np.zeros((0, 2))])
    r = chart._runs.get(number)
    if r is None:
        return
    ends = next((e for e in r.extras if isinstance(e, DivergedEnds)), None)
    if ends is None and len(points):
        ends = DivergedEnds(number)
        chart.add_extra(number, ends)
    if ends is not None:
        ends.set(points)


class DivergedEnds:
    """A flag (a cross in the *diverged* badge's colour) at the last finite point of each drawn
    line that ends at NaN or ±inf, over the lines."""

    above = True
    label = ""  # (drawn over every line of its chart)

    def __init__(self, run: int) -> None:
        self.run = run
        self.marks: list[bqplot.Scatter] = []
        self.points = np.zeros((0, 2))  #: the flags: step and value, one row each
        self._drawn: tuple | None = None

    def make(self, x_scale: bqplot.Scale, y_scale: bqplot.Scale) -> list[bqplot.Mark]:
        old = self.marks
        self.marks = [
            bqplot.Scatter(
                scales={"x": x_scale, "y": y_scale},
                marker="cross",
                colors=[DIVERGED_COLOR],
                stroke="white",
                stroke_width=1.0,
                default_size=72,
                display_legend=False,
                preserve_domain={"x": True, "y": True},
            )
        ]
        self._drawn = None
        return old

    def set(self, points: np.ndarray) -> None:
        """The flags' points (rows of step, value); drawn at the next `draw`."""
        self.points = np.asarray(points, np.float64).reshape(-1, 2)
        self._drawn = None

    def extent(self, steps: tuple[int, int] | None = None) -> tuple[float, float, float]:
        return _NO_EXTENT  # its points are the lines' own

    def draw(self, y_limits: tuple[float, float], log: bool) -> None:
        key = (log, self.points.tobytes())
        if key == self._drawn or not self.marks:
            return
        self._drawn = key
        xy = self.points[self.points[:, 1] > 0] if log else self.points  # placeable only
        (mark,) = self.marks
        with mark.hold_sync():
            mark.x, mark.y = xy[:, 0], xy[:, 1]

    def set_colors(self, colors: Sequence[str]) -> None:
        pass  # always the badge's colour: it reads as the badge does

    def legend(self) -> list[LegendLine]:
        if not len(self.points):
            return []
        return [LegendLine("diverged: last finite value", None, DIVERGED_COLOR, "flag", 1.0)]

    def close(self) -> None:
        for mark in self.marks:
            mark.close()
