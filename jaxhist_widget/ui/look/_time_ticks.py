"""The x axis in time (`X_AXES`: ``"relative"``, ``"wall"``): its tick values and labels.

Pure functions of numbers, as `._ticks`. A relative axis counts seconds since a run's first
row and labels its ticks in s, min or h (whichever the tick step reads best in); a wall-clock
axis holds seconds since the epoch and labels its ticks with the local time of day
(HH:MM:SS), on round times of the local clock. The live figure sets these labels on its axis
(bqplot looks a label up by the tick value as JavaScript writes the number: `js_key`), and the
static picture draws the same.
"""

from __future__ import annotations

import math
import time

__all__ = ["X_AXES", "X_LABELS", "check_x_axis", "js_key", "time_limits", "time_ticks"]

#: What the x axis counts: steps, seconds since each run's first row, or the time of day.
X_AXES = ("step", "relative", "wall")
#: The x axis's title per mode.
X_LABELS = {"step": "step", "relative": "relative time", "wall": "wall clock"}

# Round tick steps in seconds: sub-second 1-2-5, then the clock's own (15 s, 30 s, 5 min, ...).
_STEPS = (
    *(m * 10.0**e for e in range(-3, 0) for m in (1, 2, 5)),
    *(1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800),
    *(3600, 7200, 10800, 21600, 43200, 86400),
)


def check_x_axis(value: object) -> str:
    """``value`` if it is one of `X_AXES`, else a ValueError naming them."""
    if not isinstance(value, str) or value not in X_AXES:
        raise ValueError(
            f"x_axis must be 'step', 'relative' (seconds since each run's first row) or "
            f"'wall' (the time of day), got {value!r}."
        )
    return value


def time_limits(lo: float, hi: float) -> tuple[float, float]:
    """The limits of a time axis over ``[lo, hi]`` seconds: a second at least (a run of one
    chunk has all its rows at one time)."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return 0.0, 1.0
    return float(lo), float(max(hi, lo + 1.0))


def _tick_step(span: float, intervals: int) -> float:
    want = span / max(1, intervals)
    for step in _STEPS:
        if step >= want:
            return float(step)
    return 86400.0 * math.ceil(want / 86400.0)


def time_ticks(lo: float, hi: float, intervals: int, wall: bool) -> tuple[list[float], list[str]]:
    """Tick values over ``[lo, hi]`` seconds, about ``intervals`` of them apart, with their
    labels: local times of day on round times of the local clock (``wall``), else seconds
    since a run's first row in s, min or h.

    >>> time_ticks(0.0, 100.0, 4, wall=False)
    ([0.0, 30.0, 60.0, 90.0], ['0 s', '30 s', '60 s', '90 s'])
    >>> time_ticks(0.0, 600.0, 4, wall=False)[1]
    ['0 min', '5 min', '10 min']
    """
    step = _tick_step(hi - lo, intervals)
    # A wall clock's round times are the local clock's: count from local midnight's offset.
    offset = time.localtime(lo).tm_gmtoff if wall and math.isfinite(lo) else 0
    first = math.ceil((lo + offset) / step - 1e-9)
    values = []
    k = first
    while (v := k * step - offset) <= hi + 1e-6:
        values.append(round(v, 6))
        k += 1
    return values, [wall_label(v, step) if wall else relative_label(v, step) for v in values]


def relative_label(seconds: float, step: float) -> str:
    """``seconds`` since a run's first row in the unit a tick step of ``step`` reads best in.

    >>> relative_label(90.0, 30.0), relative_label(5400.0, 1800.0), relative_label(0.5, 0.5)
    ('90 s', '90 min', '0.5 s')
    """
    unit, size = ("s", 1.0) if step < 60 else ("min", 60.0) if step < 3600 else ("h", 3600.0)
    q = step / size  # the tick step in the unit: its decimals are the labels'
    digits = 0 if float(q).is_integer() else max(1, -math.floor(math.log10(q) + 1e-9))
    text = f"{seconds / size:.{digits}f}"
    return f"{text} {unit}"


def wall_label(seconds: float, step: float = 1.0) -> str:
    """The local time of day of ``seconds`` since the epoch: HH:MM:SS (tenths and so on when
    the tick step is under a second)."""
    text = time.strftime("%H:%M:%S", time.localtime(math.floor(seconds)))
    if step < 1:
        digits = -math.floor(math.log10(step) + 1e-9)
        text += f"{seconds % 1:.{digits}f}"[1:]
    return text


def js_key(value: float) -> str:
    """``value`` as JavaScript writes a number (``String(30)`` is ``"30"``, not ``"30.0"``):
    the key bqplot looks a tick's label up by."""
    value = float(value)
    return str(int(value)) if value.is_integer() and abs(value) < 1e21 else repr(value)
