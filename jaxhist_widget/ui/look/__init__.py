"""The plot's one look: colours, dash styles, opacities, sizes, tick choice, number formats and
status words, shared by the live figure (`..figure`), the static picture (`..picture`) and the
panel's JavaScript (``js/base/look.js``).

Pure: no widgets. The data is one table, ``look.json`` (`LOOK`), which both sides read and whose
examples both test suites check; the rules that read it are here (``ticks`` is the axes'
arithmetic).
"""

from __future__ import annotations

from . import _ticks as ticks
from ._colors import (
    AWAY_OPACITY,
    BAND_OPACITY,
    DASHES,
    HEAT_RAMP,
    LANE_RAMP,
    LEAD_LANES,
    LEGEND_LANES,
    LINE_STYLES,
    LINE_WIDTH,
    OTHER_OPACITY,
    PALETTE,
    RAW_OPACITY,
    STAR,
    LegendLine,
    field_colors,
    lane_colors,
    legend_labels,
    next_color,
    ramp_rgb,
)
from ._numbers import d3_format, format_count, format_duration, format_value, si_label
from ._sizes import (
    BOTTOM_PX,
    CHART_GAP_PX,
    CHART_HEIGHT_PX,
    CHART_MIN_PX,
    LEFT_PX,
    PICTURE_WIDTH,
    RIGHT_MARGIN_PX,
    TICK_CHAR_PX,
    TITLED_TOP_PX,
    TOP_PX,
    chart_columns,
)
from ._table import LOOK, TABLE_PATH
from ._time_ticks import X_AXES, X_LABELS, check_x_axis, js_key, time_limits, time_ticks
from ._words import (
    BADGE_COLORS,
    CAN_DIVERGE,
    COMPILING_TEXT,
    STATUS_LABELS,
    lane_summary,
    notes_line,
    short_note,
    shown_status,
    shown_text,
    status_word,
)

__all__ = [
    "AWAY_OPACITY",
    "BADGE_COLORS",
    "BAND_OPACITY",
    "BOTTOM_PX",
    "CAN_DIVERGE",
    "CHART_GAP_PX",
    "CHART_HEIGHT_PX",
    "CHART_MIN_PX",
    "COMPILING_TEXT",
    "DASHES",
    "HEAT_RAMP",
    "LANE_RAMP",
    "LEAD_LANES",
    "LEFT_PX",
    "LEGEND_LANES",
    "LINE_STYLES",
    "LINE_WIDTH",
    "LOOK",
    "OTHER_OPACITY",
    "PALETTE",
    "PICTURE_WIDTH",
    "RAW_OPACITY",
    "RIGHT_MARGIN_PX",
    "STAR",
    "STATUS_LABELS",
    "TABLE_PATH",
    "TICK_CHAR_PX",
    "TITLED_TOP_PX",
    "TOP_PX",
    "X_AXES",
    "X_LABELS",
    "LegendLine",
    "chart_columns",
    "check_x_axis",
    "d3_format",
    "field_colors",
    "format_count",
    "format_duration",
    "format_value",
    "js_key",
    "lane_colors",
    "lane_summary",
    "legend_labels",
    "next_color",
    "notes_line",
    "ramp_rgb",
    "short_note",
    "shown_status",
    "shown_text",
    "si_label",
    "status_word",
    "ticks",
    "time_limits",
    "time_ticks",
]
