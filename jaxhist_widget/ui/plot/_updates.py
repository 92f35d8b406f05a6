"""`Updates`: how a `LivePlot`'s state becomes its widgets, under the plot's lock.

The state (`._state.PlotState`) says what is drawn; this draws it: the figure is told what to
draw by run number (it owns its marks), and the panel's run-state traits come from one pure
function (`..panel.panel_state`) written in one place (`sync_panel`), in one message. The host
runtime calls the plot's hooks from its callback threads (and the worker: `._ahead`), the
controls come from the main thread (what the plot shows of its runs, changed: runs forgotten,
kept, hidden or filtered, lanes hidden one by one, the smoothing, the window of steps, the axes,
the width a view reports: each changes the state and draws it anew); every method runs under
the plot's one lock, which the panel's writes hold too. The page's requests about a sweep's
lanes are a part of their own (`._lane_requests.LaneRequests`, `lanes`). Each update reduces
only the rows new since the last (most already reduced on the worker) and sends at most
``max_points`` points per line; when to update is the throttle's (`._throttle`). An exception
here is shown in the panel, never raised into the run.
"""

from __future__ import annotations

import threading
import time
import traceback
import warnings
from collections.abc import Callable, Hashable

from ..._host import Run, unpaced
from ..figure import ChartGrid, Lines, show_params
from ..look import format_value
from ..panel import LivePanel, run_step
from ..series import (
    LEAD_LANES,
    Goal,
    ParamGrid,
    RunDrawing,
    check_hidden_lanes,
    hide_lanes,
    ranked_fields,
    window_lines,
)
from ._ahead import Ahead
from ._lane_requests import LaneRequests
from ._state import PlotState, x_clocks
from ._throttle import Throttle

__all__ = ["TIME_WINDOW_NOTE", "Updates"]

#: Said under the charts while a zoom or the last N steps are set on a time axis.
TIME_WINDOW_NOTE = (
    "The zoom and the last N steps apply to the step axis: the time axis shows every row."
)
#: How often new rows waiting for the plot's lock look again whether an update holds it.
BUSY_LOOK_S = 0.005
#: The key of the plot's own notes among the runs' (`ChartGrid.set_notes`: run numbers >= 1).
WINDOW_NOTE_KEY = 0
#: The key of the note that ``params_field`` names no plotted field (`PlotState.params_notes`).
PARAMS_NOTE_KEY = -1


