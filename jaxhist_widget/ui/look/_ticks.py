"""Tick choice: the axes' scale limits, tick values and tick formats.

Pure functions of numbers (no widgets), so every rule here is tested without a figure. The live
figure (`jaxhist_widget.ui.figure`) applies them to its bqplot scales and axes; the static
picture draws the ticks it copied from there.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

from ._numbers import d3_format, si_label
from ._sizes import RIGHT_MARGIN_PX, TICK_CHAR_PX

__all__ = [
    "js_number_key",
    "left_margin",
    "linear_limits",
    "linear_ticks",
    "log_label",
    "log_limits",
    "log_ticks",
    "right_margin",
    "round_up",
    "tick_format",
    "tick_labels",
    "tick_text",
    "x_intervals",
    "x_limits",
]

#: The space a y label keeps from the tick and the figure's left edge.
_Y_LABEL_PAD_PX = 14
#: Horizontal room per x tick: the widest label plus a gap wide enough that neighbours read as
#: separate numbers, and never denser than one tick per this many pixels.
_X_TICK_GAP_CHARS = 4
_X_TICK_MIN_PX = 80
#: x tick intervals when the plot's width is not known yet (before a view reported it): what
#: fits the narrowest usual output column.
DEFAULT_X_INTERVALS = 4


def x_limits(first: float, last: float, settled: bool = False) -> tuple[float, float]:
    """The step axis from ``first`` to a round number of steps at or past ``last``.

    During a live run the end then moves a few times a decade, not at every update: a scale
    change makes the browser redraw every line on it and the axis. Once every run ended
    (``settled``), the axis fits them: the end is the next multiple of a 20th of the span, not
    the live run's headroom.

    >>> x_limits(0, 11), x_limits(200, 300), x_limits(0, 3385), x_limits(0, 3385, settled=True)
    ((0.0, 12.0), (200.0, 300.0), (0.0, 4000.0), (0.0, 3400.0))
    """
    span = max(last, first + 1) - first
    if settled:
        grid = _nice_step(span, 20)
        return float(first), float(first + math.ceil(span / grid - 1e-9) * grid)
    return float(first), float(first + round_up(span))


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


def right_margin(last_label: int) -> int:
    """Pixels right of the plot that hold half of the last x label (``last_label``
    characters), which bqplot centres on the plot's right edge: never clipped by the figure."""
    return max(RIGHT_MARGIN_PX, math.ceil(last_label * TICK_CHAR_PX / 2) + 8)


