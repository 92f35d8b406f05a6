"""`LiveUpdates`: the part of a `LivePlot` that turns its runs into widget state.

It keeps the runs drawn (a `RunDrawing` each), decides when to update, and
hands each widget its inputs: the figure is told what to draw by run number (it owns its marks),
and the panel's traits come from one pure function (`._panel_state.panel_state`) applied in one
place (`_sync_panel`). The host runtime calls the hooks from its callback threads; one lock
keeps an update whole.

Updates are throttled to at most `MAX_UPDATES_PER_SECOND` whatever the step rate, with a
trailing flush (`._flusher`) so a pause never hides the latest rows, and the final state is
always sent when a run ends. Each update reduces only the rows that arrived since the last one
and sends at most ``max_points`` points per line. Any exception in this path is caught and shown
in the panel (status ``"error"``); it never reaches the run. The view options live here too:
smoothing (`._smoothing`, its own series per drawn run), hidden runs, the windows of steps
(`._window`: the "last N steps" and a zoom, drawn afresh from their rows) and the panel's run
list (`._runs.run_entry`).
"""

from __future__ import annotations

import math
import threading
import time
import traceback
import warnings
from collections.abc import Sequence

from ..._host import Run, Sink
from ..figure import ChartGrid
from ..panel import LivePanel, RateWindow, panel_state, run_entry, run_step
from ..series import LaneNames, PlotChoice, RunDrawing, RunSmoothing, StepWindow
from ._flusher import Flusher

__all__ = ["MAX_UPDATES_PER_SECOND", "PUSH_BUDGET", "LiveUpdates"]

#: Cap on frontend updates per second (each update: the panel, every line of the current run,
#: and the scales, all at once).
MAX_UPDATES_PER_SECOND = 20.0
#: An update may take at most 1/PUSH_BUDGET of the time between updates (see `on_rows`).
PUSH_BUDGET = 10.0


