"""`Layout` (what a run's rows look like) and `Run` (the rows the host received for one run).

Layer 2 (host): numpy only. A `Run` is shared by all sinks of that run; it is appended to by the
registry (under its lock) and read by sinks, so reads go through `Run.lane_rows`, which copies.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from typing import Any

import numpy as np

__all__ = ["Layout", "Run"]


@dataclasses.dataclass(frozen=True)
class Layout:
    """Static description of one row, fixed at trace time.

    Attributes
    ----------
    names
        One name per leaf of ``record(carry)``, e.g. ``("loss", "x")`` for a dict record.
    shapes, dtypes
        Shape and numpy dtype (as a string) of each leaf's row.
    treedef
        The record's pytree structure, to rebuild rows in the same form as
        ``History.to_numpy()``.
    max_steps
        The loop's static step cap.
    chunk
        The static number of rows one host call can carry.
    every
        The fixed flush interval in rows, or None for adaptive (``stream_every="auto"``).
    """

    names: tuple[str, ...]
    shapes: tuple[tuple[int, ...], ...]
    dtypes: tuple[str, ...]
    treedef: Any
    max_steps: int
    chunk: int
    every: int | None

    @property
    def row_nbytes(self) -> int:
        return sum(
            int(np.prod(s, dtype=np.int64)) * np.dtype(d).itemsize
            for s, d in zip(self.shapes, self.dtypes, strict=True)
        )

    @property
    def scalar_fields(self) -> tuple[str, ...]:
        """Names of the leaves whose rows are scalars (what a plot draws by default)."""
        return tuple(n for n, s in zip(self.names, self.shapes, strict=True) if s == ())


STATUSES = ("running", "converged", "max_steps", "stopped", "failed")
FAILED = STATUSES.index("failed")


class Run:
    """The host's copy of one run's streamed rows.

    Attributes
    ----------
    id
        The run id the registry handed to the traced program.
    layout
        The `Layout` of the rows.
    lanes
        Number of vmap lanes, or None for an unbatched run (known after the first chunk).
    status
        ``"running"``, then per lane at the end (`statuses`): ``"converged"`` (``cond_fun``
        became False, whatever the reason your condition encodes), ``"max_steps"`` (the cap
        was hit first), ``"stopped"`` (a host stop request) or ``"failed"`` (the computation
        raised; the rows received so far are kept); `status` summarises them.
    """

    def __init__(self, run_id: int, layout: Layout) -> None:
        self.id = run_id
        self.layout = layout
        self.lanes: int | None = None
        self.started = time.perf_counter()
        self.ended: float | None = None
        self.statuses: list[str] = []
        self._lock = threading.Lock()
        self._parts: list[list[list[np.ndarray]]] = []  # lane -> leaf -> chunks
        self._counts: list[int] = []

    # ------------------------------------------------------------------------ writing
    def _ensure_lanes(self, lanes: int | None) -> None:
        if self.lanes is None and not self._parts:
            self.lanes = lanes
            n = 1 if lanes is None else lanes
            self._parts = [[[] for _ in self.layout.names] for _ in range(n)]
            self._counts = [0] * n
            self.statuses = ["running"] * n

    def append(self, lane: int, start: int, leaves: list[np.ndarray]) -> None:
        """Append rows ``start ..`` of ``lane``; rows must arrive in order, each once."""
        with self._lock:
            if start != self._counts[lane]:
                expected = self._counts[lane]
                raise RuntimeError(f"run {self.id} lane {lane}: rows from {start}, not {expected}")
            for parts, leaf in zip(self._parts[lane], leaves, strict=True):
                parts.append(leaf)
            self._counts[lane] += len(leaves[0])

    def _finish(self, codes: list[int]) -> None:
        with self._lock:
            self.statuses = [STATUSES[c] if 0 <= c < len(STATUSES) else "stopped" for c in codes]
            self.ended = time.perf_counter()

    # ------------------------------------------------------------------------ reading
    @property
    def status(self) -> str:
        """One word for the whole run: ``failed`` if the computation died (an exception), else
        ``stopped`` if any lane stopped, else ``max_steps`` if any lane hit the cap, else
        ``converged``; ``running`` until it ended."""
        if self.ended is None:
            return "running"
        for s in ("failed", "stopped", "max_steps"):
            if s in self.statuses:
                return s
        return "converged"

    @property
    def counts(self) -> list[int]:
        """Rows received so far, per lane."""
        with self._lock:
            return list(self._counts)

    @property
    def elapsed(self) -> float:
        """Seconds from start to end (or to now, while running)."""
        end = self.ended if self.ended is not None else time.perf_counter()
        return end - self.started

    def lane_rows(self, lane: int = 0) -> list[np.ndarray]:
        """All rows of ``lane`` received so far, one array per leaf (compacts the chunks)."""
        with self._lock:
            if not self._parts:  # no chunk arrived yet
                return [np.zeros((0, *s), d) for s, d in self._leaf_specs()]
            out = []
            for parts, (shape, dtype) in zip(self._parts[lane], self._leaf_specs(), strict=True):
                if len(parts) > 1:  # compact once, so repeated reads stay cheap
                    parts[:] = [np.concatenate(parts)]
                out.append(parts[0] if parts else np.zeros((0, *shape), dtype))
            return out

    def rows_since(self, lane: int, start: int) -> list[np.ndarray]:
        """Rows ``start ..`` of ``lane``, one array per leaf, touching only the newer chunks.

        A live view reads just what arrived since its last update, so each update costs the new
        rows, not the whole run.
        """
        with self._lock:
            if not self._parts:
                return [np.zeros((0, *s), d) for s, d in self._leaf_specs()]
            out = []
            for parts, (shape, dtype) in zip(self._parts[lane], self._leaf_specs(), strict=True):
                pieces, end = [], self._counts[lane]
                for part in reversed(parts):  # newest first; stop once past `start`
                    if end <= start:
                        break
                    begin = end - len(part)
                    pieces.append(part[max(0, start - begin) :])
                    end = begin
                pieces.reverse()
                out.append(np.concatenate(pieces) if pieces else np.zeros((0, *shape), dtype))
            return out

    def _leaf_specs(self) -> list[tuple[tuple[int, ...], str]]:
        return list(zip(self.layout.shapes, self.layout.dtypes, strict=True))

    def history(self) -> Any:
        """The streamed rows in the form of ``History.to_numpy()`` (a list per lane if batched)."""
        lanes = 1 if self.lanes is None else self.lanes
        trees = [self.layout.treedef.unflatten(self.lane_rows(i)) for i in range(lanes)]
        return trees[0] if self.lanes is None else trees

    def __repr__(self) -> str:
        return (
            f"Run(id={self.id}, status={self.status!r}, rows={self.counts}, "
            f"fields={self.layout.names})"
        )
