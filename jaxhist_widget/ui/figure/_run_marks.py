"""What one chart (`._chart.LiveFigure`) holds for one run, and how its lines are styled.

The marks are bqplot widgets, but this module only reads and writes
their traits. `styles` is the one rule for line colours, dashes and opacities in a chart:

- every run is drawn in its own colour (`..look.next_color`), in every chart, once a chart
  draws several runs;
- a chart that draws one run alone colours that run's series instead, when it has several:
  the fields of a chart shared by every field, a vector's components, a vmap run's lanes (the
  palette, a ramp above ten); with several runs those are told apart by dash style (fields) or
  not at all (lanes: the hover names them);
- with smoothing on, the raw line is drawn faint (`..look.RAW_OPACITY`) under the smoothed one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import bqplot
import numpy as np

from ..look import (
    AWAY_OPACITY,
    LEGEND_LANES,
    LINE_STYLES,
    OTHER_OPACITY,
    PALETTE,
    LegendLine,
    lane_colors,
)
from ..reduce import robust_extent

__all__ = [
    "OFF_AXIS",
    "RunMarks",
    "chart_legend",
    "joint_extent",
    "lane_keys",
    "lanes_named",
    "legend_lines",
    "off_axis",
    "pad",
    "robust_fit",
    "set_points",
    "set_traits",
    "step_array",
    "styles",
]


#: A y extent: (min, max, smallest positive).
Extent = tuple[float, float, float]


def robust_fit(ys: Sequence[np.ndarray], log: bool) -> Extent | None:
    """`..reduce.robust_extent` of ``ys``, or None when they hold no value."""
    extent = robust_extent(ys, log=log)
    return extent if extent[0] <= extent[1] else None


@dataclass
class RunMarks:
    """What a chart holds for one run: its marks and where its data lies."""

    number: int
    x0: int  # the step its line starts at (> 0 for a run continuing the previous one)
    name: str = ""  # what the plot calls it
    color: str = PALETTE[0]  # its own colour (`..look.next_color`)
    fields: list[str] = field(default_factory=list)  # one label per mark
    series_colors: list[str] = field(default_factory=list)  # per mark: its field's colour
    lane_names: list[str] = field(default_factory=list)  # of the drawn lanes; [] unbatched
    lane_roles: list[str] = field(default_factory=list)  # why each is drawn ("best"; "": stride)
    lanes: int = 0  # the run's lane count (more than drawn above the lane cap)
    lane_ids: list[int] = field(default_factory=list)  # the run's lane index of each drawn lane
    hidden_lanes: set[int] = field(default_factory=set)  # lane indices hidden one by one
    away: set[int] = field(default_factory=set)  # lane indices that ran away: drawn faint
    #: A sweep past `..series.LEAD_LANES`: its lanes drawn for no role are faint (the band, its
    #: median and the lanes named lead), unless ``all_lanes``.
    faint_others: bool = False
    marks: list[bqplot.Lines] = field(default_factory=list)
    smoothed: list[bqplot.Lines] = field(default_factory=list)  # one per mark while smoothing
    extras: list[Any] = field(default_factory=list)  # bands, heatmaps, path ends (`._extras`)
    extents: list[tuple[float, float, float]] = field(default_factory=list)
    #: Per mark of a sweep: each lane's extent (`..series.Spread`), or None: the y axis then
    #: fits the lanes that did not run away (`._sweep.fitted_extent`).
    spreads: list[Any] = field(default_factory=list)
    # The points last set, per mark, as given (`set_points` may hide some on a log step axis).
    points: list[tuple[list[np.ndarray], list[np.ndarray]]] = field(default_factory=list)
    smoothed_points: list[tuple[list[np.ndarray], list[np.ndarray]]] = field(default_factory=list)
    last_step: int = 0
    hidden: bool = False  # hidden from the run list: its marks are not shown
    #: `robust_extents`' last answer on each kind of axis (log or not), with the arrays it read.
    _robust_memo: dict[bool, tuple[list[np.ndarray], list[Extent | None]]] = field(
        default_factory=dict, repr=False
    )

    @property
    def batched(self) -> bool:
        return bool(self.lane_names)

    def robust_extents(self, log: bool) -> list[Extent | None]:
        """Per mark, the extent of its shown lines but the lanes that ran away, without their
        outliers (`..reduce.robust_extent`; None where they hold no value).

        Kept while the lines are the same arrays: a chart of many runs fits its axis at each
        update, and a run that ended (a `keep_runs` sweep's 199 earlier ones) keeps its points,
        so it is not reduced again each time (200 runs of 3 fields reduced ~10,000 lines).
        """
        ys = self.shown_ys(without=self.away)
        kept, answer = self._robust_memo.get(log, ([], []))
        if kept and len(kept) == len(ys) and all(a is b for a, b in zip(kept, ys, strict=True)):
            return answer
        out = [robust_fit([y], log) for y in ys]
        self._robust_memo[log] = (ys, out)
        return out

    def shown_ys(
        self, without: set[int] | frozenset[int] = frozenset(), given: bool = False
    ) -> list[np.ndarray]:
        """The y values of the lines but those of the lanes hidden one by one (drawn
        transparent, their points kept), as `..series.hide_lanes` leaves them out of the
        extents, and of the lanes ``without`` (those that ran away); every lane's when all
        would go (as a chart keeps every run then). ``given``: the values as given (`points`,
        an array per lane), not as drawn (a value far off a linear axis is drawn at its bound:
        `set_points`' ``clip``)."""
        off = self.hidden_lanes | set(without)
        shown = np.array([lane not in off for lane in self.lane_ids], bool)
        every = bool(shown.all() or not shown.any())
        if given:
            return [
                y
                for _, ys in self.points
                for k, y in enumerate(ys)
                if every or k >= len(shown) or shown[k]
            ]
        if every:
            return [m.y for m in self.marks]
        out = []
        for m in self.marks:
            ys = np.atleast_2d(m.y)  # a batched run's mark: one row of points per drawn lane
            out.append(ys[shown] if len(ys) == len(shown) else ys)
        return out

    @property
    def shown_lanes(self) -> list[str]:
        """The drawn lanes' names as shown: ``lane 17 (best)`` for a lane drawn for a role."""
        roles = self.lane_roles + [""] * (len(self.lane_names) - len(self.lane_roles))
        return [f"{n} ({r})" if r else n for n, r in zip(self.lane_names, roles, strict=False)]

    def fades(self) -> list[float]:
        """Each drawn lane's opacity (before a smoothed twin's fading): a lane that ran away
        faint (`..look.AWAY_OPACITY`), one drawn for no role fainter while `faint_others`;
        1 else."""
        roles = self.lane_roles + [""] * (len(self.lane_ids) - len(self.lane_roles))
        out = []
        for lane, role in zip(self.lane_ids, roles, strict=False):
            fade = AWAY_OPACITY if lane in self.away else 1.0
            out.append(fade * (OTHER_OPACITY if self.faint_others and not role else 1.0))
        return out

    def labels(self, i: int, suffix: str = "") -> list[str]:
        """The hover labels of mark ``i``'s lines: field, lane, run."""
        label = self.fields[i]
        if self.batched:
            return [f"{label} · {lane} · {self.name}{suffix}" for lane in self.shown_lanes]
        return [f"{label} · {self.name}{suffix}"]


def styles(runs: Sequence[RunMarks]) -> dict[int, list[tuple[list[str], str]]]:
    """Per run number, per mark: its line colours (cycled over the mark's lines) and dash
    style (see the module docstring). ``runs``: the chart's runs with marks."""
    several = len(runs) > 1
    out = {}
    for r in runs:
        dashes = len(r.marks) > 1
        if r.batched and not several:
            colors = [lane_colors(len(r.lane_names))] * len(r.marks)
        elif dashes and not several:
            colors, dashes = [[c] for c in r.series_colors], False
        else:
            colors = [[r.color]] * len(r.marks)
        looks = [
            (c, LINE_STYLES[i % len(LINE_STYLES)] if dashes else "solid")
            for i, c in enumerate(colors)
        ]
        out[r.number] = looks
    return out


def legend_lines(runs: Sequence[RunMarks]) -> list[LegendLine]:
    """What the legend names of one chart's lines: each series of a chart that holds several
    (in its colour while it draws one unbatched run, else by its dash style), once. Runs are
    named by the panel's run list, lanes by the legend row (`lanes_named`)."""
    drawn = [r for r in runs if r.marks]
    out: dict[str, LegendLine] = {}
    for r in drawn:
        if r.hidden or len(r.marks) < 2:  # one series: the chart's title names it
            continue
        by_series = not r.batched and len(drawn) == 1
        for label, mark in zip(r.fields, r.marks, strict=False):
            color = mark.colors[0] if by_series and len(mark.colors) else "currentColor"
            out.setdefault(label, LegendLine(label, None, color, mark.line_style, 1.0))
    return list(out.values())


def chart_legend(runs: Sequence[RunMarks]) -> tuple[list[LegendLine], list[str], int, list[Key]]:
    """What one chart's legend names: the series of a chart holding several (`legend_lines`),
    a line drawn over a band or heatmap (a median) with its extras' entries, and, of the
    batched run it draws alone, the lanes drawn for a role (``lane 17 (best)``, in their
    colour: a ramp names the others), the drawn lane names, the lane count and each drawn
    lane's key (`lane_keys`)."""
    named = lanes_named(runs)
    names, lanes = (named.shown_lanes, named.lanes) if named is not None else ([], 0)
    lines = legend_lines(runs)
    for r in runs:
        if r.hidden:
            continue
        for e in r.extras:
            labels = {line.label for line in lines}
            # (a vector's median is named over its band; a sweep's lanes by the lane entries)
            if e.label in r.fields and e.label not in labels and not getattr(e, "sweep", False):
                mark = r.marks[r.fields.index(e.label)]
                color = mark.colors[0] if len(mark.colors) == 1 else "currentColor"
                lines.append(LegendLine(e.label, None, color, mark.line_style, 1.0))
            lines += e.legend()
    if named is not None and len(names) > LEGEND_LANES:
        colors = lane_colors(len(names))
        roles = enumerate(named.lane_roles)
        lines += [LegendLine(names[k], None, colors[k], "solid", 1.0) for k, role in roles if role]
    return lines, list(names), lanes, lane_keys(named)


#: A drawn lane as the legend's toggle names it: run number, lane index, whether it is hidden.
Key = tuple[int, int, bool]


def lane_keys(r: RunMarks | None) -> list[Key]:
    """Each drawn lane of ``r`` as ``(run number, lane index, hidden)`` (the legend's lane
    entries toggle it); none when its lane indices are not known."""
    if r is None or len(r.lane_ids) != len(r.lane_names):
        return []
    return [(r.number, k, k in r.hidden_lanes) for k in r.lane_ids]


def lanes_named(runs: Sequence[RunMarks]) -> RunMarks | None:
    """The batched run whose lanes the legend names: the one a chart draws alone (with several
    runs the lanes take their run's colour; a hidden run still counts, so that hiding one
    recolours nothing)."""
    drawn = [r for r in runs if r.marks]
    alone = drawn[0] if len(drawn) == 1 else None
    return alone if alone is not None and alone.batched and not alone.hidden else None


def pad(arrays: list[np.ndarray], empty: float) -> np.ndarray:
    """Stack lines of unequal length into one 2-d array, each padded with its own last point.

    Not NaN: bqplot places each line's label at its last point, and NaN there is an invalid
    SVG transform. Repeating the last point draws nothing extra. A line with no point at all is
    filled with ``empty``.
    """
    dtype = np.result_type(*arrays)
    out = np.full((len(arrays), max(len(a) for a in arrays)), empty, dtype=dtype)
    for k, a in enumerate(arrays):
        out[k, : len(a)] = a
        if len(a):
            out[k, len(a) :] = a[-1]
    return out


def step_array(x: np.ndarray) -> np.ndarray:
    """Steps as int32 when they fit (4 bytes a point on the wire instead of 8)."""
    if x.dtype.kind in "iu" and (not x.size or int(x.max()) < 2**31):
        return x.astype(np.int32, copy=False)
    return x


def joint_extent(extents: Sequence[tuple[float, float, float]]) -> tuple[float, float, float]:
    """The extent (min, max, smallest positive) of several."""
    return (
        min((e[0] for e in extents), default=math.inf),
        max((e[1] for e in extents), default=-math.inf),
        min((e[2] for e in extents), default=math.inf),
    )


def set_points(
    mark: bqplot.Lines,
    xs: list[np.ndarray],
    ys: list[np.ndarray],
    batched: bool,
    log_x: bool = False,
    log_y: bool = False,
    clip: tuple[float, float] | None = None,
) -> bool:
    """One mark's points: one x and one y array per lane (stacked, each padded, under vmap).

    On a log step axis a point at step 0 (or below), which it cannot place, becomes a gap at
    step 1 (a NaN position would be an invalid SVG path, an error per update). A line ends at
    its last point the axes can place: bqplot puts its label there, and a NaN or inf (a
    diverged lane) or, on a log y axis, a value <= 0 there is an invalid SVG transform; such
    trailing points draw nothing anyway. ``clip``: the values a linear y axis can place, far
    beyond its limits (`off_axis`); a value past them is drawn there, as far off the chart the
    same way (a runaway's 1e38 over an axis to 0.5: a pixel past float32's range, which the
    page's SVG cannot parse). Returns whether a value was so drawn.
    """
    ends = [_drawable_end(y, log_y) for y in ys]
    xs = [x[:n] for x, n in zip(xs, ends, strict=True)]
    ys = [y[:n] for y, n in zip(ys, ends, strict=True)]
    x, y = (pad(xs, 0), pad(ys, np.nan)) if batched else (xs[0], ys[0])
    clipped = False
    if clip is not None and y.size:
        placed = np.clip(y, *clip)  # (NaN stays: a gap)
        clipped = bool((placed != y).any())
        y = placed if clipped else y
    if log_x and x.size and (x <= 0).any():
        y = np.where(x > 0, y, np.nan)
        x = np.where(x > 0, x, 1)
    # A run of one row (no step: its cond was False at once) is a point, which a line alone
    # never shows: its marks get a marker until a second row arrives.
    marker = "circle" if max((len(a) for a in xs), default=0) == 1 else None
    with mark.hold_sync():  # x and y in one message, so a view never sees them mismatched
        mark.x, mark.y = step_array(x), y
        if mark.marker != marker:
            mark.marker = marker
    return clipped


#: How far past a linear y axis's limits a value is drawn at most, in spans of the axis: far
#: off the chart (3 million pixels of a 300 px plot), every pixel a number the page can parse.
OFF_AXIS = 1e4


def off_axis(limits: tuple[float, float], spans: float = OFF_AXIS) -> tuple[float, float]:
    """The values a linear y axis of ``limits`` draws a line's points within (`set_points`'s
    ``clip``): ``spans`` spans of the axis past each limit.

    >>> off_axis((0.0, 2.0))
    (-20000.0, 20002.0)
    """
    lo, hi = limits
    span = hi - lo if hi > lo else max(abs(hi), 1.0)
    return lo - spans * span, hi + spans * span


def _drawable_end(y: np.ndarray, log_y: bool) -> int:
    """The length of ``y`` up to its last point a (log) y axis can place (all of it when it
    has none: nothing is drawn then either)."""
    if not len(y) or (np.isfinite(y[-1]) and (y[-1] > 0 or not log_y)):
        return len(y)
    ok = np.isfinite(y) & (y > 0) if log_y else np.isfinite(y)
    where = np.flatnonzero(ok)
    return int(where[-1]) + 1 if where.size else len(y)


def set_traits(widget: Any, **traits: Any) -> None:
    """Set the traits that differ (an unchanged value would still cost a message)."""
    changed = {k: v for k, v in traits.items() if _differs(getattr(widget, k), v)}
    if changed:
        with widget.hold_sync():
            for k, v in changed.items():
                setattr(widget, k, v)


def _differs(old: Any, new: Any) -> bool:
    if isinstance(old, np.ndarray) or isinstance(new, (list, tuple)):
        return list(old) != list(new)
    return old != new
