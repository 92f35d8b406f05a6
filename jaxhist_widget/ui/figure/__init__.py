"""The live figure: the charts a `LivePlot` shows (bqplot), their marks and their legend row.

`ChartGrid` holds one chart per plotted metric (`LiveFigure`; `PathFigure` for a series against
another; `ParamFigure` for a sweep's lanes against their swept parameter, `ParamGridFigure` a
heatmap of a grid of two) in a grid that reflows; each chart owns the marks of the runs it is
told about (lines, and a vector's band or heatmap, a path's ends: ``_extras``; a diverged
lane's end flag, arrows where a sweep's lines leave the y range, which fits the lanes that did
not run away: ``_sweep``) and places its axes (``_axes``).
It computes no data (the series are `..series`'s) and draws with the look's colours, sizes and
ticks (`..look`).
"""

from __future__ import annotations

from ._chart import Extent, Lines, LiveFigure
from ._extras import BandExtra, HeatmapExtra, PathEnds
from ._grid import CHART_MODES, MAX_CHARTS, ChartGrid, check_charts
from ._params_chart import (
    BEST_COLOR,
    GridMarks,
    ParamFigure,
    ParamGridFigure,
    ParamMarks,
    show_params,
)
from ._path_chart import PathFigure
from ._sweep import (
    DIVERGED_COLOR,
    DivergedEnds,
    LaneProbe,
    RunawayMarks,
    inset,
    show_lane_probe,
)

__all__ = [
    "BEST_COLOR",
    "CHART_MODES",
    "DIVERGED_COLOR",
    "MAX_CHARTS",
    "BandExtra",
    "ChartGrid",
    "DivergedEnds",
    "Extent",
    "GridMarks",
    "HeatmapExtra",
    "LaneProbe",
    "Lines",
    "LiveFigure",
    "ParamFigure",
    "ParamGridFigure",
    "ParamMarks",
    "PathEnds",
    "PathFigure",
    "RunawayMarks",
    "check_charts",
    "inset",
    "show_lane_probe",
    "show_params",
]
