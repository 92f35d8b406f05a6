"""Sizes of the charts, shared by the live figure and the static picture: chart height and
width, margins, and how many charts a row holds.

Pure, from the look table (``look.json``): the static picture lays its charts out as the
widget's grid does, so the two read alike.
"""

from __future__ import annotations

from ._table import LOOK

__all__ = [
    "BOTTOM_PX",
    "CHART_GAP_PX",
    "CHART_HEIGHT_PX",
    "CHART_MIN_PX",
    "LEFT_PX",
    "PICTURE_WIDTH",
    "RIGHT_MARGIN_PX",
    "TICK_CHAR_PX",
    "TITLED_TOP_PX",
    "TOP_PX",
    "chart_columns",
]

_SIZES = LOOK["sizes"]
#: Height of every chart. One height whatever the number of charts: a figure resized after a
#: view drew it left its tick labels where the old height put them (seen in JupyterLab 4).
CHART_HEIGHT_PX: int = _SIZES["chart_height"]
#: Narrowest a chart gets before the grid puts it on a row of its own.
CHART_MIN_PX: int = _SIZES["chart_min_width"]
#: Space between two charts of a row.
CHART_GAP_PX: int = _SIZES["chart_gap"]
#: Top margin of a chart without a title, and of a titled one (the title sits in it).
TOP_PX: int = _SIZES["margin_top"]
TITLED_TOP_PX: int = _SIZES["margin_top_titled"]
#: Bottom margin (the step labels and the axis label) and the left margin before the y labels
#: are measured.
BOTTOM_PX: int = _SIZES["margin_bottom"]
LEFT_PX: int = _SIZES["margin_left"]
#: The figure's right margin without a wide last x label (bqplot centres that label on the
#: plot's right edge, so half of it lies in the margin).
RIGHT_MARGIN_PX: int = _SIZES["margin_right"]
#: Pixels per character of a tick label (bqplot's axis font, as Chromium draws it).
TICK_CHAR_PX: float = _SIZES["tick_char"]
#: Width of the static picture in pixels (a notebook's output column); its height follows.
PICTURE_WIDTH: int = _SIZES["picture_width"]


def chart_columns(width: float, charts: int) -> int:
    """Columns the grid shows ``charts`` charts in at ``width`` pixels (as the CSS grid's
    ``repeat(auto-fit, minmax(CHART_MIN_PX, 1fr))`` lays them out).

    >>> chart_columns(600, 3), chart_columns(1400, 3), chart_columns(1400, 8)
    (1, 3, 4)
    """
    fit = max(1, int((width + CHART_GAP_PX) // (CHART_MIN_PX + CHART_GAP_PX)))
    return max(1, min(fit, charts))
