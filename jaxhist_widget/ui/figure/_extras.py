"""What a chart draws for a run besides its lines: a vector's band or heatmap, a path's ends.

A `LiveFigure` holds these per run (`LiveFigure.add_extra`) and calls each at
the same moments as its lines: `make` when its marks are (re)built on the figure's scales (a
log toggle swaps the y scale, which bqplot views do not follow), `draw` once the y limits of an
update are known (a band on a log axis is clipped to them, a heatmap image is drawn over them),
`set_colors` when its run is coloured anew, `close` when it is dropped. `extent` counts in the
chart's y range, `legend` in the legend row. Each redraws only when its data or the limits
changed.

- `BandExtra`: two filled polygons under a vector's median line (`..reduce.BandSeries`);
- `HeatmapExtra`: an image under it (`..reduce.HistogramBuckets`), one `bqplot.Image` of a
  PNG, the same bytes the static picture embeds;
- `PathEnds`: a path's start (a ring) and latest point (a dot) for each lane, over its lines.

`notes_html` writes the notes on what a run does not draw as asked (`..series.plan`).
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Sequence
from typing import Any

import bqplot
import ipywidgets
import numpy as np

from ..look import BAND_OPACITY, LegendLine, notes_line
from ..reduce import BandSeries, HistogramBuckets, encode_png, finite_tail, values_extent
from ._run_marks import off_axis, step_array

__all__ = ["BandExtra", "HeatmapExtra", "PathEnds", "extra_colors", "make_extra", "notes_html"]

_NO_EXTENT = (math.inf, -math.inf, math.inf)
#: A sweep's band's median line: its label among a chart's lines and its legend entry.
MEDIAN_OF_LANES = "lanes' median"
#: Its width: over the lanes' lines, some drawn faint, it leads.
MEDIAN_WIDTH = 2.5


def make_extra(source: Any, label: str, run: int, color: str, x0: int) -> Any:
    """The extra drawing a vector median labelled ``label`` (``"x median"``) is drawn over."""
    name = label.removesuffix(" median")
    if isinstance(source, BandSeries):
        extra: BandExtra | HeatmapExtra = BandExtra(source, name, run, color, x0)
    elif isinstance(source, HistogramBuckets):
        extra = HeatmapExtra(source, name, run, color, x0)
    else:
        raise TypeError(f"no extra drawing for {type(source).__name__}")
    extra.label = label  # the line it is drawn with (its colour follows that line's)
    return extra


class BandExtra:
    """The min–max and quartile bands of one vector of one run, under its median line; or of a
    field over a sweep's lanes (a band that keeps its median: `..reduce.BandSeries`), with that
    median drawn as a line over them, its legend entries the same on every chart (``lanes
    min–max``), so the grid's row names them once."""

    above = False
    label = ""  # the line it is drawn with (set by `make_extra`)
    #: Steps -> the x axis's values (a time axis's seconds; None: the steps themselves).
    x_map: Callable[[np.ndarray], np.ndarray] | None = None

    def __init__(self, band: BandSeries, name: str, run: int, color: str, x0: int) -> None:
        self.band, self.name, self.run, self.color, self.x0 = band, name, run, color, x0
        self.marks: list[bqplot.Lines] = []
        self._drawn: tuple | None = None

    def moved(self) -> None:
        """Its x values are now another axis's (`TimeAxis.set_mode`): drawn anew next time."""
        self._drawn = None

    def make(self, x_scale: bqplot.Scale, y_scale: bqplot.Scale) -> list[bqplot.Mark]:
        old = self.marks
        self.marks = []
        for k, (which, fill) in enumerate(zip(("min–max", "25–75 %"), BAND_OPACITY, strict=True)):
            points = {"x": old[k].x, "y": old[k].y} if old else {}
            self.marks.append(
                bqplot.Lines(
                    scales={"x": x_scale, "y": y_scale},
                    labels=[f"{self.name} {which} · run {self.run}"],
                    colors=[self.color],
                    fill_colors=[self.color],
                    fill="inside",
                    close_path=True,
                    fill_opacities=[fill],
                    stroke_width=0.0,
                    display_legend=False,
                    preserve_domain={"x": True, "y": True},
                    **points,
                )
            )
        if self.band.has_median:  # a sweep's: the lanes' median per step, over the band
            points = {"x": old[2].x, "y": old[2].y} if len(old) > 2 else {}
            self.marks.append(
                bqplot.Lines(
                    scales={"x": x_scale, "y": y_scale},
                    labels=[f"{self.name} · {MEDIAN_OF_LANES} · run {self.run}"],
                    colors=[self.color],
                    stroke_width=MEDIAN_WIDTH,
                    display_legend=False,
                    preserve_domain={"x": True, "y": True},
                    **points,
                )
            )
        self._drawn = None
        return old

    def extent(self, steps: tuple[int, int] | None = None) -> tuple[float, float, float]:
        """The band's extent; of its points within ``steps`` (first, last) when they show
        only part of it (a zoom, the last N steps)."""
        if steps is None or (steps[0] <= self.x0 and steps[1] >= self.x0 + self.band.size - 1):
            return self.band.extent
        x, y = self.band.polygons(self.x0)[0]  # the outer band holds the inner one
        return values_extent(y[(x >= steps[0]) & (x <= steps[1])])

    @property
    def over(self) -> list[bqplot.Mark]:
        """Its marks drawn over the lines: a sweep's median (it leads, with the lanes named)."""
        return self.marks[2:]

    @property
    def sweep(self) -> bool:
        """Whether it is a sweep's band over every lane (with its median line), not a
        vector's."""
        return self.band.has_median

    def edges(self, steps: tuple[int, int] | None = None) -> np.ndarray:
        """The values of its outer (min–max) band's edges as drawn, of the steps ``steps``
        only where they show part of it: what an outlier-robust y range reads of it."""
        x, y = self.band.polygons(self.x0)[0]  # the outer band holds the inner one
        return y if steps is None else y[(x >= steps[0]) & (x <= steps[1])]

    def draw(self, y_limits: tuple[float, float], log: bool) -> None:
        # (on a linear axis an edge far off it, a runaway's 1e38, is drawn at `off_axis`)
        bound = off_axis(y_limits)
        lo, hi, _ = self.band.extent
        far = None if log or bound[0] <= lo <= hi <= bound[1] else bound
        key = (self.band.size, log, y_limits[0] if log else None, far)
        if key == self._drawn or not self.marks:
            return
        self._drawn = key
        for mark, (x, y) in zip(self.marks, self.band.polygons(self.x0), strict=False):
            x = self.x_map(x) if self.x_map is not None else x
            if log:  # values <= 0 have no place on a log axis: the band runs to its bottom
                y = np.maximum(y, y_limits[0])
            elif far is not None:
                y = np.clip(y, *far)
            with mark.hold_sync():
                mark.x, mark.y = step_array(x), y
        if len(self.marks) > 2:
            x, y = self.band.median_points(self.x0)
            x = self.x_map(x) if self.x_map is not None else x
            if log:  # a gap where the axis cannot place it
                y = np.where(y > 0, y, np.nan)
            x, y = finite_tail(x, y)
            with self.marks[2].hold_sync():
                self.marks[2].x, self.marks[2].y = step_array(x), y

    def set_colors(self, colors: Sequence[str]) -> None:
        """Fill in ``colors[0]``, its median line's colour."""
        if colors and colors[0] != self.color:
            self.color = colors[0]
            for mark in self.marks:
                with mark.hold_sync():
                    mark.colors = [self.color]
                    if mark.fill != "none":
                        mark.fill_colors = [self.color]

    def legend(self) -> list[LegendLine]:
        # A sweep's band reads the same on every chart ("lanes min–max"): named once, in the
        # grid's row (the lanes it leaves out where they are NaN or ±inf are the diverged
        # ones the header counts and the flags mark).
        name = "lanes" if self.band.has_median else self.name
        bands = [
            LegendLine(f"{name} {which}", self.run, self.color, "band", fill / BAND_OPACITY[1])
            for which, fill in zip(("25–75 %", "min–max"), BAND_OPACITY[::-1], strict=True)
        ]
        if not self.band.has_median:
            return bands
        return [LegendLine(MEDIAN_OF_LANES, self.run, self.color, "solid", 1.0), *bands]

    def close(self) -> None:
        for mark in self.marks:
            mark.close()


