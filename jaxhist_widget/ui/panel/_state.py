"""What the panel shows, as one pure function of the run state: `panel_state`, and one line of
its run list, `run_entry`.

Numpy only: no widgets and no clock (the caller passes ``now``), so
every rule of the panel (statuses, the rate, the lanes summary, errors) is tested on plain
values. `LivePlot` applies the result to its `LivePanel` in one place.

The ``status`` values are the run's own (`Run.status`: ``converged`` means "``cond`` became
False", whatever the condition encodes) plus the panel's ``idle``, ``compiling`` (attached,
waiting for the loop to start) and ``error``; what the panel *says* for them (``finished``,
``diverged`` when the latest value of a plotted field is NaN or infinite) is the view's word
(`js/base/format.js`, and `..look.shown_status` for the static picture).
"""

from __future__ import annotations

import collections
import math
from collections.abc import Collection, Sequence
from typing import Any

import numpy as np

from ..._host import Run
from ..look import CAN_DIVERGE
from ..reduce import row_quantiles

__all__ = ["FAILED_TEXT", "RATE_WINDOW_S", "RateWindow", "panel_state", "run_entry", "run_step"]

#: The panel's rate is measured over about this many seconds of the latest updates: rows arrive
#: in chunks, so a rate per update (or per second) jumps between chunk sizes.
RATE_WINDOW_S = 5.0
#: The panel's error text for a run whose computation raised (its rows are kept).
FAILED_TEXT = "The run failed: the computation raised an exception."


class RateWindow:
    """``(time, steps)`` samples of the latest updates of a running run: the oldest one is the
    newest sample at least ``seconds`` old (or the run's start, early on)."""

    def __init__(self, seconds: float = RATE_WINDOW_S) -> None:
        self.seconds = seconds
        self._points: collections.deque[tuple[float, int]] = collections.deque()

    @property
    def samples(self) -> tuple[tuple[float, int], ...]:
        return tuple(self._points)

    def restart(self, now: float) -> None:
        """A run started at ``now``, with no step taken."""
        self._points = collections.deque([(now, 0)])

    def add(self, now: float, step: int) -> None:
        points = self._points
        points.append((now, step))
        while len(points) > 2 and now - points[1][0] >= self.seconds:
            points.popleft()


def run_step(run: Run) -> int:
    """Steps done: rows - 1, the largest over lanes (0 before the first row)."""
    counts = run.counts
    return max(counts) - 1 if counts else 0


def panel_state(
    run: Run | None,
    *,
    now: float,
    run_number: int = 0,
    fields: Sequence[str] = (),
    last_values: Sequence[Sequence[float]] = (),
    rate_samples: Sequence[tuple[float, int]] = (),
    lane_names: Sequence[str] = (),
    diverged_lanes: Sequence[int] = (),
    error: str = "",
    waiting: bool = False,
) -> dict[str, Any]:
    """Every run-state trait of the `LivePanel`: all but the title (the user's), the controls
    (the view's) and ``stop_mode`` (how a Stop click travels, set by the runners).

    Parameters
    ----------
    run
        The run shown (the latest one started), or None (nothing to show: idle).
    now
        The time (``time.perf_counter()``) the state is for: a running run's elapsed time and
        rate are measured to it.
    run_number
        The number of runs the plot received.
    fields, last_values
        The plotted fields' labels and, per field, the latest value of each drawn lane that has
        rows (none yet: empty, or missing at the end).
    rate_samples
        ``(time, steps)`` of the latest updates (`RateWindow.samples`): while running, the rate
        is the steps since the oldest. Once the run ended the rate is its average instead.
    lane_names
        Names of the run's vmap lanes (for naming the few lanes that ended differently).
    diverged_lanes
        The lanes whose latest value of a plotted field is NaN or infinite: counted as
        diverged (a run that did not fail), whatever their loop's status.
    error
        Text of an error this plot hit for this run (a bad ``fields=`` entry, a failed update):
        status "error" while it applies. A failed run's own text takes precedence.
    waiting
        The plot is attached (``with live:``, a ``%%jaxhist`` cell, `LivePlot.run`) and no run
        started since: the loop is being traced and compiled. Status "compiling" instead of
        "idle" (or the previous run's end), so seconds of compilation do not read as nothing.
    """
    if run is None or (waiting and not error):
        state = _empty(run_number)
        state.update(status="error" if error else "compiling" if waiting else "idle", error=error)
        return state
    ended = run.ended is not None
    step = run_step(run)
    elapsed = (run.ended if run.ended is not None else now) - run.started
    if ended:  # the run's average: a flush after the end must not replace it
        rate = step / elapsed if elapsed > 0 and step > 0 else 0.0
    elif rate_samples:
        t0, s0 = rate_samples[0]
        rate = (step - s0) / (now - t0) if now > t0 and step > s0 else 0.0
    else:
        rate = 0.0
    if run.status == "failed":  # the computation raised: keep its rows, say so
        status, error = "error", FAILED_TEXT
    elif error:
        status = "error"
    else:
        status = run.status if ended else "running"
    lanes = run.lanes or 0
    latest, latest_range = _latest(fields, last_values, batched=lanes > 0)
    lane_statuses: dict[str, int] = {}
    names_of: dict[str, list[str]] = {}
    if lanes and ended:
        diverged = set(diverged_lanes)
        for lane, lane_status in enumerate(run.statuses):
            if lane in diverged and lane_status in CAN_DIVERGE:
                lane_status = "diverged"
            lane_statuses[lane_status] = lane_statuses.get(lane_status, 0) + 1
            name = lane_names[lane] if lane < len(lane_names) else f"lane {lane}"
            names_of.setdefault(lane_status, []).append(name)
    return {
        **_empty(run_number),
        "status": status,
        "error": error,
        "step": step,
        "max_steps": run.layout.max_steps,
        "lanes": lanes,
        "elapsed": float(max(0.0, elapsed)),
        "rate": float(rate),
        "fields": list(fields),
        "latest": latest,
        "latest_range": latest_range,
        "lane_statuses": lane_statuses,
        # Only the few lanes that ended differently are worth naming.
        "lane_names": {k: v for k, v in names_of.items() if len(v) <= 2},
        "diverged": _diverged(fields, last_values) if status != "error" else [],
    }


