"""Which runs and lanes a plot shows besides the run list's toggles: the run filter (a regular
expression over the runs' names, as TensorBoard's) and the vmap lanes hidden one by one.

Pure: the plot's state keeps them (`jaxhist_widget.ui.plot`), the figure draws what they leave.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable, Sequence
from typing import Any

import numpy as np

from ..reduce import values_extent

__all__ = [
    "MAX_FILTER",
    "check_hidden_lanes",
    "check_run_filter",
    "filter_error",
    "hide_lanes",
    "run_pattern",
]

#: The longest run filter taken (a regex typed into a field; a longer one is no filter).
MAX_FILTER = 1000

Lines = list[tuple[list[np.ndarray], list[np.ndarray], Any]]


def filter_error(text: str) -> str:
    """Why ``text`` is no run filter (Python's regex error), or "" when it is one.

    >>> filter_error("adam|sgd"), filter_error("adam(")
    ('', 'missing ), unterminated subpattern at position 4')
    """
    if len(text) > MAX_FILTER:
        return f"longer than {MAX_FILTER} characters"
    try:
        re.compile(text, re.IGNORECASE)
    except re.error as e:
        return str(e)
    return ""


def run_pattern(text: str) -> re.Pattern[str] | None:
    """The filter ``text`` as a case-insensitive pattern a shown run's name matches somewhere
    (``re.search``), or None: no filter when empty, and when invalid (the view marks it
    invalid; applying half a typed regex would hide runs for a typo).

    >>> run_pattern("ADAM").search("adam lr=0.1") is not None, run_pattern("a(") is None
    (True, True)
    """
    if not text or filter_error(text):
        return None
    return re.compile(text, re.IGNORECASE)


def check_run_filter(value: Any) -> str:
    """``value`` as a run filter: a str that compiles as a regex (None: ""); a TypeError or a
    ValueError naming the fix for anything else (Python gets told, the view shows it invalid).

    >>> check_run_filter("adam|sgd"), check_run_filter(None)
    ('adam|sgd', '')
    """
    if value is None:
        return ""
    if not isinstance(value, str):
        raise TypeError(f"run_filter must be a str (a regular expression) or None, got {value!r}.")
    error = filter_error(value)
    if error:
        raise ValueError(
            f"run_filter {value!r} is no regular expression ({error}); escape special "
            f"characters with re.escape, e.g. run_filter=re.escape({value!r})."
        )
    return value


def check_hidden_lanes(value: Any) -> list[list[int]]:
    """``value`` as hidden lanes: ``[[run number, lane], ...]`` of ints >= 0, each pair once,
    sorted; a TypeError naming the form for anything else.

    >>> check_hidden_lanes([(2, 3), [1, 0], [2, 3]])
    [[1, 0], [2, 3]]
    """
    pairs = list(value) if isinstance(value, Iterable) and not isinstance(value, str) else None
    if pairs is None or not all(_is_pair(p) for p in pairs):
        raise TypeError(f"hidden lanes are [[run number, lane], ...] of ints >= 0, got {value!r}.")
    return [list(p) for p in sorted({(int(p[0]), int(p[1])) for p in pairs})]


def _is_pair(p: Any) -> bool:
    return (
        isinstance(p, (list, tuple))
        and len(p) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in p)
    )


def hide_lanes(
    lines: Sequence[tuple[list[np.ndarray], list[np.ndarray], Any]],
    drawn: Sequence[int],
    hidden: Collection[int],
) -> Sequence[tuple[list[np.ndarray], list[np.ndarray], Any]]:
    """``lines`` (per series: each drawn lane's points and their extent, as
    `RunDrawing.lines`) with each extent the lanes' but those ``hidden`` (run lane indices;
    ``drawn``: the lane of each place), so the y axis fits what is shown. The hidden lanes keep
    their points: the figure draws them transparent (a line of no point would be an invalid
    SVG label position in bqplot, and the lanes' colours and names stay put). When every
    lane is hidden the extents stay every lane's, as the axes keep their range when every run
    is hidden."""
    shown = [lane not in hidden for lane in drawn]
    if all(shown) or not any(shown):
        return lines
    out: Lines = []
    for xs, ys, extent in lines:
        if extent is not None:  # (a smoothed line has none: the raw lines' holds)
            kept = [np.asarray(y, float) for y, s in zip(ys, shown, strict=False) if s]
            extent = _joint(values_extent(y) for y in kept)
        out.append((xs, ys, extent))
    return out


def _joint(extents: Iterable[tuple[float, float, float]]) -> tuple[float, float, float]:
    lo, hi, lo_pos = math.inf, -math.inf, math.inf
    for a, b, c in extents:
        lo, hi, lo_pos = min(lo, a), max(hi, b), min(lo_pos, c)
    return lo, hi, lo_pos