class HeatmapExtra:
    """The histogram over steps of one vector of one run, as an image under its median."""

    above = False
    label = ""  # the line it is drawn with (set by `make_extra`)
    #: Steps -> the x axis's values (as `BandExtra.x_map`): the image spans its ends' times.
    x_map: Callable[[np.ndarray], np.ndarray] | None = None

    def __init__(self, hist: HistogramBuckets, name: str, run: int, color: str, x0: int) -> None:
        self.hist, self.name, self.run, self.color, self.x0 = hist, name, run, color, x0
        # The image widget shown (a rebuilt mark shows the same picture).
        self.image = ipywidgets.Image(value=_BLANK_PNG, format="png")
        self.png = b""  #: the bytes shown (empty before the first draw)
        self.y_limits = (0.0, 1.0)  #: the values the image spans, bottom to top
        self.x_limits = (0.0, 1.0)  #: the steps it spans
        self.marks: list[bqplot.Image] = []
        self._drawn: tuple | None = None

    def moved(self) -> None:
        """Its x values are now another axis's (`TimeAxis.set_mode`): drawn anew next time."""
        self._drawn = None

    def make(self, x_scale: bqplot.Scale, y_scale: bqplot.Scale) -> list[bqplot.Mark]:
        old = self.marks
        self.marks = [
            bqplot.Image(
                image=self.image,
                scales={"x": x_scale, "y": y_scale},
                x=list(self.x_limits),
                y=list(self.y_limits),
                pixelated=True,
                preserve_domain={"x": True, "y": True},
            )
        ]
        self._drawn = None
        return old

    def extent(self, steps: tuple[int, int] | None = None) -> tuple[float, float, float]:
        """The values' extent; to a bin's width, of the steps ``steps`` (first, last) when
        they show only part of the run (a zoom, the last N steps)."""
        if steps is None or (steps[0] <= self.x0 and steps[1] >= self.x0 + self.hist.steps - 1):
            return self.hist.extent
        return self.hist.extent_in(steps[0] - self.x0, steps[1] - self.x0)

    def draw(self, y_limits: tuple[float, float], log: bool) -> None:
        key = (self.hist.version, y_limits, log, self.color)
        if key == self._drawn or not self.marks:
            return
        self._drawn = key
        rgba = self.hist.rgba(y_limits, log, self.color)
        if rgba is None:
            return
        self.png = encode_png(rgba, level=1)  # level 1: a fraction of the time, a little larger
        self.y_limits = (float(y_limits[0]), float(y_limits[1]))
        # The first step to the last (a run of one step: half a step either side).
        last = max(self.hist.steps - 1, 0.5)
        self.x_limits = (self.x0 - (0.5 if last == 0.5 else 0.0), self.x0 + last)
        if self.x_map is not None:
            ends = self.x_map(np.array([self.x0, self.x0 + max(self.hist.steps - 1, 0)], float))
            self.x_limits = (float(ends[0]), float(max(ends[1], ends[0] + 1e-3)))
        # A new image widget each time: a bqplot Image view redraws when its mark's `image`
        # changes, not when that widget's bytes do.
        old, self.image = self.image, ipywidgets.Image(value=self.png, format="png")
        (mark,) = self.marks
        with mark.hold_sync():
            mark.image, mark.x, mark.y = self.image, list(self.x_limits), list(self.y_limits)
        old.close()

    def set_colors(self, colors: Sequence[str]) -> None:
        """Draw in ``colors[0]``, its median line's colour (at the next `draw`)."""
        if colors and colors[0] != self.color:
            self.color, self._drawn = colors[0], None

    def legend(self) -> list[LegendLine]:
        return [LegendLine(f"{self.name} histogram", self.run, self.color, "band", 1.0)]

    def close(self) -> None:
        for mark in self.marks:
            mark.close()
        self.image.close()


