"""The widget layer: `LivePlot` (a sink that draws) and its panel (`LivePanel`), by concern:

- ``look/``: one look (colours, dashes, sizes, ticks, number formats, status words), a table
  the panel's JavaScript reads too;
- ``reduce/``: the reductions a row goes through (decimation, bands, histograms, paths,
  smoothing, outliers): numpy only;
- ``series/``: what a plot draws of a run (the options, each run's series, windows of steps);
- ``figure/``: the live figure and its marks (bqplot);
- ``panel/``: the panel (anywidget traits and its front end, ``js/``);
- ``picture/``: the static picture (SVG, text) for readers without the widget;
- ``plot/``: `LivePlot`, composed of those parts.

Loaded lazily (``jhw.LivePlot``): the core runs without anywidget, ipywidgets or bqplot.
"""

from __future__ import annotations

from .panel import LivePanel
from .plot import MAX_POINTS_LIMIT, LivePlot, option_specs

__all__ = ["MAX_POINTS_LIMIT", "LivePanel", "LivePlot", "option_specs"]
