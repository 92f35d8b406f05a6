"""Numbers as the plot writes them: field values, step counts, durations (the panel's rules,
from the look table, which the panel's JavaScript reads too), and tick labels as d3-format
writes them (bqplot's axes). Pure functions of plain values.
"""

from __future__ import annotations

import math
import re
from typing import Any

from ._table import LOOK

__all__ = ["d3_format", "format_count", "format_duration", "format_value", "si_label"]

_VALUE = LOOK["numbers"]["value"]
_COUNT = LOOK["numbers"]["count"]


def format_value(v: Any) -> str:
    """A field value as the panel writes it: 4 significant digits, exponent notation outside
    [1e-3, 1e5), integers whole; ``NaN``, ``∞`` for the non-finite ones (also the strings
    ``"nan"``, ``"inf"``, ``"-inf"`` that stand for them in JSON)."""
    if isinstance(v, str):
        return {"nan": "NaN", "inf": "∞", "-inf": "-∞"}.get(v.lower(), v)
    x = float(v)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    if x == 0:
        return "0"
    below, above, digits = _VALUE["exponent_below"], _VALUE["exponent_from"], _VALUE["digits"]
    if x.is_integer() and abs(x) < above:
        return str(int(x))
    if abs(x) >= above or abs(x) < below:
        mantissa, exponent = f"{x:.{digits - 1}e}".split("e")
        mantissa = mantissa.rstrip("0").rstrip(".")
        return f"{mantissa}e{int(exponent)}"
    return f"{float(f'{x:.{digits}g}'):.10g}"


def format_count(n: Any) -> str:
    """A step count: ``1,074``; ``1.23M`` from a million (3 significant digits, then the unit
    of the rounded count: ``1B``, not ``1000M``)."""
    x = float(n)
    if not math.isfinite(x):
        return "–"
    v = math.floor(x + 0.5)  # halves up, as JavaScript's Math.round
    if abs(v) < _COUNT["compact_from"]:
        return f"{v:,}"
    rounded = float(f"{abs(v):.{_COUNT['compact_digits']}g}")
    for div, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M")):
        if rounded >= div:
            return f"{'-' if v < 0 else ''}{float(f'{rounded / div:.3g}'):g}{suffix}"
    return f"{v:,}"  # (unreachable: rounded >= compact_from)


def format_duration(seconds: Any) -> str:
    """A duration as the panel writes it: ``0.42 s``, ``12.3 s``, ``2 m 05 s``, ``1 h 02 m``."""
    s = float(seconds)
    if not math.isfinite(s) or s < 0:
        return "–"
    if s < 10:
        return f"{s:.2f} s"
    if s < 60:
        return f"{s:.1f} s"
    total = int(s)
    h, m, sec = total // 3600, total % 3600 // 60, total % 60
    return f"{h} h {m:02d} m" if h else f"{m} m {sec:02d} s"


#: SI prefixes d3-format's ``s`` type writes, by thousands exponent (``k`` is 10**3).
_SI = {-8: "y", -7: "z", -6: "a", -5: "f", -4: "p", -3: "n", -2: "µ", -1: "m", 0: ""}
_SI.update({1: "k", 2: "M", 3: "G", 4: "T", 5: "P", 6: "E", 7: "Z", 8: "Y"})


def si_label(value: float, digits: int) -> str:
    """``value`` as d3-format ``.{digits}~s`` writes it: ``digits`` significant digits, an SI
    prefix, trailing zeros trimmed (``200k``, ``1M``, ``1.25M``; ``0`` for zero).

    >>> [si_label(v, 3) for v in (0, 200_000, 1_000_000, 1_250_000, -4_000)]
    ['0', '200k', '1M', '1.25M', '-4k']
    """
    v = float(value)
    if not math.isfinite(v):
        return "NaN" if math.isnan(v) else ("-∞" if v < 0 else "∞")
    mantissa, exp_text = f"{abs(v):.{max(1, digits) - 1}e}".split("e")
    exponent = int(exp_text)
    power = max(-8, min(8, math.floor(exponent / 3)))
    scaled = float(mantissa) * 10.0 ** (exponent - 3 * power)
    # as many decimals as the significant digits leave after the integer part
    decimals = max(0, max(1, digits) - 1 - (exponent - 3 * power))
    text = f"{scaled:.{decimals}f}"
    text = text.rstrip("0").rstrip(".") if "." in text else text
    if float(text) == 0:
        return "0"
    return ("-" if v < 0 else "") + text + _SI[power]


_D3 = re.compile(r"^(,)?(?:\.(\d+))?(~)?([efgs])$")


def d3_format(spec: str, value: float) -> str:
    """``value`` as d3-format writes it with ``spec``, for the forms the figure's axes use
    (``,.0f``, ``,.2~f``, ``,~g``, ``.1e``, ``.2~e``, ``.2~s``): the same tick labels as the
    widget's.

    >>> [d3_format(",.0f", 20000), d3_format(",.2~f", 0.5), d3_format(".0e", 1e-6)]
    ['20,000', '0.5', '1e-6']
    >>> [d3_format(",~g", 0.001), d3_format(".2~e", 25000000.0), d3_format(",~g", -1500)]
    ['0.001', '2.5e+7', '-1,500']
    >>> [d3_format(".1~s", 200_000), d3_format(".2~s", 1_500_000)]
    ['200k', '1.5M']
    """
    m = _D3.match(spec)
    if m is None:
        raise ValueError(f"unsupported tick format {spec!r}")
    comma, precision, trim, kind = m.groups()
    v = float(value)
    if not math.isfinite(v):
        return "NaN" if math.isnan(v) else ("-∞" if v < 0 else "∞")
    p = 6 if precision is None else int(precision)
    if kind == "s":  # the figure writes SI labels trimmed only (``~s``)
        if not trim:
            raise ValueError(f"unsupported tick format {spec!r}")
        return si_label(v, p)
    a, group = abs(v), "," if comma else ""
    if kind == "f":
        text = _trim(f"{a:{group}.{p}f}") if trim else f"{a:{group}.{p}f}"
    elif kind == "e":
        text = _exponent(a, p, bool(trim))
    else:  # JavaScript's toPrecision: exponent notation below 1e-6 or from 10**p
        p = max(1, p)
        e = int(f"{a:.{p - 1}e}".split("e")[1]) if a else 0
        if e < -6 or e >= p:
            text = _exponent(a, p - 1, bool(trim))
        else:
            text = f"{a:{group}.{max(0, p - 1 - e)}f}"
            text = _trim(text) if trim else text
    negative = v < 0 and any(c in "123456789" for c in text.split("e")[0])
    return ("-" if negative else "") + text


def _trim(text: str) -> str:
    return text.rstrip("0").rstrip(".") if "." in text else text


def _exponent(a: float, p: int, trim: bool) -> str:
    mantissa, exponent = f"{a:.{p}e}".split("e")
    return f"{_trim(mantissa) if trim else mantissa}e{int(exponent):+d}"
