"""Status words: what the panel's badge and the run list say for a run's status, from the look
table (the panel's JavaScript reads the same words). Pure functions of plain values.

The ``status`` values are the run's own (`Run.status`: ``converged`` means "``cond`` became
False", whatever the condition encodes, so it reads "finished") plus the panel's ``idle``,
``compiling`` and ``error``; ``diverged`` is a word, not a status: a run whose latest value of a
plotted field is NaN or infinite, and that did not fail, reads so (a warning: the computation
itself succeeded).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ._numbers import format_count
from ._table import LOOK

__all__ = [
    "BADGE_COLORS",
    "CAN_DIVERGE",
    "COMPILING_TEXT",
    "STATUS_LABELS",
    "lane_summary",
    "notes_line",
    "short_note",
    "shown_status",
    "shown_text",
    "status_word",
]

_STATUS = LOOK["status"]
#: The word of each status (``converged`` reads "finished"); an unknown one reads as it is.
STATUS_LABELS: Mapping[str, str] = _STATUS["words"]
#: The badge's text while a plot is attached and its loop is traced and compiled.
COMPILING_TEXT: str = _STATUS["compiling_badge"]
#: Run statuses that a NaN or inf latest value turns into "diverged" (not "error").
CAN_DIVERGE: tuple[str, ...] = tuple(_STATUS["can_diverge"])
#: The badge's fill and ink per shown status (``unknown``: any other), on a white background:
#: the panel's CSS defaults (``js/panel.css``), which JupyterLab's theme overrides.
BADGE_COLORS: Mapping[str, tuple[str, str]] = _STATUS["badge_colors"]


def shown_status(state: Mapping[str, Any]) -> str:
    """The status the panel's badge shows for ``state`` (the panel's traits): ``"diverged"``
    while a plotted field's latest value is NaN or infinite in a run that did not fail, else
    the ``status`` trait (as ``shownStatus`` in ``js/base/format.js``)."""
    status = str(state.get("status", "idle"))
    return "diverged" if state.get("diverged") and status in CAN_DIVERGE else status


def status_word(state: Mapping[str, Any]) -> str:
    """The badge's text for ``state``: ``finished``, ``max steps``, ``diverged``, ..."""
    shown = shown_status(state)
    return COMPILING_TEXT if shown == "compiling" else STATUS_LABELS.get(shown, shown)


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


# Characters XML 1.0 cannot hold (C0 controls but tab, newline and carriage return; U+FFFE,
# U+FFFF), C1 controls (invisible, and terminal escapes), and lone surrogates (what
# `os.fsdecode` makes of a file name's undecodable bytes: UTF-8 cannot encode them, so a comm
# message or a file holding one fails to be written).
_UNSHOWABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def shown_text(text: str) -> str:
    r"""``text`` as the plot shows it: each character a page, an SVG or a message cannot carry
    written as its Python escape, so the picture stays valid XML, the widget's messages encode,
    and names that differ only there stay apart. Idempotent; other text is returned as is.

    >>> shown_text("\x1b[31mloss\x1b[0m"), shown_text("caf\udce9"), shown_text("loss · x")
    ('\\x1b[31mloss\\x1b[0m', 'caf\\udce9', 'loss · x')
    """
    if not _UNSHOWABLE.search(text):
        return text
    return _UNSHOWABLE.sub(lambda m: repr(m.group())[1:-1], text)


#: Characters a note's short form keeps at most (one line of a 330 px chart's legend).
NOTE_CHARS = 72
_NOTE_CUT = re.compile(r": |; | \(")


def short_note(note: str, most: int = NOTE_CHARS) -> str:
    """A note's short form: its head, up to the first ``": "``, ``"; "`` or ``" ("`` after its
    first 24 characters, at most ``most`` characters (cut with an ellipsis).

    >>> short_note("64 of 4,096 lanes drawn as lines, over every lane's band: the best, ...")
    "64 of 4,096 lanes drawn as lines, over every lane's band"
    >>> short_note("fields: no field 'lsos' in this run's record; its leaves are 'loss'")
    "fields: no field 'lsos' in this run's record"
    """
    cut = next((m.start() for m in _NOTE_CUT.finditer(note) if m.start() >= 24), len(note))
    head = note[:cut]
    return head if len(head) <= most else head[: most - 1].rstrip() + "…"


def notes_line(notes: Sequence[str]) -> str:
    """The one short line the notes under the charts read as by default (their details on
    demand): the first note's short form, and how many more there are.

    >>> notes_line(["a note of a greater length: its details", "another"]), notes_line([])
    ('a note of a greater length (+1 more)', '')
    """
    if not notes:
        return ""
    more = len(notes) - 1
    return short_note(notes[0]) + (f" (+{more} more)" if more else "")
