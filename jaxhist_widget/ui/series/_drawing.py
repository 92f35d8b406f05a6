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
    #: The run's lanes drawn as lines, in order (`pick_lanes`); ``(0,)`` for an unbatched run.
    drawn_lanes: tuple[int, ...] = field(default=(), init=False)
    #: ``spec -> BandSeries``: past `MAX_LANES`, a field's spread over every lane, per step.
    lane_bands: dict[int, BandSeries] = field(default_factory=dict, init=False)
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

    def start(self, max_points: int, lane_names: Sequence[str] = ()) -> bool:
        """Plan the series and make them once the run's lane count is known (its first rows
        arrived), at most ``max_points`` points per line; False while nothing arrived yet.
        ``lane_names`` (one per lane) are what ``lanes=`` may name lanes by."""
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
        self.drawn_lanes, notes = pick_lanes(total, self.choice.lanes, lane_names)
        self._lanes = len(self.drawn_lanes)
        self.notes += tuple(notes)
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
            elif total > self._lanes and spec.xy is None:  # the lanes not drawn: a band
                self.lane_bands[i] = BandSeries(min(max_points, MARK_POINTS // 2))
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
        for j, lane in enumerate(self.drawn_lanes):  # j: the drawn lane's place
            # Every series of a lane has the same length: read only the rows that are new.
            start = self.series[0, j].size
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
                self.series[i, j].extend(values)
        for (i, start, _), values in pooled.items():
            self.extras[i].add(start, np.concatenate(values, axis=1))
        if self.lane_bands:
            self._ingest_lane_bands(np.asarray(counts))

    def _ingest_lane_bands(self, counts: np.ndarray) -> None:
        """Extend the bands over every lane with the steps new since the last call: per step,
        the spread of the lanes that have it (a lane that ended counts no more). One block
        read per row count (the lanes step together: a few), no loop over lanes."""
        start = next(iter(self.lane_bands.values())).size
        stop = int(counts.max())
        if stop <= start:
            return
        values = {i: np.full((len(counts), stop - start), np.nan) for i in self.lane_bands}
        for c in np.unique(counts[counts > start]).tolist():
            lanes = np.flatnonzero(counts == c)
            n = c - start
            block = self.run.block(lanes, start, c)
            rows = [r.reshape(len(lanes) * n, *r.shape[2:]) for r in block]
            for i in self.lane_bands:
                values[i][lanes, :n] = self.specs[i].values(rows).reshape(len(lanes), n)
        for i, band in self.lane_bands.items():
            band.extend(values[i].T)

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
        """What each vector median (and, past `MAX_LANES`, each field) is drawn over, by its
        label."""
        out: dict[str, BandSeries | HistogramBuckets] = {
            self.specs[i].label: extra for i, extra in self.extras.items()
        }
        return out | {self.specs[i].label: band for i, band in self.lane_bands.items()}

    def last_values(self) -> list[list[float]]:
        """Per field of `fields`: the latest value of each lane that has rows (every lane of a
        batched run, drawn or not: the panel's median, range and counts are over all)."""
        if self.run.lanes is not None and self.specs:
            has, latest = self.run.latest()
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
        has, latest = self.run.latest()
        bad = np.zeros(len(has), bool)
        for spec in self.specs:
            if spec.xy is None:
                bad |= ~np.isfinite(spec.values(latest))
        return np.flatnonzero(bad & has).tolist()


def pick_lanes(
    total: int, chosen: Sequence[int | str] | None, names: Sequence[str]
) -> tuple[tuple[int, ...], list[str]]:
    """The lanes of a run of ``total`` lanes (0: unbatched) drawn as lines, and notes: those
    ``chosen`` (``lanes=``: indices, negative from the end, or names), else every lane up to
    `MAX_LANES`, else `MAX_LANES` lanes at an even stride (the first and the last among them).

    >>> pick_lanes(4096, None, [])[0][:3], pick_lanes(4096, [5, -1, "b"], ["a", "b"])[0]
    ((0, 65, 130), (5, 4095, 1))
    """
    if not total:
        return (0,), []
    notes = []
    picked: list[int] = []
    for lane in chosen or ():
        k = names.index(lane) if isinstance(lane, str) and lane in names else lane
        if isinstance(k, str) or not -total <= k < total:
            notes.append(f"lanes: no lane {lane!r} in this run of {total} lanes; not drawn.")
        elif k % total not in picked:
            picked.append(k % total)
    if len(picked) > MAX_LANES:
        notes.append(f"lanes: {len(picked)} lanes named; the first {MAX_LANES} are drawn.")
        picked = picked[:MAX_LANES]
    if not picked:
        if total <= MAX_LANES:
            return tuple(range(total)), notes
        picked = np.unique(np.linspace(0, total - 1, MAX_LANES).round().astype(np.int64)).tolist()
        notes.append(
            f"{len(picked)} of {total} lanes drawn as lines (an even stride; lanes=[...] picks "
            "them, by index or label), over the band of every lane's quartiles and min–max."
        )
    elif len(picked) < total:
        notes.append(f"{len(picked)} of {total} lanes drawn as lines, over every lane's band.")
    return tuple(picked), notes


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
