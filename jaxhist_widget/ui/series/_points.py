"""How many points each line of a run gets per update: ``LivePlot(max_points=...)``.

Numpy only. ``max_points`` is points per line: a number is what every line gets, whatever the
lanes that share its mark (one field of one run, all its lanes, is one widget message per
update: 64 lanes of 4000 points a line are a 3 MB message). Left at its default (None), a
line gets at most `DEFAULT_POINTS`, and the lanes of a mark share `MARK_POINTS`, so that no
update's message exceeds 64 KB (62 points a line at 64 lanes).
"""

from __future__ import annotations

__all__ = ["DEFAULT_POINTS", "MARK_POINTS", "band_points", "line_points"]

#: Points a line gets by default (``max_points=None``), a lane of a few sharing a mark too.
DEFAULT_POINTS = 2000
#: Points one mark (one field, all its lanes) sends per update by default: 4000 (int32 step,
#: float64 value) pairs are 48 KB, so no widget message exceeds 64 KB (steps past 2**31 travel
#: as float64: 64,000 bytes). Under vmap the lanes share it (62 points each for 64 lanes).
MARK_POINTS = 4000


def line_points(max_points: int | None, lanes: int) -> tuple[int, int]:
    """Points per line and per path (a series against another) when ``lanes`` lanes share a
    mark: ``max_points`` each, or by default (None) a share of `MARK_POINTS` (a path's
    points are two float64, so three quarters as many), at most `DEFAULT_POINTS`.

    >>> line_points(None, 1), line_points(None, 64), line_points(4000, 64)
    ((2000, 2000), (62, 46), (4000, 4000))
    """
    if max_points is not None:
        return max_points, max_points
    share = min(DEFAULT_POINTS, MARK_POINTS // lanes)
    return share, max(8, min(DEFAULT_POINTS, 3 * MARK_POINTS // 4 // lanes))


def band_points(max_points: int | None) -> int:
    """Points of the band over a sweep's lanes (one polygon per band, a mark of its own)."""
    return min(DEFAULT_POINTS if max_points is None else max_points, MARK_POINTS // 2)
