"""The picture's legends: the rows under the charts (what the charts share, a sweep's lanes)
and each chart's own, under that chart (a vector's components, median, band), wrapped like the
widget's HTML legend rows (`..figure`'s `_legend` and `_chart_legends`).

Plain data in, SVG strings out.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from xml.sax.saxutils import escape

from ..look import (
    DASHES,
    HEAT_RAMP,
    LANE_RAMP,
    LEGEND_LANES,
    STAR,
    LegendLine,
    lane_colors,
    legend_labels,
    shown_text,
)

__all__ = ["draw_legend", "legend_items"]

_TEXT = "#212121"
_CHAR_PX = 7.0  # rough advance of one 12 px character, for wrapping the legend

#: One entry as drawn: its text, colour (``"ramp"``: the lanes' colour scale), style, opacity.
Item = tuple[str, str, str, float]


def legend_items(
    lines: Sequence[LegendLine],
    lane_names: Sequence[str] = (),
    lanes: int = 0,
    hidden: Collection[int] = (),
) -> list[Item]:
    """The entries of ``lines`` (named with their run when several runs are named), then the
    lanes ``lane_names`` (each with its colour up to `LEGEND_LANES`, a ramp above; ``hidden``:
    the places of those hidden one by one) of a run of ``lanes`` lanes."""
    items = [
        (text, line.color, line.style, line.opacity)
        for line, text in zip(lines, legend_labels(lines), strict=True)
    ]
    n = len(lane_names)
    if 0 < n <= LEGEND_LANES:
        items += [
            (f"{name} (hidden)", c, "solid", 0.35) if k in hidden else (name, c, "solid", 1.0)
            for k, (name, c) in enumerate(zip(lane_names, lane_colors(n), strict=True))
        ]
    elif n:
        more = f" ({n} of {lanes} drawn)" if lanes > n else ""
        items.append((f"{lane_names[0]} … {lane_names[-1]}{more}", "ramp", "solid", 1.0))
    return items


def draw_legend(
    out: list[str],
    items: Sequence[Item],
    y: float,
    left: float,
    right: float,
    cls: str = "jhw-legend-item",
) -> float:
    """Draw ``items`` in rows from ``y``, between ``left`` and ``right`` (wrapped there);
    return the bottom of the last row (``y`` when there is none). Each entry is a group of
    class ``cls``."""
    x, row = left, y + 14
    for label, color, style, opacity in items:
        w = 30 + _CHAR_PX * len(label)
        if x > left and x + w > right:
            x, row = left, row + 20
        out.append(f'<g class="{cls}">{_swatch(x, row, color, style, opacity)}')
        text = escape(shown_text(label))
        out.append(f'<text x="{x + 27:.1f}" y="{row:.1f}" font-size="12">{text}</text></g>')
        x += w + 14
    return row + 6 if items else y


def _swatch(x: float, row: float, color: str, style: str, opacity: float) -> str:
    """An entry's mark, drawn as its line: a dash-styled line, a band's filled bar, a
    diverged line's cross, an arrow where lines leave the y range, the lanes' colour ramp."""
    if color in ("ramp", "heat"):  # the lanes' (a grid's) colour scale, as a gradient bar
        scale = LANE_RAMP if color == "ramp" else HEAT_RAMP
        stops = "".join(
            f'<stop offset="{k / (len(scale) - 1):.2f}" stop-color="{c}"/>'
            for k, c in enumerate(scale)
        )
        return (
            f'<defs><linearGradient id="jhw-{color}">{stops}</linearGradient></defs>'
            f'<rect x="{x:.1f}" y="{row - 8}" width="22" height="8" fill="url(#jhw-{color})"/>'
        )
    if style == "flag":  # a diverged line's end: a cross, as on the chart
        return f'<path d="M{x + 9:.1f} {row - 10}h4v3h3v4h-3v3h-4v-3h-3v-4h3z" fill="{color}"/>'
    if style == "goal":  # the plot's goal: a star in the best lane's colour, as live
        ink = _TEXT if color == "currentColor" else color
        star = " ".join(
            f"{x + float(px):.1f},{row - 10 + float(py):.1f}"
            for px, py in (p.split(",") for p in STAR.split())
        )
        return f'<polygon points="{star}" fill="{ink}"/>'
    if style in ("arrow-up", "arrow-down"):  # where lines leave the y range, as on the chart
        tip, base = (row - 10, row - 2) if style == "arrow-up" else (row - 2, row - 10)
        return (
            f'<polygon points="{x + 11:.1f},{tip} {x + 16:.1f},{base} {x + 6:.1f},{base}" '
            f'fill="{color}"/>'
        )
    if style == "band":
        return (
            f'<rect x="{x:.1f}" y="{row - 8}" width="22" height="8" fill="{color}" '
            f'fill-opacity="{0.35 * opacity:.2f}"/>'
        )
    dash = DASHES.get(style, "")
    ink = _TEXT if color == "currentColor" else color
    return (
        f'<line x1="{x:.1f}" y1="{row - 4}" x2="{x + 22:.1f}" y2="{row - 4}" '
        f'stroke="{ink}" stroke-width="2.5" stroke-opacity="{opacity:.2f}"'
        + (f' stroke-dasharray="{dash}"' if dash else "")
        + "/>"
    )
