"""The picture's words: its one-line text summary (the ``text/plain`` of the output) and the
latest values as the panel writes them. Pure functions of the panel's state (a mapping of its
synced traits); numbers and status words are the look's (`..look`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..look import COMPILING_TEXT, format_count, format_value, lane_summary, status_word

__all__ = ["first_line", "latest_values", "summary"]


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
