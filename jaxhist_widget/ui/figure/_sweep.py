"""What a chart draws of a vmap sweep besides its lines: the drawn lanes' names, which change as
the lanes drawn for a role are chosen anew (`rename_lanes`), a flag at the end of each line
that ends at NaN or ±inf (`DivergedEnds`), the y range of the lanes that did not run away
(`fitted_extent`) and an arrow where a line leaves that range (`RunawayMarks`; the two are
chart extras as `._extras`'s are). `LaneProbe`: a lane of a sweep past its drawn-lane limit (no
line of its own, only inside the band) drawn over the step charts while its point in a
hyperparameter chart is pointed at (`show_lane_probe`; the page asks with the ``lane_probe``
control), named as a drawn lane's line (``loss · lr=0.1 · run 1``) for the page's highlight to
light it; hidden when none is, never in the static picture (a pointer's) nor in the legend.

The lanes, the flags' points and each lane's extent are the series' (`jaxhist_widget.ui.series`);
which lanes run away is `..reduce.bulk_range`'s. This only draws.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from typing import Any

import bqplot
import numpy as np

from ..look import BADGE_COLORS, LINE_WIDTH, LegendLine
from ..reduce import bulk_range
from ._extras import BandExtra
from ._run_marks import joint_extent, off_axis, robust_fit, set_points

__all__ = [
    "DIVERGED_COLOR",
    "DivergedEnds",
    "LaneProbe",
    "RunawayMarks",
    "fitted_extent",
    "flag_ends",
    "mark_runaways",
    "rename_lanes",
    "show_lane_probe",
]

#: A diverged line's end flag: the colour of the panel's *diverged* badge.
DIVERGED_COLOR = BADGE_COLORS["diverged"][0]
_NO_EXTENT = (math.inf, -math.inf, math.inf)
#: How far inside the plot an arrow sits, as a fraction of the y axis (~8 px of a chart's 250):
#: marks are clipped to the plot, and an arrow on its edge would show half of itself.
ARROW_INSET = 0.03


def rename_lanes(
    chart: Any,
    number: int,
    names: Sequence[str],
    roles: Sequence[str],
    ids: Sequence[int] = (),
    hidden: Collection[int] = (),
    faint: bool = False,
) -> None:
    """Name run ``number``'s drawn lanes ``names`` on ``chart`` (a `LiveFigure`), each drawn for
    ``roles`` ("" for none), with their lane indices ``ids`` and the ``hidden`` ones (the
    legend's toggles), those drawn for no role ``faint`` (`RunMarks.faint_others`): its hover
    labels, colours, opacities and legend follow."""
    r = chart.runs.get(number)
    if r is None or not r.marks:
        return
    r.lane_names, r.lane_roles = list(names), list(roles)
    r.lane_ids, r.hidden_lanes = list(ids), set(hidden)
    r.faint_others = faint
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
    r = chart.runs.get(number)
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
        # (a flag far off a linear axis, a runaway's 1e38, is drawn at `off_axis`)
        far = None if log else off_axis(y_limits)
        ys = self.points[:, 1]
        if far is not None and ((ys >= far[0]) & (ys <= far[1])).all():
            far = None
        key = (log, self.points.tobytes(), far)
        if key == self._drawn or not self.marks:
            return
        self._drawn = key
        xy = self.points[self.points[:, 1] > 0] if log else self.points  # placeable only
        if far is not None:
            xy = np.c_[xy[:, 0], np.clip(xy[:, 1], *far)]
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


def fitted_extent(
    runs: Sequence[Any], steps: tuple[float, float] | None, log: bool, robust: bool = False
) -> tuple[tuple[float, float, float], dict[int, tuple[int, int]], bool]:
    """The extent a chart's y axis fits, of its shown ``runs`` (`RunMarks`): each mark's and
    extra's (of ``steps`` only, where a window shows part of a run), but a sweep's field (a
    mark with a `..series.Spread`) by its lanes that did not run away, in place of its lines'
    and its band's; per run number, how many lanes ran away above and below (on a ``log`` axis
    in decades: `..reduce.bulk_range`); and whether a run's lanes that ran away (`RunMarks.
    away`, drawn faint) changed. ``robust`` (ignoring outliers): each series' drawn points
    but those far outside its bulk (`..reduce.robust_extent`; a sweep's lines but the lanes
    that ran away, a vector's band's edges), each series on its own (a spike is one series'
    outlier, another series' scale is none)."""
    changed = False
    extents: list[tuple[float, float, float]] = []
    left: dict[int, tuple[int, int]] = {}
    for r in runs:
        fitted, above, below = set(), set(), set()
        marks: list[tuple[float, float, float]] = []
        for i, extent in enumerate(r.extents):
            spread = r.spreads[i] if i < len(r.spreads) else None
            if spread is None:
                marks.append(extent)
                continue
            s = spread.without(r.hidden_lanes)
            bulk = bulk_range(s.lo, s.hi, s.lo_pos, s.last, s.gone, log)
            marks.append(bulk.extent)
            fitted.add(r.fields[i])
            above.update(s.ids[bulk.above].tolist())
            below.update(s.ids[bulk.below].tolist())
        if r.away != above | below:
            r.away, changed = above | below, True
        robust_ys = r.robust_extents(log) if robust else []
        for i, extent in enumerate(marks):
            kept = robust_ys[i] if i < len(robust_ys) else None
            extents.append(kept if kept is not None else extent)
        for extra in r.extras:  # a sweep's band of every lane: its field's lanes fit instead
            if not (isinstance(extra, BandExtra) and extra.label in fitted):
                band = robust and isinstance(extra, BandExtra)
                kept = robust_fit([extra.edges(steps)], log) if band else None
                extents.append(kept if kept is not None else extra.extent(steps))
        if above or below:
            left[r.number] = (len(above), len(below))
    return joint_extent(extents), left, changed


def mark_runaways(chart: Any, left: dict[int, tuple[int, int]]) -> bool:
    """Put an arrow where each shown line of a sweep on ``chart`` (a `LiveFigure`, its y limits
    set) first leaves the y range, at that edge, and count its run's lanes that ran away
    (``left``: `fitted_extent`'s) in the legend; its `RunawayMarks` is made once one does.
    Returns whether a legend entry changed."""
    lo, hi = float(chart.y_scale.min), float(chart.y_scale.max)
    changed = False
    for r in list(chart.runs.values()):
        if not r.batched or not r.marks:
            continue
        ups, downs = _exits(r, lo, hi, chart.log, chart.log_x)
        marks = next((e for e in r.extras if isinstance(e, RunawayMarks)), None)
        if marks is None and (len(ups) or len(downs) or r.number in left):
            marks = RunawayMarks(r.number)
            chart.add_extra(r.number, marks)
        if marks is not None:
            changed |= marks.set(ups, downs, left.get(r.number, (0, 0)))
    return changed


def _exits(r: Any, lo: float, hi: float, log: bool, log_x: bool) -> tuple[np.ndarray, np.ndarray]:
    """The steps where ``r``'s shown lines first go above ``hi`` and below ``lo`` (on a linear
    axis; on a log one a value <= 0 is a gap, not a way out)."""
    ups: list[float] = []
    downs: list[float] = []
    if r.hidden:
        return np.zeros(0), np.zeros(0)
    for xs, ys in r.points:
        for k, (x, y) in enumerate(zip(xs, ys, strict=False)):
            if k < len(r.lane_ids) and r.lane_ids[k] in r.hidden_lanes:
                continue
            x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
            if log_x:
                x, y = x[x > 0], y[x > 0]
            for out, where in ((ups, y > hi), (downs, None if log else y < lo)):
                if where is not None and where.any():
                    out.append(x[int(np.argmax(where))])
    return np.asarray(ups, np.float64), np.asarray(downs, np.float64)


class RunawayMarks:
    """Arrows at a chart's top (bottom) edge where a sweep's lines leave its y range, over
    the lines, and the count of the lanes that ran away (left out of the range) in the legend."""

    above = True
    label = ""  # (drawn over every line of its chart)

    def __init__(self, run: int) -> None:
        self.run = run
        self.marks: list[bqplot.Scatter] = []
        self.ups = np.zeros(0)  #: the steps where a line leaves at the top
        self.downs = np.zeros(0)  #: ... at the bottom
        self.left = (0, 0)  #: lanes that ran away, above and below
        self._drawn: tuple | None = None

    def make(self, x_scale: bqplot.Scale, y_scale: bqplot.Scale) -> list[bqplot.Mark]:
        old = self.marks
        self.marks = [
            bqplot.Scatter(
                scales={"x": x_scale, "y": y_scale},
                marker=marker,
                colors=[DIVERGED_COLOR],
                stroke="white",
                stroke_width=1.0,
                default_size=64,
                display_legend=False,
                preserve_domain={"x": True, "y": True},
            )
            for marker in ("triangle-up", "triangle-down")
        ]
        self._drawn = None
        return old

    def set(self, ups: np.ndarray, downs: np.ndarray, left: tuple[int, int]) -> bool:
        """The arrows' steps and the lanes that ran away; drawn at the next `draw`. Returns
        whether the legend entry changed."""
        before = self.legend()
        self.ups, self.downs, self.left = ups, downs, left
        return self.legend() != before

    def extent(self, steps: tuple[int, int] | None = None) -> tuple[float, float, float]:
        return _NO_EXTENT  # at the edges of the range the lines make

    def draw(self, y_limits: tuple[float, float], log: bool) -> None:
        key = (y_limits, log, self.ups.tobytes(), self.downs.tobytes())
        if key == self._drawn or not self.marks:
            return
        self._drawn = key
        top, bottom = inset(y_limits, log)
        for mark, xs, y in zip(self.marks, (self.ups, self.downs), (top, bottom), strict=True):
            with mark.hold_sync():
                mark.x, mark.y = xs, np.full(len(xs), y)

    def set_colors(self, colors: Sequence[str]) -> None:
        pass  # the badge's colour: it reads as the diverged flags do

    def legend(self) -> list[LegendLine]:
        out = []
        ways = zip(self.left, ("above", "below"), (self.ups, self.downs), strict=True)
        for n, way, drawn in ways:
            style = "arrow-up" if way == "above" else "arrow-down"
            if n:
                lanes = f"{n:,} lane{'s' * (n != 1)}"
                text = f"{lanes} ran away {way}: left out of the y range"
                out.append(LegendLine(text, None, DIVERGED_COLOR, style, 1.0))
            elif len(drawn):
                out.append(LegendLine(f"{way} the y range", None, DIVERGED_COLOR, style, 1.0))
        return out

    def close(self) -> None:
        for mark in self.marks:
            mark.close()


def inset(y_limits: tuple[float, float], log: bool) -> tuple[float, float]:
    """The values just inside the top and the bottom of ``y_limits`` (`ARROW_INSET`), where
    the arrows sit.

    >>> inset((0.0, 100.0), False), [round(v, 3) for v in inset((1.0, 1e4), True)]
    ((97.0, 3.0), [7585.776, 1.318])
    """
    lo, hi = y_limits
    if log and lo > 0 and hi > 0:
        a, b = math.log10(lo), math.log10(hi)
        d = ARROW_INSET * (b - a)
        return 10 ** (b - d), 10 ** (a + d)
    d = ARROW_INSET * (hi - lo)
    return hi - d, lo + d


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
    for key, idx in grid.groups(number) if lines else []:
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
