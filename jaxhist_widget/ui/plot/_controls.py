"""What a `LivePlot`'s panel controls and view options do (`Controls`), and the options as the
plot's properties (`ControlOptions`, one per option the table in `._options` makes a control).

The panel's view sends its controls as messages, which set the panel's traits (`LivePanel`);
a `LivePlot` option set in Python sets the same trait. `Controls` observes those traits and
applies each to the plot: Stop, Clear, log y (all charts and each chart's own), log x, the x
axis (steps, relative time or the wall clock), the last
N steps, the zoom (a drag across a chart), keep runs, the smoothing weight, ignore outliers, the
run list's show/hide toggles (one run, or all the filter shows), the run filter, the lanes hidden
one by one, and the width a view reports. Every trait write holds the plot's
lock (the panel's), so a control is applied under it, whatever thread set it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from ..._host import Sink
from ..figure import ChartGrid
from ..look import check_x_axis
from ..panel import LivePanel
from ._options import Control, Spec, check_flag, specs
from ._updates import Updates

__all__ = ["ControlOptions", "Controls"]


def _property(name: str, spec: Spec, control: Control) -> property:
    """A `LivePlot` property synced with the panel's control trait ``name``: it reads the trait
    (through ``control.read``), and writes the value set, checked as the option's table entry
    says, through the panel's one writer."""

    def get(plot: Any) -> Any:
        value = getattr(plot.panel, name)
        return control.read(value) if control.read is not None else value

    def set_(plot: Any, value: Any) -> None:
        if control.check is not None:
            value = control.check(plot, value)
        elif spec.boolean:
            value = check_flag(name, value)
        elif spec.check is not None:
            value = spec.check(value)
        plot.panel.write(**{name: control.to_trait(value) if control.to_trait else value})

    return property(get, set_, doc=control.doc)


class ControlOptions:
    """A `LivePlot`'s options synced with its panel's controls, as its properties: set in
    Python or clicked in the view, one truth (the panel's traits). One property per option
    the table (`._options.Options`) declares a `Control`."""

    panel: LivePanel
    # The properties' types, for type checkers and editors (the loop below makes them, from
    # the table; tests/ui/plot/test_options_agree.py holds these names to its controls).
    log_y: bool
    keep_runs: bool
    params_field: str | None
    params_best: str | None
    all_lanes: bool
    smoothing: float
    ignore_outliers: bool
    log_x: bool
    last_steps: int
    step_range: tuple[int, int] | None
    x_axis: str
    run_filter: str


for _name, _spec in specs().items():
    if _spec.control is not None:
        setattr(ControlOptions, _name, _property(_name, _spec, _spec.control))


