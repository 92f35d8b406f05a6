"""What a `LivePlot` shows now, copied into the static picture's plain data (`snapshot`): the
charts' decimated lines, colours, dash styles, scale limits, tick values and formats, the
bands, heatmap images, path ends, diverged lines' end flags and the arrows where a sweep's lines
leave the y range, the legend entries, and the panel's run state.

The one place that reads the live figure for the picture: the picture (`..picture`) draws from
the copy alone and never imports the live figure, nor the figure the picture. What the figure
shows is copied the same way for a test or a user to read (`drawing`: `..picture.PlotDrawing`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..figure import (
    BEST_COLOR,
    DIVERGED_COLOR,
    BandExtra,
    ChartGrid,
    DivergedEnds,
    GridMarks,
    HeatmapExtra,
    LaneProbe,
    ParamGridFigure,
    ParamMarks,
    PathEnds,
    RunawayMarks,
    inset,
)
from ..look import BAND_OPACITY, LEFT_PX, PALETTE, TOP_PX, js_key, legend_labels
from ..picture import (
    PICTURE_LINES,
    ChartPicture,
    DrawnBand,
    DrawnChart,
    DrawnGrid,
    DrawnLine,
    Picture,
    PlotDrawing,
    StaticImage,
    StaticLine,
)
from ..series import RunDrawing

__all__ = ["drawing_of", "snapshot", "synced_state"]


def snapshot(grid: Any, panel: Any) -> Picture:
    """Copy what a `ChartGrid` and its `LivePanel` show now (the caller holds the plot's lock).

    Reads their attributes only: the marks' points, colors, styles and opacities, the scales'
    limits, the axes' tick values and formats, the legend's entries and the panel's synced
    traits.
    """
    most = -(-PICTURE_LINES // max(1, len(grid.shown)))  # a chart's share of the lines
    own = grid.chart_legends()  # each chart's own entries, drawn under it
    charts = tuple(
        dataclasses.replace(_chart(c, most), legend=tuple(lines))
        for c, lines in zip(grid.shown, own, strict=True)
        if grid.drawing  # (no chart before a run draws one, as live: no invented axes)
    )
    lines, names, lanes, keys = grid.legend_entries()
    first = grid.shown[0]
    return Picture(
        title=panel.title,
        state=synced_state(panel),
        log_y=all(c.log for c in grid.shown),
        x_limits=(float(first.x_scale.min), float(first.x_scale.max)),
        charts=charts,
        legend=tuple(lines),
        lane_names=tuple(names),
        lanes=lanes,
        hidden_lanes=frozenset(k for k, key in enumerate(keys) if key[2]),
        notes=tuple(grid.notes),  # (not the log axes offered: the picture has no button)
    )


def synced_state(panel: Any) -> dict[str, Any]:
    """The panel's run state (`panel_state`'s keys): its synced traits but the widget
    plumbing."""
    keys = [k for k, t in panel.traits().items() if t.metadata.get("sync") and k[0] != "_"]
    plumbing = ("figure", "figures", "layout", "tooltip")
    return {k: getattr(panel, k) for k in keys if k not in plumbing}


def _chart(fig: Any, most: int) -> ChartPicture:
    """One chart's copy: its title, scales, ticks, margin, shown lines (a hidden run's are not;
    a smoothed line over its faint raw one), each with its colour, dash and opacity, and the
    shown runs' extras (bands, heatmap images, a path's ends)."""
    lines, images, over = [], [], []
    shown, left_out = _latest_runs([r for r in fig.runs.values() if not r.hidden], most)
    for r in shown:
        for extra in r.extras:
            if isinstance(extra, BandExtra):
                for mark, fill in zip(extra.marks, BAND_OPACITY, strict=False):
                    x, y = np.asarray(mark.x, float), np.asarray(mark.y, float)
                    lines.append(StaticLine(x, y, extra.color, "solid", 1.0, mark.labels[0], fill))
                for mark in extra.marks[2:]:  # a sweep's band's median, over its lines
                    x, y = np.asarray(mark.x, float), np.asarray(mark.y, float)
                    over.append(StaticLine(x, y, extra.color, "solid", 1.0, mark.labels[0]))
            elif isinstance(extra, HeatmapExtra) and extra.png:
                images.append(StaticImage(extra.png, extra.x_limits, extra.y_limits))
            elif isinstance(extra, DivergedEnds) and len(extra.points):  # as drawn live
                xy = extra.points[extra.points[:, 1] > 0] if fig.log else extra.points
                flags = StaticLine(
                    xy[:, 0], xy[:, 1], DIVERGED_COLOR, "solid", 1.0, "", dots="flag"
                )
                over.append(flags)
            elif isinstance(extra, ParamMarks):  # a sweep's lanes against a parameter
                for mark in extra.marks[:2]:
                    x, y = np.asarray(mark.x, float), np.asarray(mark.y, float)
                    alpha = float(mark.opacities[0]) if len(mark.opacities) else 1.0
                    label, dots = mark.labels[0], "" if mark.stroke_width > 0 else "dot"
                    line = StaticLine(x, y, extra.color, mark.line_style, alpha, label, dots=dots)
                    over.append(line)
                over += _stars(extra.marks[2])
            elif isinstance(extra, GridMarks) and extra.png:  # a grid's cells, as drawn live
                rows, cols = extra.values.shape
                images.append(StaticImage(extra.png, (-0.5, cols - 0.5), (-0.5, rows - 0.5)))
                r, c = np.nonzero(extra.gone)
                cx, cy = c.astype(float), r.astype(float)
                flags = StaticLine(cx, cy, DIVERGED_COLOR, "solid", 1.0, "", dots="flag")
                over += [flags, *_stars(extra.marks[2])]
            elif isinstance(extra, RunawayMarks):  # at the edges, as drawn live
                edges = inset((float(fig.y_scale.min), float(fig.y_scale.max)), fig.log)
                for xs, edge, kind in zip(
                    (extra.ups, extra.downs), edges, ("up", "down"), strict=True
                ):
                    ys = np.full(len(xs), edge)
                    over.append(StaticLine(xs, ys, DIVERGED_COLOR, "solid", 1.0, "", dots=kind))
            elif isinstance(extra, PathEnds):
                for xy, kind in ((extra.starts, "ring"), (extra.ends, "dot")):
                    for k, (x, y) in enumerate(np.asarray(xy, float).reshape(-1, 2)):
                        color = extra.colors[k % len(extra.colors)]
                        point = StaticLine(
                            np.array([x]), np.array([y]), color, "solid", 1.0, "", dots=kind
                        )
                        over.append(point)
    for run, mark in fig.drawn():
        if left_out and all(run is not r for r in shown):
            continue
        xs, ys = np.atleast_2d(mark.x), np.atleast_2d(mark.y)
        labels = list(mark.labels)
        for k in range(min(len(xs), len(ys), len(labels))):
            x, y = _unpad(np.asarray(xs[k], float), np.asarray(ys[k], float))
            color = mark.colors[k % len(mark.colors)] if len(mark.colors) else PALETTE[0]
            alpha = float(mark.opacities[k % len(mark.opacities)]) if len(mark.opacities) else 1.0
            if alpha == 0:  # a lane hidden one by one
                continue
            lines.append(StaticLine(x, y, color, mark.line_style, alpha, labels[k]))
    return ChartPicture(
        title=str(fig.figure.title or ""),
        y_limits=(float(fig.y_scale.min), float(fig.y_scale.max)),
        x_ticks=tuple(float(t) for t in fig.x_axis.tick_values),
        x_format=str(fig.x_axis.tick_format),
        x_tick_labels=_tick_labels(fig.x_axis),
        y_ticks=tuple(float(t) for t in fig.y_axis.tick_values),
        y_format=str(fig.y_axis.tick_format),
        y_tick_labels=_tick_labels(fig.y_axis) if isinstance(fig, ParamGridFigure) else (),
        left=int(fig.figure.fig_margin.get("left", LEFT_PX)),
        top=int(fig.figure.fig_margin.get("top", TOP_PX)),
        log_y=bool(fig.log),
        log_x=bool(fig.log_x),
        lines=tuple(lines + over),
        images=tuple(images),
        x_limits=(float(fig.x_scale.min), float(fig.x_scale.max)),
        x_label=str(fig.x_axis.label or ""),
        y_label=str(fig.y_axis.label or ""),
        left_out=left_out,
    )


def _stars(star: Any) -> list[StaticLine]:
    """The best lane's star (a `bqplot.Label` of the hyperparameter charts) as the picture
    draws it: [] while it marks none."""
    x, y = np.asarray(star.x, float), np.asarray(star.y, float)
    return [StaticLine(x, y, BEST_COLOR, "solid", 1.0, "best", dots="star")] if len(x) else []


def _tick_labels(axis: Any) -> tuple[str, ...]:
    """The labels an axis gives its ticks itself (a time axis's, each by `js_key`), or ()."""
    labels = dict(axis.tick_labels or {})
    keys = [js_key(float(t)) for t in axis.tick_values]
    if not labels or not all(k in labels for k in keys):
        return ()
    return tuple(str(labels[k]) for k in keys)


def _latest_runs(runs: list[Any], most: int) -> tuple[list[Any], int]:
    """The latest of ``runs`` whose marks hold at most ``most`` lines (the latest run whatever
    it holds), and how many the older ones hold: a sweep's picture copies no more than it draws
    (`..picture.PICTURE_LINES`)."""
    sizes = [len(r.marks) + len(r.smoothed) + len(r.extras) for r in runs]
    start, kept = len(runs), 0
    while start > 0 and (kept + sizes[start - 1] <= most or start == len(runs)):
        start -= 1
        kept += sizes[start]
    return runs[start:], sum(sizes) - kept


def _unpad(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A vmap lane's own points: the figure pads shorter lanes by repeating their last point
    (steps only grow, so a repeated step is padding)."""
    end = len(x)
    while end > 1 and x[end - 1] == x[end - 2] and (y[end - 1] == y[end - 2]):
        end -= 1
    return x[:end], y[:end]


def drawing_of(grid: ChartGrid, drawn: Sequence[RunDrawing]) -> PlotDrawing:
    """What ``grid`` (a `ChartGrid`) shows now of the runs ``drawn``, in `LivePlot.runs` order
    (the caller holds the plot's lock). Reads the charts' marks and scales, the points each
    run's marks were last set from, and the runs' work counters."""
    index = {d.number: k for k, d in enumerate(drawn)}
    legends = {id(c): entries for c, entries in zip(grid.shown, grid.chart_legends(), strict=False)}
    charts = {
        key: _drawn_chart(key, c, index, [e.label for e in legends.get(id(c), [])])
        for key, c in grid.charts.items()
        if c in grid.shown
    }
    if not grid.drawing:
        charts = {}
    logs = tuple(key for key, c in grid.charts.items() if key in charts and c.log)
    legend = tuple(legend_labels(grid.legend_entries()[0])) if grid.drawing else ()
    work = sum(d.work for d in drawn)
    return PlotDrawing(charts, tuple(grid.notes), logs, str(grid.mode), work, legend)


def _drawn_chart(key: str, fig: Any, index: dict[int, int], legend: list[str]) -> DrawnChart:
    shown = set(fig.figure.marks)
    grid: DrawnGrid | None = None
    lines: list[DrawnLine] = []
    bands: list[DrawnBand] = []
    flags = [np.zeros((0, 2))]
    runs = [r for r in fig.runs.values() if not r.hidden]
    for smoothed in (False, True):
        for r in runs:
            marks, points = (r.smoothed, r.smoothed_points) if smoothed else (r.marks, r.points)
            for i, (mark, (xs, ys)) in enumerate(zip(marks, points, strict=False)):
                lines += _lines_of(r, i, mark, xs, ys, index.get(r.number, -1), smoothed)
    for r in runs:
        for extra in r.extras:
            run = index.get(r.number, -1)
            if isinstance(extra, BandExtra) and all(m in shown for m in extra.marks):
                outer, inner, *median = ((_floats(m.x), _floats(m.y)) for m in extra.marks)
                left = int(extra.band.left_out)
                middle = median[0] if median else None
                bands.append(DrawnBand(run, extra.label, outer, inner, extra.color, left, middle))
            elif isinstance(extra, DivergedEnds):
                flags += [np.c_[_floats(m.x), _floats(m.y)] for m in extra.marks if m in shown]
            elif isinstance(extra, ParamMarks):
                for mark in (m for m in extra.marks[:2] if m in shown):
                    alpha = float(mark.opacities[0]) if len(mark.opacities) else 1.0
                    label, joined = str(mark.labels[0]), mark.stroke_width > 0
                    xy = (_floats(mark.x), _floats(mark.y))
                    drawn = DrawnLine(run, r.name, label, None, "", label, *xy, extra.color, alpha)
                    lines.append(dataclasses.replace(drawn, joined=joined))
                star = extra.marks[2]
                if star in shown and len(star.x):
                    xy = (_floats(star.x), _floats(star.y))
                    star_line = DrawnLine(
                        run, r.name, "best lane", None, "best", "best", *xy, BEST_COLOR, 1.0
                    )
                    lines.append(dataclasses.replace(star_line, joined=False))
            elif isinstance(extra, GridMarks) and extra.points is not None:
                a, b = extra.points.params
                grid = DrawnGrid(
                    params=(str(a), str(b)),
                    field=str(extra.points.field),
                    columns=extra.columns.copy(),
                    rows=extra.rows.copy(),
                    values=extra.values.copy(),
                    diverged=extra.gone.copy(),
                    best=extra.best,
                    log_color=extra.log_color,
                    color_range=extra.color_range,
                )
            elif isinstance(extra, LaneProbe):
                on = any(m in shown and m.visible for m in extra.marks)
                for label, x, y in extra.lines if on else []:
                    xy = (_floats(x), _floats(y))
                    probe = DrawnLine(run, r.name, "", None, "probe", label, *xy, extra.color, 1)
                    lines.append(probe)
    return DrawnChart(
        grid=grid,
        title=key,
        lines=tuple(lines),
        bands=tuple(bands),
        flags=np.concatenate(flags),
        log_y=type(fig.y_scale).__name__ == "LogScale",
        log_x=type(fig.x_scale).__name__ == "LogScale",
        x_range=(float(fig.x_scale.min), float(fig.x_scale.max)),
        y_range=(float(fig.y_scale.min), float(fig.y_scale.max)),
        x_ticks=tuple(float(t) for t in fig.x_axis.tick_values),
        y_ticks=tuple(float(t) for t in fig.y_axis.tick_values),
        x_format=str(fig.x_axis.tick_format),
        y_format=str(fig.y_axis.tick_format),
        legend=tuple(legend),
    )


def _lines_of(
    r: Any, i: int, mark: Any, xs: list[Any], ys: list[Any], run: int, smoothed: bool
) -> list[DrawnLine]:
    """The lines of mark ``i`` of run marks ``r`` (one per lane), from the points it was set."""
    out = []
    labels, colors, alphas = list(mark.labels), list(mark.colors), list(mark.opacities)
    for k, (x, y) in enumerate(zip(xs, ys, strict=True)):
        batched = r.batched
        lane = (r.lane_ids[k] if k < len(r.lane_ids) else k) if batched else None
        role = r.lane_roles[k] if batched and k < len(r.lane_roles) else ""
        out.append(
            DrawnLine(
                run=run,
                run_name=r.name,
                field=r.fields[i],
                lane=lane,
                role=role,
                label=str(labels[k]) if k < len(labels) else "",
                x=_floats(x),
                y=_floats(y),
                color=colors[k % len(colors)] if colors else PALETTE[0],
                opacity=float(alphas[k % len(alphas)]) if alphas else 1.0,
                smoothed=smoothed,
            )
        )
    return out


def _floats(values: Any) -> np.ndarray:
    return np.array(values, np.float64, copy=True).reshape(-1)
