"""A run's smoothed series: the debiased EMA (`..reduce.Ema`) of each series of each drawn lane,
fed from the run's rows as they arrive and decimated like the raw lines.

Numpy only. It exists only while smoothing is on; a new weight makes it afresh (every row is
then read once more).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..reduce import Ema, LaneSeries, smoothed_budget

__all__ = ["RunSmoothing"]


class RunSmoothing:
    """The smoothed series of one drawn run (`._drawing.RunDrawing`), fed from its rows.

    It reads the run's rows itself (what arrived since it last did), so the drawing of the raw
    series stays as it is; it exists only while smoothing is on.
    """

    def __init__(self, drawing: Any, weight: float) -> None:
        self.drawing = drawing
        self.weight = weight
        self.series: dict[tuple[int, int], tuple[Ema, LaneSeries]] = {}
        self._lanes: tuple[int, ...] = drawing.drawn_lanes  # the lanes ``series`` are of

    def ingest(self) -> None:
        """Smooth the rows the run received since the last call (each row read once)."""
        d = self.drawing
        if not d.series:
            return
        if d.drawn_lanes != self._lanes:  # lanes re-chosen: a lane kept keeps its average
            self._follow(d.drawn_lanes)
        for j, lane in enumerate(d.drawn_lanes):  # j: the drawn lane's place
            for i in range(len(d.specs)):
                if (i, j) not in self.series:
                    budget = smoothed_budget(d.series[i, j].budget)
                    self.series[i, j] = (Ema(self.weight), LaneSeries(budget))
            rows = d.reads.rows_since(lane, self.series[0, j][1].size)
            if len(rows[0]):
                for i, spec in enumerate(d.specs):
                    average, line = self.series[i, j]
                    # A path is drawn as it went (its chart has no smoothed line): its
                    # smoothed series only counts the rows read.
                    values = spec.values(rows) if spec.xy is None else np.zeros(len(rows[0]))
                    line.extend(average.extend(values))

    def _follow(self, lanes: tuple[int, ...]) -> None:
        """Move each kept lane's series to its new place; a lane newly drawn gets them anew
        (made and filled from its first row by `ingest`)."""
        old = {lane: j for j, lane in enumerate(self._lanes)}
        self.series = {
            (i, j): self.series[i, old[lane]]
            for j, lane in enumerate(lanes)
            if lane in old
            for i in range(len(self.drawing.specs))
            if (i, old[lane]) in self.series
        }
        self._lanes = lanes

    def lines(self) -> list[tuple[list[np.ndarray], list[np.ndarray], Any]]:
        """Per field: the smoothed points of each drawn lane (as `RunDrawing.lines`)."""
        d = self.drawing
        out = []
        for i in range(len(d.specs)):
            xs, ys = [], []
            for lane in range(d.lanes):
                x, y, _ = self.series[i, lane][1].points(d.x0)
                xs.append(x)
                ys.append(y)
            out.append((xs, ys, None))
        return out
