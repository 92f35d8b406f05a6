"""The legend row under the live charts, as HTML: its entries (`LegendLine`: what the chart
draws), then the lanes of the latest batched run.

Pure (no widgets): the grid (`._grid.ChartGrid`) puts the HTML into its legend widget. The
static picture draws the same entries itself (`jaxhist_widget.ui.picture`).
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from ..look import (
    DASHES,
    HEAT_RAMP,
    LANE_RAMP,
    LEGEND_LANES,
    STAR,
    LegendLine,
    lane_colors,
    legend_labels,
)

__all__ = ["grid_legend", "legend_html"]


def legend_html(
    lines: Sequence[LegendLine],
    lane_names: Sequence[str] = (),
    lanes: int = 0,
    keys: Sequence[tuple[int, int, bool]] = (),
) -> str:
    """The legend row: one entry per line (named with its run when several runs are drawn),
    then the lanes of the latest batched run: ``lane_names`` are its drawn lanes, ``lanes`` its
    lane count (more than drawn above the lane cap), ``keys`` each one's run number, lane index
    and whether it is hidden (a click on its entry toggles it: ``js/panel/kernel.js``). Empty when
    there is nothing to name."""
    items = [
        f'<span class="jhw-legend-item"{_run_attr(line.run)} style="white-space:nowrap">'
        f"{_swatch(line.color, line.style, line.opacity)} {html.escape(text)}</span>"
        for line, text in zip(lines, legend_labels(lines), strict=True)
    ]
    n = len(lane_names)
    colors = lane_colors(n)
    if 0 < n <= LEGEND_LANES:
        toggles = list(keys) if len(keys) == n else [None] * n
        items += [
            f'<span class="jhw-legend-lane"{_lane_attrs(toggles[k], lane_names[k])} '
            f'style="white-space:nowrap">'
            f"{_swatch(colors[k], 'solid', 1.0)} {html.escape(lane_names[k])}</span>"
            for k in range(n)
        ]
    elif n:
        more = f" ({n} of {lanes} drawn)" if lanes > n else ""
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


def grid_legend(
    entries: Sequence[tuple[list[LegendLine], list[str], int, list[tuple[int, int, bool]]]],
    order: Sequence[str],
) -> tuple[list[LegendLine], list[str], int, list[tuple[int, int, bool]]]:
    """One legend for the charts' legend ``entries`` (each chart's, less what it shows under
    itself: `._chart_legends`): the series that share a chart, once each, in the fields'
    ``order``, then the latest shown batched run's lanes (runs: the panel's run list) and
    their keys (run, lane, hidden)."""
    lines: dict[str, LegendLine] = {}
    names: list[str] = []
    lanes = 0
    keys: list[tuple[int, int, bool]] = []
    for chart_lines, chart_names, chart_lanes, chart_keys in entries:
        for line in chart_lines:
            lines.setdefault(line.label, line)
        if chart_names:
            names, lanes, keys = chart_names, chart_lanes, chart_keys
    where = {label: i for i, label in enumerate(order)}
    ordered = sorted(lines.values(), key=lambda line: where.get(line.label, len(where)))
    return ordered, names, lanes, keys


def _lane_attrs(key: tuple[int, int, bool] | None, name: str) -> str:
    """A lane entry's toggle: its run and lane as data attributes, whether it is hidden (drawn
    struck through: ``js/panel.css``), and what a click does; nothing when not known."""
    if key is None:
        return ""
    run, lane, hidden = key
    verb = "Show" if hidden else "Hide"
    return (
        f' data-run="{run}" data-lane="{lane}" data-hidden="{str(hidden).lower()}"'
        f' role="button" tabindex="0" title="{verb} {html.escape(name, quote=True)}"'
    )


def _run_attr(run: int | None) -> str:
    """The entry's run as a ``data-run`` attribute (none for a series of whichever run)."""
    return "" if run is None else f' data-run="{run}"'


def _swatch(color: str, line_style: str, opacity: float) -> str:
    """A short line in the legend, drawn like the plotted line (a band: a filled bar)."""
    if line_style == "flag":  # a diverged line's end (`._sweep.DivergedEnds`): a cross
        return (
            f'<svg width="22" height="10" style="vertical-align:middle" aria-hidden="true">'
            f'<path d="M9 1h4v3h3v4h-3v3h-4v-3h-3v-4h3z" transform="translate(0 -0.5)" '
            f'fill="{color}" fill-opacity="{opacity:.2f}"/></svg>'
        )
    if line_style == "goal":  # the plot's goal (the best lane's colour): a star
        return (
            f'<svg width="22" height="10" style="vertical-align:middle" aria-hidden="true">'
            f'<polygon points="{STAR}" fill="{color}" fill-opacity="{opacity:.2f}"/></svg>'
        )
    if line_style in ("arrow-up", "arrow-down"):  # where lines leave (`._sweep.RunawayMarks`)
        points = "11,1 16,9 6,9" if line_style == "arrow-up" else "6,1 16,1 11,9"
        return (
            f'<svg width="22" height="10" style="vertical-align:middle" aria-hidden="true">'
            f'<polygon points="{points}" fill="{color}" fill-opacity="{opacity:.2f}"/></svg>'
        )
    if color == "heat":  # a grid's colour scale (`..look.HEAT_RAMP`), low to high
        return (
            f'<span style="display:inline-block;width:22px;height:8px;vertical-align:middle;'
            f'background:linear-gradient(to right, {", ".join(HEAT_RAMP)})"></span>'
        )
    if line_style == "band":
        return (
            f'<svg width="22" height="10" style="vertical-align:middle" aria-hidden="true">'
            f'<rect x="1" y="1" width="20" height="8" fill="{color}" '
            f'fill-opacity="{0.35 * opacity:.2f}"/></svg>'
        )
    dash = DASHES.get(line_style, "")
    dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
    return (
        f'<svg width="22" height="10" style="vertical-align:middle" aria-hidden="true">'
        f'<line x1="1" y1="5" x2="21" y2="5" stroke="{color}" stroke-width="2.5" '
        f'stroke-opacity="{opacity:.2f}"{dash_attr}/></svg>'
    )
