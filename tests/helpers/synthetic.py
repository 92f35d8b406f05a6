"""Synthetic runs: rows fed to the attached sinks through the hub by hand, as the traced loop's
host calls would send them, so widget tests need no compiled loop (milliseconds, not seconds).

    with live:                      # or any attached sink
        loop = FakeLoop(layout(("loss",)))
        loop.send(loss=[3.0, 2.0, 1.0])
        loop.end("converged")
"""

from __future__ import annotations

from collections.abc import Sequence

import jax
import numpy as np

import jaxhist_widget as jhw
from jaxhist_widget import _wire
from jaxhist_widget._host import HUB, Run

CODES = {"running": 0, "converged": 1, "max_steps": 2, "stopped": 3, "failed": 4}


def layout(
    names: Sequence[str] = ("value",),
    shapes: Sequence[tuple[int, ...]] | None = None,
    max_steps: int = 1000,
) -> _wire.Layout:
    """A float32 record of ``names`` (scalars unless ``shapes``); one bare scalar when the only
    name is ``value`` (as ``record`` defaults to the carry)."""
    shapes = tuple(shapes) if shapes is not None else ((),) * len(names)
    tree = 0.0 if tuple(names) == ("value",) else dict.fromkeys(names, 0.0)
    return _wire.Layout(
        names=tuple(names),
        shapes=shapes,
        dtypes=("float32",) * len(names),
        treedef=jax.tree_util.tree_structure(tree),
        max_steps=max_steps,
        chunk=64,
        every=None,
    )


class FakeLoop:
    """One run of ``layout`` streamed to the sinks attached now (``lanes``: None unbatched)."""

    def __init__(self, layout: _wire.Layout, lanes: int | None = None) -> None:
        self.layout, self.lanes = layout, lanes
        self.id = int(HUB.open_run(layout)[0])
        self.rows = [0] * (1 if lanes is None else lanes)

    def send(self, *, status: str | Sequence[str] = "running", **leaves: object) -> None:
        """Send one flush: per leaf name, its new rows (``(rows, *shape)``; under vmap one
        array per lane, ``(lanes, rows, *shape)`` or a list: lanes may get different numbers
        of rows), and each lane's status."""
        b = len(self.rows)
        per_lane = []  # per leaf, per lane: (rows, *shape)
        for name, shape in zip(self.layout.names, self.layout.shapes, strict=True):
            value = leaves[name]
            lanes = value if self.lanes is not None else [value]
            # (a leaf of no values keeps its rows: -1 would not say how many)
            per_lane.append([_rows(np.asarray(a, np.float32), shape) for a in lanes])
        counts = [len(a) for a in per_lane[0]]
        k = max([1, *counts])  # the window: rows per lane in this call
        statuses = [status] * b if isinstance(status, str) else list(status)
        head = [self.id, -1 if self.lanes is None else self.lanes, k]
        for lane in range(b):
            head += [self.rows[lane], counts[lane], self.rows[lane], CODES[statuses[lane]]]
            self.rows[lane] += counts[lane]
        windows = []
        for arrays, shape in zip(per_lane, self.layout.shapes, strict=True):
            if 0 in shape:  # a zero-size leaf has no window (`_wire.Packing`)
                continue
            window = np.zeros((b, k, *shape), np.float32)
            for lane, a in enumerate(arrays):
                window[lane, : len(a)] = a
            windows.append(window.reshape(-1).view(np.uint32))
        HUB.receive_chunk(self.layout, np.array(head, np.int32).view(np.uint32), *windows)

    def end(self, status: str | Sequence[str] = "converged") -> None:
        """End the run (a flush with no new rows)."""
        b = len(self.rows)
        shapes = zip(self.layout.names, self.layout.shapes, strict=True)
        empty = {name: np.zeros((b, 0, *shape)) for name, shape in shapes}
        self.send(status=status, **empty)


def _rows(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    return a.reshape(len(a) if 0 in shape else -1, *shape)


class Capture(jhw.Sink):
    """A sink that keeps the runs it is handed and sees each chunk's rows before the loop goes
    on (so a run's rows are in when `FakeLoop.send` returns)."""

    rows_can_wait = False

    def __init__(self) -> None:
        super().__init__()
        self.runs: list[Run] = []

    def on_start(self, run: Run) -> None:
        self.runs.append(run)


def feed(sink: jhw.Sink, values: dict[str, object], status="converged", lanes=None, **kw) -> None:
    """One whole run of ``values`` (per leaf name, all its rows) streamed to ``sink``."""
    with sink:
        loop = FakeLoop(layout(tuple(values), **kw), lanes)
        loop.send(**values)
        loop.end(status)
