"""A sweep's lanes side by side: each lane's extent (`LaneSpread`), and which lanes ran away from
the rest, so that a y axis fits the others (`bulk_range`).

Numpy only, arrays over the lanes: no loop over them. A sweep of 4,096 learning rates where 200
lanes diverge has those lanes' values on their way to infinity (1e36 a step before they reach
it); a y axis fitting every lane puts the 3,900 lanes that converged on one flat line at 0.
`bulk_range` leaves out the lanes that run away, by a fence over the lanes' extents (Tukey's
"far out" fence, made for a skewed few): the y axis fits the bulk, the runaways leave the chart
at its edge, and the chart says how many they are. A lane runs away when it reaches past the
fence and stays there (its last finite value is past it too) or ends at NaN or ±inf: a lane
that spiked once and came back is no runaway (leaving spikes out is "ignore outliers").
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

__all__ = [
    "FENCE",
    "FENCE_BELOW",
    "LOG_DECADES",
    "Bulk",
    "LaneSpread",
    "bulk_decades",
    "bulk_range",
    "decades",
]

#: How far past the bulk a lane must reach to run away: this many times the bulk's span (the
#: upper quartile of the lanes' maxima less the lower quartile of their minima) above the upper
#: quartile, so that the bulk fills two thirds of the axis at least; on a log axis a decade at
#: least ("sits decades above the rest").
FENCE = 0.5
#: The same below the lower quartile (a linear axis only): farther, since a lane below the rest
#: is mostly one that converged lower (a loss); what runs away below runs to -inf.
FENCE_BELOW = 3.0
#: Fewest lanes with values for a fence: up to ten, every lane counts, as each is a line of its
#: own colour the legend names (the palette's ten), read one by one, not a bulk.
MIN_LANES = 11
#: A loss whose values span this many decades or more is offered a log y axis (`decades`).
LOG_DECADES = 3

_NONE = (math.inf, -math.inf, math.inf)


class LaneSpread:
    """Each lane's extent so far: its smallest and largest finite value and its smallest
    positive one (``inf`` / ``-inf``: none), its last finite value (NaN: none), and whether it
    has had a NaN or ±inf.

    Parameters
    ----------
    lanes
        The sweep's lane count.

    Examples
    --------
    >>> s = LaneSpread(3)
    >>> s.extend(np.array([[1.0, -2, 5], [0.5, np.nan, 7]]))
    >>> s.lo.tolist(), s.hi.tolist(), s.last.tolist(), s.gone.tolist()
    ([0.5, -2.0, 5.0], [1.0, -2.0, 7.0], [0.5, -2.0, 7.0], [False, True, False])
    """

    def __init__(self, lanes: int) -> None:
        self.lo = np.full(lanes, math.inf)
        self.hi = np.full(lanes, -math.inf)
        self.lo_pos = np.full(lanes, math.inf)
        self.last = np.full(lanes, math.nan)
        self.gone = np.zeros(lanes, bool)

    def extend(self, values: np.ndarray, lanes: np.ndarray | None = None) -> None:
        """Take in ``values`` ``(steps, lanes)``: new rows of the ``lanes`` given (every lane
        when None), in any float dtype."""
        if not values.size:
            return
        at = slice(None) if lanes is None else lanes
        finite = np.isfinite(values)
        self.gone[at] |= ~finite.all(axis=0)
        v = values.astype(np.float64, copy=False)
        self.lo[at] = np.minimum(self.lo[at], np.where(finite, v, math.inf).min(axis=0))
        self.hi[at] = np.maximum(self.hi[at], np.where(finite, v, -math.inf).max(axis=0))
        positive = np.where(finite & (v > 0), v, math.inf).min(axis=0)
        self.lo_pos[at] = np.minimum(self.lo_pos[at], positive)
        # the last finite row of each lane: the last True of its column
        row = len(values) - 1 - np.argmax(finite[::-1], axis=0)
        has = finite.any(axis=0)
        self.last[at] = np.where(has, v[row, np.arange(v.shape[1])], self.last[at])


@dataclass(frozen=True)
class Bulk:
    """The lanes a y axis fits and those it leaves out (`bulk_range`)."""

    #: Min, max and smallest positive value of the lanes kept (``inf`` / ``-inf``: none).
    extent: tuple[float, float, float]
    #: Per lane: it runs away above the bulk (its values reach past the upper fence).
    above: np.ndarray
    #: Per lane: it runs away below (past the lower fence; on a linear axis only).
    below: np.ndarray


def bulk_range(
    lo: np.ndarray,
    hi: np.ndarray,
    lo_pos: np.ndarray,
    last: np.ndarray,
    gone: np.ndarray,
    log: bool = False,
) -> Bulk:
    """The extent of the lanes that do not run away, and which do (see the module docstring).

    ``lo``, ``hi``, ``lo_pos``, ``last``: each lane's smallest, largest, smallest positive and
    last finite value (`LaneSpread`); ``gone``: whether it had a NaN or ±inf (a diverged lane,
    left out of the quartiles the fence stands on: its last finite values are the runaway
    ones). On a ``log`` axis the fence is in decades, over the positive values, and only
    upward: a lane far below the rest there is a loss gone lower, the best lane, not a runaway
    (on a linear axis too, unless it is far below: `FENCE_BELOW`).

    >>> lo, lo_pos = np.zeros(12), np.full(12, 0.1)
    >>> hi = np.r_[np.linspace(0.9, 1.2, 10), 1e36, 50]  # lane 10 on its way to inf, 11 spiked
    >>> last = np.r_[np.full(10, 0.1), 1e36, 0.1]
    >>> b = bulk_range(lo, hi, lo_pos, last, gone=np.arange(12) == 10)
    >>> b.extent, np.flatnonzero(b.above).tolist()
    ((0.0, 50.0, 0.1), [10])
    """
    has = np.isfinite(lo)
    none = np.zeros(len(lo), bool)
    if log:
        ok = has & np.isfinite(lo_pos) & (hi > 0)
        low, high = np.log10(np.where(ok, lo_pos, 1.0)), np.log10(np.where(ok, hi, 1.0))
        with np.errstate(invalid="ignore", divide="ignore"):
            end = np.log10(np.where(last > 0, last, 0.0))  # (-inf: not placeable, not away)
    else:
        ok, low, high, end = has, lo, hi, last
    ref = ok & ~gone
    if ref.sum() < MIN_LANES:
        return Bulk(_extent(lo, hi, lo_pos, has), none, none)
    q1, q3 = float(np.quantile(low[ref], 0.25)), float(np.quantile(high[ref], 0.75))
    # Lanes that barely move (a span near 0) would leave the slightest step out: the span is a
    # decade at least on a log axis, half the values' size on a linear one.
    floor = 1.0 / FENCE if log else 0.5 * max(abs(q1), abs(q3))
    span = max(q3 - q1, floor)
    if not span > 0:
        return Bulk(_extent(lo, hi, lo_pos, has), none, none)
    top, bottom = q3 + FENCE * span, q1 - FENCE_BELOW * span
    above = ok & (high > top) & (gone | (end > top))
    below = none if log else ok & (low < bottom) & (gone | (end < bottom))
    keep = has & ~above & ~below
    return Bulk(_extent(lo, hi, lo_pos, keep), above, below)


def decades(extent: tuple[float, float, float]) -> int:
    """How many decades the values of ``extent`` span from their smallest positive one to
    their largest (whole ones), where none is below zero (a log axis could draw them all);
    else 0.

    >>> decades((0.0, 2.0, 1e-9)), decades((-1.0, 2.0, 1e-9)), decades((1.0, 50.0, 1.0))
    (9, 0, 1)
    """
    lo, hi, lo_pos = extent
    if not (lo >= 0 and hi > 0 and math.isfinite(lo_pos) and math.isfinite(hi)):
        return 0
    return math.floor(math.log10(hi / lo_pos) + 1e-9)


def bulk_decades(ys: Iterable[np.ndarray], fraction: float = 0.05) -> int:
    """How many whole decades the bulk of the values ``ys`` spans, from the ``fraction``
    quantile of their positive finite values to their 99th percentile, where none is below
    zero (a log axis could draw them all); else 0. A few small values (a ramp's first steps
    from 0 to 6000) or large ones (a spike) are no bulk spanning decades; a loss falling from 1
    to 1e-9 is.

    >>> ramp, loss = np.arange(61.0) * 100, np.geomspace(1, 1e-9, 60)
    >>> bulk_decades([ramp]), bulk_decades([loss]), bulk_decades([loss - 0.5])
    (1, 8, 0)
    """
    parts = [np.asarray(y, np.float64).reshape(-1) for y in ys]
    values = np.concatenate(parts) if parts else np.zeros(0)
    values = values[np.isfinite(values)]
    positive = values[values > 0]
    if (values < 0).any() or positive.size < 2:
        return 0
    lo, hi = np.quantile(positive, [fraction, 0.99])
    return max(0, math.floor(math.log10(float(hi) / float(lo)) + 1e-9))


def _extent(
    lo: np.ndarray, hi: np.ndarray, lo_pos: np.ndarray, keep: np.ndarray
) -> tuple[float, float, float]:
    if not keep.any():
        return _NONE
    return float(lo[keep].min()), float(hi[keep].max()), float(lo_pos[keep].min())
