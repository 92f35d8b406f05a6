"""What a `LivePlot`'s figure shows now, as plain data, per chart (`LivePlot.drawing`): each
chart's lines (run, lane, field, the points drawn, colour), bands, diverged lines' flags, axes
(log or linear, limits, ticks), and the notes under the charts.

The public, read-only way to inspect a plot (a test's, a user's): the plot copies these from
its live figure (``..plot``), as it copies the static picture's `Picture`; no widgets here.
"""

from __future__ import annotations

import dataclasses

import numpy as np

__all__ = ["DrawnBand", "DrawnChart", "DrawnGrid", "DrawnLine", "PlotDrawing"]


@dataclasses.dataclass(frozen=True)
class DrawnLine:
    """One line a chart draws: one field of one lane of one run, as its mark holds it.

    Attributes
    ----------
    run, run_name
        The run's index in `LivePlot.runs` (0: the oldest kept) and what the plot calls it
        (on a hyperparameter chart: -1 and the chart's title).
    field
        The series' label (``"loss"``, ``"w[0]"``, ``"w median"``; a path's y series; on a
        hyperparameter chart ``"loss last"``, ``"loss best"``: the lanes' values against it,
        and ``"best lane"``: its star, role ``"best"``).
    lane
        The vmap lane (its index in the run), None for an unbatched run.
    role
        Why a lane is drawn past `MAX_LANES` (``"best"``, ``"median, worst"``), else ``""``.
    label
        Its hover label (``"loss · lane 3 · run 1"``).
    x, y
        The points drawn, as the plot last set them: decimated to ``max_points`` (min/max per
        bucket), of the steps shown (a zoom, the last N steps), from the run's first step (a
        continued run's ``x0``), in the x axis's units (seconds on a time axis; a path's x
        series); the smoothed points for a smoothed line. Each lane's own points (the mark
        pads a shorter lane with its last one). float64 copies.
    color, opacity
        Its colour and opacity (0: a lane hidden one by one; faint: a raw line under its
        smoothed twin, a lane that ran away).
    smoothed
        Whether this is the smoothed twin drawn over the raw line (``smoothing=``).
    joined
        Whether its points are joined by a line; False: points alone (a hyperparameter chart
        whose lanes share a parameter's value, swept in another; its best lane's star).
    """

    run: int
    run_name: str
    field: str
    lane: int | None
    role: str
    label: str
    x: np.ndarray
    y: np.ndarray
    color: str
    opacity: float
    smoothed: bool = False
    joined: bool = True


@dataclasses.dataclass(frozen=True)
class DrawnGrid:
    """A hyperparameter chart of a sweep of two parameters over a grid, as a heatmap: a cell
    per pair of their values, coloured by the goal's field's last value.

    Attributes
    ----------
    params
        The two parameters: the columns', then the rows'.
    field
        The field the cells' colour is the last value of (the plot's goal).
    columns, rows
        Each column's value of the first parameter (left to right), each row's of the second
        (bottom to top).
    values
        ``(rows, columns)``: each cell's last finite value (NaN: none).
    diverged
        ``(rows, columns)``: whether the cell's lane went NaN or ±inf (a cross on it).
    best
        ``(row, column)`` of the cell the goal names best (a star on it), or None.
    log_color, color_range
        Whether the colour scale is logarithmic (the values span decades), and the values at
        its two ends.
    """

    params: tuple[str, str]
    field: str
    columns: np.ndarray
    rows: np.ndarray
    values: np.ndarray
    diverged: np.ndarray
    best: tuple[int, int] | None
    log_color: bool
    color_range: tuple[float, float]


@dataclasses.dataclass(frozen=True)
class DrawnBand:
    """A band a chart draws under a run's lines: a vector's quantiles, or past `LEAD_LANES` a
    field's quantiles over every lane (and their median, a line over the band). Each polygon
    is closed: its lower edge forward, its upper edge back (clipped to the axis's bottom on a
    log axis), as its mark holds it.

    Attributes
    ----------
    run, field
        The run's index in `LivePlot.runs` and the line's label it is drawn with.
    outer, inner
        ``(x, y)`` of the min–max and 25–75 % polygons (float64 copies).
    color
        Its fill colour (its line's).
    left_out
        Lanes left out of it at the last step (NaN or ±inf: diverged).
    median
        ``(x, y)`` of a sweep's band's median per step, drawn as a line over it (None for a
        vector's band, whose median is a line of its own).
    """

    run: int
    field: str
    outer: tuple[np.ndarray, np.ndarray]
    inner: tuple[np.ndarray, np.ndarray]
    color: str
    left_out: int = 0
    median: tuple[np.ndarray, np.ndarray] | None = None


