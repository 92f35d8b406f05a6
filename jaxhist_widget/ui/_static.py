"""A static picture of a `LivePlot`: an SVG and a one-line text summary, drawn in the kernel.

Layer 3 (widget) by role, numpy only: no widgets and no browser. A notebook read without its
kernel (exported by nbconvert, shown by GitHub / nbviewer / docs builders, or saved without
widget state) has no widget to draw, so the LivePlot's output also carries this picture. It is
drawn from what the widget draws: `snapshot` copies the figure's decimated lines, colors, dash
styles, scale limits, tick values and tick formats, its legend entries, and the panel's run
state (`._panel_state.panel_state`); `render_svg` and `summary` are pure functions of that copy.

SVG rather than PNG: it needs no rasterizer (no new dependency), its text stays crisp at any
zoom, and a browser shows it offline (nbconvert embeds it as a ``data:`` image).

`fallback_html` is the same picture for a second output after the widget's: JupyterLab and
Notebook 7 draw the widget view even when its model is gone ("model not found"), never the next
mimetype, so the picture is shown there by CSS when the view before it holds no live plot.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from xml.sax.saxutils import escape, quoteattr

import numpy as np

from ._extras import BAND_OPACITY, BandExtra, HeatmapExtra, PathEnds
from ._legend import LANE_RAMP, LEGEND_LANES, LegendLine, lane_colors
from ._static_chart import DASHES as _DASHES
from ._static_chart import ChartPicture, StaticImage, StaticLine, draw_charts
from ._static_chart import svg_text as _text
from ._static_runs import draw_run_list
from ._static_text import (
    first_line,
    format_count,
    lane_summary,
    latest_values,
    shown_status,
    status_word,
    summary,
)

__all__ = [
    "WIDTH",
    "ChartPicture",
    "Picture",
    "StaticLine",
    "fallback_html",
    "render_svg",
    "snapshot",
    "summary",
    "synced_state",
]

#: Width of the picture in pixels (a notebook's output column); the height follows the content.
WIDTH = 720
_FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"
_TEXT, _MUTED = "#212121", "#616161"
_CHAR_PX = 7.0  # rough advance of one 12 px character, for wrapping the legend
#: Status badge colors: the panel's (``js/panel.css``) defaults outside JupyterLab's theme.
_STATUS_COLORS = {
    "running": ("#1976d2", "#fff"),
    "converged": ("#616161", "#fff"),
    "max_steps": ("#f57c00", "#000"),
    "stopped": ("#ffa726", "#000"),
    "interrupted": ("#e57373", "#000"),
    "diverged": ("#ffa726", "#000"),
    "compiling": ("#bdbdbd", "#000"),
    "error": ("#d32f2f", "#fff"),
}


@dataclass(frozen=True)
class Picture:
    """Everything the static picture shows, copied from the widgets (see `snapshot`)."""

    title: str = ""
    #: The panel's run state (`._panel_state.panel_state`; the keys it lacks read as idle).
    state: Mapping[str, Any] = field(default_factory=dict)
    log_y: bool = False  #: whether every chart is on a log y axis
    x_limits: tuple[float, float] = (0.0, 1.0)
    #: One per chart, in grid order (one when every field shares a chart).
    charts: tuple[ChartPicture, ...] = (ChartPicture(),)
    legend: tuple[LegendLine, ...] = ()
    lane_names: tuple[str, ...] = ()  #: of the latest batched run's drawn lanes
    lanes: int = 0  #: that run's lane count
    notes: tuple[str, ...] = ()  #: what the runs do not draw as asked (under the legend)


def snapshot(grid: Any, panel: Any) -> Picture:
    """Copy what a `ChartGrid` and its `LivePanel` show now (the caller holds the plot's lock).

    Reads their attributes only: the marks' points, colors, styles and opacities, the scales'
    limits, the axes' tick values and formats, the legend's entries and the panel's synced
    traits.
    """
    charts = tuple(_chart(c) for c in grid.shown)
    lines, names, lanes = grid.legend_entries()
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
        notes=tuple(grid.notes),
    )


def synced_state(panel: Any) -> dict[str, Any]:
    """The panel's run state (`panel_state`'s keys): its synced traits but the widget
    plumbing."""
    keys = [k for k, t in panel.traits().items() if t.metadata.get("sync") and k[0] != "_"]
    plumbing = ("figure", "figures", "layout", "tooltip")
    return {k: getattr(panel, k) for k in keys if k not in plumbing}


def _chart(fig: Any) -> ChartPicture:
    """One chart's copy: its title, scales, ticks, margin, shown lines (a hidden run's are not;
    a smoothed line over its faint raw one), each with its colour, dash and opacity, and the
    shown runs' extras (bands, heatmap images, a path's ends)."""
    lines, images, over = [], [], []
    for r in fig._runs.values():
        if r.hidden:
            continue
        for extra in r.extras:
            if isinstance(extra, BandExtra):
                for mark, fill in zip(extra.marks, BAND_OPACITY, strict=True):
                    x, y = np.asarray(mark.x, float), np.asarray(mark.y, float)
                    lines.append(StaticLine(x, y, extra.color, "solid", 1.0, mark.labels[0], fill))
            elif isinstance(extra, HeatmapExtra) and extra.png:
                images.append(StaticImage(extra.png, extra.x_limits, extra.y_limits))
            elif isinstance(extra, PathEnds):
                for xy, kind in ((extra.starts, "ring"), (extra.ends, "dot")):
                    for k, (x, y) in enumerate(np.asarray(xy, float).reshape(-1, 2)):
                        color = extra.colors[k % len(extra.colors)]
                        point = StaticLine(
                            np.array([x]), np.array([y]), color, "solid", 1.0, "", dots=kind
                        )
                        over.append(point)
    for _run, mark in fig.drawn():
        xs, ys = np.atleast_2d(mark.x), np.atleast_2d(mark.y)
        labels = list(mark.labels)
        for k in range(min(len(xs), len(ys), len(labels))):
            x, y = _unpad(np.asarray(xs[k], float), np.asarray(ys[k], float))
            color = mark.colors[k % len(mark.colors)] if len(mark.colors) else "#3a78c4"
            alpha = float(mark.opacities[k % len(mark.opacities)]) if len(mark.opacities) else 1.0
            lines.append(StaticLine(x, y, color, mark.line_style, alpha, labels[k]))
    return ChartPicture(
        title=str(fig.figure.title or ""),
        y_limits=(float(fig.y_scale.min), float(fig.y_scale.max)),
        x_ticks=tuple(float(t) for t in fig.x_axis.tick_values),
        x_format=str(fig.x_axis.tick_format),
        y_ticks=tuple(float(t) for t in fig.y_axis.tick_values),
        y_format=str(fig.y_axis.tick_format),
        left=int(fig.figure.fig_margin.get("left", 48)),
        top=int(fig.figure.fig_margin.get("top", 16)),
        log_y=bool(fig.log),
        log_x=bool(fig.log_x),
        lines=tuple(lines + over),
        images=tuple(images),
        x_limits=(float(fig.x_scale.min), float(fig.x_scale.max)),
        x_label=str(fig.x_axis.label or ""),
    )


def _unpad(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A vmap lane's own points: the figure pads shorter lanes by repeating their last point
    (steps only grow, so a repeated step is padding)."""
    end = len(x)
    while end > 1 and x[end - 1] == x[end - 2] and (y[end - 1] == y[end - 2]):
        end -= 1
    return x[:end], y[:end]


