"""The sinks auto mode gives a cell: one that makes the cell's plot when its first run starts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._host import HUB, Run, Sink
from ..ui import LivePlot


class _CellSink(Sink):
    """The sink auto mode attaches while one cell runs.

    It makes its cell's plot (with ``make_plot``, which also shows it) when the first run
    starts, and hands every run of the cell to it; so a cell without a run creates no widget.
    A run that also streams to another `LivePlot` (the cell has its own ``with live:``) is
    left to that one, so the cell never shows the same run twice.
    """

    def __init__(self, make_plot: Callable[[Sink], LivePlot]) -> None:
        super().__init__()
        self._make_plot = make_plot
        self.plot: LivePlot | None = None
        self._forwarded: set[Run] = set()

    def _start(self, run: Run) -> None:
        super()._start(run)
        if any(isinstance(s, LivePlot) for s in HUB.attached()):
            return
        with self._lock:
            if self.plot is None:
                self.plot = self._make_plot(self)
            self._forwarded.add(run)
        self.plot._start(run)

    def on_rows(self, run: Run, lanes: list[int]) -> None:
        if self.plot is not None and run in self._forwarded:
            self.plot.on_rows(run, lanes)

    # The run stays in `_forwarded` after its end: a run given up for dead when the cell ended
    # (its loop was still running in another thread) is resumed when more rows come.
    def _end(self, run: Run) -> None:
        super()._end(run)
        if self.plot is not None and run in self._forwarded:
            self.plot._end(run)

    def _resume(self, run: Run) -> None:
        super()._resume(run)
        if self.plot is not None and run in self._forwarded:
            self.plot._resume(run)


class _CellPlot(LivePlot):
    """The `LivePlot` of an auto-mode cell. It is never attached itself (its cell's sink hands
    it the runs), so a stop asked of it (its Stop button, ``plot.stop()``) goes to that sink,
    which the runs ask whether to stop."""

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
            armed = cell_sink._interrupts_armed
            self.panel.stop_mode = "interrupt" if armed else "message"

    def stop(self) -> None:
        super().stop()
        self._cell_sink.stop()
