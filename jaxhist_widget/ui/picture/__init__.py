"""The static picture of a `LivePlot`: an SVG and a one-line text summary, drawn in the kernel,
for every reader without the live widget (an exported notebook, GitHub, nbviewer, a saved file).

Plain data in (`Picture`: what the widget shows, copied by the plot), SVG out (`render_svg`);
what the figure shows, per chart, for a test or a user to read (`PlotDrawing`, `._drawn`);
numpy only, no widgets, and nothing of the live figure: both draw with the look (`..look`).
"""

from __future__ import annotations

from ._budget import PICTURE_LINES, PICTURE_POINTS, within_budget
from ._drawn import DrawnBand, DrawnChart, DrawnGrid, DrawnLine, PlotDrawing
from ._files import PNG_HINT, png_from_svg, save_svg
from ._picture import ChartPicture, Picture, StaticImage, StaticLine
from ._run_list import run_texts
from ._summary import first_line, latest_values, summary
from ._svg import render_svg

__all__ = [
    "PICTURE_LINES",
    "PICTURE_POINTS",
    "PNG_HINT",
    "ChartPicture",
    "DrawnBand",
    "DrawnChart",
    "DrawnGrid",
    "DrawnLine",
    "Picture",
    "PlotDrawing",
    "StaticImage",
    "StaticLine",
    "first_line",
    "latest_values",
    "png_from_svg",
    "render_svg",
    "run_texts",
    "save_svg",
    "summary",
    "within_budget",
]