class Updates:
    """Draws ``state`` into ``fig`` and ``panel`` (see the module docstring).

    Parameters
    ----------
    state, fig, panel
        The plot's parts. ``panel`` holds ``lock`` for every write.
    lock
        The plot's lock: every method takes it.
    attached
        Whether the plot is attached now (the panel says "compiling" only then).
    key
        The sink whose work the trailing flush is on the worker (`Hub.drain` of it waits).
    """

    def __init__(
        self,
        state: PlotState,
        fig: ChartGrid,
        panel: LivePanel,
        lock: threading.RLock,
        attached: Callable[[], bool],
        key: Hashable,
    ) -> None:
        self.state, self.fig, self.panel, self.lock = state, fig, panel, lock
        self._attached = attached
        self.throttle = Throttle(self.flush, key)
        self.ahead = Ahead(self._ingest_live, lock, self.rows, key)
        #: The page's requests about a sweep's lanes (a part of its own: it draws nothing).
        self.lanes = LaneRequests(state, fig, lock)
        # run number -> the `RunDrawing.lanes_version`, hidden lanes and faint lanes named
        self._named: dict[int, tuple[int, frozenset[int], bool]] = {}

    # --------------------------------------------------------------------- runs
    def start(self, run: Run, keep_runs: bool) -> None:
        """A run starts: its lines (no marks until its first rows) and the panel."""
        with self.lock:
            self.throttle.cancel()
            now = time.perf_counter()
            drawing, dropped = self.state.start(run, keep_runs, now)
            try:
                self.fig.drop_runs(dropped)
                self.fig.add_run(drawing.number, drawing.x0, drawing.name, drawing.color)
                # A time axis places the run's steps at the times its rows reached the host.
                clock = lambda s, x0=drawing.x0: run.row_times(s - x0)  # noqa: E731
                self.fig.set_clock(drawing.number, clock)
                self.fig.restyle()
                self.fig.update_scales(self._settled())
                self.sync_panel(now)
            except Exception as e:
                self.show_error(e, run)

    def rows(self) -> None:
        """Rows arrived: update now, or reduce them on the worker (`._ahead`) and leave the
        update to the trailing flush; while the plot is busy, taken up as that ends."""
        if not self._lock_unless_busy():
            return
        try:
            if self.throttle.due(time.perf_counter()):
                self.push()
                return
        finally:
            self.lock.release()
        self.ahead.queue()

    def _lock_unless_busy(self) -> bool:
        """Take the plot's lock for new rows, unless an update or a reduction holds the plot:
        then the rows are noted, to be taken up as it ends, and False (the loop never waits for
        one). A quick holder (a control, a run's start) is waited for, asking again every
        `BUSY_LOOK_S` whether the plot became busy: an update may take the lock between one
        look and the wait."""
        while not self.ahead.note_if_busy():
            if self.lock.acquire(timeout=BUSY_LOOK_S):
                return True
        return False

    def _ingest_live(self) -> None:
        """Reduce the rows that came (no widget is touched): `._ahead`, on the worker."""
        try:
            for d in self.state.drawn:
                if d.started and d.run.ended is None:
                    d.ingest()
        except Exception as e:
            self.show_error(e, None)

    def end(self, run: Run) -> None:
        """A run ended: its last rows always show (never throttled)."""
        with self.lock:
            self.throttle.cancel()
            self.push(ended=run)

    def flush(self) -> None:
        """The trailing flush: the rows held back, when due (an update may have raced it)."""
        with self.lock:
            if self.throttle.held and self.throttle.due(time.perf_counter()):
                self.push()

    def push(self, ended: Run | None = None) -> None:
        """Send the current state of every run with new rows, and the panel; ``ended``: the run
        whose end this update shows (drawn although it ended). The panel asks each run whether
        it ended, so a trailing flush after the end shows the same."""
        # `unpaced`: the throttle spaces the updates by their cost; the loop's flush pace must
        # not count them as its chunks' cost too (each would lengthen the next chunks).
        with self.lock, self.ahead.working() as came, unpaced():
            start = self.throttle.started()
            current = self.state.latest.run if self.state.latest is not None else None
            try:
                for d in self.state.drawn:
                    if d.run.ended is None or d.run is ended:
                        self._draw(d)
                if self._windowed():
                    self._draw_window()
                self.draw_params()
                self.fig.update_scales(self._settled())
                self._sync_clocks()
                if current is not None:
                    now = time.perf_counter()
                    if current.ended is None:
                        self.state.rate.add(now, run_step(current))
                    self.sync_panel(now)
            except Exception as e:
                self.show_error(e, current)
            finally:
                self.throttle.ended(start)
        if came():  # rows came while the plot was busy: taken up now
            self.rows()

    def _windowed(self) -> bool:
        """Whether the charts show a window of steps: one is set and the x axis counts steps
        (a zoom and the last N steps are in steps: a time axis shows every row)."""
        return self.state.window.on and self.fig.x_time == "step"

    def _window_set_aside(self) -> bool:
        """Whether a window of steps is set but not applied (the x axis counts time)."""
        return self.state.window.on and self.fig.x_time != "step"

    def _settled(self) -> bool:
        """Whether every run drawn ended (the step axis then fits them: no live headroom)."""
        return bool(self.state.drawn) and all(d.run.ended is not None for d in self.state.drawn)

    def _draw(self, d: RunDrawing) -> None:
        if not d.started and not self._start(d):
            return
        with self.throttle.aside():
            d.ingest()
        self._name_lanes(d)
        if not self._windowed():  # (a window draws its own lines: `_draw_window`)
            self._draw_whole(d)
        self.fig.set_flags(d.number, d.diverged_ends())

    def _start(self, d: RunDrawing) -> bool:
        """The first rows of run ``d``: its lane count is known; plan and make its marks (once
        per run: no cost of updating often). False if there is nothing to draw yet."""
        with self.throttle.aside():
            batched = d.run.lanes is not None
            every = self.state.lane_names(d.run) if batched else []
            if not d.start(self.state.max_points, every):
                return False
            names = [every[k] for k in d.drawn_lanes] if batched else None
            self.fig.add_marks(
                d.number, d.labels, names, d.run.lanes or 0, keys=d.keys, paths=d.paths
            )
            self.fig.add_extras(d.number, d.extras_by_label(), d.x0)
            self.fig.set_notes(d.number, d.notes)
            off = self.state.off
            if off:  # a chart made now holds the hidden (and filtered) runs too
                self.fig.set_hidden(off)
        return True

    def _name_lanes(self, d: RunDrawing) -> None:
        """Name ``d``'s drawn lanes in the legend when they were chosen anew (or first: named
        before drawn) or hidden one by one; past `..series.LEAD_LANES` those drawn for no role
        are faint (unless ``all_lanes``)."""
        hidden = frozenset(self.state.hidden_lanes.get(d.number, ()))
        faint = bool(d.run.lanes and d.run.lanes > LEAD_LANES and d.lane_roles)
        faint = faint and not self.state.all_lanes
        key = (d.lanes_version, hidden, faint)
        if d.run.lanes is None or self._named.get(d.number) == key:
            return
        self._named[d.number] = key
        names, roles = d.lane_names(self.state.lane_names(d.run))
        self.fig.set_lane_names(d.number, names, roles, d.drawn_lanes, hidden, faint)

    def _shown(self, d: RunDrawing, lines: Lines) -> Lines:
        """``lines`` of run ``d`` with their extents those of the lanes shown (its lanes hidden
        one by one are drawn transparent: `..series.hide_lanes`)."""
        hidden = self.state.hidden_lanes.get(d.number)
        return hide_lanes(lines, d.drawn_lanes, hidden) if hidden else lines

    def _draw_whole(self, d: RunDrawing) -> None:
        """Draw run ``d`` over all of its steps (and its smoothed lines, while smoothing)."""
        smoothed = self.state.smoothed_of(d)
        if smoothed is not None:
            with self.throttle.aside():
                smoothed.ingest()
        self.fig.set_lines(d.number, self._shown(d, d.lines()), d.last_step)
        self.fig.set_spreads(d.number, d.spreads())
        if smoothed is not None:
            self.fig.set_smoothed_lines(d.number, self._shown(d, smoothed.lines()))

    def _draw_window(self) -> None:
        """Draw every run over the window's steps only (the zoom's, else the last N of the
        shown runs), decimated afresh from those steps' rows, a run only when they changed."""
        window, weight = self.state.window, self.state.smoothing
        bounds = window.bounds(self.state.drawn, self.state.off)
        self.fig.set_window(bounds, window.zoomed)
        for d in self.state.drawn:
            if not d.series or not window.changed(d, bounds, weight):
                continue
            raw, smoothed = window_lines(d, bounds[0], weight, bounds[1] if window.zoomed else None)
            self.fig.set_lines(d.number, self._shown(d, raw), d.last_step)
            self.fig.set_spreads(d.number, d.spreads(raw))
            if smoothed is not None:
                self.fig.set_smoothed_lines(d.number, self._shown(d, smoothed))

    def draw_params(self) -> None:
        """The goal's view: the legend's ``best = lowest loss: lr=0.01`` (`show_goal`), the
        hyperparameter charts (`..figure.show_params`), and the lane of each of their points
        for the view (the panel's ``param_lanes``: its hover names and lights it)."""
        self.show_goal()
        d, points = self.state.param_points()
        show_params(self.fig, points)
        notes = self.state.params_notes()
        if tuple(notes) != self.fig.notes_of(PARAMS_NOTE_KEY):
            self.fig.set_notes(PARAMS_NOTE_KEY, notes)
        lanes = {}
        if d is not None:
            every = self.state.lane_names(d.run)
            fields = ranked_fields(d)
            for k, p in enumerate(points):
                ids = p.lanes.tolist()
                lanes[p.title] = {
                    "run": d.name,
                    "number": d.number,
                    "param": " × ".join(p.params) if isinstance(p, ParamGrid) else p.param,
                    "field": p.field,
                    "fields": fields,  # what the chart's field select offers
                    "best": p.best_is,
                    # (the goal is the plot's: its select and toggle on the first chart only)
                    "tools": k == 0,
                    "names": [every[k] for k in ids],
                    "lanes": ids,  # each point's lane index (a lane no line: `show_lane_probe`)
                }
        if lanes != self.panel.param_lanes:
            self.panel.write(param_lanes=lanes)

    def show_goal(self) -> None:
        """Say the plot's goal in the legend, with the lane it names best (of the latest shown
        sweep: ``best = lowest val_loss: lr=0.01 (0.0123)``); nothing without a sweep."""
        d = self.state.latest_sweep()
        ranked = d.goal.or_default(d.specs) if d is not None else None
        best = [k for k, r in d.lane_roles.items() if "best" in r.split(", ")] if d else []
        if d is None or ranked is None or not best:
            self.fig.set_goal(None)
            return
        i, how = ranked
        spec = d.specs[i]
        latest = d.reads.latest()[1]
        value = spec.values([leaf[best[0] : best[0] + 1] for leaf in latest])[0]
        name = self.state.lane_names(d.run)[best[0]]
        text = f"{Goal.text(spec.label, how)}: {name} ({format_value(float(value))})"
        self.fig.set_goal((d.number, best[0], text))

    def redraw(self) -> None:
        """Draw every run's lines anew, whole or in the window."""
        with self.lock:
            self.state.window.forget()
            self.fig.set_notes(WINDOW_NOTE_KEY, [TIME_WINDOW_NOTE] * self._window_set_aside())
            if self._windowed():
                self._draw_window()
            else:
                self.fig.set_window(None)
                for d in self.state.drawn:
                    if d.series:
                        self._draw_whole(d)
            self.draw_params()
            self.fig.update_scales(self._settled())

    # ----------------------------------------------------------------- controls
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

    # -------------------------------------------------------------------- panel
    def sync_panel(self, now: float | None = None) -> None:
        """Write every run-state trait of the panel (`PlotState.panel_state`), in one message.

        The title, the controls and ``stop_mode`` are not run state: the title is the user's
        (constructor or ``panel.title``), the controls the view's, ``stop_mode`` the runner's.
        """
        with self.lock:
            now = time.perf_counter() if now is None else now
            # with the charts' log scales: a chart made on a log axis (log_y=True) must show
            # its log button on, whether or not the grid's children changed with it
            state = self.state.panel_state(now, self._attached())
            self.panel.write(**state, **self.fig.log_state())

    def sync_panel_safely(self) -> None:
        """`sync_panel`, showing (never raising) what fails: it runs in the user's block."""
        with self.lock:
            try:
                self.sync_panel()
            except Exception as e:
                self.show_error(e, None)

    def attached(self) -> None:
        """The plot was attached: until a run starts, its loop is traced and compiled. The
        cell attaching it runs it (the kernel's indicator: `..panel.LivePanel.cell_running`)."""
        self.panel.cell_running(True)
        with self.lock:
            if not self.state.running:
                self.state.waiting = True
                self.sync_panel_safely()

    def detached(self) -> None:
        """The plot was detached: if no loop ran (the block raised first), it waits no more."""
        if not self._attached():
            self.panel.cell_running(False)
        with self.lock:
            if self.state.waiting and not self._attached():
                self.state.waiting = False
                self.sync_panel_safely()

    def show_error(self, error: BaseException, run: Run | None) -> None:
        """Show ``error`` in the panel for ``run``: the update path never raises into the run."""
        frames = traceback.format_exception(type(error), error, error.__traceback__, limit=-3)
        text = f"{type(error).__name__}: {error}\n\n{''.join(frames)}"
        with self.lock:
            self.state.error = (run, text)
            try:
                self.sync_panel()
            except Exception:  # even the panel failed; fall back to a warning
                warnings.warn(f"LivePlot update failed: {text}", RuntimeWarning, stacklevel=2)

    def _sync_clocks(self) -> None:
        """The panel's ``x_clocks`` (`._state.x_clocks`), sent when they changed."""
        clocks = x_clocks(self.state.drawn, self.fig.x_time)
        if clocks != self.panel.x_clocks:
            self.panel.write(x_clocks=clocks)