class Controls:
    """Applies the panel's control traits to the plot (observing them from its making on).

    Parameters
    ----------
    panel, fig, updates
        The plot's parts.
    sink
        The plot itself, as the sink its runs stream to: Stop asks them to stop.
    redraw_picture
        Redraw the plot's static picture (the saved picture shows what the widget shows).
    """

    def __init__(
        self,
        panel: LivePanel,
        fig: ChartGrid,
        updates: Updates,
        *,
        sink: Sink,
        redraw_picture: Callable[[], None],
    ) -> None:
        self.panel, self.fig, self.updates = panel, fig, updates
        self._sink, self._picture = sink, redraw_picture
        self._async_runs = 0  # run_async calls in progress (their Stop is a message)
        self._following = False  # "log y" is set to follow the charts' own toggles
        for handler, name in (
            (self._on_stop_click, "stop_clicks"),
            (self._on_clear_click, "clear_clicks"),
            (self._on_log_y, "log_y"),
            (self._on_log_x, "log_x"),
            (self._on_x_axis, "x_axis"),
            (self._on_log_charts, "log_charts"),
            (self._on_keep_runs, "keep_runs"),
            (self._on_smoothing, "smoothing"),
            (self._on_ignore_outliers, "ignore_outliers"),
            (self._on_all_lanes, "all_lanes"),
            (self._on_last_steps, "last_steps"),
            (self._on_step_range, "step_range"),
            (self._on_hidden_runs, "hidden_runs"),
            (self._on_run_filter, "run_filter"),
            (self._on_hidden_lanes, "hidden_lanes"),
            (self._on_plot_width, "plot_width"),
            (self._on_params, "params_field"),
            (self._on_params, "params_best"),
        ):
            panel.observe(handler, name)
        # The lane the page points at in a hyperparameter chart, drawn while it does: a
        # request, no trait (another view points elsewhere).
        panel.serve("lane_probe", self._on_lane_probe)
        panel.serve("lane_lines", lambda number: panel.send(*updates.lanes.lane_lines(number)))

    def clear(self) -> None:
        """Forget the ended runs and their lines, and reset the panel (the Clear button)."""
        self.updates.forget_ended()
        self.sync_hidden_trait()
        self._picture()

    # The view sends a Stop click as a widget message, which a kernel handles only while a cell
    # awaits (run_async); a normal cell (`with live:`, `run`) holds the kernel until it ends.
    # There the view asks for a kernel interrupt instead, which the interrupt bridge turns into
    # a stop of the armed sink's run: `stop_mode` tells the view which applies.
    def sync_stop_mode(self, armed: bool) -> None:
        """Whether a Stop click interrupts the kernel: only while the plot is armed (in the
        main thread, where an interrupt reaches the run) and no async run awaits."""
        interrupt = armed and self._async_runs == 0
        self.panel.write(stop_mode="interrupt" if interrupt else "message")

    @contextlib.contextmanager
    def async_run(self, sync: Callable[[], None]) -> Iterator[None]:
        """An async run in progress (its Stop is a message); ``sync`` syncs the stop mode."""
        self._async_runs += 1
        sync()
        try:
            yield
        finally:
            self._async_runs -= 1
            sync()

    def sync_hidden_trait(self) -> None:
        """List as hidden only the runs (and lanes) still drawn (the run list's toggles)."""
        with self.updates.lock:
            state = self.updates.state
            hidden = sorted(state.hidden)
            if list(self.panel.hidden_runs) != hidden:
                self.panel.write(hidden_runs=hidden)
            lanes = sorted([n, k] for n, ks in state.hidden_lanes.items() for k in ks)
            if sorted(map(list, self.panel.hidden_lanes)) != lanes:
                self.panel.write(hidden_lanes=lanes)

    # Each handler runs in the thread that set its trait, under the plot's lock.
    def _on_stop_click(self, change: dict[str, Any]) -> None:
        # A click that arrives after the run ended must not stop the next run.
        if self._sink.running:
            self._sink.stop()

    def _on_clear_click(self, change: dict[str, Any]) -> None:
        self.clear()

    def _on_log_y(self, change: dict[str, Any]) -> None:
        if self._following:  # it follows the charts' own toggles (`_on_log_charts`)
            return
        self.updates.set_log(bool(change["new"]))
        self.panel.write(**self.fig.log_state())
        self._picture()

    def _on_log_x(self, change: dict[str, Any]) -> None:
        self.updates.set_log_x(bool(change["new"]))
        self._picture()

    def _on_x_axis(self, change: dict[str, Any]) -> None:
        self.updates.set_x_axis(check_x_axis(change["new"]))
        self._picture()

    def _on_log_charts(self, change: dict[str, Any]) -> None:
        with self.updates.lock:
            self.fig.set_log_charts(change["new"])
            # "log y" reads on while every chart is on a log axis, off otherwise (the view
            # shows a mix as such): it never reads on over a linear chart. It sets the axis
            # of the charts made later too.
            every = self.fig.log = self.fig.every_log
            self._following = True
            try:
                self.panel.write(log_y=every, log_hints=self.fig.log_hints)
            finally:
                self._following = False
        self._picture()

    def _on_keep_runs(self, change: dict[str, Any]) -> None:
        if not change["new"]:
            self.updates.keep_latest_only()
            self.sync_hidden_trait()

    def _on_smoothing(self, change: dict[str, Any]) -> None:
        self.updates.set_smoothing(float(change["new"]))
        self._picture()

    def _on_ignore_outliers(self, change: dict[str, Any]) -> None:
        self.updates.set_ignore_outliers(bool(change["new"]))
        self._picture()

    def _on_all_lanes(self, change: dict[str, Any]) -> None:
        self.updates.set_all_lanes(bool(change["new"]))
        self._picture()

    def _on_last_steps(self, change: dict[str, Any]) -> None:
        self.updates.set_last_steps(int(change["new"]))
        if self.panel.step_range:  # the window asked for now replaces the zoom
            self.panel.write(step_range=[])
        self._picture()

    def _on_step_range(self, change: dict[str, Any]) -> None:
        steps = change["new"]
        self.updates.set_step_range((steps[0], steps[1]) if steps else None)
        self._picture()

    def _on_hidden_runs(self, change: dict[str, Any]) -> None:
        self.updates.set_hidden(set(change["new"]))
        self._picture()

    def _on_run_filter(self, change: dict[str, Any]) -> None:
        self.updates.set_run_filter(change["new"])
        self._picture()

    def _on_hidden_lanes(self, change: dict[str, Any]) -> None:
        self.updates.set_hidden_lanes(change["new"])
        self._picture()

    def _on_params(self, change: dict[str, Any]) -> None:
        best = self.panel.params_best if self.panel.params_best in ("min", "max") else None
        self.updates.set_params(self.panel.params_field or None, best)
        self._picture()

    def _on_lane_probe(self, value: Any) -> None:
        self.updates.lanes.show_lane_probe(value)

    def _on_plot_width(self, change: dict[str, Any]) -> None:
        # The number of x ticks follows the figure's width, which only a view knows.
        self.updates.set_width(change["new"])
