"""Runs as the plot shows them: each run's name and colour, and the panel's run list.

Layer 3 (widget) by role, numpy only (no widgets). A run is named where it starts (`Run.name`,
see `jaxhist_widget._host._naming`); the plot calls an unnamed one ``run N`` and tells two of
the same name apart (``adam (2)``). Each run drawn gets a colour of its own from the
categorical palette (the first one no drawn run has), so runs are told apart by colour in
every chart, in both themes; `run_entry` is one line of the panel's run list.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ._legend import PALETTE
from ._panel_state import panel_state

__all__ = ["display_name", "next_color", "run_entry"]


def display_name(name: str | None, number: int, taken: Iterable[str]) -> str:
    """What the plot calls run ``number`` named ``name`` (None: ``run N``), distinct from the
    names ``taken`` by the runs it draws: ``adam``, then ``adam (2)``.

    >>> display_name("adam", 3, ["adam", "sgd"]), display_name(None, 3, [])
    ('adam (2)', 'run 3')
    """
    base = name if name else f"run {number}"
    taken = set(taken)
    if base not in taken:
        return base
    k = 2
    while f"{base} ({k})" in taken:
        k += 1
    return f"{base} ({k})"


def next_color(used: Iterable[str]) -> str:
    """The colour of a new run: the first `PALETTE` colour no drawn run has (so a plot that
    keeps one run draws it blue every time); past ten runs the palette repeats.

    >>> next_color([]) == PALETTE[0], next_color([PALETTE[0]]) == PALETTE[1]
    (True, True)
    """
    used = list(used)
    free = [c for c in PALETTE if c not in used]
    return free[0] if free else PALETTE[len(used) % len(PALETTE)]


def run_entry(
    run: Any,
    *,
    number: int,
    name: str,
    color: str,
    hidden: bool,
    now: float,
    fields: Sequence[str],
    last_values: Sequence[Sequence[float]],
    lane_names: Sequence[str],
) -> dict[str, Any]:
    """One line of the panel's run list (`LivePanel.runs`): the run's number, name, colour,
    status (the panel's: `panel_state`), whether a latest value is not finite, steps,
    ``max_steps``, elapsed seconds, lanes, latest values (median over lanes under vmap) and
    whether it is hidden."""
    state = panel_state(run, now=now, fields=fields, last_values=last_values, lane_names=lane_names)
    return {
        "number": number,
        "name": name,
        "color": color,
        "status": state["status"],
        "diverged": bool(state["diverged"]),
        "step": state["step"],
        "max_steps": state["max_steps"],
        "elapsed": round(state["elapsed"], 3),
        "lanes": state["lanes"],
        "latest": state["latest"],
        "hidden": hidden,
    }