def _empty(run_number: int) -> dict[str, Any]:
    return {
        "run_number": run_number,
        "status": "idle",
        "error": "",
        "step": 0,
        "max_steps": 0,
        "lanes": 0,
        "elapsed": 0.0,
        "rate": 0.0,
        "fields": [],
        "latest": {},
        "latest_range": {},
        "lane_statuses": {},
        "lane_names": {},
        "diverged": [],
    }


def _diverged(fields: Sequence[str], last_values: Sequence[Sequence[float]]) -> list[str]:
    """The plotted fields whose latest value (of any lane) is NaN or infinite: the computation
    still succeeded, but the numbers it produces no longer mean anything."""
    out = []
    for label, last in zip(fields, last_values, strict=False):
        values = np.asarray(last, dtype=np.float64)
        if values.size and not np.isfinite(values).all():
            out.append(label)
    return out


def _latest(
    fields: Sequence[str], last_values: Sequence[Sequence[float]], batched: bool
) -> tuple[dict[str, float | str], dict[str, list[float | str]]]:
    """Latest value per field and, under vmap, its median and range over the lanes.

    Over the lanes whose latest value is finite, as the band over the lanes and the ranked
    lanes take them (`..reduce.row_quantiles`): a lane at NaN or ±inf has diverged (the
    panel counts it so), it has no value to rank. NaN when no lane has one.
    """
    latest: dict[str, float | str] = {}
    latest_range: dict[str, list[float | str]] = {}
    for i, label in enumerate(fields):
        last = last_values[i] if i < len(last_values) else ()
        if not len(last):
            continue
        if batched:
            values = np.asarray(last, dtype=np.float64)
            mid, lo, hi = row_quantiles(values[None, :], (50.0, 0.0, 100.0))[:, 0]
            latest[label] = _json_float(mid)
            latest_range[label] = [_json_float(lo), _json_float(hi)]
        else:
            latest[label] = _json_float(last[0])
    return latest, latest_range


def _json_float(v: Any) -> float | str:
    """A float, or "nan" / "inf" / "-inf": JSON has no non-finite numbers."""
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


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
    filtered: bool = False,
    drawn_lanes: Sequence[int] = (),
    hidden_lanes: Collection[int] = (),
) -> dict[str, Any]:
    """One line of the panel's run list (`LivePanel.runs`): the run's number, name, colour,
    status (the panel's: `panel_state`), whether a latest value is not finite, steps,
    ``max_steps``, elapsed seconds, lanes, latest values (median over lanes under vmap),
    whether it is hidden (its toggle) or ``filtered`` (left out by the run filter), and under
    vmap its ``drawn`` lanes as ``[lane, name, hidden]`` (their toggles)."""
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
        "filtered": filtered,
        "drawn": [
            [int(k), lane_names[k] if k < len(lane_names) else f"lane {k}", k in hidden_lanes]
            for k in drawn_lanes
        ],
    }