class PathEnds:
    """Where each lane's path starts (a ring) and where it is now (a dot)."""

    above = True
    label = ""  # (drawn with every line of its chart)

    def __init__(self, run: int, colors: Sequence[str]) -> None:
        self.run, self.colors = run, list(colors)
        self.marks: list[bqplot.Scatter] = []
        self.starts = np.zeros((0, 2))  #: per lane: x, y of its first point
        self.ends = np.zeros((0, 2))  #: per lane: x, y of its latest point

    def make(self, x_scale: bqplot.Scale, y_scale: bqplot.Scale) -> list[bqplot.Mark]:
        old = self.marks
        self.marks = [
            bqplot.Scatter(
                scales={"x": x_scale, "y": y_scale},
                colors=self.colors,
                fill=fill,
                stroke_width=2.0,
                default_size=size,
                display_legend=False,
                preserve_domain={"x": True, "y": True},
            )
            for fill, size in ((False, 48), (True, 40))
        ]
        self.set(self.starts, self.ends)
        return old

    def set(self, starts: np.ndarray, ends: np.ndarray) -> None:
        """The first and the latest point of each lane (rows of ``(x, y)``)."""
        self.starts, self.ends = starts, ends
        for mark, xy in zip(self.marks, (starts, ends), strict=False):
            with mark.hold_sync():
                mark.x, mark.y = xy[:, 0], xy[:, 1]

    def extent(self, steps: tuple[int, int] | None = None) -> tuple[float, float, float]:
        return _NO_EXTENT  # its points are the lines' own

    def draw(self, y_limits: tuple[float, float], log: bool) -> None:
        pass  # set with the lines (`set`)

    def set_colors(self, colors: Sequence[str]) -> None:
        """One colour per lane, its path's line's."""
        if list(colors) != self.colors:
            self.colors = list(colors)
            for mark in self.marks:
                mark.colors = self.colors

    def legend(self) -> list[LegendLine]:
        return []

    def close(self) -> None:
        for mark in self.marks:
            mark.close()


