"""`LivePlot`: a sink that draws every streamed run live in Jupyter, and records it, made of its
parts: the runs it draws (`..series`), the live figure (`..figure`), the panel (`..panel`), and
the static picture of both (`..picture`) in its notebook outputs.
"""

from __future__ import annotations

from ._liveplot import MAX_LANES, MAX_POINTS_LIMIT, MAX_UPDATES_PER_SECOND, PUSH_BUDGET, LivePlot
from ._options import specs as option_specs

__all__ = [
    "MAX_LANES",
    "MAX_POINTS_LIMIT",
    "MAX_UPDATES_PER_SECOND",
    "PUSH_BUDGET",
    "LivePlot",
    "option_specs",
]
