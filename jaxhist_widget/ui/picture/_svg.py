"""The static picture as one SVG document: a header (title, status badge, steps, time, latest
values, the run list), the charts (`._charts`), the legend rows and the notes, drawn in the
kernel from a `Picture` (plain data: no widgets, no browser).

A notebook read without its kernel (exported by nbconvert, shown by GitHub / nbviewer / docs
builders, or saved without widget state) has no widget to draw, so the LivePlot's output also
carries this picture, copied from what the widget draws. SVG rather than PNG: it needs no
rasterizer (no new dependency), its text stays crisp at any zoom, and a browser shows it
offline (nbconvert embeds it as a ``data:`` image).
"""

from __future__ import annotations

import math
from xml.sax.saxutils import escape

from ..look import (
    BADGE_COLORS,
    PICTURE_WIDTH,
    format_count,
    lane_summary,
    notes_line,
    shown_status,
    shown_text,
    status_word,
)
from ._budget import within_budget
from ._charts import draw_charts, fit_text, svg_attr
from ._charts import svg_text as _text
from ._legend import draw_legend, legend_items
from ._picture import Picture
from ._run_list import draw_run_list
from ._summary import first_line, latest_values, summary

__all__ = ["render_svg"]

_FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"
_TEXT, _MUTED = "#212121", "#616161"
_CHAR_PX = 7.0  # rough advance of one 12 px character, for wrapping the legend


def render_svg(p: Picture, width: int = PICTURE_WIDTH) -> str:
    """The picture as a standalone SVG document: a header (title, status badge, steps, time,
    latest values), the figure (grid, tick labels, the lines clipped to the plot area, log or
    linear y) and the legend rows under it, on a white background."""
    p = within_budget(p)
    out: list[str] = []
    y = 8.0
    if p.title:
        y += 18
        out.append(_text(12, y, fit_text(p.title, width - 24, 9.5), size=15, weight="bold"))
    y = _header(out, p, y + 24, width)
    bottom, clips = draw_charts(out, p.charts, p.x_limits, y, width)
    y = _legend(out, p, bottom + 4, width)
    y = _notes(out, p.notes, y, width)
    height = math.ceil(y + 8)
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="{_FONT}" class="jhw-static">'
        f"<title>{escape(shown_text(summary(p.title, p.state)))}</title>"
        f"<defs>{clips}</defs>"
        f'<rect width="100%" height="100%" fill="#fff"/>'
    )
    return head + "".join(out) + "</svg>"


def _header(out: list[str], p: Picture, y: float, width: int) -> float:
    """The panel's facts: badge, the latest run's name, steps, time, rate; then the latest
    values; then the run list (two runs or more). A line of facts or values that does not fit
    ``width`` wraps between its parts (never a count cut: "205 diver…")."""
    s = p.state
    status, shown = str(s.get("status", "idle")), shown_status(s)
    label = status_word(s)
    fill, ink = BADGE_COLORS.get(shown, BADGE_COLORS["unknown"])
    w = 12 + _CHAR_PX * len(label)
    if status == "idle" and not s.get("error"):  # no run: no badge, as live ("no run yet")
        w = -8.0
    else:
        out.append(
            f'<g class="jhw-status" data-status={svg_attr(status)}>'
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
    room = width - 32 - w  # (every line of the header fits the picture's width)
    for k, line in enumerate(_wrapped(facts, room)):
        y += 18 * (k > 0)
        out.append(_text(20 + w, y, line, size=12, fill=_MUTED, cls="jhw-facts"))
    values = [f"{k} {v}" for k, v in latest_values(s)]
    for line in _wrapped(values, width - 24):
        y += 20
        out.append(_text(12, y, line, size=12, cls="jhw-values"))
    if s.get("error"):
        y += 18
        out.append(_text(12, y, first_line(s["error"])[:110], size=12, fill="#d32f2f"))
    y = draw_run_list(out, runs, y, width, str(s.get("run_filter") or ""))
    if s.get("smoothing"):
        y += 18
        weight = f"smoothing {float(s['smoothing']):g} (raw lines faint)"
        out.append(_text(12, y, weight, size=11, fill=_MUTED, cls="jhw-smoothing"))
    return y + 4


def _wrapped(parts: list[str], room: float, sep: str = "  ·  ") -> list[str]:
    """``parts`` joined by ``sep`` into lines of at most ``room`` px (a part longer than a
    line alone is cut to it)."""
    lines: list[str] = []
    for part in parts:
        joined = f"{lines[-1]}{sep}{part}" if lines else part
        if lines and len(joined) * _CHAR_PX <= room:
            lines[-1] = joined
        else:
            lines.append(fit_text(part, room, _CHAR_PX))
    return lines


def _legend(out: list[str], p: Picture, y: float, width: int) -> float:
    """The legend rows under the charts (what the charts share), wrapped like the widget's
    legend row; each chart draws its own entries under itself (`._charts`)."""
    items = legend_items(p.legend, p.lane_names, p.lanes, p.hidden_lanes)
    return draw_legend(out, items, y, 12.0, width - 12)


def _notes(out: list[str], notes: tuple[str, ...], y: float, width: int) -> float:
    """The notes under the legend as the widget shows them by default: one short line
    (`..look.notes_line`), fitted to the width."""
    if not notes:
        return y
    line = fit_text(f"Note: {notes_line(notes)}", width - 24, _CHAR_PX)
    out.append(_text(12, y + 16, line, size=12, fill=_MUTED, cls="jhw-note"))
    return y + 22
