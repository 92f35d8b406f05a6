"""The sinks auto mode gives a cell: one that makes the cell's plot when its first run starts."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from .._host import HUB, Run, Sink
from ..ui import LivePlot


class _CellSink(Sink):
    """The sink auto mode attaches while one cell runs.

    When a run starts, it has the cell's plot made (with ``make_plot``, which also shows it;
    once per cell) and joined to the run (`Hub.join`): on the package's worker, in the run's
    own order, never in the loop's host call, and under no lock of the runtime's. So a cell
    without a run creates no widget, and the plot is a sink of the run like any other (its
    Stop button and its updates need nothing forwarded). A run that also streams to another
    `LivePlot` (the cell has its own ``with live:``) is left to that one, so the cell never
    shows the same run twice.
    """

    def __init__(self, make_plot: Callable[[Sink], LivePlot]) -> None:
        super().__init__()
        self._make_plot = make_plot
        self.plot: LivePlot | None = None
        # A leaf lock (see the hub's lock order): held while the plot is made and shown, which
        # takes no lock of the runtime, so that two runs of the cell share one plot.
        self._plot_lock = threading.Lock()

    def _start(self, run: Run) -> None:
        super()._start(run)
        if any(isinstance(s, LivePlot) for s in HUB.attached()):
            return
        HUB.worker.submit(run.id, self._join, run)

    def __exit__(self, *exc: Any) -> bool:
        try:
            return super().__exit__(*exc)
        finally:
            # The plot is joined to the cell's runs, not attached, so the drain on leaving
            # waits for this sink's work, not the plot's: a run's end handed to the plot on the
            # worker (it had an update queued there) would reach it after the cell ended, whose
            # saved picture would then show the run still going.
            with self._plot_lock:
                plot = self.plot
            if plot is not None:
                with HUB.interrupts.shielded():
                    HUB.drain(plot)

    def _join(self, run: Run) -> None:
        with self._plot_lock:
            if self.plot is None:
                self.plot = self._make_plot(self)
            plot = self.plot
        HUB.join(run, plot)


class _CellPlot(LivePlot):
    """The `LivePlot` of an auto-mode cell. It is never attached itself (it joins the runs of
    its cell's sink), so a stop asked of it (its Stop button, ``plot.stop()``) goes to that
    sink too, which the runs ask whether to stop."""

    def __init__(self, cell_sink: Sink, **options: Any) -> None:
        super().__init__(**options)
        self._cell_sink = cell_sink
        self._sync_stop_mode()

    def _sync_stop_mode(self) -> None:
        # The cell's sink is attached (and, in the main thread, armed) for the whole cell, so a
        # Stop click can be a kernel interrupt, which reaches sync and awaiting cells alike.
        cell_sink = getattr(self, "_cell_sink", None)
        if cell_sink is None:
            super()._sync_stop_mode()
        else:
            armed = cell_sink in HUB.interrupts.armed()
            self.panel.stop_mode = "interrupt" if armed else "message"

    def stop(self) -> None:
        super().stop()
        self._cell_sink.stop()