# -------------------------------------------------------------------------------- svg


def render_svg(p: Picture, width: int = WIDTH) -> str:
    """The picture as a standalone SVG document: a header (title, status badge, steps, time,
    latest values), the figure (grid, tick labels, the lines clipped to the plot area, log or
    linear y) and the legend rows under it, on a white background."""
    out: list[str] = []
    y = 8.0
    if p.title:
        y += 18
        out.append(_text(12, y, p.title, size=15, weight="bold"))
    y = _header(out, p, y + 24)
    bottom, clips = draw_charts(out, p.charts, p.x_limits, y, width)
    y = _legend(out, p, bottom + 4, width)
    y = _notes(out, p.notes, y, width)
    height = math.ceil(y + 8)
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="{_FONT}" class="jhw-static">'
        f"<title>{escape(summary(p.title, p.state))}</title>"
        f"<defs>{clips}</defs>"
        f'<rect width="100%" height="100%" fill="#fff"/>'
    )
    return head + "".join(out) + "</svg>"


def _header(out: list[str], p: Picture, y: float) -> float:
    """The panel's facts: badge, the latest run's name, steps, time, rate; then the latest
    values; then the run list (two runs or more)."""
    s = p.state
    status, shown = str(s.get("status", "idle")), shown_status(s)
    label = status_word(s)
    fill, ink = _STATUS_COLORS.get(shown, ("#757575", "#fff"))
    w = 12 + _CHAR_PX * len(label)
    out.append(
        f'<g class="jhw-status" data-status="{escape(status)}">'
        f'<rect x="12" y="{y - 13}" width="{w:.0f}" height="18" rx="9" fill="{fill}"/>'
        + _text(12 + w / 2, y, label, size=12, fill=ink, anchor="middle")
        + "</g>"
    )
    facts = []
    runs = list(s.get("runs") or [])
    if runs:
        facts.append(str(runs[-1].get("name", "")))
    if s.get("max_steps"):
        facts.append(f"{format_count(s.get('step', 0))} / {format_count(s['max_steps'])} steps")
        if s.get("elapsed"):
            facts.append(f"elapsed {float(s['elapsed']):.2f} s")
        if s.get("lanes"):
            lanes = lane_summary(s.get("lane_statuses") or {}, s.get("lane_names") or {})
            facts.append(f"{s['lanes']} lanes" + (f": {lanes}" if lanes else ""))
    elif status == "idle":
        facts.append("no run yet")
    out.append(_text(20 + w, y, "  ·  ".join(facts), size=12, fill=_MUTED, cls="jhw-facts"))
    values = "  ·  ".join(f"{k} {v}" for k, v in latest_values(s))
    if values:
        y += 20
        out.append(_text(12, y, values, size=12, cls="jhw-values"))
    if s.get("error"):
        y += 18
        out.append(_text(12, y, first_line(s["error"])[:110], size=12, fill="#d32f2f"))
    y = draw_run_list(out, runs, y, WIDTH)
    if s.get("smoothing"):
        y += 18
        weight = f"smoothing {float(s['smoothing']):g} (raw lines faint)"
        out.append(_text(12, y, weight, size=11, fill=_MUTED, cls="jhw-smoothing"))
    return y + 4


