"""The widget layer: `LivePlot` (a sink that draws), its panel (`LivePanel`, the anywidget
front end's synced traits), the bqplot figure, series, decimation and export.

Loaded lazily (``jhw.LivePlot``): the core runs without anywidget, ipywidgets or bqplot.
"""

from __future__ import annotations

from ._liveplot import MAX_POINTS_LIMIT, LivePlot
from ._panel import LivePanel

__all__ = ["MAX_POINTS_LIMIT", "LivePanel", "LivePlot"]
