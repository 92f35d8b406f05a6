"""`LiveFigure`: the bqplot figure of a `LivePlot`: its scales, axes, line marks and legend.

This module only draws. It owns the marks of every run it is told about (one
`Lines` mark per plotted series, one line per vmap lane inside it, and the extras drawn with
them: a vector's band or heatmap, a path's ends, `._extras`) and keeps, per run, what it needs
to place the axes: where the run's steps start and end and the extent of its values. It
computes no data (`jaxhist_widget.ui.series` does); its axes (limits, ticks, margins) are its
base `._axes.FigureAxes`, axis arithmetic and colours are the look's (`..look`), the legend's
HTML `._legend`'s.

A `LivePlot` talks to it by run number: `add_run`, `add_marks`, `add_extra`, `set_lines`,
`restyle`, `drop_runs`, `set_hidden`, `set_smoothing` / `set_smoothed_lines`, `update_scales`,
`set_log`. What it holds per run and the styling rule are in `._run_marks`.
"""

from __future__ import annotations

import math
import types
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import bqplot
import ipywidgets
import numpy as np

from ..look import (
    BOTTOM_PX,
    LEFT_PX,
    LINE_WIDTH,
    PALETTE,
    RAW_OPACITY,
    RIGHT_MARGIN_PX,
    TITLED_TOP_PX,
    TOP_PX,
    LegendLine,
    field_colors,
)
from ..reduce import LOG_DECADES, bulk_decades, decades
from ._axes import AXIS_TEXT, Extent, FigureAxes, Lines
from ._extras import extra_colors
from ._legend import legend_html
from ._run_marks import (
    OFF_AXIS,
    Key,
    RunMarks,
    chart_legend,
    off_axis,
    set_points,
    set_traits,
    styles,
)
from ._sweep import fitted_extent, mark_runaways

__all__ = ["Extent", "Lines", "LiveFigure"]


