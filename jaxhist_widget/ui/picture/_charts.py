"""The charts of the static picture as SVG: each one's axes, grid, tick labels, lines, bands,
heatmap images and a path's ends, in a grid laid out as the widget's grid lays out its
figures (the look's sizes: `..look.chart_columns`).

Numpy only.
"""

from __future__ import annotations

import base64
import math
from typing import Any
from xml.sax.saxutils import escape, quoteattr

import numpy as np

from ..look import (
    BOTTOM_PX,
    CHART_GAP_PX,
    CHART_HEIGHT_PX,
    DASHES,
    LINE_WIDTH,
    RIGHT_MARGIN_PX,
    STAR,
    TITLED_TOP_PX,
    chart_columns,
    shown_text,
    ticks,
)
from ._legend import draw_legend, legend_items
from ._picture import ChartPicture, StaticImage, StaticLine

__all__ = ["draw_charts", "fit_text", "svg_attr", "svg_text"]

_TEXT, _GRID, _AXIS = "#212121", "#e0e0e0", "#9e9e9e"
#: Farthest a point is drawn off the chart, in px (`_path`).
_FAR = 1e5


def draw_charts(
    out: list[str],
    charts: tuple[ChartPicture, ...],
    x_limits: tuple[float, float],
    top: float,
    width: int,
) -> tuple[float, str]:
    """Draw ``charts`` in a grid from ``top`` (as many columns of at least `CHART_MIN_PX` as
    ``width`` holds), each chart's own legend under it (a grid row as tall as its tallest
    chart and legend); return the bottom of the grid and the charts' clip paths (none: no
    chart drawn yet, no invented axes)."""
    if not charts:
        return top, ""
    n = len(charts)
    cols = chart_columns(width, n)
    cell = (width - CHART_GAP_PX * (cols - 1)) / cols
    height = CHART_HEIGHT_PX
    clips = []
    # each chart's own legend's height (a dry run), and each grid row's top
    below = [_chart_legend([], chart, 0.0, 0.0, cell) for chart in charts]
    rows = math.ceil(n / cols)
    heights = [height + max(below[r * cols : (r + 1) * cols], default=0.0) for r in range(rows)]
    tops = [top + sum(heights[:r]) for r in range(rows)]
    for i, chart in enumerate(charts):
        ox, oy = (i % cols) * (cell + CHART_GAP_PX), tops[i // cols]
        out.append(f'<g class="jhw-chart" data-title={svg_attr(chart.title)}>')
        _chart_legend(out, chart, ox, oy + height, cell)
        margin_top = max(chart.top, TITLED_TOP_PX if chart.title else 0)
        x0, x1 = ox + float(chart.left), ox + cell - RIGHT_MARGIN_PX
        y1, y0 = oy + margin_top, oy + height - BOTTOM_PX
        if chart.title:
            # (centred on the plot, at most the cell's width: a long field name is cut, "…")
            title = fit_text(chart.title, cell - 8, 8.0)
            out.append(
                svg_text(
                    ox + cell / 2 if len(title) < len(chart.title) else (x0 + x1) / 2,
                    oy + 18,
                    title,
                    size=13,
                    anchor="middle",
                    weight="600",
                    cls="jhw-chart-title",
                )
            )
        fx = _scale(chart.x_limits or x_limits, (x0, x1), chart.log_x)
        fy = _scale(chart.y_limits, (y0, y1), chart.log_y)
        _axes(out, chart, fx, fy, (x0, x1, y0, y1))
        clip = "jhw-plot" if i == 0 else f"jhw-plot-{i}"
        clips.append(
            f'<clipPath id="{clip}"><rect x="{x0:.1f}" y="{y1 - 1:.1f}" width="{x1 - x0:.1f}" '
            f'height="{y0 - y1 + 2:.1f}"/></clipPath>'
        )
        out.append(f'<g clip-path="url(#{clip})" fill="none" stroke-width="{LINE_WIDTH}">')
        out += [_image(image, fx, fy) for image in chart.images]
        out += [_dots(line, fx, fy) if line.dots else _path(line, fx, fy) for line in chart.lines]
        out.append("</g></g>")
    return top + sum(heights), "".join(clips)


def _chart_legend(out: list[str], chart: ChartPicture, left: float, y: float, cell: float) -> float:
    """Draw ``chart``'s own legend (its `ChartPicture.legend`) from ``y`` in its cell at
    ``left`` as the widget's row under a chart (8 px in from its edges); return its height
    (0 without one)."""
    if not chart.legend:
        return 0.0
    out.append('<g class="jhw-chart-legend">')
    items = legend_items(chart.legend)
    bottom = draw_legend(out, items, y, left + 8, left + cell - 8, "jhw-chart-legend-item")
    out.append("</g>")
    return bottom - y


def _scale(limits: tuple[float, float], pixels: tuple[float, float], log: bool) -> Any:
    """Data -> pixel as the widget's bqplot scale maps it (NaN for what cannot be drawn)."""
    lo, hi = limits
    if log:
        lo, hi = math.log10(max(lo, 1e-300)), math.log10(max(hi, 1e-300))
    span = (hi - lo) or 1.0
    a, b = pixels

    def f(v: np.ndarray) -> np.ndarray:
        v = np.asarray(v, float)
        if log:
            with np.errstate(divide="ignore", invalid="ignore"):
                v = np.where(v > 0, np.log10(np.where(v > 0, v, 1.0)), np.nan)
        return a + (v - lo) / span * (b - a)

    return f


def _axes(out: list[str], p: ChartPicture, fx: Any, fy: Any, box: tuple[float, ...]) -> None:
    x0, x1, y0, y1 = box
    out.append(f'<g class="jhw-axes" font-size="11" fill="{_TEXT}">')
    own = p.x_tick_labels if len(p.x_tick_labels) == len(p.x_ticks) else None
    for k, t in enumerate(p.x_ticks):
        px = float(fx(t))
        if x0 - 0.5 <= px <= x1 + 0.5:
            text = own[k] if own is not None else _label(p.x_format, t)
            out.append(_grid(px, y1, px, y0))
            out.append(svg_text(px, y0 + 16, text, anchor="middle", cls="x"))
    own_y = p.y_tick_labels if len(p.y_tick_labels) == len(p.y_ticks) else None
    for k, t in enumerate(p.y_ticks):
        py = float(fy(t))
        if math.isfinite(py) and y1 - 0.5 <= py <= y0 + 0.5:
            out.append(_grid(x0, py, x1, py))
            text = own_y[k] if own_y is not None else _label(p.y_format, t, p.log_y)
            out.append(svg_text(x0 - 6, py + 4, text, anchor="end", cls="y"))
    out.append(
        f'<path d="M{x0},{y1}V{y0}H{x1}" fill="none" stroke="{_AXIS}"/>'
        + svg_text((x0 + x1) / 2, y0 + 34, p.x_label, anchor="middle", cls="x-label")
    )
    if p.y_label:  # (turned, left of the tick labels, as bqplot draws it)
        ym = (y0 + y1) / 2
        out.append(
            f'<g transform="rotate(-90 {x0 - p.left + 12:.1f} {ym:.1f})">'
            + svg_text(x0 - p.left + 12, ym, p.y_label, anchor="middle", cls="y-label")
            + "</g>"
        )
    out.append("</g>")


def _grid(a: float, b: float, c: float, d: float) -> str:
    return (
        f'<line x1="{a:.1f}" y1="{b:.1f}" x2="{c:.1f}" y2="{d:.1f}" stroke="{_GRID}" '
        'stroke-dasharray="4,3"/>'
    )


def _path(line: StaticLine, fx: Any, fy: Any) -> str:
    """One line as an SVG path; a NaN (or, on a log axis, a value <= 0) leaves a gap. A point
    far off the chart (a sweep's lane on its way to inf, 1e36 over an axis to 50) is drawn
    `_FAR` px beyond the chart instead, the way it goes: its line leaves the chart as steeply,
    and the SVG holds no 40-digit coordinates, which some renderers drop the path for."""
    px, py = fx(line.x), _near(fy)(line.y)
    ok = np.isfinite(px) & np.isfinite(py)
    parts = []
    start = True
    for x, y, good in zip(px.tolist(), py.tolist(), ok.tolist(), strict=True):
        if not good:
            start = True
            continue
        parts.append(f"{'M' if start else 'L'}{x:.1f} {y:.1f}")
        start = False
    if not parts:  # nothing placeable (a lane hidden one by one): no empty path
        return ""
    if len(parts) == 1 and not line.fill:  # one point (a run of one row): a dot, as live
        x, y = parts[0][1:].split()
        return (
            f'<circle class="jhw-point" data-label={svg_attr(line.label)} cx="{x}" cy="{y}" '
            f'r="2.8" fill="{line.color}" fill-opacity="{line.opacity:.2f}" stroke="none"/>'
        )
    if line.fill:  # a band: one closed polygon, filled, no outline
        return (
            f'<path class="jhw-band" data-label={svg_attr(line.label)} d="{"".join(parts)}Z" '
            f'fill="{line.color}" fill-opacity="{line.fill * line.opacity:.2f}" stroke="none"/>'
        )
    dash = DASHES.get(line.style, "")
    return (
        f'<path class="jhw-line" data-label={svg_attr(line.label)} d="{"".join(parts)}" '
        f'stroke="{line.color}" stroke-opacity="{line.opacity:.2f}"'
        + (f' stroke-dasharray="{dash}"' if dash else "")
        + "/>"
    )


def _dots(line: StaticLine, fx: Any, fy: Any) -> str:
    """A path's starts (rings) or latest points (dots), the end flags of lines that diverged
    (crosses), or where a sweep's lines leave the y range (arrows), as the widget's scatter
    marks."""
    fy = _near(fy)  # (a flag at a runaway's 1e36: off the chart, drawn near it)
    if line.dots == "flag":
        crosses = "".join(
            f'<path data-x="{a:g}" data-y="{b:g}" d="M{x - 2:.2f} {y - 6:.2f}h4v4h4v4h-4v4h-4v-4'
            f'h-4v-4h4z"/>'
            for a, b, x, y in _placed(line, fx, fy)
        )
        return (
            f'<g class="jhw-diverged" fill="{line.color}" stroke="#fff" stroke-width="1">'
            f"{crosses}</g>"
        )
    if line.dots == "star":  # the best lane (a grid's cell), as the widget's star
        stars = "".join(
            f'<path data-x="{a:g}" data-y="{b:g}" transform="translate({x - 11:.2f} {y - 5:.2f})"'
            f' d="M{STAR.replace(" ", "L")}Z"/>'
            for a, b, x, y in _placed(line, fx, fy)
        )
        return (
            f'<g class="jhw-best" fill="{line.color}" stroke="#fff" stroke-width="0.5">{stars}</g>'
        )
    if line.dots in ("up", "down"):
        sign = -1 if line.dots == "up" else 1  # the tip towards the edge the lines leave by
        arrows = "".join(
            f'<path data-x="{a:g}" d="M{x:.2f} {y + 5 * sign:.2f}l4.5 {-9 * sign}h-9z"/>'
            for a, _, x, y in _placed(line, fx, fy)
        )
        return (
            f'<g class="jhw-runaway-{line.dots}" fill="{line.color}" stroke="#fff" '
            f'stroke-width="1">{arrows}</g>'
        )
    fill = line.color if line.dots == "dot" else "none"
    circles = "".join(
        f'<circle cx="{x:.2f}" cy="{y:.2f}" r="3.5"/>'
        for x, y in zip(fx(line.x).tolist(), fy(line.y).tolist(), strict=True)
        if math.isfinite(x) and math.isfinite(y)
    )
    return (
        f'<g class="jhw-path-{line.dots}" fill="{fill}" stroke="{line.color}" stroke-width="2" '
        f'opacity="{line.opacity:.2f}">{circles}</g>'
    )


def _placed(line: StaticLine, fx: Any, fy: Any) -> list[tuple[float, float, float, float]]:
    """Each point of ``line`` the chart can place: its data (x, y) and its pixels (x, y)."""
    return [
        (a, b, x, y)
        for a, b, x, y in zip(
            np.asarray(line.x, float).tolist(),
            np.asarray(line.y, float).tolist(),
            fx(line.x).tolist(),
            fy(line.y).tolist(),
            strict=True,
        )
        if math.isfinite(x) and math.isfinite(y)
    ]


def _near(fy: Any) -> Any:
    """``fy``, its pixels at most `_FAR` off the chart (`_path`)."""
    return lambda v: np.clip(fy(v), -_FAR, _FAR)


def _image(image: StaticImage, fx: Any, fy: Any) -> str:
    """A heatmap's PNG over its steps and values, its cells kept sharp."""
    (xa, xb), (ya, yb) = fx(np.array(image.x)), fy(np.array(image.y))
    if not all(map(math.isfinite, (xa, xb, ya, yb))):
        return ""
    data = base64.b64encode(image.png).decode()
    return (
        f'<image class="jhw-heatmap" x="{xa:.2f}" y="{yb:.2f}" width="{xb - xa:.2f}" '
        f'height="{ya - yb:.2f}" preserveAspectRatio="none" style="image-rendering:pixelated" '
        f'href="data:image/png;base64,{data}"/>'
    )


def svg_text(
    x: float,
    y: float,
    text: str,
    size: int | None = None,
    fill: str | None = None,
    anchor: str | None = None,
    weight: str | None = None,
    cls: str | None = None,
) -> str:
    attrs = [f'x="{x:.1f}"', f'y="{y:.1f}"']
    for name, value in (
        ("font-size", size),
        ("fill", fill),
        ("text-anchor", anchor),
        ("font-weight", weight),
        ("class", cls),
    ):
        if value is not None:
            attrs.append(f'{name}="{value}"')
    return f"<text {' '.join(attrs)}>{escape(shown_text(str(text)))}</text>"


def fit_text(text: str, width: float, char_px: float) -> str:
    """``text`` cut to about ``width`` px at ``char_px`` px a character, ending in "…" when cut
    (a long name would run off the picture, or over its neighbour's).

    >>> fit_text("gradient norm", 100, 8.0), fit_text("loss", 100, 8.0)
    ('gradient no…', 'loss')
    """
    most = max(1, int(width / char_px))
    return text if len(text) <= most else text[: max(1, most - 1)].rstrip() + "…"


def svg_attr(value: object) -> str:
    """``value`` as a quoted XML attribute value, each character XML cannot hold escaped
    (`..look.shown_text`): names are any str, and one control character would make the whole
    picture invalid (a broken image)."""
    return quoteattr(shown_text(str(value)))


def _label(fmt: str, value: float, log: bool = False) -> str:
    """A tick's label as the widget's axis writes it (`ticks.tick_text`)."""
    return ticks.tick_text(fmt, value, log)
