"""`ChartGrid`: the charts of a `LivePlot`, one per plotted metric, in a grid that reflows.

With ``charts="per_field"`` (the default) every plotted field gets its own
chart (a `LiveFigure`: its own auto-scaled y axis, titled with the field's name); the components
of one vector leaf share a chart; a run of more than `MAX_CHARTS` such charts is drawn on one.
``charts="shared"`` draws every field on one chart. All charts show the same step range; each
chart has its own log toggle (`set_log_charts`), the panel's sets all of them (`set_log`); a
chart of several series of its own (a vector's components, median, band) names them right under
it (`._chart_legends`), and one legend row under the grid names what the charts share (lanes,
flags).

It answers the calls a `LivePlot` makes of a single figure (`add_run`, `add_marks`,
`set_lines`, `restyle`, `drop_runs`, `set_hidden`, `set_smoothing`, `update_scales`, `set_log`,
`set_width`, `set_x_time`) and hands each chart its share of the fields; a run has one name
and one colour (the plot's), in every chart. Its parts: the time axis (`._time_axis.TimeAxis`:
what the x axis counts, each run's steps placed on it) and the scales (`._grid_scales`), which
it hands the charts.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

import bqplot
import ipywidgets
import numpy as np

from ..look import (
    CHART_GAP_PX,
    CHART_HEIGHT_PX,
    CHART_MIN_PX,
    LegendLine,
    chart_columns,
    field_colors,
)
from ._chart import Lines, LiveFigure
from ._chart_legends import ChartCells, shown_legends
from ._extras import make_extra, notes_html
from ._grid_scales import GridScales, log_notes
from ._legend import grid_legend, legend_html
from ._path_chart import PathFigure
from ._run_marks import Key
from ._sweep import flag_ends, rename_lanes
from ._time_axis import Clock, TimeAxis

__all__ = ["CHART_MODES", "EMPTY_HINT", "MAX_CHARTS", "ChartGrid", "check_charts"]

#: What a plot with no run says in its legend row, under its (empty) chart.
EMPTY_HINT = (
    "No run yet: run a loop (jhw.while_loop, jhw.scan, jhw.log, a library solver) inside "
    "`with live:`, live.run(fn, ...) or a %%jaxhist cell, and it is drawn here."
)

#: Values of ``LivePlot(charts=...)``.
CHART_MODES = ("per_field", "shared")
#: Most charts a run's fields get: a run plotting more metrics draws them all on one chart (a
#: grid of dozens of small charts reads worse than one busy chart with a legend).
MAX_CHARTS = 12


def check_charts(charts: object) -> str:
    """``charts`` if it is one of `CHART_MODES`, else a ValueError naming them."""
    if not isinstance(charts, str) or charts not in CHART_MODES:
        raise ValueError(
            f"charts must be 'per_field' (one chart per plotted field, the default) or "
            f"'shared' (every field on one chart), got {charts!r}."
        )
    return charts


class ChartGrid:
    """The charts of one `LivePlot` and what they draw.

    Attributes
    ----------
    box
        The grid widget holding the shown charts' cells, each a figure with its own legend
        under it (a CSS grid: as many columns of at least `CHART_MIN_PX` as the width allows).
    legend
        One HTML row under the grid: what the charts share (lanes, flags), or what the one
        chart shown names.
    charts
        The charts, by key (a field's label, a vector leaf's name, or ``""`` when shared).
    time
        The x axis: what it counts, each run's steps placed on it.
    scales
        The charts' scales: log y, log steps, outliers, the window of steps.
    """

    def __init__(self, log_y: bool | None, charts: str = "per_field") -> None:
        self.mode = check_charts(charts)
        self.charts: dict[str, LiveFigure] = {}
        self.time = TimeAxis()
        self.scales = GridScales(self.time, log_y)
        self._runs: dict[int, int] = {}  # run number -> its first step (x0)
        self._looks: dict[int, tuple[str, str]] = {}  # run number -> its name and colour
        self.smoothing = False
        self._groups: dict[int, list[tuple[str, list[int]]]] = {}  # run -> (key, field indices)
        self._order: list[str] = []  # every label seen, in first-seen order (legend order)
        self._fields: dict[int, list[str]] = {}  # run -> its marks' labels
        self._chart_labels: dict[str, list[str]] = {}  # chart key -> its labels, first seen first
        self._paths: dict[str, str] = {}  # path chart key -> the label of its x series
        self._notes: dict[int, tuple[str, ...]] = {}  # run -> what it does not draw as asked
        #: The plot's goal said first in the legend row: the run, its lane named best and the
        #: text (``best = lowest loss: lr=0.01 (0.012)``), or None (`set_goal`).
        self._goal: tuple[int, int, str] | None = None
        self._width: float | None = None
        self.box = ipywidgets.GridBox(
            layout=ipywidgets.Layout(
                width="100%",
                grid_template_columns=f"repeat(auto-fit, minmax(min({CHART_MIN_PX}px, 100%), 1fr))",
                grid_gap=f"0 {CHART_GAP_PX}px",
            )
        )
        self.box.add_class("jhw-charts")
        self._cells = ChartCells()
        self.legend = ipywidgets.HTML(layout=ipywidgets.Layout(width="auto"))
        self.legend.add_class("jhw-legend")
        # Before any run one empty chart holds the place (and reports the width of a chart),
        # and the legend row says what to do.
        self._blank = self._new_chart("")
        self.show_charts()
        self._update_legend()

    # ------------------------------------------------------------------ views
    @property
    def figures(self) -> list[bqplot.Figure]:
        """The figures shown, in grid order."""
        return [ChartCells.figure(cell) for cell in self.box.children]

    @property
    def drawing(self) -> bool:
        """Whether a chart draws a run (else the plot shows no chart, only what to do)."""
        return any(c.has_marks() for c in self._all())

    @property
    def shown(self) -> list[LiveFigure]:
        """The charts shown, in grid order."""
        shown = [c for c in self.charts.values() if c.has_marks()]
        return shown or [self._blank if not self.charts else next(iter(self.charts.values()))]

    @property
    def log(self) -> bool:
        """Whether a chart made now starts on a log y axis (`set_log`; the panel's "log y"
        follows the charts' own toggles: it sets this too)."""
        return self.scales.log

    @log.setter
    def log(self, on: bool) -> None:
        self.scales.log = bool(on)

    @property
    def x_time(self) -> str:
        """What the x axis counts (`..look.X_AXES`): `set_x_time`."""
        return self.time.mode

    def groups(self, number: int) -> list[tuple[str, list[int]]]:
        """Run ``number``'s charts: each one's key and the indices (`add_marks` order) of the
        run's fields drawn on it."""
        return self._groups.get(number, [])

    def notes_of(self, key: int) -> tuple[str, ...]:
        """The notes said under the charts for run ``key`` (`set_notes`)."""
        return self._notes.get(key, ())

    # ------------------------------------------------------------------ runs
    def add_run(self, number: int, x0: int, name: str, color: str) -> None:
        """Draw run ``number`` (no marks until `add_marks`), its steps starting at ``x0``,
        called ``name`` and drawn in ``color`` in every chart (the plot names and colours its
        runs: the run list shows the same)."""
        self._looks[number] = (name, color)
        self._runs[number] = x0
        self.time.add_run(number, x0)
        for chart in self._all():
            chart.add_run(number, x0, name, color)

    def add_marks(
        self,
        number: int,
        fields: Sequence[str],
        lane_names: Sequence[str] | None = None,
        lanes: int = 0,
        *,
        keys: Sequence[str] | None = None,
        paths: Mapping[str, str] | None = None,
    ) -> None:
        """Create run ``number``'s marks: field ``fields[i]`` on chart ``keys[i]`` (default: its
        own label; every field on one chart when shared). ``paths``: the keys of path charts
        (a series against another, never shared), with the label of their x series."""
        fields = list(fields)
        for label in fields:
            if label not in self._order:
                self._order.append(label)
        paths = dict(paths or {})
        self._paths.update(paths)
        keys = list(fields if keys is None else keys)
        steps = [k for k in keys if k not in paths]
        if self.mode == "shared" or len(set(steps)) > MAX_CHARTS:
            keys = [k if k in paths else "" for k in keys]
        self._fields[number] = fields
        groups: dict[str, list[int]] = {}
        for i, key in enumerate(keys):
            groups.setdefault(key, []).append(i)
        self._groups[number] = list(groups.items())
        for key, idx in groups.items():
            seen = self._chart_labels.setdefault(key, [])
            seen += [fields[i] for i in idx if fields[i] not in seen]
        for key, idx in groups.items():
            chart = self._chart(key)
            sub = [fields[i] for i in idx]
            chart.add_marks(
                number, sub, lane_names, lanes, colors=[self._color(key, f) for f in sub]
            )
        self.show_charts()

    def _color(self, key: str, label: str) -> str:
        """The colour of series ``label`` on chart ``key``: the chart's (by the charts' order)
        when it shows one series, else the series' by its order on the chart, so that the
        components of a vector get the palette's colours, each its own."""
        labels = self._chart_labels[key]
        if len(labels) == 1:
            keys = list(self._chart_labels)
            return field_colors(keys)[keys.index(key)]
        return field_colors(labels)[labels.index(label)]

    def add_extras(self, number: int, extras: Mapping[str, object], x0: int = 0) -> None:
        """Draw what run ``number``'s vector medians are drawn over (``extras``: by the
        median's label, a `BandSeries` or `HistogramBuckets`), on the median's chart and in
        its color."""
        fields = self._fields.get(number, [])
        for key, idx in self._groups.get(number, []):
            for i in idx:
                label = fields[i]
                if label in extras:
                    extra = make_extra(extras[label], label, number, self._color(key, label), x0)
                    extra.x_map = lambda steps, n=number: self.time.x_of(n, steps)
                    self.charts[key].add_extra(number, extra)
        self.show_charts()

    def set_notes(self, number: int, notes: Sequence[str]) -> None:
        """What run ``number`` does not draw as asked, said under the charts."""
        self._notes[number] = tuple(notes)
        self._update_legend()

    def set_goal(self, goal: tuple[int, int, str] | None) -> None:
        """Say the plot's goal first in the legend row: run number, the lane it names best
        (the entry's star is in that lane's colour) and the text; None: nothing."""
        if goal != self._goal:
            self._goal = goal
            self._update_legend()

    def _goal_lines(self) -> list[LegendLine]:
        """The goal's legend entry (`set_goal`), its star in the best lane's colour where a
        chart draws that lane (else the text's)."""
        if self._goal is None:
            return []
        number, lane, text = self._goal
        color = "currentColor"
        for chart in self._all():
            r = chart._runs.get(number)
            if r is not None and r.marks and lane in r.lane_ids and len(r.marks[0].colors):
                colors = list(r.marks[0].colors)
                color = colors[r.lane_ids.index(lane) % len(colors)]
                break
        return [LegendLine(text, None, color, "goal", 1.0)]

    @property
    def notes(self) -> list[str]:
        """The notes of the drawn runs, each once."""
        return list(dict.fromkeys(n for notes in self._notes.values() for n in notes))

    @property
    def hints(self) -> list[str]:
        """What the notes under the charts add: the charts offered a log axis (`log_hints`)."""
        return log_notes(self.log_hints)

    def set_lines(self, number: int, lines: Lines, last_step: int) -> None:
        """Set the points of run ``number``'s marks, one ``(xs, ys, extent)`` per field in the
        order `add_marks` was given them."""
        lines = list(lines)
        for key, idx in self._groups.get(number, []):
            chosen = [self._placed(number, key, lines[i]) for i in idx]
            self.charts[key].set_lines(number, chosen, last_step)
        for chart in self._all():  # the charts without a field of this run still count its steps
            if number in chart.runs:
                chart.runs[number].last_step = last_step

    def set_spreads(self, number: int, spreads: Sequence[object]) -> None:
        """Each lane's extent per field of run ``number`` (`add_marks` order; `._sweep`)."""
        spreads = list(spreads)
        for key, idx in self._groups.get(number, []):
            self.charts[key].set_spreads(number, [spreads[i] for i in idx])

    def labels_on(self, number: int, key: str) -> list[str]:
        """The labels of run ``number``'s series drawn on chart ``key`` (a title), in order."""
        fields = self._fields.get(number, [])
        return [fields[i] for k, idx in self._groups.get(number, []) if k == key for i in idx]

    def set_lane_names(
        self,
        number: int,
        names: Sequence[str],
        roles: Sequence[str],
        ids: Sequence[int] = (),
        hidden: Collection[int] = (),
        faint: bool = False,
    ) -> None:
        """Name run ``number``'s drawn lanes anew (they were chosen anew, or some hidden),
        each drawn for ``roles`` ("" for none: ``lane 17 (best)``), with their lane indices
        ``ids`` and the ``hidden`` ones (the legend's toggles), those drawn for no role
        ``faint`` (a sweep past `..series.LEAD_LANES`), on every chart."""
        for chart in self._all():
            rename_lanes(chart, number, names, roles, ids, hidden, faint)
        self._update_legend()

    def set_flags(self, number: int, flags: Sequence[np.ndarray]) -> None:
        """Flag the drawn lines of run ``number`` that end at NaN or ±inf: per field, in
        `add_marks` order, ``(n, 2)`` steps and values of their last finite points."""
        for key, idx in self._groups.get(number, []):
            chosen = [
                flags[i] if key in self._paths else self.time.place_flags(number, flags[i])
                for i in idx
            ]
            flag_ends(self.charts[key], number, chosen)
        self._update_legend()  # (a band's left-out count, too: it changes with the rows)

    def restyle(self) -> None:
        """Colour every run's lines anew (a run came or went), on every chart."""
        for chart in self._all():
            chart.restyle()
        self._update_legend()

    def set_hidden(self, numbers: Iterable[int]) -> None:
        """Hide exactly the runs ``numbers`` on every chart (scales follow at `update_scales`)."""
        numbers = set(numbers)
        for chart in self._all():
            chart.set_hidden(numbers)
        self._update_legend()

    def set_smoothing(self, on: bool) -> None:
        """Give every line a smoothed twin (`LiveFigure.set_smoothing`), or drop them."""
        self.smoothing = bool(on)
        for chart in self._all():
            chart.set_smoothing(self.smoothing)

    def set_smoothed_lines(
        self, number: int, lines: Sequence[tuple[list[np.ndarray], list[np.ndarray], object]]
    ) -> None:
        """The smoothed points of run ``number``'s fields, in `add_marks` order."""
        lines = list(lines)
        for key, idx in self._groups.get(number, []):
            chosen = [self._placed(number, key, lines[i]) for i in idx]
            self.charts[key].set_smoothed_lines(number, chosen)

    def drop_runs(self, numbers: Iterable[int]) -> None:
        """Stop drawing runs ``numbers``; a chart left without marks is hidden (kept for reuse)."""
        numbers = [n for n in numbers if n in self._runs]
        if not numbers:
            return
        for n in numbers:
            for held in (self._runs, self._looks, self._groups, self._fields):
                held.pop(n, None)
            self._notes.pop(n, None)
        self.time.drop_runs(numbers)
        for chart in self._all():
            chart.drop_runs(numbers)
        self.show_charts()

    def set_width(self, pixels: float) -> None:
        """The grid's width in a view (0: unknown): each chart's width follows from the
        columns it is laid out in, and its number of x ticks from that."""
        self._width = float(pixels) if pixels and pixels > 0 else None
        self._set_chart_widths()

    # ------------------------------------------------------------------ axes
    def set_clock(self, number: int, clock: Clock) -> None:
        """When run ``number``'s steps reached the host (`.TimeAxis.set_clock`)."""
        self.time.set_clock(number, clock)

    def set_x_time(self, mode: str) -> None:
        """What the x axis counts (`..look.X_AXES`): steps, seconds since each run's first
        row, or the wall clock. The lines are placed anew as they are next set (the plot
        redraws them); a band or heatmap at its next draw."""
        self.time.set_mode(mode, self._all())
        self.scales.fit_all_x(self._all())

    def x_of(self, number: int, steps: np.ndarray) -> np.ndarray:
        """Run ``number``'s ``steps`` as the x axis counts them (`.TimeAxis.x_of`)."""
        return self.time.x_of(number, steps)

    def set_window(self, steps: tuple[int, int] | None, zoomed: bool = False) -> None:
        """Show steps ``steps`` (first, last) only, spanned exactly when ``zoomed`` (a "last N
        steps" one is rounded out); None: every step. Scales follow at `update_scales`."""
        self.scales.set_window(steps, zoomed)

    def set_ignore_outliers(self, on: bool) -> None:
        """Fit each chart's y range to its drawn points without the extreme few percent
        (`..reduce.robust_extent`), or to all of them; scales follow at `update_scales`."""
        self.scales.set_ignore_outliers(on, self._all())

    def set_log(self, log: bool) -> None:
        """Switch every chart's y axis (and the charts made later) to a log (or linear) scale:
        the user's choice, which no chart's values change any more (`LiveFigure.auto_log`)."""
        self.scales.set_log(log, self._all())
        self.show_charts()

    def set_log_x(self, log: bool) -> None:
        """Put every chart's step axis on a log (or linear) scale; scales follow at
        `update_scales`. A time axis stays linear (the toggle applies to steps)."""
        self.scales.set_log_x(log, self._all())

    def set_log_charts(self, keys: Iterable[str]) -> None:
        """Put exactly the charts ``keys`` (titles, see `log_charts`) on a log y axis, the
        others on a linear one: each chart's own log toggle."""
        self.scales.set_log_charts(keys, self.charts)
        self.show_charts()

    @property
    def log_charts(self) -> list[str]:
        """The keys (titles) of the charts on a log y axis, in grid order."""
        return [k for k, c in self.charts.items() if c.log]

    @property
    def log_hints(self) -> dict[str, int]:
        """The charts on a linear axis whose values span decades (a loss falling from 1 to
        1e-9), by key (title): how many, offered a log axis by the chart's tools."""
        return self.scales.log_hints(self.charts)

    def log_state(self) -> dict[str, Any]:
        """The panel's traits that say the charts' y scales: `log_charts`, `log_hints`."""
        return {"log_charts": self.log_charts, "log_hints": self.log_hints}

    @property
    def every_log(self) -> bool:
        """Whether every chart shown is on a log y axis (the panel's "log y" then reads on)."""
        return all(c.log for c in self.shown)

    def update_scales(self, settled: bool = False) -> None:
        """Every chart's scales: one step range for all (a window's, if on), each its y range;
        ``settled``: every run drawn ended (the step axis fits them, without a live headroom)."""
        hints = self.log_hints if self.time.on_steps else None
        changed = self.scales.update(self._all(), settled)
        # a sweep's count of lanes that ran away (`._sweep.mark_runaways`), a log axis offered
        if hints is not None and (changed or self.log_hints != hints):
            self._update_legend()

    # ------------------------------------------------------------------ helpers
    def _all(self) -> list[LiveFigure]:
        return list(self.charts.values()) or [self._blank]

    def _new_chart(self, key: str) -> LiveFigure:
        if key in self._paths:  # its own x axis: the x series, not the steps
            chart: LiveFigure = PathFigure(
                self.scales.log, title=key, height=CHART_HEIGHT_PX, x_label=self._paths[key]
            )
        else:
            title = key if self.mode == "per_field" else ""
            titled = self.mode == "per_field"
            chart = LiveFigure(
                self.scales.log,
                title=title,
                height=CHART_HEIGHT_PX,
                titled=titled,
                x_scale=self.scales.x_scale,
            )
        self.scales.fit(chart)
        chart.smoothing = self.smoothing
        self.add_runs_to(chart)
        return chart

    def add_runs_to(self, chart: LiveFigure) -> None:
        """Draw the grid's runs on ``chart`` too (made now: it draws what every chart does)."""
        for number, x0 in self._runs.items():
            if number not in chart.runs:
                chart.add_run(number, x0, *self._looks[number])

    def _placed(self, number: int, key: str, line: tuple) -> tuple:
        """A series' line as the x axis counts it (a path chart's xs are its x series)."""
        return line if key in self._paths else self.time.place(number, line)

    def _chart(self, key: str) -> LiveFigure:
        """The chart of ``key``: the blank placeholder becomes the first one."""
        if key not in self.charts:
            if not self.charts and not self._blank.has_marks() and key not in self._paths:
                chart = self._blank
                chart.figure.title = key if self.mode == "per_field" else ""
                self.add_runs_to(chart)
            else:
                chart = self._new_chart(key)
            self.charts[key] = chart
        return self.charts[key]

    def show_charts(self) -> None:
        """List the shown charts' figures in the grid, size them, and redo the legend. Until a
        run draws something the one chart is hidden: axes from 0 to 1 would be invented. (Not
        ``display: none``: bqplot lays a figure out in a box of no size as negative rects.)"""
        cells = [self._cells.cell(c) for c in self.shown]
        if list(self.box.children) != cells:
            self.box.children = cells
        hidden = None if self.drawing else "hidden"
        if self.box.layout.visibility != hidden:
            with self.box.layout.hold_sync():
                self.box.layout.visibility = hidden
                self.box.layout.height = None if hidden is None else "0px"
                self.box.layout.overflow = None if hidden is None else "hidden"
        self._set_chart_widths()
        self._update_legend()

    def _set_chart_widths(self) -> None:
        shown = self.shown
        width = None
        if self._width is not None:
            cols = chart_columns(self._width, len(shown))
            width = (self._width - CHART_GAP_PX * (cols - 1)) / cols
        for chart in shown:
            chart.set_width(math.floor(width) if width else 0)

    def update_legends(self) -> None:
        """Set the legend row and each chart's own again, where what they name moved without
        a run coming, going or restyled (a hyperparameter chart's best lane, its colours)."""
        self._update_legend()

    def _update_legend(self) -> None:
        own, rest = shown_legends(self._all(), self.shown, self._order)
        self._cells.set_legends(self.shown, own)  # (none when no run is drawn)
        if not any(c.runs for c in self._all()):  # an empty plot: what to do, not a blank
            self.legend.value = notes_html([EMPTY_HINT], prefix="", fold=False)
            return
        notes = notes_html(self.notes + self.hints)
        self.legend.value = legend_html(*self.legend_entries(rest)) + notes

    def legend_entries(
        self, rest: list[Any] | None = None
    ) -> tuple[list[LegendLine], list[str], int, list[Key]]:
        """The grid's legend row (`._legend.grid_legend`): the goal first (`set_goal`), then
        what no chart names under itself (``rest``: `shown_legends`' second part)."""
        if rest is None:
            rest = shown_legends(self._all(), self.shown, self._order)[1]
        lines, names, lanes, keys = grid_legend(rest, self._order)
        return self._goal_lines() + lines, names, lanes, keys

    def chart_legends(self) -> list[list[LegendLine]]:
        """Per shown chart (grid order), the entries it names under itself."""
        return shown_legends(self._all(), self.shown, self._order)[0]