class LiveUpdates(Sink):
    """Draws every run it is handed into ``panel`` and ``fig`` (the base of `LivePlot`, which
    adds the options, display, data access and controls)."""

    def __init__(
        self,
        panel: LivePanel,
        fig: ChartGrid,
        *,
        choice: PlotChoice,
        max_points: int,
        lane_labels: Sequence[str] | None,
        continue_steps: bool,
    ) -> None:
        super().__init__()
        self.panel = panel
        self._fig = fig
        self._choice = choice  # what to draw (fields=, vectors=, paths=)
        self.max_points = max_points
        self.continue_steps = continue_steps
        #: Names of the vmap lanes (checked against each vmapped run's lane count).
        self._lane_names = LaneNames(lane_labels)
        self._state_lock = threading.RLock()
        self._drawn: list[RunDrawing] = []  # oldest first; the last one is the panel's
        self._runs_seen = 0
        # An error this plot hit (a failed update) and the run it is about: the panel says
        # "error" for that run until the next run starts. (What fields= names that a run does
        # not have is a note under the charts, not an error: the run succeeded.)
        self._error: tuple[Run | None, str] | None = None
        self._last_push = -math.inf
        self._push_cost = 0.0  # smoothed seconds per update, for the adaptive throttle
        self._ingest_s = 0.0  # of the current update: reducing new rows (not throttled)
        self._rate = RateWindow()
        self._flusher = Flusher(self._flush_pending)  # the trailing flush
        # Attached and no run started since: the panel says "compiling", not "idle".
        self._waiting = False
        self._smoothing = 0.0  # the EMA weight (0: off)
        self._smoothed: dict[int, RunSmoothing] = {}  # by run number, while smoothing
        self._hidden: set[int] = set()  # run numbers hidden from the run list
        self._window = StepWindow()  # the "last N steps" and the zoom
        # The number of x ticks follows the figure's width, which only a view knows.
        panel.observe(self._on_plot_width, "plot_width")

    @property
    def runs(self) -> list[Run]:
        """The runs this plot holds, oldest first: the latest, plus previous ones if kept."""
        with self._state_lock:
            return [d.run for d in self._drawn]

    def _forget_ended(self) -> None:
        """Drop the runs that ended, their lines and, when none is left, the panel's run."""
        with self._state_lock:
            ended = [d for d in self._drawn if d.run.ended is not None]
            self._drawn = [d for d in self._drawn if d.run.ended is None]
            self._fig.drop_runs(d.number for d in ended)
            self._forget_smoothed()
            if not self._drawn:
                self._error = None
            self._fig.update_scales()
            self._sync_panel(time.perf_counter())

    # ------------------------------------------------------------ attach, width
    def attach(self) -> None:
        super().attach()
        with self._state_lock:
            running = bool(self._drawn) and self._drawn[-1].run.ended is None
            if not running:  # until a run starts, the loop is being traced and compiled
                self._waiting = True
                self._sync_panel_safely()

    def detach(self) -> None:
        super().detach()
        with self._state_lock:
            if self._waiting and not self.attached:  # no loop ran (the block raised first)
                self._waiting = False
                self._sync_panel_safely()

    def _sync_panel_safely(self) -> None:
        try:
            self._sync_panel(time.perf_counter())
        except Exception as e:  # never into the user's `with` block
            self._show_error(e, None)

    def _on_plot_width(self, change: dict) -> None:
        with self._state_lock:
            try:
                self._fig.set_width(change["new"])
            except Exception as e:  # a view's report must not break the kernel side
                self._show_error(e, self._drawn[-1].run if self._drawn else None)

    # -------------------------------------------------------------- sink hooks
    def on_start(self, run: Run) -> None:
        with self._state_lock:
            self._waiting = False
            self._flusher.cancel()
            self._runs_seen += 1
            # A resumed run's row 0 is the previous run's last row: continue from its step
            # (known before the previous run's lines may be dropped just below).
            prev = self._drawn[-1] if self._drawn and self.continue_steps else None
            x0 = prev.x0 + prev.last_step if prev is not None else 0
            dropped = []
            if not self.panel.keep_runs:
                dropped = [d.number for d in self._drawn if d.run.ended is not None]
                self._drawn = [d for d in self._drawn if d.run.ended is None]
            drawing = RunDrawing(run, self._runs_seen, self._choice, x0=x0)
            self._drawn.append(drawing)
            self._error = None
            now = time.perf_counter()
            self._rate.restart(now)
            try:
                self._fig.drop_runs(dropped)
                self._forget_smoothed()
                self._fig.add_run(drawing.number, x0, run.name)
                self._fig.restyle()
                self._fig.update_scales()
                self._sync_panel(now)
            except Exception as e:
                self._show_error(e, run)

    # Rows are filed in the chunk's call, not on the worker (see `Sink`), although on_rows
    # never stops: a push then pauses the loop rather than competing with it for the cores,
    # and each push's measured cost (which spaces the updates) stays its own. With deferred
    # filing a long run in JupyterLab got a fraction of its updates on a machine of few cores.
    rows_can_wait = False

    def on_rows(self, run: Run, lanes: list[int]) -> None:
        with self._state_lock:
            now = time.perf_counter()
            # At most MAX_UPDATES_PER_SECOND, and slower when an update itself is costly (long
            # runs, many lanes): drawing never takes more than ~1/PUSH_BUDGET of the loop's time.
            interval = max(1.0 / MAX_UPDATES_PER_SECOND, PUSH_BUDGET * self._push_cost)
            wait = self._last_push + interval - now
            if wait <= 0:
                self._flusher.cancel()
                self._push(final=False)
            elif not self._flusher.pending:
                # Trailing flush: if no further rows come soon (a slow step), these still show.
                self._flusher.schedule(wait)

    def on_end(self, run: Run) -> None:
        with self._state_lock:
            self._flusher.cancel()
            self._push(final=True, ended=run)  # never throttled: the last rows always show

    # ------------------------------------------------------------------ updates
    def _flush_pending(self) -> None:
        with self._state_lock:
            self._push(final=False)

    def _push(self, final: bool, ended: Run | None = None) -> None:
        """Send the current state of every run with new rows, and the panel (caller holds lock).

        ``final`` marks the update that ends a run; the panel does not read it (it asks the run
        whether it ended, so a trailing flush after the end shows the same). It stays in this
        signature and `_push_now`'s because ``benchmarks/liveview.py`` calls and wraps them.
        """
        start = time.perf_counter()
        self._ingest_s = 0.0
        try:
            self._push_now(final, ended)
        finally:
            self._last_push = time.perf_counter()
            # Reducing the new rows is not counted: it is the same work per row whenever it is
            # done, so spacing updates out would not save it (it would only make each update
            # reduce more rows and look costlier, spacing them further: ever fewer updates).
            cost = max(0.0, self._last_push - start - self._ingest_s)
            self._push_cost = cost if self._push_cost == 0 else 0.7 * self._push_cost + 0.3 * cost

    def _push_now(self, final: bool, ended: Run | None) -> None:
        current = self._drawn[-1].run if self._drawn else None
        try:
            for d in self._drawn:
                if d.run.ended is None or d.run is ended:
                    self._draw(d)
            if self._window.on:
                self._draw_window()
            self._fig.update_scales()
            if current is not None:
                now = time.perf_counter()
                if current.ended is None:
                    self._rate.add(now, run_step(current))
                self._sync_panel(now)
        except Exception as e:
            self._show_error(e, current)

    def _draw(self, d: RunDrawing) -> None:
        if not d.started:  # the first rows: the lane count is known, plan and make the marks
            if not d.start(self.max_points):
                return
            batched = d.run.lanes is not None
            names = self._lane_names(d.run)[: d.lanes] if batched else None
            self._fig.add_marks(
                d.number, d.labels, names, d.run.lanes or 0, keys=d.keys, paths=d.paths
            )
            self._fig.add_extras(d.number, d.extras_by_label(), d.x0)
            self._fig.set_notes(d.number, d.notes)
            if self._hidden:  # a chart made now holds the hidden runs too
                self._fig.set_hidden(self._hidden)
        start = time.perf_counter()
        d.ingest()
        self._ingest_s += time.perf_counter() - start
        if not self._window.on:  # (a window draws its own lines: `_draw_window`)
            self._draw_whole(d)

    def _draw_whole(self, d: RunDrawing) -> None:
        """Draw run ``d`` over all of its steps (and its smoothed lines, while smoothing)."""
        smoothed = self._smoothed_of(d)
        if smoothed is not None:
            start = time.perf_counter()
            smoothed.ingest()
            self._ingest_s += time.perf_counter() - start
        self._fig.set_lines(d.number, d.lines(), d.last_step)
        if smoothed is not None:
            self._fig.set_smoothed_lines(d.number, smoothed.lines())

    def _draw_window(self) -> None:
        """Draw every run over the window's steps only (the zoom's, else the last N of the
        shown runs), decimated afresh from those steps' rows (`._window.StepWindow`)."""
        self._window.draw(self._fig, self._drawn, self._hidden, self._smoothing)

    def _smoothed_of(self, d: RunDrawing) -> RunSmoothing | None:
        """The smoothed series of ``d`` while smoothing is on (made on first use, from all of
        its rows)."""
        if not self._smoothing or not d.series:
            return None
        smoothed = self._smoothed.get(d.number)
        if smoothed is None:
            smoothed = self._smoothed[d.number] = RunSmoothing(d, self._smoothing)
        return smoothed

    def _forget_smoothed(self) -> None:
        drawn = {d.number for d in self._drawn}
        self._smoothed = {n: s for n, s in self._smoothed.items() if n in drawn}
        self._hidden &= drawn

    def _sync_panel(self, now: float) -> None:
        """Set every run-state trait of the panel from `panel_state`, in one message.

        The title, the controls and ``stop_mode`` are not run state: the title is the user's
        (constructor or ``panel.title``), the controls the view's, ``stop_mode`` the runner's
        (`_sync_stop_mode`).
        """
        d = self._drawn[-1] if self._drawn else None
        run = d.run if d is not None else None
        error = self._error[1] if self._error is not None and self._error[0] is run else ""
        state = panel_state(
            run,
            now=now,
            run_number=self._runs_seen,
            fields=d.fields if d is not None else (),
            last_values=d.last_values() if d is not None else (),
            rate_samples=self._rate.samples,
            lane_names=self._lane_names(run) if run is not None else (),
            error=error,
            waiting=self._waiting and self.attached,
        )
        state["runs"] = [self._run_entry(x, now) for x in self._drawn]
        with self.panel.hold_sync():
            for name, value in state.items():
                setattr(self.panel, name, value)

    def _run_entry(self, d: RunDrawing, now: float) -> dict:
        name, color = self._fig.run_look(d.number)
        return run_entry(
            d.run,
            number=d.number,
            name=name,
            color=color,
            hidden=d.number in self._hidden,
            now=now,
            fields=d.fields,
            last_values=d.last_values(),
            lane_names=self._lane_names(d.run) if d.run.lanes else (),
        )

    def _show_error(self, error: BaseException, run: Run | None) -> None:
        # The update path must never raise into the run: show the error instead.
        frames = traceback.format_exception(type(error), error, error.__traceback__, limit=-3)
        text = f"{type(error).__name__}: {error}\n\n{''.join(frames)}"
        self._error = (run, text)
        try:
            self._sync_panel(time.perf_counter())
        except Exception:  # even the panel failed; fall back to a warning
            warnings.warn(f"LivePlot update failed: {text}", RuntimeWarning, stacklevel=2)

    # ------------------------------------------------------------------ options
    def _set_log(self, log: bool) -> None:
        with self._state_lock:
            self._fig.set_log(log)

    def _keep_latest_only(self) -> None:
        with self._state_lock:
            dropped, self._drawn = self._drawn[:-1], self._drawn[-1:]
            self._fig.drop_runs(d.number for d in dropped)
            self._forget_smoothed()
            self._fig.set_hidden(self._hidden)
            self._fig.update_scales()
            self._sync_panel(time.perf_counter())

    def _set_smoothing(self, weight: float) -> None:
        """Smooth every line with the EMA weight ``weight`` (0: off), recomputing each drawn
        run's smoothed series from all of its rows once."""
        with self._state_lock:
            if weight == self._smoothing:
                return
            self._smoothing = weight
            self._smoothed = {}
            self._fig.set_smoothing(weight > 0)
            self._redraw()

    def _redraw(self) -> None:
        """Draw every run's lines anew, whole or in the window (caller holds the lock)."""
        self._window.forget()
        if self._window.on:
            self._draw_window()
        else:
            self._fig.window, self._fig.zoomed = None, False
            for d in self._drawn:
                if d.series:
                    self._draw_whole(d)
        self._fig.update_scales()

    def _set_last_steps(self, steps: int) -> None:
        """Show the last ``steps`` steps only (0: every step)."""
        with self._state_lock:
            if steps != self._window.last_steps:
                self._window.last_steps = steps
                self._redraw()

    def _set_step_range(self, steps: tuple[int, int] | None) -> None:
        """Zoom every chart's step axis to ``steps`` (first, last), or back out (None)."""
        with self._state_lock:
            if steps != self._window.step_range:
                self._window.step_range = steps
                self._redraw()

    def _set_hidden(self, numbers: set[int]) -> None:
        """Hide exactly the drawn runs ``numbers`` (the run list's toggles)."""
        with self._state_lock:
            self._hidden = set(numbers) & {d.number for d in self._drawn}
            self._fig.set_hidden(self._hidden)
            self._fig.update_scales()
            self._sync_panel(time.perf_counter())

    def _set_log_x(self, on: bool) -> None:
        with self._state_lock:
            self._fig.set_log_x(on)
            self._fig.update_scales()

    def _set_ignore_outliers(self, on: bool) -> None:
        with self._state_lock:
            self._fig.set_ignore_outliers(on)
            self._fig.update_scales()
