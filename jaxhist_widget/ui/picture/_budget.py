"""The picture's budget: however many runs, lanes or components a plot draws, its static
picture stays a size a notebook can carry and a run end can redraw.

The picture is saved in the notebook's output and redrawn at every run end, so its size and its
drawing time must not grow with the runs kept: a sweep of hundreds of runs (``keep_runs=True``)
or a run of many vector components would otherwise write megabytes into every saved notebook
and stall each run end. So `within_budget` draws the latest `PICTURE_LINES` lines, shares
`PICTURE_POINTS` vertices among them (each line min/max decimated as the widget's lines are:
`..reduce.minmax_decimate`, a spike or a NaN gap survives) and keeps the legend's latest
`PICTURE_LEGEND` entries; the run list keeps its latest rows (`._run_list`). What it leaves out
is said in a note under the legend: the widget itself still draws everything.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..reduce import minmax_decimate
from ._picture import ChartPicture, Picture, StaticLine

__all__ = ["PICTURE_LEGEND", "PICTURE_LINES", "PICTURE_POINTS", "within_budget"]

#: Vertices over every line and band of one picture (about 12 bytes each in the SVG).
PICTURE_POINTS = 6_000
#: Lines and bands one picture draws at most: the latest (about 120 bytes each).
PICTURE_LINES = 200
#: Legend entries one picture lists at most: the latest.
PICTURE_LEGEND = 24
#: The fewest vertices a line keeps (first, last, one bucket's min, max and gap).
_LEAST = 5


def within_budget(p: Picture) -> Picture:
    """``p`` with at most `PICTURE_LINES` lines of `PICTURE_POINTS` vertices in all and at most
    `PICTURE_LEGEND` legend entries, each part that was cut said in a note.

    >>> import numpy as np
    >>> from jaxhist_widget.ui.picture import ChartPicture, Picture, StaticLine
    >>> x = np.arange(100_000.0)
    >>> line = StaticLine(x, np.sin(x / 1e3), "#000", "solid", 1.0, "loss")
    >>> small = within_budget(Picture(charts=(ChartPicture(lines=(line,) * 2),)))
    >>> [len(s.x) <= PICTURE_POINTS // 2 for s in small.charts[0].lines], small.notes
    ([True, True], ())
    """
    total = sum(len(c.lines) + c.left_out for c in p.charts)
    notes = list(p.notes)
    charts = p.charts
    if total > PICTURE_LINES:  # each chart its share, by the lines it holds
        charts = tuple(
            _latest(c, max(1, PICTURE_LINES * (len(c.lines) + c.left_out) // total)) for c in charts
        )
    kept = sum(len(c.lines) for c in charts)
    if kept < total:
        notes.append(
            f"this picture draws the latest {kept} of {total} lines (the live plot draws them "
            "all; live.history(run) and live.to_pandas(run) hold every run)."
        )
    share = max(_LEAST, PICTURE_POINTS // max(1, kept))
    charts = tuple(
        dataclasses.replace(c, lines=tuple(_decimated(s, share) for s in c.lines)) for c in charts
    )
    legend = p.legend
    if len(legend) > PICTURE_LEGEND:
        notes.append(f"the legend lists the latest {PICTURE_LEGEND} of {len(legend)} entries.")
        legend = legend[-PICTURE_LEGEND:]
    return dataclasses.replace(p, charts=charts, legend=legend, notes=tuple(notes))


def _latest(chart: ChartPicture, most: int) -> ChartPicture:
    """``chart`` with its last ``most`` lines (drawn last: the latest runs, a path's ends)."""
    return dataclasses.replace(chart, lines=chart.lines[-most:] if most else ())


def _decimated(line: StaticLine, most: int) -> StaticLine:
    """``line`` in at most ``most`` vertices: a line min/max decimated; a band (one closed
    polygon: its upper edge forward, its lower edge back) sampled evenly along each edge."""
    n = len(line.x)
    if n <= most or line.dots:
        return line
    if line.fill:
        half = n // 2
        pick = np.unique(
            np.concatenate(
                [
                    np.linspace(0, half - 1, most // 2).round(),
                    np.linspace(half, n - 1, most - most // 2).round(),
                ]
            ).astype(np.int64)
        )
        return dataclasses.replace(line, x=line.x[pick], y=line.y[pick])
    x, y = minmax_decimate(line.x, line.y, most)
    return dataclasses.replace(line, x=x, y=y)
