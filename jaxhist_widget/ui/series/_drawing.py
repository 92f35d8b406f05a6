"""What a `LivePlot` draws of one run: its series per lane, read from the run as rows arrive.

Numpy only (no widgets): a `RunDrawing` plans what to draw of a run when its first rows arrive
(`._plan`), reads the rows it received since the last update, reduces them into its series
(`LaneSeries`, `PathSeries`, and the bands and histograms of vectors), and hands out each
series' lines (for the live figure, `jaxhist_widget.ui.figure`) and latest values (for the
panel, `jaxhist_widget.ui.panel.panel_state`). `LaneNames` names a run's vmap lanes.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..._host import Run
from ..look import shown_text
from ..reduce import BandSeries, HistogramBuckets, LaneSeries, PathSeries
from ._choice import PlotChoice
from ._plan import Spec
from ._plan import plan as make_plan

__all__ = ["MARK_POINTS", "MAX_LANES", "LaneNames", "RunDrawing", "check_lane_labels"]

#: Lanes drawn per field under vmap (all lanes are recorded; `history` has them all).
MAX_LANES = 64
#: Points one mark (one field, all its lanes) sends per update: 4000 (int32 step, float64
#: value) pairs are 48 KB, so no widget message exceeds 64 KB (steps past 2**31 travel as
#: float64: 64,000 bytes). Under vmap the lanes share it (62 points each for 64 lanes).
MARK_POINTS = 4000


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
    started: bool = field(default=False, init=False)
    _lanes: int = field(default=0, init=False, repr=False)

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

    def start(self, max_points: int) -> bool:
        """Plan the series and make them once the run's lane count is known (its first rows
        arrived), at most ``max_points`` points per line; False while nothing arrived yet."""
        if self.started:
            return True
        counts = self.run.counts
        if not counts:
            return False
        counters = self._step_counters(min(len(counts), MAX_LANES))
        plan = make_plan(self.run.layout, self.choice, self.run.lanes, counters)
        self.specs, self.notes = plan.specs, plan.notes
        self.started = True
        self._lanes = min(len(counts), MAX_LANES) if self.specs else 0
        if not self.specs:
            return True
        # The lanes of a mark share one message: at most MARK_POINTS points, 48 KB (a path's
        # points are two float64, so three quarters as many).
        budget = min(max_points, MARK_POINTS // self._lanes)
        path_budget = max(8, min(max_points, 3 * MARK_POINTS // 4 // self._lanes))
        for i, spec in enumerate(self.specs):
            for lane in range(self._lanes):
                path = spec.xy is not None
                self.series[i, lane] = PathSeries(path_budget) if path else LaneSeries(budget)
            if spec.under == "band":
                self.extras[i] = BandSeries(budget)
            elif spec.under == "heatmap":
                self.extras[i] = HistogramBuckets()
        return True

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
        # A histogram pools the lanes: the rows of lanes at the same steps are counted at once.
        pooled: dict[tuple[int, int, int], list[np.ndarray]] = {}
        for lane in range(self.lanes):
            # Every series of a lane has the same length: read only the rows that are new.
            start = self.series[0, lane].size
            rows = self.run.rows_since(lane, start)
            if not len(rows[0]):
                continue
            for i, spec in enumerate(self.specs):
                extra = self.extras.get(i)
                if isinstance(extra, BandSeries):  # (unbatched only) its median, of one sort
                    values = extra.extend(spec.components(rows))
                else:
                    values = spec.values(rows)
                if isinstance(extra, HistogramBuckets):
                    components = spec.components(rows)
                    pooled.setdefault((i, start, len(components)), []).append(components)
                self.series[i, lane].extend(values)
        for (i, start, _), values in pooled.items():
            self.extras[i].add(start, np.concatenate(values, axis=1))

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

    def extras_by_label(self) -> dict[str, BandSeries | HistogramBuckets]:
        """What each vector median is drawn over, by the median's label."""
        return {self.specs[i].label: extra for i, extra in self.extras.items()}

    def last_values(self) -> list[list[float]]:
        """Per field of `fields`: the latest value of each drawn lane that has rows."""
        return [
            [self.series[i, lane].last for lane in range(self.lanes) if self.series[i, lane].size]
            for i, spec in enumerate(self.specs)
            if spec.xy is None
        ]


class LaneNames:
    """Names of a run's vmap lanes: ``LivePlot(lane_labels=...)``, or ``lane k`` when none were
    given or their number does not match the run's lanes (warned once per run)."""

    def __init__(self, labels: Any) -> None:
        self.labels = check_lane_labels(labels)
        self._checked: Run | None = None  # the run whose lane count was checked
        self._ok = True

    def __call__(self, run: Run) -> list[str]:
        lanes = run.lanes or 0
        labels = self.labels
        if not lanes:  # an unbatched run names no lane; the labels wait for a vmapped one
            return []
        if labels is not None and self._checked is not run:
            self._checked = run
            self._ok = len(labels) == lanes
            if not self._ok:
                warnings.warn(
                    f"LivePlot(lane_labels=...) has {len(labels)} labels but the run has "
                    f"{lanes} vmap lanes; lanes are named 'lane k'. Pass one label per lane.",
                    UserWarning,
                    stacklevel=3,
                )
        if labels is not None and self._ok:
            return list(labels)
        return [f"lane {k}" for k in range(lanes)]


def check_lane_labels(labels: Any) -> tuple[str, ...] | None:
    """Validate ``LivePlot(lane_labels=...)``: None, or a sequence of str."""
    if labels is None:
        return None
    if isinstance(labels, (str, bytes)) or not isinstance(labels, Sequence):
        raise TypeError(
            "lane_labels must be a sequence of str, one per vmap lane (e.g. "
            f"[f'lr={{lr}}' for lr in lrs]), got {labels!r}."
        )
    bad = [x for x in labels if not isinstance(x, str)]
    if bad:
        raise TypeError(
            f"lane_labels must hold str only, got {bad[0]!r}; e.g. [str(v) for v in values]."
        )
    return tuple(map(shown_text, labels))  # any str, drawn as shown