def _legend(out: list[str], p: Picture, y: float, width: int) -> float:
    """Legend entries in rows under the figure, wrapped like the widget's legend row."""
    several = len({line.run for line in p.legend}) > 1
    items = [
        (
            line.label + (f" (run {line.run})" if several else ""),
            line.color,
            line.style,
            line.opacity,
        )
        for line in p.legend
    ]
    n = len(p.lane_names)
    if 0 < n <= LEGEND_LANES:
        items += [
            (name, c, "solid", 1.0) for name, c in zip(p.lane_names, lane_colors(n), strict=True)
        ]
    elif n:
        more = f" (first {n} of {p.lanes})" if p.lanes > n else ""
        items.append((f"{p.lane_names[0]} … {p.lane_names[-1]}{more}", "ramp", "solid", 1.0))
    x, row = 12.0, y + 14
    for label, color, style, opacity in items:
        w = 30 + _CHAR_PX * len(label)
        if x > 12 and x + w > width - 12:
            x, row = 12.0, row + 20
        if color == "ramp":  # the lanes' color scale, as a gradient bar
            stops = "".join(
                f'<stop offset="{k / (len(LANE_RAMP) - 1):.2f}" stop-color="{c}"/>'
                for k, c in enumerate(LANE_RAMP)
            )
            swatch = (
                f'<defs><linearGradient id="jhw-ramp">{stops}</linearGradient></defs>'
                f'<rect x="{x:.1f}" y="{row - 8}" width="22" height="8" fill="url(#jhw-ramp)"/>'
            )
        elif style == "band":
            swatch = (
                f'<rect x="{x:.1f}" y="{row - 8}" width="22" height="8" fill="{color}" '
                f'fill-opacity="{0.35 * opacity:.2f}"/>'
            )
        else:
            dash = _DASHES.get(style, "")
            ink = _TEXT if color == "currentColor" else color
            swatch = (
                f'<line x1="{x:.1f}" y1="{row - 4}" x2="{x + 22:.1f}" y2="{row - 4}" '
                f'stroke="{ink}" stroke-width="2.5" stroke-opacity="{opacity:.2f}"'
                + (f' stroke-dasharray="{dash}"' if dash else "")
                + "/>"
            )
        out.append(f'<g class="jhw-legend-item">{swatch}{_text(x + 27, row, label, size=12)}</g>')
        x += w + 14
    return row + 6 if items else y