def extra_colors(extra: Any, r: Any, looks: list[tuple[list[str], str]]) -> list[str]:
    """The colours of an extra of run ``r``: those of the line it is drawn with (a vector's
    median: the mark of its label), or, for a path's ends, every line's colour per lane."""
    label = getattr(extra, "label", None)
    if label in r.fields:
        return looks[r.fields.index(label)][0][:1]
    return [c for colors, _ in looks for c in colors[: max(1, len(r.lane_names))]]


def notes_html(notes: Sequence[str], prefix: str = "Note: ", fold: bool = True) -> str:
    """The notes under the legend (what is not drawn as asked, a log axis offered): one short
    line (`..look.notes_line`) that opens on a click to every note in full, one per line
    (``fold``); else every note in full."""
    if not notes:
        return ""
    items = "".join(
        f'<div class="jhw-note" style="white-space:normal">{prefix}{html.escape(note)}</div>'
        for note in notes
    )
    style = (
        'style="padding:0 8px 4px 8px;font-size:var(--jp-ui-font-size1, 12px);'
        'color:var(--jp-ui-font-color2, #616161)"'
    )
    if not fold:
        return f'<div class="jhw-notes" {style}>{items}</div>'
    line = html.escape(prefix + notes_line(notes))
    summary = (
        '<summary class="jhw-note-line" style="cursor:pointer;white-space:nowrap;'
        f'overflow:hidden;text-overflow:ellipsis" title="the notes in full">{line}</summary>'
    )
    return f'<details class="jhw-notes" {style}>{summary}{items}</details>'


_BLANK_PNG = encode_png(np.zeros((1, 1, 4), np.uint8))
