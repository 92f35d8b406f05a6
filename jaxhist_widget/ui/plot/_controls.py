"""`PlotControls`: what a `LivePlot`'s panel controls and its view options do.

The panel's view sends its controls as messages (`LivePanel`), which set its
traits; this class observes them and applies each to the plot: Stop, Clear, log y (all charts
and each chart's own), log x, the last N steps, the zoom (a drag across a chart), keep runs,
the smoothing weight, ignore outliers and the run list's show/hide toggles. The same options
are properties here, synced with the panel. The runners keep the panel's ``stop_mode`` true:
whether Stop interrupts the kernel or sends a message.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ..._host import Sink
from ..reduce import check_weight
from ..series import check_last_steps, check_step_range
from ._options import check_flag
from ._updates import LiveUpdates

__all__ = ["PlotControls"]

T = TypeVar("T")


class PlotControls(LiveUpdates):
    """The controls of a `LivePlot` (its base: `LivePlot` adds the options, display, data
    access and exports)."""

    _async_runs = 0  # run_async calls in progress (their Stop is a message)

    def _observe_controls(self) -> None:
        """Follow the panel's control traits (called once, from `LivePlot.__init__`)."""
        for handler, name in (
            (self._on_stop_click, "stop_clicks"),
            (self._on_clear_click, "clear_clicks"),
            (self._on_log_y, "log_y"),
            (self._on_log_x, "log_x"),
            (self._on_log_charts, "log_charts"),
            (self._on_keep_runs, "keep_runs"),
            (self._on_smoothing, "smoothing"),
            (self._on_ignore_outliers, "ignore_outliers"),
            (self._on_last_steps, "last_steps"),
            (self._on_step_range, "step_range"),
            (self._on_hidden_runs, "hidden_runs"),
        ):
            self.panel.observe(handler, name)

    def _update_static(self) -> None:
        """Redraw the plot's static picture (`LivePlot` draws one)."""

    # ---------------------------------------------------------------- runners
    # The view sends a Stop click as a widget message, which a kernel handles only while a cell
    # awaits (run_async); a normal cell (`with live:`, `run`) holds the kernel until it ends.
    # There the view asks for a kernel interrupt instead, which the interrupt bridge turns into
    # a stop of the armed sink's run: `stop_mode` tells the view which applies.

    def __enter__(self) -> PlotControls:
        super().__enter__()
        self._sync_stop_mode()
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            super().__exit__(*exc)
        finally:
            self._sync_stop_mode()

    async def run_async(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        self._async_runs += 1
        self._sync_stop_mode()
        try:
            return await super().run_async(fn, *args, **kwargs)
        finally:
            self._async_runs -= 1
            self._sync_stop_mode()

    run_async.__doc__ = Sink.run_async.__doc__

    def _sync_stop_mode(self) -> None:
        # Armed in the main thread only; elsewhere an interrupt would not reach the run.
        interrupt = self._interrupts_armed and self._async_runs == 0
        self.panel.stop_mode = "interrupt" if interrupt else "message"

    # ------------------------------------------------------------------ options
    @property
    def log_y(self) -> bool:
        """Whether the y axis is logarithmic (synced with the panel's toggle)."""
        return self.panel.log_y

    @log_y.setter
    def log_y(self, value: bool) -> None:
        self.panel.log_y = bool(value)

    @property
    def log_x(self) -> bool:
        """Whether the step axis is logarithmic (synced with the panel's toggle)."""
        return self.panel.log_x

    @log_x.setter
    def log_x(self, value: bool) -> None:
        self.panel.log_x = check_flag("log_x", value)

    @property
    def keep_runs(self) -> bool:
        """Whether previous runs stay on the plot and in `runs` (synced with the toggle)."""
        return self.panel.keep_runs

    @keep_runs.setter
    def keep_runs(self, value: bool) -> None:
        self.panel.keep_runs = bool(value)

    @property
    def smoothing(self) -> float:
        """The smoothing weight (0: off; synced with the panel's slider)."""
        return self.panel.smoothing

    @smoothing.setter
    def smoothing(self, value: float) -> None:
        self.panel.smoothing = check_weight(value)

    @property
    def ignore_outliers(self) -> bool:
        """Whether the y ranges leave the extreme 2% of points out (synced with the toggle)."""
        return self.panel.ignore_outliers

    @ignore_outliers.setter
    def ignore_outliers(self, value: bool) -> None:
        self.panel.ignore_outliers = check_flag("ignore_outliers", value)

    @property
    def last_steps(self) -> int:
        """Steps shown: the last ``last_steps`` only (0: every step; synced with the panel)."""
        return self.panel.last_steps

    @last_steps.setter
    def last_steps(self, value: int | None) -> None:
        self.panel.last_steps = check_last_steps(value)

    @property
    def step_range(self) -> tuple[int, int] | None:
        """The zoom: the ``(first, last)`` steps every chart shows, or None (every step, or the
        `last_steps`). Synced with the charts: a drag across one sets it, a double-click resets
        it. It wins over `last_steps` until reset; setting `last_steps` resets it."""
        steps = self.panel.step_range
        return (steps[0], steps[1]) if steps else None

    @step_range.setter
    def step_range(self, value: tuple[int, int] | None) -> None:
        steps = check_step_range(value)
        self.panel.step_range = list(steps) if steps is not None else []

    def show_run(self, run: int | str, visible: bool = True) -> None:
        """Show (or hide, ``visible=False``) a drawn run, as its toggle in the run list does:
        ``run`` is its index in `runs` (``-1``: the latest) or the name the plot lists it by."""
        with self._state_lock:
            names = [self._fig.run_look(d.number)[0] for d in self._drawn]
            numbers = [d.number for d in self._drawn]
        if isinstance(run, str):
            if run not in names:
                raise LookupError(f"no run named {run!r} on this plot; its runs: {names}.")
            number = numbers[names.index(run)]
        else:
            number = numbers[run]
        hidden = [n for n in self.panel.hidden_runs if n != number]
        self.panel.hidden_runs = hidden if visible else [*hidden, number]

    def clear(self) -> None:
        """Forget previous runs and their lines (a running run stays), and reset the panel."""
        self._forget_ended()
        self._sync_hidden_trait()
        self._update_static()

    # --------------------------------------------------------------- controls
    def _on_stop_click(self, change: dict[str, Any]) -> None:
        # A click that arrives after the run ended must not stop the next run.
        if self.running:
            self.stop()

    def _on_clear_click(self, change: dict[str, Any]) -> None:
        self.clear()

    def _on_log_y(self, change: dict[str, Any]) -> None:
        self._set_log(bool(change["new"]))
        self.panel.log_charts = self._fig.log_charts
        self._update_static()  # the saved picture shows what the widget shows

    def _on_log_x(self, change: dict[str, Any]) -> None:
        self._set_log_x(bool(change["new"]))
        self._update_static()

    def _on_log_charts(self, change: dict[str, Any]) -> None:
        with self._state_lock:
            self._fig.set_log_charts(change["new"])
        self._update_static()

    def _on_keep_runs(self, change: dict[str, Any]) -> None:
        if not change["new"]:
            self._keep_latest_only()
            self._sync_hidden_trait()

    def _on_smoothing(self, change: dict[str, Any]) -> None:
        self._set_smoothing(float(change["new"]))
        self._update_static()

    def _on_ignore_outliers(self, change: dict[str, Any]) -> None:
        self._set_ignore_outliers(bool(change["new"]))
        self._update_static()

    def _on_last_steps(self, change: dict[str, Any]) -> None:
        self._set_last_steps(int(change["new"]))
        if self.panel.step_range:  # the window asked for now replaces the zoom
            self.panel.step_range = []
        self._update_static()

    def _on_step_range(self, change: dict[str, Any]) -> None:
        steps = change["new"]
        self._set_step_range((steps[0], steps[1]) if steps else None)
        self._update_static()

    def _on_hidden_runs(self, change: dict[str, Any]) -> None:
        self._set_hidden(set(change["new"]))
        self._update_static()

    def _sync_hidden_trait(self) -> None:
        # The panel lists only the runs still drawn as hidden.
        hidden = sorted(self._hidden)
        if list(self.panel.hidden_runs) != hidden:
            self.panel.hidden_runs = hidden
