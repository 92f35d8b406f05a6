"""`ShownUpdates`: what a `LivePlot` shows of its runs, changed by its controls: runs forgotten
or kept, hidden or filtered, lanes hidden one by one, the smoothing, the window of steps (the
last N, a zoom), the axes (log y, log steps, what the x axis counts, outliers) and the width a
view reports. Each draws the state anew into the figure and the panel, under the plot's lock
(`._updates.Updates`, which this is the part of).
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from ..figure import ChartGrid, show_lane_probe
from ..panel import LivePanel
from ..reduce import minmax_decimate
from ..series import DEFAULT_POINTS, Goal, check_hidden_lanes
from ._state import PlotState

__all__ = ["LANE_POINTS", "ShownUpdates"]

#: Rows of each lane the page gets to draw a lane it points at (`ShownUpdates.lane_lines`):
#: 4,096 lanes of one field are 2 MB.
LANE_POINTS = 128


class ShownUpdates:
    """The controls' part of `._updates.Updates` (which sets `state`, `fig`, `panel`, `lock`
    and the methods below that raise here)."""

    state: PlotState
    fig: ChartGrid
    panel: LivePanel
    lock: threading.RLock

    def redraw(self) -> None:
        raise NotImplementedError

    def draw_params(self) -> None:
        raise NotImplementedError

    def sync_panel(self, now: float | None = None) -> None:
        raise NotImplementedError

    def show_error(self, error: BaseException, run: Any) -> None:
        raise NotImplementedError

    def _settled(self) -> bool:
        raise NotImplementedError

    def _windowed(self) -> bool:
        raise NotImplementedError

    def _name_lanes(self, d: Any) -> None:
        raise NotImplementedError

    def _sync_clocks(self) -> None:
        raise NotImplementedError

    def forget_ended(self) -> None:
        """Drop the runs that ended, their lines and, when none is left, the panel's run."""
        with self.lock:
            self.fig.drop_runs(self.state.forget_ended())
            self.fig.update_scales(self._settled())
            self.sync_panel()

    def keep_latest_only(self) -> None:
        """Drop every run but the latest (``keep_runs`` turned off)."""
        with self.lock:
            self.fig.drop_runs(self.state.keep_latest())
            self.fig.set_hidden(self.state.off)
            self.fig.update_scales(self._settled())
            self.sync_panel()

    def set_smoothing(self, weight: float) -> None:
        """Smooth every line with the EMA weight ``weight`` (0: off), recomputing each drawn
        run's smoothed series from all of its rows once."""
        with self.lock:
            if weight == self.state.smoothing:
                return
            self.state.smoothing, self.state.smoothed = weight, {}
            self.fig.set_smoothing(weight > 0)
            self.redraw()

    def set_last_steps(self, steps: int) -> None:
        """Show the last ``steps`` steps only (0: every step)."""
        with self.lock:
            if steps != self.state.window.last_steps:
                self.state.window.last_steps = steps
                self.redraw()

    def set_step_range(self, steps: tuple[int, int] | None) -> None:
        """Zoom every chart's step axis to ``steps`` (first, last), or back out (None)."""
        with self.lock:
            if steps != self.state.window.step_range:
                self.state.window.step_range = steps
                self.redraw()

    def set_hidden(self, numbers: set[int]) -> None:
        """Hide exactly the drawn runs ``numbers`` (the run list's toggles)."""
        with self.lock:
            self.state.hide(numbers)
            self._show_runs()

    def set_run_filter(self, text: str) -> None:
        """Show only the runs whose names match the regex ``text`` (none when empty or
        invalid: `..series.run_pattern`)."""
        with self.lock:
            self.state.set_filter(text)
            self._show_runs()

    def _show_runs(self) -> None:
        """Draw exactly the runs neither hidden nor filtered out, and list them so."""
        self.fig.set_hidden(self.state.off)
        if self._windowed():  # the last N steps are the shown runs' own
            self.redraw()
        self.draw_params()  # (of the latest shown sweep)
        self.fig.update_scales(self._settled())
        self.sync_panel()

    def set_hidden_lanes(self, pairs: list[list[int]]) -> None:
        """Hide exactly the lanes ``pairs`` (``[run number, lane]``) of the drawn runs."""
        with self.lock:
            self.state.hide_lanes(check_hidden_lanes(pairs))
            for d in self.state.drawn:
                if d.started:
                    self._name_lanes(d)
            self.redraw()
            self.sync_panel()

    def set_all_lanes(self, on: bool) -> None:
        """Draw a sweep's every lane at full strength (``on``), or, past `..series.LEAD_LANES`
        lanes, those drawn for no role faint."""
        with self.lock:
            if on != self.state.all_lanes:
                self.state.all_lanes = on
                for d in self.state.drawn:
                    if d.started:
                        self._name_lanes(d)

    def set_params(self, field: str | None, best: str | None) -> None:
        """The plot's one goal: rank every "best" (the lanes named, the hyperparameter charts)
        by plotted field ``field`` (None: a loss-like one, `..series.default_field`), a lane's
        best value of it its lowest (``best`` ``"min"``) or highest (``"max"``; None: by the
        field's name)."""
        goal = Goal(field, best)
        with self.lock:
            if goal == self.state.goal:
                return
            self.state.set_goal(goal)
            for d in self.state.drawn:
                if d.started:
                    self._name_lanes(d)
            self.redraw()  # (the lanes drawn for a role past MAX_LANES, the charts)
            self.fig.restyle()  # (the legends: "best (highest)")

    def show_lane_probe(self, probe: Any) -> None:
        """Draw lane ``probe[1]`` of run number ``probe[0]`` over every chart of that run while
        the page points at it (its point in the hyperparameter chart), when it is no line of
        its own there (a sweep past `..series.MAX_LANES`: only inside the band); ``None`` (or
        anything but two ints), a lane drawn as a line, or a time axis: none
        (`..figure.show_lane_probe`)."""
        ints = isinstance(probe, list) and len(probe) == 2
        ints = ints and all(isinstance(v, int) and not isinstance(v, bool) for v in probe)
        number, lane = probe if ints else (None, -1)
        with self.lock:
            lines = []
            d = next((d for d in self.state.drawn if d.number == number), None)
            if (
                d is not None
                and d.started
                and d.run.lanes
                and 0 <= lane < len(d.run.counts)
                and lane not in d.drawn_lanes
                and d.number not in self.state.off
                and self.fig.x_time == "step"
            ):
                name = self.state.lane_names(d.run)[lane]
                rows = d.run.rows_since(lane, 0)
                for i, spec in enumerate(d.specs):
                    if spec.xy is not None:
                        continue
                    y = spec.values(rows)
                    x, y = minmax_decimate(d.x0 + np.arange(len(y)), y, DEFAULT_POINTS)
                    lines.append((i, f"{spec.label} · {name} · {d.name}", x, y))
            show_lane_probe(self.fig, number, lines)

    def lane_lines(self, number: Any) -> tuple[dict[str, Any], list[bytes]]:
        """Every lane's line of run number ``number`` (a sweep past `..series.MAX_LANES`,
        on the step axis), `LANE_POINTS` rows each, for the page to draw the lane its pointer
        is on at once (the ``lane_lines`` request): the message ``{"jhw_lane_lines": number,
        "fields", "charts" (each field's chart), "lanes", "x" (the rows' steps)}`` with one
        float32 buffer ``(fields, lanes, len(x))`` (NaN: no row); no fields for another run."""
        content: dict[str, Any] = {"jhw_lane_lines": number, "fields": [], "charts": []}
        with self.lock:
            d = next((d for d in self.state.drawn if d.number == number), None)
            if d is None or not d.started or not d.run.lanes or self.fig.x_time != "step":
                return content, []
            counts = np.asarray(d.run.counts, np.int64)
            if len(d.drawn_lanes) >= len(counts) or not counts.size or not counts.max():
                return content, []
            specs = [s for s in d.specs if s.xy is None]
            rows = np.unique(np.linspace(0, counts.max() - 1, LANE_POINTS).round().astype(int))
            out = np.full((len(specs), len(counts), len(rows)), np.nan, np.float32)
            for k, row in enumerate(rows.tolist()):
                lanes = np.flatnonzero(counts > row)
                block = d.run.block(lanes, row, row + 1)
                for i, spec in enumerate(specs):
                    out[i, lanes, k] = spec.lane_values(block)[0]
            content.update(
                fields=[s.label for s in specs],
                charts=[s.key for s in specs],
                lanes=len(counts),
                x=(d.x0 + rows).tolist(),
            )
        return content, [out.tobytes()]

    def set_log(self, log: bool) -> None:
        with self.lock:
            self.fig.set_log(log)

    def set_log_x(self, on: bool) -> None:
        with self.lock:
            self.fig.set_log_x(on)
            self.fig.update_scales(self._settled())

    def set_x_axis(self, mode: str) -> None:
        """What the x axis counts (`..look.X_AXES`): every run drawn anew on it."""
        with self.lock:
            if mode != self.fig.x_time:
                self.fig.set_x_time(mode)
                self.redraw()
                self._sync_clocks()

    def set_ignore_outliers(self, on: bool) -> None:
        with self.lock:
            self.fig.set_ignore_outliers(on)
            self.fig.update_scales(self._settled())

    def set_width(self, pixels: int) -> None:
        """The figure's width in a view: its x ticks follow (a view's report never fails the
        kernel side: an error shows in the panel)."""
        with self.lock:
            try:
                self.fig.set_width(pixels)
            except Exception as e:
                latest = self.state.latest
                self.show_error(e, latest.run if latest is not None else None)
