"""What the static picture shows, as plain data: `Picture` (the panel's state, the charts, the
legend) and its parts, each chart's `ChartPicture` with its `StaticLine` s and `StaticImage` s.

No widgets: the plot copies these from its live figure and panel (``..plot``), and the picture
is drawn from them alone (`._svg.render_svg`), so it is tested on plain values and never reaches
into a widget.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..look import LEFT_PX, TOP_PX, LegendLine

__all__ = ["ChartPicture", "Picture", "StaticImage", "StaticLine"]


@dataclass(frozen=True)
class StaticLine:
    """One drawn line: the points of one field (one lane, one run) as the widget holds them."""

    x: np.ndarray
    y: np.ndarray
    color: str
    style: str  #: a `..look.LINE_STYLES` name
    opacity: float
    label: str  #: the hover label: ``"loss · run 1"``, ``"loss · lane 0 · run 1"``
    fill: float = 0.0  #: a band: the fill opacity of the closed polygon (0: a line)
    #: Points, no line: a path's ends (``"ring"``, ``"dot"``), a diverged line's end (``"flag"``),
    #: where a sweep's lines leave the y range (``"up"``, ``"down"``: arrows at its edge), the
    #: best lane's point (``"star"``), a hyperparameter chart's lanes sharing values (``"dot"``)
    dots: str = ""


@dataclass(frozen=True)
class StaticImage:
    """A heatmap: PNG bytes stretched over steps ``x`` and values ``y`` (low, high)."""

    png: bytes
    x: tuple[float, float]
    y: tuple[float, float]


@dataclass(frozen=True)
class ChartPicture:
    """One chart of the picture, copied from one of the widget's figures."""

    title: str = ""
    y_limits: tuple[float, float] = (0.0, 1.0)
    x_ticks: tuple[float, ...] = ()
    x_format: str = ",.0f"
    #: The x ticks' own labels (a time axis's: ``"30 s"``, ``"12:34:56"``), else () for the
    #: format's.
    x_tick_labels: tuple[str, ...] = ()
    y_ticks: tuple[float, ...] = ()
    y_format: str = ",~g"
    #: The y ticks' own labels (a hyperparameter grid's rows: its values), else ().
    y_tick_labels: tuple[str, ...] = ()
    left: int = LEFT_PX  #: the figure's left margin (fits the widest y label)
    top: int = TOP_PX  #: the figure's top margin (a titled chart's holds its title)
    log_y: bool = False  #: whether its y axis is logarithmic (each chart has its own toggle)
    log_x: bool = False  #: whether its step axis is logarithmic
    lines: tuple[StaticLine, ...] = ()  #: in drawing order (bands first, a path's ends last)
    images: tuple[StaticImage, ...] = ()  #: under the lines
    x_limits: tuple[float, float] | None = None  #: its own x axis (a path), else the steps'
    x_label: str = "step"
    y_label: str = ""  #: the y axis's label (a hyperparameter grid's rows' parameter), or none
    left_out: int = 0  #: older lines the copy left out (`._budget`: it draws the latest)
    #: The entries it names under itself (a vector's components, median, band), not in the
    #: picture's legend rows (`Picture.legend`: what the charts share).
    legend: tuple[LegendLine, ...] = ()


@dataclass(frozen=True)
class Picture:
    """Everything the static picture shows, copied from the widgets (see `snapshot`)."""

    title: str = ""
    #: The panel's run state (`..panel.panel_state`; the keys it lacks read as idle).
    state: Mapping[str, Any] = field(default_factory=dict)
    log_y: bool = False  #: whether every chart is on a log y axis
    x_limits: tuple[float, float] = (0.0, 1.0)
    #: One per chart, in grid order (one when every field shares a chart).
    charts: tuple[ChartPicture, ...] = (ChartPicture(),)
    legend: tuple[LegendLine, ...] = ()
    lane_names: tuple[str, ...] = ()  #: of the latest batched run's drawn lanes
    lanes: int = 0  #: that run's lane count
    hidden_lanes: frozenset[int] = frozenset()  #: places in `lane_names` hidden one by one
    notes: tuple[str, ...] = ()  #: what the runs do not draw as asked (under the legend)
