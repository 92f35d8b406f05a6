"""Colors and the legend row of the LivePlot figure.

Pure functions (no widgets): which color a field or a lane gets, and the legend's HTML from the
lines drawn. The figure (`jaxhist_widget.ui._figure`) puts the HTML into its legend widget.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "LANE_RAMP",
    "LEGEND_LANES",
    "LINE_STYLES",
    "PALETTE",
    "LegendLine",
    "field_colors",
    "lane_colors",
    "legend_html",
]

#: Categorical colors for up to ``len(PALETTE)`` fields or lanes, in this order. Every one has a
#: contrast of at least 3:1 (WCAG, for graphics) on JupyterLab's light (``#ffffff``) and dark
#: (``#111111``) backgrounds, so no line fades into either theme; none is a pure red or green,
#: which would read as error / success. Blue first: the first (often only) plotted field.
PALETTE = (
    "#3a78c4", "#d9730d", "#8e5bd0", "#1c8a8a", "#c2478f",
    "#9a7b1d", "#4f63d2", "#b85c38", "#2f8f5b", "#7a7a7a",
)  # fmt: skip
#: More lines than `PALETTE` holds are colored along this sequential ramp (lane 0 first), whose
#: colors, in between included, keep the same contrast in both themes.
LANE_RAMP = ("#5b4fc9", "#2f7fb8", "#1e8f7e", "#8a8a22", "#c7721a")
#: Under vmap color tells lanes apart, so fields are told apart by dash style.
LINE_STYLES = ("solid", "dashed", "dotted", "dash_dotted")
#: Up to this many lanes the legend names each lane (each has its `PALETTE` color); above it
#: shows the lane color ramp.
LEGEND_LANES = len(PALETTE)

_DASHES = {"solid": "", "dashed": "6,3", "dotted": "2,2", "dash_dotted": "6,2,2,2"}


@dataclass(frozen=True)
class LegendLine:
    """One legend entry: a plotted field of one run, drawn as its lines are."""

    label: str
    run: int  #: the run's number (named in the entry when several runs are drawn)
    color: str  #: ``currentColor`` under vmap, where the lanes' colors tell them apart
    style: str  #: one of `LINE_STYLES`, or ``"band"`` (a filled area: a band, a heatmap)
    opacity: float


def field_colors(labels: Sequence[str]) -> list[str]:
    """A color per field, by position: the `PALETTE` in order, the sequential ramp beyond it.

    By position, not hashed from the name: a hash gave the first plot of a notebook olive or red
    (which reads as an error) by chance.

    >>> field_colors(["loss", "lr"]) == list(PALETTE[:2])
    True
    """
    return lane_colors(len(labels))


def lane_colors(n: int) -> list[str]:
    """``n`` line colors: the categorical `PALETTE` for up to ``len(PALETTE)`` lines, else ``n``
    colors along the sequential `LANE_RAMP` (lane 0 first).

    >>> lane_colors(2) == list(PALETTE[:2])
    True
    >>> lane_colors(20)[0] == LANE_RAMP[0] and lane_colors(20)[-1] == LANE_RAMP[-1]
    True
    """
    if n <= len(PALETTE):
        return list(PALETTE[:n])
    ramp = np.array([[int(c[i : i + 2], 16) for i in (1, 3, 5)] for c in LANE_RAMP], float)
    out = []
    for k in range(n):
        t = k / (n - 1) * (len(ramp) - 1)
        j = min(int(t), len(ramp) - 2)
        rgb = ramp[j] + (t - j) * (ramp[j + 1] - ramp[j])
        out.append("#" + "".join(f"{round(v):02x}" for v in rgb))
    return out


def legend_html(lines: Sequence[LegendLine], lane_names: Sequence[str] = (), lanes: int = 0) -> str:
    """The legend row: one entry per line (named with its run when several runs are drawn),
    then the lanes of the latest batched run: ``lane_names`` are its drawn lanes, ``lanes`` its
    lane count (more than drawn above the lane cap). Empty when there is nothing to name."""
    several = len({line.run for line in lines}) > 1
    items = [
        f'<span class="jhw-legend-item" data-run="{line.run}" style="white-space:nowrap">'
        f"{_swatch(line.color, line.style, line.opacity)} "
        f"{html.escape(line.label + (f' (run {line.run})' if several else ''))}</span>"
        for line in lines
    ]
    n = len(lane_names)
    colors = lane_colors(n)
    if 0 < n <= LEGEND_LANES:
        items += [
            f'<span class="jhw-legend-lane" style="white-space:nowrap">'
            f"{_swatch(colors[k], 'solid', 1.0)} {html.escape(lane_names[k])}</span>"
            for k in range(n)
        ]
    elif n:
        more = f" (first {n} of {lanes})" if lanes > n else ""
        ramp = ", ".join(LANE_RAMP)
        items.append(
            f'<span class="jhw-legend-lanes" style="white-space:nowrap">'
            f"{html.escape(lane_names[0])} "
            f'<span style="display:inline-block;width:72px;height:8px;'
            f'vertical-align:middle;background:linear-gradient(to right, {ramp})">'
            f"</span> {html.escape(lane_names[n - 1])}{more}</span>"
        )
    if not items:
        return ""
    return (
        '<div class="jhw-legend-items" style="display:flex;flex-wrap:wrap;'
        "gap:2px 14px;align-items:center;padding:0 8px 4px 8px;"
        "font-size:var(--jp-ui-font-size1, 12px);"
        'color:var(--jp-ui-font-color1, inherit)">' + "".join(items) + "</div>"
    )


def _swatch(color: str, line_style: str, opacity: float) -> str:
    """A short line in the legend, drawn like the plotted line (a band: a filled bar)."""
    if line_style == "band":
        return (
            f'<svg width="22" height="10" style="vertical-align:middle" aria-hidden="true">'
            f'<rect x="1" y="1" width="20" height="8" fill="{color}" '
            f'fill-opacity="{0.35 * opacity:.2f}"/></svg>'
        )
    dash = _DASHES.get(line_style, "")
    dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
    return (
        f'<svg width="22" height="10" style="vertical-align:middle" aria-hidden="true">'
        f'<line x1="1" y1="5" x2="21" y2="5" stroke="{color}" stroke-width="2.5" '
        f'stroke-opacity="{opacity:.2f}"{dash_attr}/></svg>'
    )