def x_intervals(plot_px: float | None, label_chars: int = 7) -> int:
    """How many intervals the x axis gets on a plot ``plot_px`` pixels wide (None: unknown).

    One tick per label width plus a gap, so a wide plot gets more ticks than a narrow one and
    labels never touch; between 2 and 10 (`linear_ticks` rounds to 1-2-5 steps, so an axis
    shows between about half and all of them).

    >>> x_intervals(None), x_intervals(300), x_intervals(1330)
    (4, 3, 10)
    """
    if plot_px is None or not plot_px > 0:
        return DEFAULT_X_INTERVALS
    per_tick = max(_X_TICK_MIN_PX, (label_chars + _X_TICK_GAP_CHARS) * TICK_CHAR_PX)
    return int(min(10, max(2, plot_px // per_tick)))


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
    """Round ticks (1, 2 or 5 times a power of ten apart; with ``integer``, also 2.5 times)
    inside [lo, hi], at most ``intervals + 1`` of them.

    >>> linear_ticks(0, 20_000, 4, integer=True)
    [0.0, 5000.0, 10000.0, 15000.0, 20000.0]
    """
    span = hi - lo
    if not (math.isfinite(span) and span > 0):
        return [float(lo)] if math.isfinite(lo) else []
    # Whole steps may also be 2.5 times a power of ten (0, 250k, 500k, 750k, 1M: five ticks
    # where 1-2-5 steps give three); a fraction of 2.5 needs a decimal more than its spacing.
    step = _nice_step(span, intervals, (1, 2, 2.5, 5, 10) if integer and span >= 40 else None)
    if integer:
        step = max(1.0, step)
    first = math.ceil(lo / step - 1e-9)
    last = math.floor(hi / step + 1e-9)
    digits = max(0, 2 - math.floor(math.log10(step)))
    return [round(k * step, digits) for k in range(first, last + 1)]


def log_ticks(lo: float, hi: float, most: int = 6) -> list[float]:
    """Ticks of a log axis over [lo, hi]: powers of ten (every k-th when there are more than
    ``most``) while at least four fit; else 1-3 multiples (1, 3, 10, 30, ...), else 1-2-5
    multiples, whichever first gives four ticks (or the most, with at least two); round linear
    ticks when not even two of those fit. An axis spanning under two decades then still reads.

    >>> log_ticks(0.05, 2.0)
    [0.05, 0.1, 0.2, 0.5, 1.0, 2.0]
    """
    if not (0 < lo < hi and math.isfinite(hi)):
        return []
    a, b = math.ceil(math.log10(lo) - 1e-9), math.floor(math.log10(hi) + 1e-9)
    if b - a + 1 >= 4:
        every = math.ceil((b - a + 1) / most)
        return [10.0**e for e in range(a, b + 1) if e % every == 0]
    best: list[float] = []
    for mults in ((1, 3), (1, 2, 5)):
        ticks = sorted(
            float(f"{m * 10.0**e:.12g}")  # 3 * 10**-3 is 0.0030000000000000005
            for e in range(a - 1, b + 2)
            for m in mults
            if lo * (1 - 1e-12) <= m * 10.0**e <= hi * (1 + 1e-12)
        )
        if len(ticks) >= 4:
            return ticks
        best = ticks if len(ticks) > len(best) else best
    return best if len(best) >= 2 else linear_ticks(lo, hi, 4)


def tick_format(ticks: Sequence[float], log: bool = False, si: bool = False) -> tuple[str, int]:
    """One d3-format string for every label of an axis, and the widest label in characters.

    A log axis is written in one notation whatever its range, in every chart and the picture:
    powers of ten, ``10⁻³``, ``3×10⁻²`` (`log_label`, through `tick_labels`). A linear axis:
    fixed point with thousands separators (``20,000``, ``0.25``: as many decimals as the tick
    spacing needs, no trailing zeros) while the labels stay short; with ``si`` (the step axis)
    whole numbers from a million with SI prefixes, as TensorBoard writes steps (``200k``,
    ``1M``, ``1.5M``: d3's ``~s``); otherwise scientific (``1e-6``, ``2.5e+7``) for all of
    them, never a mix.

    >>> tick_format([0, 250_000, 500_000, 750_000, 1_000_000], si=True)
    ('.2~s', 4)
    """
    ticks = [float(t) for t in ticks]
    if not ticks:
        return ",~g", 1
    big = max(abs(t) for t in ticks)
    if log:
        # Every label is written by `log_label` (`tick_labels`); the format is bqplot's
        # fallback for a value without one.
        return ".0e", max(len(log_label(t)) for t in ticks)
    step = min((b - a for a, b in itertools.pairwise(ticks)), default=big or 1.0)
    decimals = max(0, -math.floor(math.log10(step) + 1e-9)) if step > 0 else 0
    if 1e-3 <= big < 1e6 or big == 0:
        fixed = [f"{t:,.{decimals}f}" for t in ticks]
        return f",.{decimals}~f", max(map(len, fixed))
    digits = _si_digits(ticks) if si and big >= 1e6 else None
    if digits is not None:
        return f".{digits}~s", max(len(si_label(t, digits)) for t in ticks)
    p = min(6, max(0, math.floor(math.log10(big)) - math.floor(math.log10(step)))) if step else 2
    return f".{p}~e", max(len(_exp_label(t, p)) for t in ticks)


def _si_digits(ticks: Sequence[float]) -> int | None:
    """The fewest significant digits (at most 4) that write every tick exactly with an SI
    prefix, or None if more are needed (then the ticks are too close for short labels)."""
    for digits in range(1, 5):
        if all(t == 0 or float(f"{t:.{digits - 1}e}") == t for t in ticks):
            return digits
    return None


def _nice_step(span: float, intervals: int, mults: Sequence[float] | None = None) -> float:
    raw = span / intervals
    mag = 10.0 ** math.floor(math.log10(raw))
    options = (1, 2, 5, 10) if mults is None else mults
    return next(
        m * mag
        for m in options
        if m * mag >= raw * (1 - 1e-9) and (mults is None or float(m * mag).is_integer())
    )


def _exp_label(t: float, p: int) -> str:
    """The longest label d3-format ``.{p}e`` writes for ``t`` (``1e-6``: no zero padding)."""
    mantissa, exponent = f"{t:.{p}e}".split("e")
    return f"{mantissa}e{int(exponent):+d}"


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def log_label(t: float) -> str:
    """A log axis' label of ``t > 0``: a power of ten (``10⁻³``), times a mantissa where the
    tick is not one (``3×10⁻²``, ``2.5×10⁴``). One notation for every log axis: fixed point
    would read ``10,000 · 100 · 1`` on one chart and need ``1e-7`` on the next.

    >>> [log_label(t) for t in (1e-3, 0.03, 1.0, 25_000.0)]
    ['10⁻³', '3×10⁻²', '10⁰', '2.5×10⁴']
    """
    if not (t > 0 and math.isfinite(t)):
        return f"{t:g}"
    exponent = math.floor(math.log10(t) + 1e-9)
    mantissa = float(f"{t / 10.0**exponent:.6g}")
    if mantissa >= 10:  # (t just under a power of ten, rounded up to it)
        mantissa, exponent = mantissa / 10, exponent + 1
    power = "10" + str(exponent).translate(_SUPERSCRIPT)
    return power if mantissa == 1 else f"{mantissa:g}×{power}"


def js_number_key(value: float) -> str:
    """``value`` as JavaScript writes a number as a string (ECMAScript Number::toString), the
    key under which bqplot looks a tick's label up in an axis' ``tick_labels``.

    >>> [js_number_key(v) for v in (0.0, 1e-7, 1e-6, 0.001, 25.0, 1e21, 1.5e21, -2.5)]
    ['0', '1e-7', '0.000001', '0.001', '25', '1e+21', '1.5e+21', '-2.5']
    """
    if value == 0:
        return "0"
    if not math.isfinite(value):
        return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
    sign = "-" if value < 0 else ""
    # Python's repr is the shortest string that reads back as the same double, as in JS.
    mantissa, _, exp = repr(abs(value)).partition("e")
    whole, _, frac = mantissa.partition(".")
    frac = frac.rstrip("0")
    digits = (whole + frac).lstrip("0")
    point = len(whole) + int(exp or 0) - (len(whole + frac) - len((whole + frac).lstrip("0")))
    digits = digits.rstrip("0")
    k, n = len(digits), point
    if k <= n <= 21:
        text = digits + "0" * (n - k)
    elif 0 < n <= 21:
        text = f"{digits[:n]}.{digits[n:]}"
    elif -6 < n <= 0:
        text = "0." + "0" * -n + digits
    else:
        e = n - 1
        body = digits if k == 1 else f"{digits[0]}.{digits[1:]}"
        text = f"{body}e{'+' if e >= 0 else '-'}{abs(e)}"
    return sign + text


def tick_labels(fmt: str, values: Sequence[float], log: bool = False) -> dict[str, str]:
    """Labels that replace ``fmt``'s for some ``values``, keyed as bqplot looks them up
    (`js_number_key`): every tick of a log axis (`log_label`), and ``0`` for a tick at zero in
    a scientific format, which d3 writes ``0e+0``.

    >>> tick_labels(".0e", [0.0, 5e-5, 1e-4]), tick_labels(",~g", [0.0, 1.0])
    ({'0': '0'}, {})
    >>> tick_labels(".0e", [1e-7, 0.01], log=True)
    {'1e-7': '10⁻⁷', '0.01': '10⁻²'}
    """
    if log:
        return {js_number_key(v): log_label(v) for v in values if v > 0}
    return {"0": "0"} if "e" in fmt and any(v == 0 for v in values) else {}


def tick_text(fmt: str, value: float, log: bool = False) -> str:
    """A tick's label as the live axis writes it (`tick_labels`, else ``fmt``): the static
    picture writes the same."""
    own = tick_labels(fmt, [value], log).get(js_number_key(value))
    return own if own is not None else d3_format(fmt, value)