class LiveFigure(FigureAxes):
    """The figure widgets of one `LivePlot` and the marks of the runs it draws.

    Attributes
    ----------
    figure
        The bqplot `Figure` (axes and the marks of every drawn run).
    legend
        An HTML row under the figure: one entry per field (and kept run), plus the lanes.
    x_scale, y_lin, y_log
        The step scale and the two y scales; the y axis and the marks use `y_scale`.
    """

    def __init__(
        self,
        log_y: bool,
        title: str = "",
        height: int = 320,
        titled: bool | None = None,
        x_scale: bqplot.LinearScale | None = None,
    ) -> None:
        self.log = log_y
        self._runs: dict[int, RunMarks] = {}  # by run number, oldest first
        self.smoothing = False  # whether each line has a smoothed twin (`set_smoothing`)
        self.ignore_outliers = False  # the y range leaves out points far from the bulk
        #: Be on a log y axis while the values span `..reduce.LOG_DECADES` decades on a
        #: linear one (back under two), until the user toggles it (``LivePlot(log_y=None)``).
        self.auto_log = False
        #: The bound a line's value was last drawn at, far off a linear axis (`_put`), or None;
        #: and the extent of the values drawn since the points were last set again.
        self._clipped_at: tuple[float, float] | None = None
        self._sent: tuple[float, float] | None = None
        self.legend_changed = False  # since the grid last read it (a sweep's runaway count)
        self._width: float | None = None  # of the figure in a view, once one reported it
        # Charts of one grid share their step scale (one message per update, not one each).
        self.x_scale = x_scale if x_scale is not None else bqplot.LinearScale(min=0.0, max=1.0)
        self._own_x = x_scale is None
        # Limits from the start: fixed tick values on a scale without a domain sit at NaN.
        self.y_lin = bqplot.LinearScale(min=0.0, max=1.0)
        self.y_log = bqplot.LogScale(min=0.1, max=10.0)
        self.log_x = False  # the step axis is logarithmic (`set_x_scale`)
        self.x_axis = self._new_x_axis()
        self._extent: Extent = (math.inf, -math.inf, math.inf)  # of every shown line
        self.y_axis = self._new_y_axis()
        self.figure = bqplot.Figure(
            marks=[],
            axes=[self.x_axis, self.y_axis],
            animation_duration=0,  # transitions would lag behind 20 updates per second
            display_toolbar=False,  # its PanZoom would fight the zoom (a drag: js/charts/zoom.js)
            # The right margin holds half of the last x label (`_update_ticks` sizes it).
            fig_margin={
                # A chart titled later (``titled``) has the title's room from the start: a
                # margin changed after a view drew the figure is one more relayout to race.
                "top": TITLED_TOP_PX if (bool(title) if titled is None else titled) else TOP_PX,
                "bottom": BOTTOM_PX,
                "left": LEFT_PX,
                "right": RIGHT_MARGIN_PX,
            },
            title=title,
            title_style={"fill": AXIS_TEXT, "font-size": "13px", "font-weight": "600"},
            # never shrunk below its height (an empty plot's box of no height: `._grid`), where
            # bqplot would lay it out small and, now and then, not again once it is shown
            layout=ipywidgets.Layout(
                width="100%", height=f"{height}px", min_width="0", flex="0 0 auto"
            ),
        )
        self.figure.add_class("jhw-figure")
        # The legend is a row of HTML under the figure, never inside the plot: it cannot cover
        # a line or be covered by bqplot's toolbar, and it wraps instead of running off.
        self.legend = ipywidgets.HTML(layout=ipywidgets.Layout(width="auto"))
        self.legend.add_class("jhw-legend")
        # No bqplot tooltip: the panel's view shows the hover read-out (field, lane, run, step
        # and value of the point under the pointer) from these lines' points and `labels`.

    # ------------------------------------------------------------------ runs
    @property
    def runs(self) -> Mapping[int, RunMarks]:
        """The chart's runs by number, oldest first: a read-only view (the chart adds and
        drops them: `add_run`, `drop_runs`)."""
        return types.MappingProxyType(self._runs)

    def add_run(self, number: int, x0: int = 0, name: str = "", color: str = PALETTE[0]) -> None:
        """Draw run ``number`` (no marks until `add_marks`), its steps starting at ``x0``,
        called ``name`` (``run N`` when empty) and drawn in ``color``."""
        self._runs[number] = RunMarks(number, x0, name or f"run {number}", color)

    def add_marks(
        self,
        number: int,
        fields: Sequence[str],
        lane_names: Sequence[str] | None = None,
        lanes: int = 0,
        colors: Sequence[str] | None = None,
    ) -> None:
        """Create run ``number``'s marks: one per field, with one line per name in
        ``lane_names`` (the drawn vmap lanes of a run of ``lanes``) or a single line when the
        run is unbatched (None). ``colors``: one per field, for a chart that colours its series
        (default: the palette in order; see `._run_marks.styles`)."""
        r = self._runs[number]
        r.fields, r.lanes = list(fields), lanes
        r.lane_names = list(lane_names or [])
        r.series_colors = list(colors) if colors is not None else field_colors(r.fields)
        r.marks = [self._new_line(labels=r.labels(i)) for i in range(len(r.fields))]
        r.extents = [(math.inf, -math.inf, math.inf)] * len(r.marks)
        r.smoothed = self._smoothed_lines(r) if self.smoothing else []
        self.restyle()

    def add_extra(self, number: int, extra: Any) -> None:
        """Draw ``extra`` (a band, a heatmap, a path's ends: `._extras`) for run ``number``,
        under its lines (over them when ``extra.above``)."""
        r = self._runs[number]
        extra.make(self.x_scale, self.y_scale)
        r.extras.append(extra)
        self.restyle()

    def set_lines(self, number: int, lines: Lines, last_step: int) -> None:
        """Set the points of run ``number``'s marks, one ``(xs, ys, extent)`` per mark (one x
        and one y array per lane), and the run's last step. Scales follow at `update_scales`."""
        r = self._runs[number]
        r.last_step = last_step
        r.points = [(xs, ys) for xs, ys, _ in lines]  # as given: a log step axis hides step 0
        for i, (mark, (xs, ys, extent)) in enumerate(zip(r.marks, lines, strict=True)):
            r.extents[i] = extent
            self._put(mark, xs, ys, r.batched)

    def _put(self, mark: bqplot.Lines, xs: Any, ys: Any, batched: bool) -> None:
        """Set ``mark``'s points (`set_points`), on a linear y axis each value at most far off
        it (`off_axis` of its limits now; `_replace_far` once they moved much)."""
        if self.log:
            set_points(mark, xs, ys, batched, log_x=self.log_x, log_y=True)
            return
        clip = off_axis((float(self.y_lin.min), float(self.y_lin.max)))
        if set_points(mark, xs, ys, batched, log_x=self.log_x, log_y=False, clip=clip):
            self._clipped_at = clip
        finite = [y[np.isfinite(y)] for y in (np.asarray(v, np.float64) for v in ys)]
        values = np.concatenate(finite) if finite else np.zeros(0)
        if values.size:  # (as drawn: at most at the bound)
            lo, hi = max(float(values.min()), clip[0]), min(float(values.max()), clip[1])
            sent = self._sent or (lo, hi)
            self._sent = (min(sent[0], lo), max(sent[1], hi))

    def _replace_far(self) -> None:
        """Set the points again where the y limits now set moved much from those they were
        drawn for (`_put`): a value sent as it is now lies past the new bound (the axis shrank
        to the bulk, away from a runaway's 1e38), or one drawn at the old bound lies near the
        new limits (the axis grew to it)."""
        if self.log or (self._clipped_at is None and self._sent is None):
            return
        lo, hi = float(self.y_lin.min), float(self.y_lin.max)
        # (a thousand times the bound drawn at: still a pixel the page parses, and no update
        # of a live sweep sends its lines twice as its limits move a little)
        bound, used, sent = off_axis((lo, hi), 1e3 * OFF_AXIS), self._clipped_at, self._sent
        far = sent is not None and (sent[0] < bound[0] or sent[1] > bound[1])
        near = used is not None and (
            lo - used[0] < 0.01 * (used[1] - used[0]) or used[1] - hi < 0.01 * (used[1] - used[0])
        )
        if far or near:
            self._clipped_at = self._sent = None
            for r in self._runs.values():
                marks, points = r.marks + r.smoothed, r.points + r.smoothed_points
                for mark, xy in zip(marks, points, strict=False):
                    self._put(mark, *xy, r.batched)

    def set_spreads(self, number: int, spreads: Sequence[Any]) -> None:
        """Each lane's extent per mark of run ``number`` (a sweep's; else None: `._sweep`)."""
        self._runs[number].spreads = list(spreads)

    def set_smoothed_lines(
        self, number: int, lines: Sequence[tuple[list[np.ndarray], list[np.ndarray], Any]]
    ) -> None:
        """Set the points of run ``number``'s smoothed lines (as `set_lines`; the extents stay
        the raw lines': the smoothed line lies within them)."""
        r = self._runs[number]
        r.smoothed_points = [(xs, ys) for xs, ys, _ in lines]
        for mark, (xs, ys, _) in zip(r.smoothed, lines, strict=False):
            self._put(mark, xs, ys, r.batched)

    def restyle(self) -> None:
        """Colour and dash every run's lines by `._run_marks.styles` (the raw ones faint under
        smoothed twins), and list the marks."""
        runs = [r for r in self._runs.values() if r.marks]
        looks = styles(runs)
        faint = RAW_OPACITY if self.smoothing else 1.0
        for r in runs:
            n = max(1, len(r.lane_names))
            off = {k for k, lane in enumerate(r.lane_ids) if lane in r.hidden_lanes}
            fade = r.fades() + [1.0] * n
            for i, (colors, style) in enumerate(looks[r.number]):
                for mark, alpha in [(r.marks[i], faint)] + [
                    (m, 1.0) for m in r.smoothed[i : i + 1]
                ]:
                    # a lane hidden one by one: transparent (`..series.hide_lanes`); one
                    # that ran away: faint
                    opacities = [0.0 if k in off else alpha * fade[k] for k in range(n)]
                    visible = not r.hidden
                    set_traits(
                        mark, colors=colors, line_style=style, opacities=opacities, visible=visible
                    )
            for extra in r.extras:  # a band or a path's ends in the colours of its lines
                extra.set_colors(extra_colors(extra, r, looks[r.number]))
        self._show()
        self._update_legend()

    def set_hidden(self, numbers: Iterable[int]) -> None:
        """Hide exactly the runs ``numbers`` (the run list's toggles): their lines are not
        drawn and leave the axes' ranges."""
        numbers = set(numbers)
        for r in self._runs.values():
            r.hidden = r.number in numbers
        self.restyle()

    def set_smoothing(self, on: bool) -> None:
        """Give every line a smoothed twin (drawn over it, the raw line faint), or drop them.
        Their points come with `set_smoothed_lines`."""
        self.smoothing = bool(on)
        old = []
        for r in self._runs.values():
            old += r.smoothed
            r.smoothed = self._smoothed_lines(r) if on else []
            r.smoothed_points = []
        self.restyle()
        for mark in old:
            mark.close()

    def drop_runs(self, numbers: Iterable[int]) -> None:
        """Stop drawing runs ``numbers`` and close their marks.

        A widget lives, with its data, until closed (the kernel's widget registry holds it), so
        unclosed marks of replaced runs would grow by one widget per field and run. They are
        closed only once the figure no longer lists them.
        """
        dropped = [self._runs.pop(n) for n in list(numbers) if n in self._runs]
        if not dropped:
            return
        self.restyle()
        for r in dropped:
            for mark in r.marks + r.smoothed:
                mark.close()
            for extra in r.extras:
                extra.close()

    def set_log(self, log: bool) -> None:
        """Switch the y axis to a log (or linear) scale, rebuilding the marks on it.

        bqplot views do not follow a mark's or an axis's scale being swapped (seen in
        JupyterLab 4.6: the Python side changed, the drawing stayed linear), so the marks and the
        y axis are rebuilt on the other scale; their data is at most max_points.
        """
        self.log = log
        self._set_y_limits()  # the scale now in use was not kept up to date
        old = [self.y_axis]
        self.y_axis = self._new_y_axis()
        self._rebuild(old)  # (a line's end on a log axis: `set_points`)

    def set_x_scale(self, scale: bqplot.Scale, log: bool) -> None:
        """Put the step axis on ``scale`` (the grid's shared linear or log step scale),
        rebuilding the marks on it (as `set_log` does for y). On a log axis the points of
        step 0, which it cannot place, are gaps."""
        self.x_scale, self.log_x = scale, log
        old = [self.x_axis]
        self.x_axis = self._new_x_axis()
        self._rebuild(old)

    def _rebuild(self, old: list[Any]) -> None:
        """Make every mark anew on the scales now in use, from the points last set (a log axis
        places them differently: `set_points`), show them with the axes, and close ``old`` and
        the marks replaced."""
        for r in self._runs.values():
            old += r.marks + r.smoothed
            r.marks = [self._copy_line(m) for m in r.marks]
            r.smoothed = [self._copy_line(m) for m in r.smoothed]
            marks, points = r.marks + r.smoothed, r.points + r.smoothed_points
            for mark, xy in zip(marks, points, strict=False):
                self._put(mark, *xy, r.batched)
            old += [m for extra in r.extras for m in extra.make(self.x_scale, self.y_scale)]
        with self.figure.hold_sync():
            self._show()
            self.figure.axes = [self.x_axis, self.y_axis]
        for w in old:
            w.close()
        self._draw_extras()
        self._update_ticks()

    # ------------------------------------------------------------ scales, ticks
    def shown_runs(self) -> list[RunMarks]:
        """The runs whose lines are shown (all of them when every one is hidden: the axes
        then stay where they were)."""
        runs = list(self._runs.values())
        return [r for r in runs if not r.hidden] or runs

    def step_range(self) -> tuple[int, int]:
        """The first and last step of the shown runs (> 0 first: continued, earlier dropped)."""
        runs = self.shown_runs()
        first = min((r.x0 for r in runs), default=0)
        return first, max((r.x0 + r.last_step for r in runs), default=first)

    def update_scales(
        self, steps: tuple[float, float] | None = None, exact: bool = False, settled: bool = False
    ) -> None:
        """Scales from the shown runs' steps (or ``steps``, shared by several charts; ``exact``:
        a zoom's, not rounded out; ``settled``: every run ended, the axis fits them) and
        extents (a sweep's lanes that did not run away, arrows where lines leave: `._sweep`;
        then, ignoring outliers, the drawn points' but those far outside their bulk: those
        lanes' lines less a spike), then the ticks and whether to offer a log axis
        (`log_hint`); one that follows its values (`auto_log`) is on a log axis while they
        span decades."""
        runs = self.shown_runs()
        first, last = steps if steps is not None else self.step_range()
        point = any(r.marks and not r.last_step and r.x0 == first for r in runs)
        self._set_x_limits(first, last, exact=exact, settled=settled, point=point)
        shown = steps if self.x_time == "step" else None  # (a time axis shows every row)
        if self.auto_log:  # the axis the bulk of the values drawn asks for
            # (back to linear only under two decades: no flapping at the line)
            spans = bulk_decades(self._values_drawn(runs))
            log = spans >= (LOG_DECADES - 1 if self.log else LOG_DECADES)
            if log != self.log:
                self.set_log(log)
        fit = fitted_extent(runs, shown, self.log, robust=self.ignore_outliers)
        self._extent, left, away = fit
        if away:  # a lane that ran away is drawn faint
            self.restyle()
        self._set_y_limits()
        self._replace_far()
        self.legend_changed |= mark_runaways(self, left)
        self._draw_extras()
        self._update_ticks()

    def _values_drawn(self, runs: list[RunMarks]) -> list[np.ndarray]:
        """The values ``runs`` draw here (but lanes hidden or that ran away): what decides
        whether a chart of `auto_log` is on a log axis."""
        return [y for r in runs for y in r.shown_ys(without=r.away, given=True)]

    @property
    def log_hint(self) -> int:
        """The decades its values span on a linear axis, where a log one is offered (0: no
        offer; a log axis, or fewer than `..reduce.LOG_DECADES`)."""
        spans = decades(self._extent)
        return spans if spans >= LOG_DECADES and not self.log else 0

    def _draw_extras(self) -> None:
        """Draw the runs' extras for the y limits set (a band clipped to a log axis, a heatmap)."""
        limits = (float(self.y_scale.min), float(self.y_scale.max))
        for r in self._runs.values():
            for extra in r.extras:
                extra.draw(limits, self.log)

    # ------------------------------------------------------------------ helpers
    def _show(self) -> None:
        """Make the figure list exactly the marks of the drawn runs: the extras under the
        lines, the raw lines, the smoothed ones over them, then the extras over everything
        (a hidden run's extras are not listed: they have no `visible` of their own)."""
        runs = self._runs.values()
        extras = [
            (e.above or m in getattr(e, "over", ()), m)  # (a sweep's band's median: over)
            for r in runs
            if not r.hidden
            for e in r.extras
            for m in e.marks
        ]
        marks = (
            [m for above, m in extras if not above]
            + [m for r in runs for m in r.marks]
            + [m for r in runs for m in r.smoothed]
            + [m for above, m in extras if above]
        )
        if list(self.figure.marks) != marks:
            self.figure.marks = marks

    def drawn(self) -> list[tuple[RunMarks, bqplot.Lines]]:
        """Every shown line's mark with its run, in drawing order (the static picture's)."""
        runs = [r for r in self._runs.values() if not r.hidden]
        return [(r, m) for r in runs for m in r.marks] + [(r, m) for r in runs for m in r.smoothed]

    def _update_legend(self) -> None:
        """The legend row: one entry per field (and per kept run), plus the latest run's lanes."""
        self.legend.value = legend_html(*self.legend_entries())

    def legend_entries(self) -> tuple[list[LegendLine], list[str], int, list[Key]]:
        """What the legend names (`._run_marks.chart_legend`): series, extras, lanes."""
        return chart_legend(list(self._runs.values()))

    def has_marks(self) -> bool:
        """Whether a drawn run has a mark in this figure."""
        return any(r.marks for r in self._runs.values())

    def close(self) -> None:
        """Close every widget of this figure (a chart no longer shown)."""
        self.drop_runs(list(self._runs))
        for w in (self.figure, self.x_axis, self.y_axis, self.y_lin, self.y_log):
            w.close()
        if self._own_x:
            self.x_scale.close()
        self.legend.close()

    def _smoothed_lines(self, r: RunMarks) -> list[bqplot.Lines]:
        return [self._new_line(labels=r.labels(i, " · smoothed")) for i in range(len(r.marks))]

    def _copy_line(self, m: bqplot.Lines) -> bqplot.Lines:
        """A new line on the current scales with ``m``'s look and points."""
        look = ("labels", "colors", "opacities", "line_style", "visible", "marker", "x", "y")
        return self._new_line(**{k: getattr(m, k) for k in look})

    def _new_line(self, **traits: Any) -> bqplot.Lines:
        traits.setdefault("x", np.zeros(0))
        traits.setdefault("y", np.zeros(0))
        return bqplot.Lines(
            scales={"x": self.x_scale, "y": self.y_scale},
            stroke_width=LINE_WIDTH,
            marker_size=24,  # a run of one row: its point (`set_points`)
            display_legend=False,  # the legend is the HTML row under the figure
            # The scales' limits are always set here (`update_scales`), so a mark's own data
            # range never decides them: without this the browser recomputes every line's min
            # and max at each update only to find the limits unchanged.
            preserve_domain={"x": True, "y": True},
            **traits,
        )
