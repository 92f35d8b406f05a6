"""Which vmap lanes of a run a `LivePlot` draws as lines, and why; what they are called
(`LaneNames`: ``lane_labels=`` or ``lane k``).

Numpy only. Up to `MAX_LANES` lanes every lane is drawn. Past it, unless ``lanes=`` names them
(never overridden), the chart draws a fixed even stride of the lanes plus the lanes that tell
where the sweep stands. At any lane count (``lanes=`` aside) those lanes are named for their
role, chosen anew at each update from every lane's last row by the plot's goal
(`._goal.Goal`: a field and whether its best value is its lowest or highest; `ranked_lanes`):

- ``best``: the best last finite value of the goal's field (a lane at NaN or ±inf is never
  the best);
- ``median``: the lane at the median of those finite last values (three lanes or more);
- ``worst``: the worst finite last value (none of these three while every lane has the same
  value: none is better);
- ``diverged``: the first lane (by index) whose last value is NaN or ±inf, if any, so that a
  diverged line (flagged at its end) is drawn whatever the stride hits.

Past `LEAD_LANES` lanes the band of every lane and its median lead, with the lanes named for a
role; the plot draws the others faint.

The stride is fixed when the run's first rows arrive, so only these few lanes come and go as the
values move: one gather of every lane's last row and an argpartition per update.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..._host import Run
from ..look import LEAD_LANES as LOOK_LEAD_LANES
from ..look import format_value, shown_text
from ._params import numeric_labels

__all__ = [
    "LEAD_LANES",
    "MAX_LANES",
    "ROLES",
    "LaneNames",
    "check_lane_labels",
    "pick_lanes",
    "ranked_lanes",
]

#: Lanes drawn per field under vmap (all lanes are recorded; `history` has them all).
MAX_LANES = 64
#: Past this many lanes (`..look.LEAD_LANES`, the page's too) a sweep is read by its band over
#: every lane, the band's median and the lanes named for a role; its other lines are drawn
#: faint (``all_lanes=True``: as the rest).
LEAD_LANES = LOOK_LEAD_LANES
#: Why a lane is drawn past `MAX_LANES` besides the stride, in the order its label says them.
ROLES = ("best", "median", "worst", "diverged")


def pick_lanes(
    total: int, chosen: Sequence[int | str] | None, names: Sequence[str]
) -> tuple[tuple[int, ...], list[str], bool]:
    """The lanes of a run of ``total`` lanes (0: unbatched) drawn as lines, notes, and whether
    they are to be ranked at each update (`ranked_lanes`): those ``chosen`` (``lanes=``:
    indices, negative from the end, or names; not ranked), else every lane up to `MAX_LANES`,
    else an even stride of ``MAX_LANES - len(ROLES)`` lanes (the first and the last among
    them), ranked either way.

    >>> pick_lanes(4096, None, [])[0][:3], pick_lanes(4096, [5, -1, "b"], ["a", "b"])[0]
    ((0, 69, 139), (5, 4095, 1))
    """
    if not total:
        return (0,), [], False
    notes = []
    picked: list[int] = []
    for lane in chosen or ():
        k = names.index(lane) if isinstance(lane, str) and lane in names else lane
        if isinstance(k, str) or not -total <= k < total:
            notes.append(f"lanes: no lane {lane!r} in this run of {total} lanes; not drawn.")
        elif k % total not in picked:
            picked.append(k % total)
    if len(picked) > MAX_LANES:
        notes.append(f"lanes: {len(picked)} lanes named; the first {MAX_LANES} are drawn.")
        picked = picked[:MAX_LANES]
    if not picked:
        if total <= MAX_LANES:  # every lane drawn, each named for its role (ranked)
            return tuple(range(total)), notes, True
        stride = np.linspace(0, total - 1, MAX_LANES - len(ROLES)).round().astype(np.int64)
        notes.append(
            f"{MAX_LANES} of {total:,} lanes drawn as lines, over every lane's band: the best, "
            "median and worst by the last value of the goal's field (the legend's best = ...) "
            "and the first diverged one, chosen anew as rows arrive, and an even stride of the "
            "rest; lanes=[...] picks them, by index or label."
        )
        return tuple(np.unique(stride).tolist()), notes, True
    if len(picked) < total:
        notes.append(f"{len(picked)} of {total} lanes drawn as lines, over every lane's band.")
    return tuple(picked), notes, False


def ranked_lanes(
    stride: Sequence[int],
    has: np.ndarray,
    last: np.ndarray,
    best: str = "min",
    gone: np.ndarray | None = None,
) -> tuple[tuple[int, ...], dict[int, str]]:
    """The lanes to draw (``stride`` and the `ROLES`' lanes, in lane order) and why each role
    lane is drawn (``{lane: "best, median"}``), from each lane's last value ``last`` of the
    goal's field (``has``: whether a lane has a row yet), its best the lowest (``best``
    ``"min"``) or the highest (``"max"``); ``gone``: the lanes diverged in another field too
    (an accuracy stays finite where the loss is NaN: such a lane is never best, median or
    worst). Array operations only: no loop over the lanes.

    >>> last = np.array([5, 4, 3, 2, 1, 0, np.nan, 7, 8, 9.0])
    >>> ranked_lanes((0, 9), np.ones(10, bool), last)
    ((0, 1, 5, 6, 9), {5: 'best', 1: 'median', 9: 'worst', 6: 'diverged'})
    >>> ranked_lanes((0, 9), np.ones(10, bool), last, "max")[1]
    {9: 'best', 1: 'median', 5: 'worst', 6: 'diverged'}
    """
    values = np.asarray(last, np.float64)
    finite = np.asarray(has, bool) & np.isfinite(values)
    if gone is not None:
        finite &= ~np.asarray(gone, bool)
    chosen: dict[str, int] = {}
    idx = np.flatnonzero(finite)
    v = values[idx] if best == "min" else -values[idx]  # (lower is better, either way)
    if v.size and v.min() < v.max():  # (lanes all alike: none is better)
        mid = (v.size - 1) // 2  # the lower median: a lane's own value, not an average
        chosen["best"] = int(idx[np.argmin(v)])
        if idx.size > 2:  # (of two lanes, one is best and the other worst: no median)
            chosen["median"] = int(idx[np.argpartition(v, mid)[mid]])
        chosen["worst"] = int(idx[np.argmax(v)])
    bad = np.flatnonzero(np.asarray(has, bool) & ~finite)
    if bad.size:
        chosen["diverged"] = int(bad[0])
    roles: dict[int, str] = {}
    for role, lane in chosen.items():  # (at most four)
        roles[lane] = f"{roles[lane]}, {role}" if lane in roles else role
    return tuple(sorted(set(stride) | set(roles))), roles


class LaneNames:
    """Names of a run's vmap lanes: ``LivePlot(lane_labels=...)``, or ``lane k`` when none were
    given or their number does not match the run's lanes (warned once per run)."""

    def __init__(self, labels: Any) -> None:
        self.labels = check_lane_labels(labels)
        self._checked: Run | None = None  # the run whose lane count was checked
        self._ok = True

    def __call__(self, run: Run) -> list[str]:
        lanes = run.lanes or 0
        labels = self.labels
        if not lanes:  # an unbatched run names no lane; the labels wait for a vmapped one
            return []
        if labels is not None and self._checked is not run:
            self._checked = run
            self._ok = len(labels) == lanes
            if not self._ok:
                warnings.warn(
                    f"LivePlot(lane_labels=...) has {len(labels)} labels but the run has "
                    f"{lanes} vmap lanes; lanes are named 'lane k'. Pass one label per lane.",
                    UserWarning,
                    stacklevel=3,
                )
        if labels is not None and self._ok:
            return list(labels)
        return [f"lane {k}" for k in range(lanes)]


def check_lane_labels(labels: Any) -> tuple[str, ...] | None:
    """Validate ``LivePlot(lane_labels=...)``: None, a sequence of str, or numbers (a numpy or
    jax array of the swept values, written as the panel writes numbers: ``0.001``, ``4.45e-4``).

    >>> check_lane_labels(np.array([1e-3, 4.45e-4]))
    ('0.001', '4.45e-4')
    """
    if labels is None:
        return None
    numbers = numeric_labels(labels)
    if numbers is not None:
        return tuple(format_value(float(v)) for v in numbers)
    if isinstance(labels, (str, bytes)) or not isinstance(labels, Sequence):
        raise TypeError(
            "lane_labels must be a sequence of str or numbers, one per vmap lane (e.g. rates, "
            f"or [f'lr={{lr}}' for lr in lrs]), got {labels!r}."
        )
    bad = [x for x in labels if not isinstance(x, str)]
    if bad:
        raise TypeError(
            f"lane_labels must hold str only, got {bad[0]!r}; e.g. [str(v) for v in values]."
        )
    return tuple(map(shown_text, labels))  # any str, drawn as shown
