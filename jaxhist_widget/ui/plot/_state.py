"""`PlotState`: what a `LivePlot` draws and shows, as plain data: the runs it draws (a
`RunDrawing` each, named and coloured), the error it hit, whether it waits for a loop, the rate,
and the view options that decide what is drawn (smoothing, hidden runs, the run filter, hidden
lanes, the window of steps).

No widgets: the figure and the panel are drawn from this state (`._updates`), under the plot's
lock, which every change here is made under too.
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ..._host import Run
from ..look import next_color, shown_text
from ..panel import RateWindow, panel_state, run_entry
from ..series import (
    Goal,
    LaneNames,
    ParamGrid,
    ParamPoints,
    PlotChoice,
    RunDrawing,
    RunSmoothing,
    StepWindow,
    param_points,
    params_field_note,
    ranked_fields,
    run_pattern,
)

__all__ = ["CLOCK_PAIRS", "PlotState", "display_name", "x_clocks"]

#: Chunk arrivals per run the hover read-out gets at most (`x_clocks`).
CLOCK_PAIRS = 256


def display_name(name: str | None, number: int, taken: Iterable[str]) -> str:
    """What the plot calls run ``number`` named ``name`` (None: ``run N``), distinct from the
    names ``taken`` by the runs it draws: ``adam``, then ``adam (2)``.

    >>> display_name("adam", 3, ["adam", "sgd"]), display_name(None, 3, [])
    ('adam (2)', 'run 3')
    """
    base = shown_text(name) if name else f"run {number}"
    taken = set(taken)
    if base not in taken:
        return base
    k = 2
    while f"{base} ({k})" in taken:
        k += 1
    return f"{base} ({k})"


def x_clocks(drawn: Sequence[RunDrawing], x_time: str) -> dict[str, list[list[float]]]:
    """The panel's ``x_clocks``: on a time axis (``x_time`` not ``"step"``), each drawn run's
    chunk arrivals (at most `CLOCK_PAIRS`, evenly picked) as the axis counts time, with their
    steps; ``{}`` on a step axis."""
    clocks: dict[str, list[list[float]]] = {}
    for d in drawn if x_time != "step" else []:
        rows, times = d.run.arrivals()
        if not len(rows):
            continue
        pick = np.unique(np.linspace(0, len(rows) - 1, min(len(rows), CLOCK_PAIRS)).astype(int))
        # Row 0 came with the first chunk: the time axis's first point is step x0.
        steps = [d.x0, *(d.x0 + rows[pick] - 1).tolist()]
        seconds = np.concatenate([times[:1], times[pick]])
        if x_time == "relative":
            seconds = seconds - times[0]
        clocks[d.name] = [np.round(seconds, 3).tolist(), steps]
    return clocks


class PlotState:
    """The runs a plot draws, oldest first (the last one is the panel's), and its view of them.

    Parameters
    ----------
    choice
        What to draw of each run (``fields=``, ``vectors=``, ``paths=``).
    max_points
        Points per line per update (None: the default, `..series.line_points`).
    lane_labels
        Names of the vmap lanes (``LivePlot(lane_labels=...)``).
    lane_values
        Their swept parameters' values, by name (``lane_values=``), or None.
    continue_steps
        Draw each run from the step where the previous one ended.
    """

    def __init__(
        self,
        choice: PlotChoice,
        max_points: int | None,
        lane_labels: Sequence[str] | None,
        continue_steps: bool,
        lane_values: dict[str, Any] | None = None,
    ) -> None:
        self.choice = choice
        self.max_points = max_points
        self.continue_steps = continue_steps
        #: Names of the vmap lanes (checked against each vmapped run's lane count).
        self.lane_names = LaneNames(lane_labels)
        self.lane_values = lane_values
        #: The plot's one goal (``params_field``, ``params_best``): the field every "best",
        #: "median" and "worst" ranks (the lanes named, the hyperparameter charts) and whether
        #: its best value is its lowest or highest (None, None: read from the fields' names).
        self.goal = Goal()
        self.drawn: list[RunDrawing] = []
        self.runs_seen = 0
        # An error this plot hit (a failed update) and the run it is about: the panel says
        # "error" for that run until the next run starts. (What fields= names that a run does
        # not have is a note under the charts, not an error: the run succeeded.)
        self.error: tuple[Run | None, str] | None = None
        #: Attached and no run started since: the panel says "compiling", not "idle".
        self.waiting = False
        self.rate = RateWindow()
        self.smoothing = 0.0  # the EMA weight (0: off)
        self.smoothed: dict[int, RunSmoothing] = {}  # by run number, while smoothing
        self.hidden: set[int] = set()  # run numbers hidden from the run list
        self.run_filter: re.Pattern[str] | None = None  # the names shown match it (None: all)
        self.hidden_lanes: dict[int, set[int]] = {}  # run number -> its lanes hidden
        #: Draw a sweep's every lane at full strength (``all_lanes``), not only those named.
        self.all_lanes = False
        self.window = StepWindow()  # the "last N steps" and the zoom

    @property
    def latest(self) -> RunDrawing | None:
        """The run the panel shows: the latest one started."""
        return self.drawn[-1] if self.drawn else None

    @property
    def running(self) -> bool:
        """Whether the latest run has not ended."""
        return bool(self.drawn) and self.drawn[-1].run.ended is None

    def start(self, run: Run, keep_runs: bool, now: float) -> tuple[RunDrawing, list[int]]:
        """A run starts: its drawing (numbered, named, coloured, from the step it continues)
        and the numbers of the ended runs it replaces (without ``keep_runs``)."""
        self.waiting = False
        self.runs_seen += 1
        # A resumed run's row 0 is the previous run's last row: continue from its step (known
        # before the previous run may be dropped just below).
        prev = self.latest if self.continue_steps else None
        x0 = prev.x0 + prev.last_step if prev is not None else 0
        dropped = [] if keep_runs else [d.number for d in self.drawn if d.run.ended is not None]
        self._keep(lambda d: d.number not in dropped)
        number = self.runs_seen
        drawing = RunDrawing(run, number, self.choice, x0=x0, goal=self.goal)
        drawing.name = display_name(run.name, number, [d.name for d in self.drawn])
        drawing.color = next_color(d.color for d in self.drawn)
        self.drawn.append(drawing)
        self.error = None
        self.rate.restart(now)
        return drawing, dropped

    def forget_ended(self) -> list[int]:
        """Drop the runs that ended (a running one stays); their numbers."""
        ended = [d.number for d in self.drawn if d.run.ended is not None]
        self._keep(lambda d: d.number not in ended)
        if not self.drawn:
            self.error = None
        return ended

    def keep_latest(self) -> list[int]:
        """Drop every run but the latest; their numbers."""
        dropped = [d.number for d in self.drawn[:-1]]
        self._keep(lambda d: d.number not in dropped)
        return dropped

    def _keep(self, keep: Any) -> None:
        self.drawn = [d for d in self.drawn if keep(d)]
        numbers = {d.number for d in self.drawn}
        self.smoothed = {n: s for n, s in self.smoothed.items() if n in numbers}
        self.hidden &= numbers
        self.hidden_lanes = {n: s for n, s in self.hidden_lanes.items() if n in numbers}

    def filtered(self, d: RunDrawing) -> bool:
        """Whether the run filter leaves ``d`` out (its name does not match)."""
        return self.run_filter is not None and self.run_filter.search(d.name) is None

    @property
    def off(self) -> set[int]:
        """The runs not drawn: hidden by their toggle or left out by the run filter."""
        return self.hidden | {d.number for d in self.drawn if self.filtered(d)}

    def set_filter(self, text: str) -> None:
        """Show only the runs whose names match ``text`` (`..series.run_pattern`: none when
        empty or invalid)."""
        self.run_filter = run_pattern(text)

    def hide_lanes(self, pairs: Iterable[Sequence[int]]) -> None:
        """Hide exactly the lanes ``pairs`` (``[run number, lane]``) of the drawn runs."""
        numbers = {d.number for d in self.drawn}
        self.hidden_lanes = {}
        for number, lane in pairs:
            if number in numbers:
                self.hidden_lanes.setdefault(number, set()).add(lane)

    def hide(self, numbers: Iterable[int]) -> None:
        """Hide exactly the drawn runs ``numbers`` (the run list's toggles)."""
        self.hidden = set(numbers) & {d.number for d in self.drawn}

    def smoothed_of(self, d: RunDrawing) -> RunSmoothing | None:
        """The smoothed series of ``d`` while smoothing is on (made on first use, from all of
        its rows)."""
        if not self.smoothing or not d.series:
            return None
        smoothed = self.smoothed.get(d.number)
        if smoothed is None:
            smoothed = self.smoothed[d.number] = RunSmoothing(d, self.smoothing)
        return smoothed

    def run(self, index: int) -> Run:
        """Drawn run ``index`` (``-1``: the latest); a LookupError saying how to get one."""
        runs = [d.run for d in self.drawn]
        if not runs:
            raise LookupError(
                "This LivePlot has received no run yet: call a jhw.while_loop inside "
                "`with live:` or via live.run(fn, ...)."
            )
        return runs[index]

    def number_of(self, run: int | str) -> int:
        """The number of a drawn run: ``run`` is its index (``-1``: the latest) or its name;
        a TypeError for anything else (a bool too: ``True`` would be run 1, the second), an
        IndexError / LookupError naming the runs there are."""
        names = [d.name for d in self.drawn]
        if isinstance(run, str):
            if run not in names:
                raise LookupError(f"no run named {run!r} on this plot; its runs: {names}.")
            return self.drawn[names.index(run)].number
        if isinstance(run, bool) or not isinstance(run, numbers.Integral):
            raise TypeError(
                f"show_run takes a run's index (int) or name (str), got {run!r}"
                + (" (a bool is no index)" if isinstance(run, bool) else "")
                + "; show or hide it with visible=: live.show_run(-1, visible=False)."
            )
        n = len(names)
        if not n:
            raise IndexError(
                f"no run with index {run}: this plot draws none yet; run a loop in "
                "`with live:` or live.run(fn, ...) first."
            )
        if not -n <= run < n:
            raise IndexError(
                f"no run {run} on this plot: it draws {n} run{'s' if n > 1 else ''}: "
                f"0 .. {n - 1} (-1 the latest), or by name: {names}."
            )
        return self.drawn[int(run)].number

    def set_goal(self, goal: Goal) -> None:
        """Rank every "best" by ``goal`` from now on: each drawn run's lanes at once."""
        self.goal = goal
        for d in self.drawn:
            d.set_goal(goal)

    def param_points(self) -> tuple[RunDrawing | None, list[ParamPoints | ParamGrid]]:
        """The hyperparameter charts' points (`..series.param_points`, by the `goal`): of the
        latest shown sweep whose lane count the lanes' values have, and that run."""
        for d in reversed(self.drawn):
            if self.lane_values and d.started and d.run.lanes and d.number not in self.off:
                points = param_points(d, self.lane_values)
                if points:
                    return d, points
        return None, []

    def latest_sweep(self) -> RunDrawing | None:
        """The latest shown sweep (a run of vmap lanes) that started and plots a field; None
        when there is none."""
        for d in reversed(self.drawn):
            if d.started and d.run.lanes and d.number not in self.off and d.specs:
                return d
        return None

    def _latest_sweep(self) -> RunDrawing | None:
        """`latest_sweep` when the lanes carry values (whose fields the hyperparameter charts
        rank); else None."""
        return self.latest_sweep() if self.lane_values else None

    def ranked_fields(self) -> list[str]:
        """The fields the hyperparameter charts can rank: those the latest shown sweep plots
        (`..series.ranked_fields`; [] before one started)."""
        d = self._latest_sweep()
        return ranked_fields(d) if d is not None else []

    def _names_plotted(self, field: str) -> bool:
        """Whether ``field`` is a field of the latest shown sweep, by label or key (True
        while none started: nothing to tell yet)."""
        d = self._latest_sweep()
        if d is None or not ranked_fields(d):
            return True
        return any(field in (s.label, s.key) for s in d.specs if s.xy is None)

    def check_ranked(self, field: str | None) -> str | None:
        """``field`` when the latest shown sweep plots it (or none started yet), else a
        ValueError naming what it plots (``live.params_field = ...``)."""
        if field is not None and not self._names_plotted(field):
            raise ValueError(
                f"params_field={field!r} is not plotted: the sweep plots "
                f"{', '.join(map(repr, self.ranked_fields()))}; rank by one of them, or plot "
                f"it (LivePlot(fields=[..., {field!r}]))."
            )
        return field

    def params_notes(self) -> list[str]:
        """The note under the charts when the goal's field names no plotted field of the latest
        shown sweep (`..series.params_field_note`); [] else."""
        field = self.goal.field
        if field is None or self._names_plotted(field):
            return []
        return [params_field_note(field, self.ranked_fields())]

    def panel_state(self, now: float, attached: bool) -> dict[str, Any]:
        """Every run-state trait of the panel (`..panel.panel_state`) and its run list."""
        d = self.latest
        run = d.run if d is not None else None
        error = self.error[1] if self.error is not None and self.error[0] is run else ""
        state = panel_state(
            run,
            now=now,
            run_number=self.runs_seen,
            fields=d.fields if d is not None else (),
            last_values=d.last_values() if d is not None else (),
            rate_samples=self.rate.samples,
            lane_names=self.lane_names(run) if run is not None else (),
            diverged_lanes=d.diverged_lanes() if d is not None else (),
            error=error,
            waiting=self.waiting and attached,
        )
        state["runs"] = [self._run_entry(x, now) for x in self.drawn]
        return state

    def _run_entry(self, d: RunDrawing, now: float) -> dict[str, Any]:
        return run_entry(
            d.run,
            number=d.number,
            name=d.name,
            color=d.color,
            hidden=d.number in self.hidden,
            filtered=self.filtered(d),
            now=now,
            fields=d.fields,
            last_values=d.last_values(),
            lane_names=self.lane_names(d.run) if d.run.lanes else (),
            drawn_lanes=d.drawn_lanes if d.run.lanes is not None else (),
            hidden_lanes=self.hidden_lanes.get(d.number, ()),
        )
