"""What a `LivePlot` draws of one run: its series per lane, read from the run as rows arrive.

Numpy only (no widgets): a `RunDrawing` plans what to draw of a run when its first rows arrive
(`._plan`), reads the rows it received since the last update, reduces them into its series
(`LaneSeries`, `PathSeries`, and the bands and histograms of vectors), and hands out each
series' lines (for the live figure, `jaxhist_widget.ui.figure`) and latest values (for the
panel, `jaxhist_widget.ui.panel.panel_state`); which lanes it draws is `._lanes`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from ..._host import Run
from ..reduce import (
    BandSeries,
    HistogramBuckets,
    LaneSeries,
    LaneSpread,
    PathSeries,
    extend_lines,
)
from ._choice import PlotChoice
from ._goal import Goal
from ._lanes import LEAD_LANES, MAX_LANES, pick_lanes, ranked_lanes
from ._plan import Spec
from ._plan import plan as make_plan
from ._points import band_points, line_points
from ._reads import Reads
from ._sweep import Spread, ingest_lane_bands, whole_spreads, window_spreads

__all__ = ["RunDrawing"]

#: Lanes whose series a ranked run keeps after they left the drawn set (a lane that was the
#: median a moment ago often is again: it then catches up from where it was, not from row 0).
SPARE_LANES = 16


@dataclass
class RunDrawing:
    """The series of one run as a LivePlot draws it.

    Attributes
    ----------
    run
        The run drawn.
    number
        Its number in the LivePlot (1 for the first run it received).
    choice
        What the plot was asked to draw (``fields=``, ``vectors=``, ``paths=``).
    x0
        The step its lines start at: where the previous run ended, with ``continue_steps``.
    name, color
        What the plot calls it and the colour it is drawn in, in every chart and the run list.
    specs, notes
        The plotted series and the notes on what is not drawn as asked (`._plan.plan`), once
        the run's lane count is known (`start`).
    series
        ``(spec, lane) -> LaneSeries`` (a `PathSeries` for a path), once started.
    extras
        ``spec -> BandSeries | HistogramBuckets``: what a vector's median is drawn over.
    last_step
        The last step drawn (the largest over lanes).
    goal
        What the lanes are ranked by (`._goal.Goal`; `set_goal`): the plot's one goal.
    """

    run: Run
    number: int
    choice: PlotChoice = field(default_factory=PlotChoice)
    x0: int = 0
    name: str = ""
    color: str = ""
    specs: tuple[Spec, ...] = ()
    notes: tuple[str, ...] = ()
    series: dict[tuple[int, int], Any] = field(default_factory=dict)
    extras: dict[int, BandSeries | HistogramBuckets] = field(default_factory=dict)
    last_step: int = 0
    goal: Goal = field(default_factory=Goal)
    started: bool = field(default=False, init=False)
    #: The run's lanes drawn as lines, in order (`._lanes`); ``(0,)`` for an unbatched run.
    drawn_lanes: tuple[int, ...] = field(default=(), init=False)
    #: Unless ``lanes=`` names them: why a drawn lane is drawn or named, besides the stride
    #: (``{lane: "best"}``, `._lanes.ranked_lanes` by `goal`), chosen anew at each `ingest`.
    lane_roles: dict[int, str] = field(default_factory=dict, init=False)
    #: Bumped whenever `drawn_lanes` or `lane_roles` change (the figure renames its lanes).
    lanes_version: int = field(default=0, init=False)
    #: ``spec -> BandSeries``: past `LEAD_LANES` (or ``lanes=`` drawing some), a field's spread
    #: over every lane per step, and its median.
    lane_bands: dict[int, BandSeries] = field(default_factory=dict, init=False)
    #: ``spec -> LaneSpread``: with `lane_bands`, each lane's extent (`._sweep.Spread`).
    lane_spreads: dict[int, LaneSpread] = field(default_factory=dict, init=False)
    _lanes: int = field(default=0, init=False, repr=False)
    _stride: tuple[int, ...] = field(default=(), init=False, repr=False)  # ranked runs only
    _spare: dict[int, list[Any]] = field(default_factory=dict, init=False, repr=False)
    _budget: tuple[int, int] = field(default=(0, 0), init=False, repr=False)  # line, path

    def __post_init__(self) -> None:
        #: The run's rows as drawn: row 0 of a scan's stand-in leaves read as NaN (`._reads`).
        self.reads = Reads(self.run)

    @property
    def labels(self) -> list[str]:
        """The labels of every drawn series (one mark each), in legend order."""
        return [s.label for s in self.specs]

    @property
    def keys(self) -> list[str]:
        """The chart of each drawn series."""
        return [s.key for s in self.specs]

    @property
    def paths(self) -> dict[str, str]:
        """The charts that are paths, with the label of their x series."""
        return {s.key: s.xy[0].label for s in self.specs if s.xy is not None}

    @property
    def fields(self) -> list[str]:
        """The labels of the plotted fields the panel lists (every series but the paths)."""
        return [s.label for s in self.specs if s.xy is None]

    @property
    def lanes(self) -> int:
        """Lanes drawn (0 before `start`; 1 for an unbatched run; at most `MAX_LANES`)."""
        return self._lanes

    @property
    def work(self) -> int:
        """Values reduced and buckets touched so far, all series together."""
        return sum(s.work for s in self.series.values()) + sum(e.work for e in self.extras.values())

    def start(self, max_points: int | None, lane_names: Sequence[str] = ()) -> bool:
        """Plan the series and make them once the run's lane count is known (its first rows
        arrived), ``max_points`` points per line (None: the default, `._points`); False while
        nothing arrived yet. ``lane_names`` (one per lane) are what ``lanes=`` may name lanes
        by."""
        if self.started:
            return True
        counts = self.run.counts
        if not counts:
            return False
        counters = self._step_counters(min(len(counts), MAX_LANES))
        plan = make_plan(self.run.layout, self.choice, self.run.lanes, counters)
        self.specs, self.notes = plan.specs, plan.notes
        self.started = True
        if not self.specs:
            return True
        total = len(counts) if self.run.lanes is not None else 0
        self.drawn_lanes, notes, ranked = pick_lanes(total, self.choice.lanes, lane_names)
        self._stride = self.drawn_lanes if ranked and self._ranked_by() is not None else ()
        self._lanes = len(self.drawn_lanes)
        self.notes += tuple(notes)
        # The lanes of a mark share one message. A run past MAX_LANES draws up to MAX_LANES
        # lanes, however many its stride and roles make now.
        self._budget = line_points(max_points, MAX_LANES if total > self._lanes else self._lanes)
        budget = self._budget[0]
        for lane in range(self._lanes):
            self._put(lane, self._new_series())
        for i, spec in enumerate(self.specs):
            if spec.under == "band":
                self.extras[i] = BandSeries(budget)
            elif spec.under == "heatmap":
                self.extras[i] = HistogramBuckets()
            elif (total > self._lanes or total > LEAD_LANES) and spec.xy is None:
                # every lane's band and its median: past LEAD_LANES what the sweep is read by,
                # past MAX_LANES the lanes not drawn too
                self.lane_bands[i] = BandSeries(band_points(max_points), median=True)
                self.lane_spreads[i] = LaneSpread(total)
        if self._stride:
            self._rank()
        return True

    def _new_series(self) -> list[Any]:
        """One lane's series, one per spec (empty: `ingest` reads all of the lane's rows)."""
        line, path = self._budget
        return [PathSeries(path) if s.xy is not None else LaneSeries(line) for s in self.specs]

    def _put(self, slot: int, series: list[Any]) -> None:
        for i, s in enumerate(series):
            self.series[i, slot] = s

    def _ranked_by(self) -> tuple[int, str] | None:
        """The spec whose last values rank the lanes and whether its best is its lowest or
        highest: the `goal`'s (its default's when the field it names is not plotted; None:
        only paths are plotted, so a ranked run keeps its stride alone)."""
        return self.goal.or_default(self.specs)

    def set_goal(self, goal: Goal) -> None:
        """Rank the lanes by ``goal`` from now on: their roles chosen anew at once."""
        if goal != self.goal:
            self.goal = goal
            if self._stride:
                self._rank()

    def _rank(self) -> None:
        """Choose the lanes drawn anew from every lane's last row (`._lanes.ranked_lanes`):
        one gather, no loop over lanes. A lane newly drawn gets series of its own that `ingest`
        fills from its first row (or a spare one that catches up), so its line is whole."""
        ranked = self._ranked_by()
        if ranked is None:
            return
        i, best = ranked
        has, latest = self.reads.latest()
        last = self.specs[i].values(latest)
        lanes, roles = ranked_lanes(self._stride, has, last, best, self._gone(latest))
        if len(self._stride) == len(has) and not self.goal.telling(self.specs):
            roles = {}  # (every lane drawn, no loss nor accuracy: no lane is "best")
        if lanes == self.drawn_lanes and roles == self.lane_roles:
            return
        self.lane_roles, self.lanes_version = roles, self.lanes_version + 1
        if lanes == self.drawn_lanes:
            return
        old = {
            lane: [self.series.pop((k, j)) for k in range(len(self.specs))]
            for j, lane in enumerate(self.drawn_lanes)
        }
        for j, lane in enumerate(lanes):
            kept = old.pop(lane, None) or self._spare.pop(lane, None)
            self._put(j, kept or self._new_series())
        self._spare.update(old)  # the lanes that left, the latest last
        for lane in list(self._spare)[: max(0, len(self._spare) - SPARE_LANES)]:
            del self._spare[lane]
        self.drawn_lanes, self._lanes = lanes, len(lanes)

    def lane_names(self, every: Sequence[str]) -> tuple[list[str], list[str]]:
        """The drawn lanes' names (of ``every`` lane's) and why each is drawn (`lane_roles`;
        "" for a lane of the stride or of ``lanes=``)."""
        return [every[k] for k in self.drawn_lanes], [
            self.lane_roles.get(k, "") for k in self.drawn_lanes
        ]

    def _step_counters(self, lanes: int) -> tuple[int, ...]:
        """The run's step counters (`Layout.step_counters`) whose rows so far are the steps in
        every lane drawn: the run's own (0, 1, 2, ...) or the steps drawn (from `x0`: a
        continued run's counter going on). A loop adds one to a counter each step, but from
        any start: a carry ``k`` from 5 is a value of its own, not the step axis, so drawn."""
        counters = self.run.layout.step_counters
        if not counters:
            return ()
        rows = [self.run.rows_since(lane, 0) for lane in range(lanes)]

        def counts_steps(i: int) -> bool:
            for lane_rows in rows:
                values = np.asarray(lane_rows[i]).reshape(-1)
                steps = np.arange(values.size)
                if not (np.array_equal(values, steps) or np.array_equal(values, steps + self.x0)):
                    return False
            return True

        return tuple(i for i in counters if counts_steps(i))

    def ingest(self) -> None:
        """Reduce the rows received since the last call (each row is read once)."""
        counts = self.run.counts
        if not self.series or not counts:
            return
        self.last_step = max(counts) - 1
        if self._stride:
            self._rank()
        if self.run.lanes is not None and not self.extras:  # a sweep of plain lines
            self._ingest_lines(np.asarray(counts))
        else:
            self._ingest_each_lane()
        if self.lane_bands:
            ingest_lane_bands(self, np.asarray(counts))

    def _ingest_lines(self, counts: np.ndarray) -> None:
        """The drawn lanes' new rows, a block at a time: lanes with as many rows reduced and
        as many received (lanes in lockstep: all of them) in one read and one conversion per
        series, not one per lane and series."""
        groups: dict[tuple[int, int], list[int]] = {}
        for j, lane in enumerate(self.drawn_lanes):  # j: the drawn lane's place
            start, stop = self.series[0, j].size, int(counts[lane])
            if stop > start:
                groups.setdefault((start, stop), []).append(j)
        for (start, stop), slots in groups.items():
            slots.sort(key=lambda j: self.drawn_lanes[j])  # a block reads ascending lanes
            block = self.reads.block([self.drawn_lanes[j] for j in slots], start, stop)
            flat = [leaf.reshape(-1, *leaf.shape[2:]) for leaf in block]
            for i, spec in enumerate(self.specs):
                values = spec.values(flat)
                values = values.reshape(len(slots), stop - start, *values.shape[1:])
                extend_lines([self.series[i, j] for j in slots], values)

    def _ingest_each_lane(self) -> None:
        """The drawn lanes' new rows, lane by lane: an unbatched run, or series drawn over a
        band or a heatmap of their own (a vector's components)."""
        # A histogram pools the lanes: the rows of lanes at the same steps are counted at once.
        pooled: dict[tuple[int, int, int], list[np.ndarray]] = {}
        for j, lane in enumerate(self.drawn_lanes):  # j: the drawn lane's place
            # Every series of a lane has the same length: read only the rows that are new.
            start = self.series[0, j].size
            rows = self.reads.rows_since(lane, start)
            if not len(rows[0]):
                continue
            for i, spec in enumerate(self.specs):
                extra = self.extras.get(i)
                if isinstance(extra, BandSeries):  # (unbatched only) its median, of one sort
                    values = extra.extend(spec.components(rows))
                else:
                    values = spec.values(rows)
                # (of a ranked run, the stride's lanes only: the role lanes come and go, and
                # their rows from the first would be counted again)
                if isinstance(extra, HistogramBuckets) and (
                    not self._stride or lane in self._stride
                ):
                    components = spec.components(rows)
                    pooled.setdefault((i, start, len(components)), []).append(components)
                self.series[i, j].extend(values)
        for (i, start, _), parts in pooled.items():
            # pooled for a series whose extra is a HistogramBuckets only (above)
            buckets = cast(HistogramBuckets, self.extras[i])
            buckets.add(start, np.concatenate(parts, axis=1))

    def lines(self) -> list[tuple[list[np.ndarray], list[np.ndarray], tuple[float, float, float]]]:
        """Per series: the points of each drawn lane (steps from `x0`; a path's x values) and
        their joint extent."""
        out = []
        for i in range(len(self.specs)):
            xs, ys, lo, hi, lo_pos = [], [], np.inf, -np.inf, np.inf
            for lane in range(self.lanes):
                x, y, (a, b, c) = self.series[i, lane].points(self.x0)
                xs.append(x)
                ys.append(y)
                lo, hi, lo_pos = min(lo, a), max(hi, b), min(lo_pos, c)
            out.append((xs, ys, (lo, hi, lo_pos)))
        return out

    def spreads(self, window: list[Any] | None = None) -> list[Spread | None]:
        """Per series: each lane's extent (`._sweep.Spread`; None for a path or an unbatched
        run), over the whole run, or of the points of a window's lines ``window``."""
        return whole_spreads(self) if window is None else window_spreads(self, window)

    def diverged_ends(self) -> list[np.ndarray]:
        """Per series: ``(n, 2)`` step and value of the last finite point of each drawn lane
        whose line ends at NaN or ±inf (where the chart flags it; none for a path)."""
        out = []
        for i, spec in enumerate(self.specs):
            ends = [
                self.series[i, j].end
                for j in range(self.lanes)
                if spec.xy is None and self.series[i, j].diverged and self.series[i, j].end[0] >= 0
            ]
            points = np.array(ends, np.float64).reshape(-1, 2)
            points[:, 0] += self.x0
            out.append(points)
        return out

    def extras_by_label(self) -> dict[str, BandSeries | HistogramBuckets]:
        """What each vector median (and, past `MAX_LANES`, each field) is drawn over, by label."""
        both: list[tuple[int, BandSeries | HistogramBuckets]] = [*self.extras.items()]
        return {self.specs[i].label: extra for i, extra in [*both, *self.lane_bands.items()]}

    def last_values(self) -> list[list[float]]:
        """Per field of `fields`: the latest value of each lane that has rows (every lane of a
        batched run, drawn or not: the panel's median, range and counts are over all)."""
        if self.run.lanes is not None and self.specs:
            has, latest = self.reads.latest()
            rows = [leaf[has] for leaf in latest]
            return [spec.values(rows).tolist() for spec in self.specs if spec.xy is None]
        return [
            [self.series[i, lane].last for lane in range(self.lanes) if self.series[i, lane].size]
            for i, spec in enumerate(self.specs)
            if spec.xy is None
        ]

    def diverged_lanes(self) -> list[int]:
        """The lanes of a batched run whose latest value of a plotted field is NaN or
        infinite (counted as diverged, whatever their loop's status)."""
        if self.run.lanes is None or not self.specs:
            return []
        has, latest = self.reads.latest()
        return np.flatnonzero(self._gone(latest) & has).tolist()

    def _gone(self, latest: list[np.ndarray]) -> np.ndarray:
        """Per lane of ``latest`` (each lane's last row), whether a plotted field is NaN or
        infinite there."""
        bad = np.zeros(len(latest[0]) if latest else 0, bool)
        for spec in self.specs:
            if spec.xy is None:
                bad |= ~np.isfinite(spec.values(latest))
        return bad
