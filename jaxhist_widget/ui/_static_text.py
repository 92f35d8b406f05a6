"""The words and numbers of a `LivePlot`'s static picture (`._static`): its one-line summary,
and numbers written as the widget writes them (the panel's values and counts, d3-format tick
labels). Pure functions of plain values.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ._ticks import si_label

__all__ = [
    "STATUS_LABELS",
    "d3_format",
    "first_line",
    "format_count",
    "format_value",
    "lane_summary",
    "latest_values",
    "shown_status",
    "summary",
]

#: Status words where they differ from the status value (as the panel's badge writes them):
#: the run's "converged" only means that ``cond`` became False, so it reads "finished".
STATUS_LABELS = {"max_steps": "max steps", "converged": "finished"}
#: The badge's word while a plot is attached and its loop is traced and compiled.
COMPILING_TEXT = "compiling: waiting for the loop to start"
#: Run statuses that a NaN or inf latest value turns into "diverged" (not "error": the
#: computation itself succeeded).
_CAN_DIVERGE = ("running", "converged", "max_steps", "stopped")


def shown_status(state: Mapping[str, Any]) -> str:
    """The status the panel's badge shows for ``state`` (the panel's traits): ``"diverged"``
    while a plotted field's latest value is NaN or infinite in a run that did not fail, else
    the ``status`` trait (as ``shownStatus`` in ``js/panel.js``)."""
    status = str(state.get("status", "idle"))
    return "diverged" if state.get("diverged") and status in _CAN_DIVERGE else status


def status_word(state: Mapping[str, Any]) -> str:
    """The badge's text for ``state``: ``finished``, ``max steps``, ``diverged``, ..."""
    shown = shown_status(state)
    return COMPILING_TEXT if shown == "compiling" else STATUS_LABELS.get(shown, shown)


def summary(title: str, state: Mapping[str, Any]) -> str:
    """One readable line: ``"Adam: finished, 651 / 2,000 steps, loss 0.162"``.

    The plain-text form of the output, shown where no image is (a terminal, a text-only
    renderer) and read by search and screen readers.
    """
    s = state
    name = title or "LivePlot"
    status = str(s.get("status", "idle"))
    if s.get("error") and (status == "idle" or not s.get("max_steps")):
        return f"{name}: error: {first_line(s['error'])}"
    if status == "compiling":
        return f"{name}: {COMPILING_TEXT}"
    if status == "idle" or not s.get("max_steps"):
        return f"{name}: no run yet"
    parts = [
        status_word(s),
        f"{format_count(s.get('step', 0))} / {format_count(s['max_steps'])} steps",
    ]
    if s.get("lanes"):
        lanes = f"{s['lanes']} lanes"
        counts = lane_summary(s.get("lane_statuses") or {}, s.get("lane_names") or {})
        parts.append(f"{lanes} ({counts})" if counts else lanes)
    parts += [f"{k} {v}" for k, v in latest_values(s)]
    if s.get("error"):
        parts.append(first_line(s["error"]))
    return f"{name}: {', '.join(parts)}"


def latest_values(s: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Latest value per field, as the panel writes them (under vmap, labelled: ``median 0.067
    (min–max 0.0216 … 0.2389)``)."""
    latest, ranges = s.get("latest") or {}, s.get("latest_range") or {}
    out = []
    for name in s.get("fields") or latest:
        if name not in latest:
            continue
        text = format_value(latest[name])
        if name in ranges:
            lo, hi = ranges[name]
            text = f"median {text} (min–max {format_value(lo)} … {format_value(hi)})"
        out.append((name, text))
    return out


def first_line(text: str) -> str:
    return str(text).strip().splitlines()[0] if str(text).strip() else ""


def format_value(v: Any) -> str:
    """A field value as the panel writes it: 4 significant digits, exponent notation outside
    [1e-3, 1e5), integers whole; ``NaN``, ``∞`` for the non-finite ones."""
    if isinstance(v, str):
        return {"nan": "NaN", "inf": "∞", "-inf": "-∞"}.get(v.lower(), v)
    x = float(v)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    if x == 0:
        return "0"
    if x.is_integer() and abs(x) < 1e5:
        return str(int(x))
    if abs(x) >= 1e5 or abs(x) < 1e-3:
        mantissa, exponent = f"{x:.3e}".split("e")
        mantissa = mantissa.rstrip("0").rstrip(".")
        return f"{mantissa}e{int(exponent)}"
    return f"{float(f'{x:.4g}'):.10g}"


def format_count(n: Any) -> str:
    """A step count: ``1,074``; ``1.23M`` from a million."""
    v = round(float(n))
    if abs(v) >= 1e6:
        for div, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M")):
            if abs(v) >= div:
                return f"{float(f'{v / div:.3g}'):g}{suffix}"
    return f"{v:,}"


def lane_summary(counts: Mapping[str, int], names: Mapping[str, Sequence[str]]) -> str:
    """``"61 finished · 3 max steps"``, most frequent first; a status of at most two lanes
    names them, as the panel does."""
    entries = sorted(((k, n) for k, n in counts.items() if n > 0), key=lambda e: (-e[1], e[0]))
    out = []
    for status, n in entries:
        who = list(names.get(status) or [])
        named = f" ({', '.join(who)})" if who and len(who) <= 2 and n <= 2 else ""
        out.append(f"{format_count(n)} {STATUS_LABELS.get(status, status)}{named}")
    return " · ".join(out)


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
        text = _exponent(a, p, trim)
    else:  # JavaScript's toPrecision: exponent notation below 1e-6 or from 10**p
        p = max(1, p)
        e = int(f"{a:.{p - 1}e}".split("e")[1]) if a else 0
        if e < -6 or e >= p:
            text = _exponent(a, p - 1, trim)
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