@dataclasses.dataclass(frozen=True)
class DrawnChart:
    """What one chart shows now.

    Attributes
    ----------
    title
        Its key in `PlotDrawing.charts`: the field's label (its title; a vector leaf's name, a
        path's ``"y vs x"``, a hyperparameter chart's ``"loss vs lr"``), ``""`` when shared.
    lines
        Its lines, the raw ones, then the smoothed ones, run by run (oldest first); a run
        hidden from the run list (or left out by the run filter) draws none. A hyperparameter
        chart's lines are its lanes' values against a parameter (``field``: ``"loss last"``).
        While a hyperparameter chart's point is hovered, the lane's line it lights on a step
        chart where that lane is no line of its own (only in the band) is last, its ``role``
        ``"probe"`` (``lane`` None: its ``label`` names it).
    bands
        Its bands (`DrawnBand`), of the shown runs.
    flags
        ``(n, 2)``: step and value of each flag drawn at a diverged line's last finite point.
    log_y, log_x
        Whether its y axis and its x axis are logarithmic.
    x_range, y_range
        Its axes' limits (min, max), as drawn.
    x_ticks, y_ticks
        Its axes' tick values, with ``x_format`` and ``y_format``, their d3-format specifiers.
    legend
        The entries it names under itself, as they read (``"loss best (lowest)"``).
    grid
        A hyperparameter grid's heatmap (`DrawnGrid`), or None.
    """

    title: str
    lines: tuple[DrawnLine, ...]
    bands: tuple[DrawnBand, ...]
    flags: np.ndarray
    log_y: bool
    log_x: bool
    x_range: tuple[float, float]
    y_range: tuple[float, float]
    x_ticks: tuple[float, ...] = ()
    y_ticks: tuple[float, ...] = ()
    x_format: str = ""
    y_format: str = ""
    legend: tuple[str, ...] = ()
    grid: DrawnGrid | None = None

    def line(
        self,
        field: str | None = None,
        *,
        lane: int | None = None,
        run: int = -1,
        smoothed: bool = False,
    ) -> DrawnLine:
        """The one line of ``field`` (None: the chart's only field), ``lane`` (None: the
        run's only line) and run index ``run`` (-1: the latest drawn here); a LookupError
        naming the lines there are."""
        runs = sorted({ln.run for ln in self.lines})
        index = runs[run] if runs and -len(runs) <= run < len(runs) else None
        found = [
            ln
            for ln in self.lines
            if ln.run == index
            and ln.smoothed == smoothed
            and (field is None or ln.field == field)
            and (lane is None or ln.lane == lane)
        ]
        if len(found) != 1:
            labels = [ln.label for ln in self.lines]
            raise LookupError(
                f"{len(found)} lines of field={field!r}, lane={lane!r}, run={run}, "
                f"smoothed={smoothed} on chart {self.title!r}; its lines: {labels}"
            )
        return found[0]

    def runs(self) -> list[str]:
        """The names of the runs whose lines it shows, oldest first."""
        return list(dict.fromkeys(ln.run_name for ln in self.lines))


@dataclasses.dataclass(frozen=True)
class PlotDrawing:
    """What a `LivePlot`'s figure shows now, per chart (`LivePlot.drawing`).

    Attributes
    ----------
    charts
        The charts shown, by title (`DrawnChart.title`), in grid order.
    notes
        The notes under the charts: what a run does not draw as asked, each once (not the
        offers of a log axis).
    log_charts
        The titles of the charts whose y axis is logarithmic.
    mode
        ``"per_field"`` or ``"shared"`` (``LivePlot(charts=...)``).
    work
        What drawing the runs drawn took so far: values reduced and buckets touched, every
        series together (a count, not a time). Its growth from one `LivePlot.refresh` to the
        next is what an update cost; it stays flat however long the run (`benchmarks/`).
    legend
        The entries of the legend row under the charts, as they read: what the charts share,
        the plot's goal first while a sweep is drawn (``"best = lowest loss: lr=0.01
        (0.0123)"``: the field every best, median and worst ranks, and the lane it names best).
    """

    charts: dict[str, DrawnChart]
    notes: tuple[str, ...]
    log_charts: tuple[str, ...]
    mode: str
    work: int
    legend: tuple[str, ...] = ()

    def chart(self, title: str | None = None) -> DrawnChart:
        """Chart ``title`` (None: the only one shown); a LookupError naming those shown."""
        if title is None and len(self.charts) == 1:
            return next(iter(self.charts.values()))
        if title is None or title not in self.charts:
            raise LookupError(f"no chart {title!r} alone; the charts: {list(self.charts)}")
        return self.charts[title]
