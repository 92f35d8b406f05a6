"""`LaneRequests`: what a `LivePlot`'s page asks of a sweep's lanes while its pointer is on a
hyperparameter chart's point: that lane's line drawn over the run's charts (`show_lane_probe`,
the ``lane_probe`` request), or every lane's line sent at once for the page to draw the one it
points at (`lane_lines`, the ``lane_lines`` request). Read from the plot's state under its lock;
the plot's drawing (`._updates.Updates`, which holds this part) is left as it is.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from ..figure import ChartGrid, show_lane_probe
from ..reduce import minmax_decimate
from ..series import DEFAULT_POINTS
from ._state import PlotState

__all__ = ["LANE_POINTS", "LaneRequests"]

#: Rows of each lane the page gets to draw a lane it points at (`LaneRequests.lane_lines`):
#: 4,096 lanes of one field are 2 MB.
LANE_POINTS = 128


class LaneRequests:
    """Answers the page's requests about the lanes of the runs ``state`` draws in ``fig``.

    Parameters
    ----------
    state, fig
        The plot's state and figure.
    lock
        The plot's lock: every request takes it.
    """

    def __init__(self, state: PlotState, fig: ChartGrid, lock: threading.RLock) -> None:
        self.state, self.fig, self.lock = state, fig, lock

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
