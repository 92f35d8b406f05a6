"""The run list of the static picture (`._svg`): the panel's run list (``js/panel/runs.js``) as
SVG rows, one per run once the plot draws two or more: colour, name, status, steps, time and
latest values; a hidden run's row dimmed and marked hidden, its lanes hidden one by one counted,
and the runs the run filter leaves out not listed but counted, as in the widget.

No widgets.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..look import STATUS_LABELS, format_count, format_duration, format_value, shown_status
from ._charts import svg_attr, svg_text

__all__ = ["PICTURE_RUN_ROWS", "draw_run_list", "run_texts"]

#: Rows of the run list one picture shows at most: the latest.
PICTURE_RUN_ROWS = 12

_MUTED = "#616161"
_CHAR_PX = 7.0
_BOLD_PX = 8.0  # the run name's (bold) characters


def run_texts(run: Mapping[str, Any]) -> tuple[str, str, str, str]:
    """The status word, steps, time and latest values of one run list entry (as the panel)."""
    shown = shown_status({"status": run.get("status", ""), "diverged": run.get("diverged")})
    steps = f"{format_count(run.get('step', 0))}"
    if run.get("max_steps"):
        steps += f" / {format_count(run['max_steps'])}"
    steps += " steps" + (f" · {format_count(run['lanes'])} lanes" if run.get("lanes") else "")
    values = " · ".join(f"{k} {format_value(v)}" for k, v in (run.get("latest") or {}).items())
    if run.get("lanes") and values:
        values = f"median {values}"
    word = STATUS_LABELS.get(shown, shown)
    return word, steps, format_duration(run.get("elapsed", 0.0)), values


def draw_run_list(
    out: list[str], runs: Sequence[Mapping[str, Any]], y: float, width: int, run_filter: str = ""
) -> float:
    """Rows for ``runs`` from ``y`` (nothing below two runs), but those ``run_filter`` (the
    regex the panel shows) leaves out: a row says how many it lists. Returns the y under them."""
    if len(runs) < 2:
        return y
    listed = [r for r in runs if not r.get("filtered")]
    if len(listed) < len(runs):
        y += 18
        says = f"filter {run_filter!r}: {len(listed)} of {len(runs)} runs"
        out.append(svg_text(12, y, says, size=12, fill=_MUTED, cls="jhw-runs-filter"))
        runs = listed
        if not runs:
            return y + 6
    earlier = max(0, len(runs) - PICTURE_RUN_ROWS)  # the latest rows: a sweep's list is long
    runs = runs[earlier:]
    if earlier:
        y += 18
        more = f"… {earlier} earlier run{'s' if earlier > 1 else ''} (the live plot lists them all)"
        out.append(svg_text(12, y, more, size=12, fill=_MUTED, cls="jhw-runs-more"))
    rows = [run_texts(r) for r in runs]
    # A name is bold (wider per character), and a gap keeps it off the status word.
    name_w = min(200.0, max(_BOLD_PX * len(str(r.get("name", ""))) for r in runs)) + 14
    status_w = max(_CHAR_PX * len(t[0]) for t in rows) + 14
    steps_w = max(_CHAR_PX * len(t[1]) for t in rows) + 10
    time_w = max(_CHAR_PX * len(t[2]) for t in rows) + 10
    for run, (word, steps, time, values) in zip(runs, rows, strict=True):
        y += 18
        hidden = bool(run.get("hidden"))
        name = str(run.get("name", ""))
        alpha = ' opacity="0.45"' if hidden else ""
        x = 12.0
        parts = [
            f'<rect x="{x:.1f}" y="{y - 6:.1f}" width="16" height="4" rx="2" '
            f"fill={svg_attr(str(run.get('color', '#757575')))}/>",
        ]
        x += 24
        most = int((name_w - 14) / _BOLD_PX)
        label = name if len(name) <= most else name[: max(1, most - 1)] + "…"
        parts.append(svg_text(x, y, label, size=12, weight="600", cls="jhw-run-name"))
        x += name_w
        parts.append(svg_text(x, y, word, size=11, cls="jhw-run-status"))
        x += status_w
        parts.append(svg_text(x, y, steps, size=12, fill=_MUTED))
        x += steps_w
        parts.append(svg_text(x, y, time, size=12, fill=_MUTED))
        x += time_w
        room = max(8, int((width - 12 - x) / _CHAR_PX))
        off = sum(1 for lane in run.get("drawn") or () if lane[2])
        text = f"{off} lane{'s' if off > 1 else ''} hidden · {values}" if off else values
        text = f"hidden · {text}" if hidden else text
        for k, piece in enumerate(_wrapped(text, room)):  # never cut at the picture's edge
            y += 16 if k else 0
            parts.append(svg_text(x, y, piece, size=12))
        out.append(
            f'<g class="jhw-run" data-name={svg_attr(name)} data-hidden="{str(hidden).lower()}"'
            f"{alpha}>" + "".join(parts) + "</g>"
        )
    return y + 6


def _wrapped(text: str, room: int) -> list[str]:
    """``text`` in lines of at most ``room`` characters, broken at its " · " separators (a
    piece longer than a line is cut there)."""
    lines: list[str] = []
    for piece in text.split(" · "):
        if lines and len(lines[-1]) + 3 + len(piece) <= room:
            lines[-1] += " · " + piece
        else:
            lines.append(piece if len(piece) <= room else piece[: room - 1] + "…")
    return lines or [""]