def _notes(out: list[str], notes: tuple[str, ...], y: float, width: int) -> float:
    """The notes under the legend, wrapped to the width, as the widget's legend row ends."""
    per_line = max(20, int((width - 24) / _CHAR_PX))
    for note in notes:
        words, line = f"Note: {note}".split(), ""
        for word in [*words, None]:
            if word is not None and len(line) + len(word) + 1 <= per_line:
                line = f"{line} {word}" if line else word
                continue
            y += 16
            out.append(_text(12, y, line, size=12, fill=_MUTED, cls="jhw-note"))
            line = word or ""
    return y + (6 if notes else 0)


# ------------------------------------------------------------------ the picture's output

#: The picture's output follows the widget's. It hides where the output before it holds a live
#: LivePlot view (JupyterLab / Notebook 7 with the kernel, an export whose widget manager
#: loaded), and shows everywhere else: a reopened notebook whose widget model is gone (where
#: the widget output's "model not found" text is hidden instead), an export offline, a renderer
#: without widgets. The last rule is for a view whose kernel connection is gone (a restarted
#: kernel, a view restored from saved widget state): ipywidgets marks each of its widgets with a
#: broken-link icon, a ``::before`` flex item that, inside the bqplot figure, pushes the marks'
#: SVG (in the flow) right of the axes' SVG (absolutely placed): lines off their axes. The panel
#: already says "kernel restarted"; the icons go.
_FALLBACK_CSS = (
    ".jp-OutputArea-child:has(.jhw-liveplot) + .jp-OutputArea-child:has(img.jhw-static)"
    "{display:none}"
    ".jp-OutputArea-child:has(+ .jp-OutputArea-child img.jhw-static)"
    ":has(:is(.jupyter-widgets,[data-mime-type*=widget-view])):not(:has(.jhw-liveplot))"
    "{display:none}"
    ".jhw-liveplot.jupyter-widgets-disconnected::before,"
    ".jhw-liveplot .jupyter-widgets-disconnected::before{display:none}"
)


def fallback_html(svg: str, text: str) -> str:
    """The picture as an image, for the output that follows the widget's: shown wherever the
    live widget is not (see `_FALLBACK_CSS`). It is the one output a run's end updates, so a
    live widget view is never re-rendered (JupyterLab would create a new view)."""
    data = base64.b64encode(svg.encode()).decode()
    return (
        f"<style>{_FALLBACK_CSS}</style>"
        f'<img class="jhw-static" style="max-width:100%" alt={quoteattr(text)} '
        f'src="data:image/svg+xml;base64,{data}">'
    )
