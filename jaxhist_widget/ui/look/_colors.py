"""Colours, dash styles and opacities of the plot's lines, and a legend entry.

Pure (no widgets), from the look table (``look.json``). The live figure, the static picture and
the legends draw with these; which line gets which colour and dash in a chart is the figure's
rule (`jaxhist_widget.ui.figure`), applied the same way to the picture it copies.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ._table import LOOK

__all__ = [
    "AWAY_OPACITY",
    "BAND_OPACITY",
    "DASHES",
    "HEAT_RAMP",
    "LANE_RAMP",
    "LEAD_LANES",
    "LEGEND_LANES",
    "LINE_STYLES",
    "LINE_WIDTH",
    "OTHER_OPACITY",
    "PALETTE",
    "RAW_OPACITY",
    "STAR",
    "LegendLine",
    "field_colors",
    "lane_colors",
    "legend_labels",
    "next_color",
    "ramp_rgb",
]

#: Categorical colors for up to ``len(PALETTE)`` fields or lanes, in this order. Every one has a
#: contrast of at least 3:1 (WCAG, for graphics) on JupyterLab's light (``#ffffff``) and dark
#: (``#111111``) backgrounds, so no line fades into either theme; none is a pure red or green,
#: which would read as error / success. Blue first: the first (often only) plotted field. No
#: two are near-duplicates: every pair is at least 30 apart in CIELAB (ΔE*76), chosen
#: farthest-first in that space, so the first colours are the most distinct.
PALETTE: tuple[str, ...] = tuple(LOOK["palette"])
#: More lines than `PALETTE` holds are colored along this sequential ramp (lane 0 first), whose
#: colors, in between included, keep the same contrast in both themes.
LANE_RAMP: tuple[str, ...] = tuple(LOOK["lane_ramp"])
#: SVG ``stroke-dasharray`` of each line style ("" for a solid line).
DASHES: dict[str, str] = dict(LOOK["dashes"])
#: Under vmap color tells lanes apart, so fields are told apart by dash style.
LINE_STYLES: tuple[str, ...] = tuple(DASHES)
#: Up to this many lanes the legend names each lane (each has its `PALETTE` color); above it
#: shows the lane color ramp.
LEGEND_LANES = len(PALETTE)
#: A five-pointed star in a 22 x 10 legend swatch, as SVG polygon points: the plot's goal
#: (``best = lowest loss``), in the colour of the lane it names best.
STAR = "11,0 12.2,3.6 16,3.6 13,5.9 14.1,9.5 11,7.3 7.9,9.5 9,5.9 6,3.6 9.8,3.6"
#: The sequential colour scale of a hyperparameter grid's cells (low values first): perceptually
#: even, readable for the colour-blind, in light and dark themes (viridis' stops).
HEAT_RAMP: tuple[str, ...] = tuple(LOOK["heat_ramp"])
#: Opacity of a raw line under its smoothed one (TensorBoard keeps it faint too).
RAW_OPACITY: float = LOOK["opacity"]["raw_under_smoothed"]
#: Opacity of a sweep's lane that ran away (`..reduce.bulk_range`): it leaves the chart's y range,
#: across it as often as not (a diverging lane's values change sign), so it stays behind the rest.
AWAY_OPACITY: float = LOOK["opacity"]["ran_away"]
#: Opacity of a sweep's lane past `..series.LEAD_LANES` lanes that is drawn for no role (a lane of
#: the stride): the band, its median and the lanes named best, median, worst lead.
OTHER_OPACITY: float = LOOK["opacity"]["other_lanes"]
#: Past this many lanes a sweep is read by its band over every lane, the band's median and the
#: lanes named for a role; its other lines are faint (the panel's "all lanes" toggle shows then).
LEAD_LANES: int = LOOK["lead_lanes"]
#: Fill opacity of a vector's bands: the outer (min–max) one and the inner (quartiles) one.
BAND_OPACITY: tuple[float, float] = (LOOK["opacity"]["band_outer"], LOOK["opacity"]["band_inner"])
#: Width of a drawn line, in pixels.
LINE_WIDTH: float = LOOK["line_width"]


@dataclass(frozen=True)
class LegendLine:
    """One legend entry: a plotted field of one run, drawn as its lines are."""

    label: str
    #: The run's number (named in the entry when several runs are drawn), or None for a series
    #: that the entry names whichever run draws it (a vector's component lines, a median).
    run: int | None
    #: ``currentColor`` under vmap, where the lanes' colors tell them apart; ``"heat"``: the
    #: colour scale of a grid's cells (`HEAT_RAMP`)
    color: str
    #: one of `LINE_STYLES`, or ``"band"`` (a filled area: a band, a heatmap), ``"flag"`` (a
    #: diverged line's end), ``"arrow-up"`` / ``"arrow-down"`` (where lines leave the y range),
    #: ``"goal"`` (a star: the best lane)
    style: str
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
    return list(_lane_colors(n))


@functools.lru_cache(maxsize=64)
def _lane_colors(n: int) -> tuple[str, ...]:
    # (every update of a sweep restyles its lines: the same few counts, computed once)
    if n <= len(PALETTE):
        return tuple(PALETTE[:n])
    rgb = ramp_rgb(np.linspace(0.0, 1.0, n), LANE_RAMP)
    return tuple("#" + "".join(f"{round(v):02x}" for v in row) for row in rgb)


def ramp_rgb(t: np.ndarray, ramp: Sequence[str] = HEAT_RAMP) -> np.ndarray:
    """The colours at ``t`` (0 .. 1) along ``ramp`` (hex colours, evenly spaced), linear
    between its stops: float ``(len(t), 3)`` in 0 .. 255.

    >>> ramp_rgb(np.array([0.0, 1.0]), ["#000000", "#ff0000"]).tolist()
    [[0.0, 0.0, 0.0], [255.0, 0.0, 0.0]]
    """
    stops = np.array([[int(c[i : i + 2], 16) for i in (1, 3, 5)] for c in ramp], float)
    at = np.clip(np.asarray(t, float), 0.0, 1.0) * (len(stops) - 1)
    j = np.minimum(at.astype(int), len(stops) - 2)
    return stops[j] + (at - j)[:, None] * (stops[j + 1] - stops[j])


def next_color(used: Iterable[str]) -> str:
    """The colour of a new run: the first `PALETTE` colour no drawn run has (so a plot that
    keeps one run draws it blue every time); past ten runs the palette repeats.

    >>> next_color([]) == PALETTE[0], next_color([PALETTE[0]]) == PALETTE[1]
    (True, True)
    """
    used = list(used)
    free = [c for c in PALETTE if c not in used]
    return free[0] if free else PALETTE[len(used) % len(PALETTE)]


def legend_labels(lines: Sequence[LegendLine]) -> list[str]:
    """The text of each legend entry: its label, followed by its run when the entries are of
    several runs. An entry of no one run (``run`` None: a series whichever run draws it) is
    never named after one, and does not count as a run: a band and the component lines of the
    one run drawn must not read as two runs.

    >>> line = LegendLine("x[0]", None, "red", "solid", 1.0)
    >>> band = LegendLine("x q", 1, "red", "band", 1.0)
    >>> legend_labels([line, band])
    ['x[0]', 'x q']
    >>> legend_labels([line, band, LegendLine("x q", 2, "blue", "band", 1.0)])
    ['x[0]', 'x q (run 1)', 'x q (run 2)']
    """
    several = len({line.run for line in lines if line.run is not None}) > 1
    return [
        f"{line.label} (run {line.run})" if several and line.run is not None else line.label
        for line in lines
    ]
