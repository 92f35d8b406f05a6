"""Axis arithmetic of the LivePlot figure: scale limits, tick values, tick formats.

Pure functions of numbers (no widgets), so every rule here is tested without a figure. The
figure (`jaxhist_widget.ui._figure`) applies them to its bqplot scales and axes.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

__all__ = [
    "TICK_CHAR_PX",
    "left_margin",
    "linear_limits",
    "linear_ticks",
    "log_limits",
    "log_ticks",
    "round_up",
    "tick_format",
    "x_limits",
]

#: Pixels per character of a tick label (bqplot's axis font, as Chromium draws it) and the
#: space a y label keeps from the tick and the figure's left edge.
TICK_CHAR_PX = 7.0
_Y_LABEL_PAD_PX = 14


def x_limits(first: int, last: int) -> tuple[float, float]:
    """The step axis from ``first`` to a round number of steps at or past ``last``.

    During a live run the end then moves a few times a decade, not at every update: a scale
    change makes the browser redraw every line on it and the axis.

    >>> x_limits(0, 11), x_limits(200, 300)
    ((0.0, 12.0), (200.0, 300.0))
    """
    return float(first), float(first + round_up(max(last, first + 1) - first))


def linear_limits(lo: float, hi: float) -> tuple[float, float]:
    """Limits of a linear y axis holding the finite values ``lo`` .. ``hi`` (0..1 without any).

    Padded, and out to the next multiple of a round step (a 20th of the span), so the limits
    stay put while the values move within them (as `x_limits` does for steps).
    """
    if not math.isfinite(lo):  # one inf or NaN must not flatten the plot
        return 0.0, 1.0
    pad = 0.05 * (hi - lo) or 0.05 * abs(lo) or 1.0
    grid = _nice_step(hi - lo + 2 * pad, 20)
    return float(math.floor((lo - pad) / grid) * grid), float(math.ceil((hi + pad) / grid) * grid)


def log_limits(lo_pos: float, hi: float) -> tuple[float, float]:
    """Limits of a log y axis from the smallest positive value ``lo_pos`` and the largest
    ``hi``, out to the next eighth of a decade (0.1..10 without a positive value)."""
    if not math.isfinite(lo_pos):
        return 0.1, 10.0
    top = max(hi, lo_pos)
    return (
        float(10 ** (math.floor(8 * math.log10(lo_pos / 1.15)) / 8)),
        float(10 ** (math.ceil(8 * math.log10(top * 1.15)) / 8)),
    )


def left_margin(widest_label: int) -> int:
    """Pixels left of the y axis that fit its widest label (in characters)."""
    return max(40, math.ceil(widest_label * TICK_CHAR_PX) + _Y_LABEL_PAD_PX)


def round_up(span: float) -> float:
    """The smallest of 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 times a power of ten that is at least
    ``span`` (at least 1): an axis end on a round number, at most a third past the data.

    >>> [round_up(v) for v in (0, 7, 10, 11, 199, 20_001, 1e6)]
    [1.0, 8.0, 10.0, 12.0, 200.0, 25000.0, 1000000.0]
    """
    if not span > 1:
        return 1.0
    mag = 10.0 ** math.floor(math.log10(span))
    return next(
        m * mag for m in (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10) if m * mag >= span * (1 - 1e-12)
    )


def linear_ticks(lo: float, hi: float, intervals: int, integer: bool = False) -> list[float]:
    """Round ticks (1, 2 or 5 times a power of ten apart) inside [lo, hi], at most
    ``intervals + 1`` of them.

    >>> linear_ticks(0, 20_000, 4, integer=True)
    [0.0, 5000.0, 10000.0, 15000.0, 20000.0]
    """
    span = hi - lo
    if not (math.isfinite(span) and span > 0):
        return [float(lo)] if math.isfinite(lo) else []
    step = _nice_step(span, intervals)
    if integer:
        step = max(1.0, step)
    first = math.ceil(lo / step - 1e-9)
    last = math.floor(hi / step + 1e-9)
    digits = max(0, 2 - math.floor(math.log10(step)))
    return [round(k * step, digits) for k in range(first, last + 1)]


def log_ticks(lo: float, hi: float, most: int = 6) -> list[float]:
    """Powers of ten inside [lo, hi] (every k-th when there are more than ``most``); 1-2-5
    multiples when fewer than two powers fit; round linear ticks when even those do not."""
    if not (0 < lo < hi and math.isfinite(hi)):
        return []
    a, b = math.ceil(math.log10(lo) - 1e-9), math.floor(math.log10(hi) + 1e-9)
    if b - a + 1 >= 2:
        every = math.ceil((b - a + 1) / most)
        return [10.0**e for e in range(a, b + 1) if e % every == 0]
    ticks = sorted(
        m * 10.0**e for e in range(a - 1, b + 2) for m in (1, 2, 5) if lo <= m * 10.0**e <= hi
    )
    return ticks if len(ticks) >= 2 else linear_ticks(lo, hi, 4)


def tick_format(ticks: Sequence[float], log: bool = False) -> tuple[str, int]:
    """One d3-format string for every label of an axis, and the widest label in characters.

    Fixed point with thousands separators (``20,000``, ``0.25``: as many decimals as the tick
    spacing needs, no trailing zeros) while the labels stay short; otherwise scientific
    (``1e-6``, ``2.5e+7``) for all of them, never a mix.
    """
    ticks = [float(t) for t in ticks]
    if not ticks:
        return ",~g", 1
    big = max(abs(t) for t in ticks)
    if log:
        if all(1e-3 <= t < 1e5 for t in ticks):
            return ",~g", max(len(f"{t:,g}") for t in ticks)
        mantissa = [t / 10.0 ** math.floor(math.log10(t)) for t in ticks]
        p = 0 if all(abs(m - round(m)) < 1e-9 for m in mantissa) else 1
        return f".{p}e", max(len(_exp_label(t, p)) for t in ticks)
    step = min((b - a for a, b in itertools.pairwise(ticks)), default=big or 1.0)
    decimals = max(0, -math.floor(math.log10(step) + 1e-9)) if step > 0 else 0
    if 1e-3 <= big < 1e6 or big == 0:
        fixed = [f"{t:,.{decimals}f}" for t in ticks]
        return f",.{decimals}~f", max(map(len, fixed))
    p = min(6, max(0, math.floor(math.log10(big)) - math.floor(math.log10(step)))) if step else 2
    return f".{p}~e", max(len(_exp_label(t, p)) for t in ticks)


def _nice_step(span: float, intervals: int) -> float:
    raw = span / intervals
    mag = 10.0 ** math.floor(math.log10(raw))
    return next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw * (1 - 1e-9))


def _exp_label(t: float, p: int) -> str:
    """The longest label d3-format ``.{p}e`` writes for ``t`` (``1e-6``: no zero padding)."""
    mantissa, exponent = f"{t:.{p}e}".split("e")
    return f"{mantissa}e{int(exponent):+d}"
