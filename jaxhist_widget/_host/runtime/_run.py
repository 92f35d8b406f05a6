"""`Run`: the rows the host received for one run.

Host runtime: numpy only. A `Run` is shared by all sinks of that run, which read it; it is
written through its one `RunWriter`, held by the hub (`_hub.Hub`, for a run streaming in) or
the store's reader (a run read back). Every array a reader gets is read-only (a view of the
run's storage, or a copy): one sink editing its rows in place must not rewrite them for the
others. Copy (``np.array(rows)``) to edit.

A run also keeps when its rows reached the host (`Run.arrivals`, `Run.times`): one pair per
chunk, the rows received by then and the host's clock, from which a row's time is interpolated.
Rows arrive in chunks, so that is a row's time to a chunk's resolution: the rows of one chunk
are spread evenly between the arrival of the chunk before and their own.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np

from ..._wire import STATUSES, Layout, np_dtype

__all__ = ["FAILED", "SEGMENT_BYTES", "STATUSES", "Run", "RunWriter", "lane_index"]

#: A run stores its rows in segments of about this many bytes, all lanes together (see `Run`).
#: Under 4 MiB on purpose: numpy asks Linux for huge pages for arrays of 4 MiB or more, and
#: writing a run's rows into such fresh memory was several times slower (benchmarks/overhead.py
#: prints the copy cost).
SEGMENT_BYTES = 1 << 20

# (`STATUSES`, a lane's status by its code, is the device-host contract's: `_wire`.)
FAILED = STATUSES.index("failed")
#: `STATUSES` by code, to name every lane's end at once (a code past them is a stop).
_NAMES = np.array(STATUSES, dtype=object)


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
    name
        Its name, given when it started (`Sink.named`, a runner's ``name=``, `Sink.name`) or
        made up from the runner's call or the cell (``solve(3)``, ``cell 7``); None when
        nothing named it. `name_given` tells which.
    status
        ``"running"``, then per lane at the end (`statuses`): ``"converged"`` (``cond_fun``
        became False, whatever the reason your condition encodes), ``"max_steps"`` (the cap
        was hit first), ``"stopped"`` (a host stop request) or ``"failed"`` (the computation
        raised; the rows received so far are kept); `status` summarises them. A vmap over
        zero lanes makes a run with no lanes and no rows that ends ``"converged"`` (no lane
        had a step to take; `statuses` is empty).

    A run only reads: it is written through its one `RunWriter`. Every array this class hands
    out is read-only; copy it to edit.
    """

    def __init__(self, run_id: int, layout: Layout) -> None:
        self.id = run_id
        self.layout = layout
        self.lanes: int | None = None
        self.name: str | None = None
        #: Whether `name` was given by the user (not made up from a call or a cell).
        self.name_given = False
        self.started = time.perf_counter()
        #: The wall clock (`time.time`) when the run started; arrival times count from it on the
        #: monotonic clock, so a clock set back mid-run never makes a row earlier than the last.
        self.started_wall = time.time()
        self.ended: float | None = None
        self.statuses: list[str] = []
        self._lock = threading.Lock()
        # Rows live in segments of `_seg_rows` rows for all lanes: segment -> leaf -> (lanes,
        # seg_rows, *shape). A chunk of all lanes is one copy per leaf (per-lane arrays cost
        # Python per lane and leaf: most of a many-lane flush), and rows never move once
        # written (a growing buffer would copy them again, into fresh memory), so a reader gets
        # views wherever its rows lie in one segment (see `rows_since`).
        self._segs: list[list[np.ndarray]] = []
        self._seg_rows = 1
        self._counts = np.zeros(0, np.int64)  # rows per lane
        # Chunk arrivals: the most rows of any lane once a chunk was in, and the wall time it
        # came at; one pair per chunk (not per row or lane), in arrays that double as they fill.
        self._arrived_rows = np.zeros(16, np.int64)
        self._arrived_at = np.zeros(16, np.float64)
        self._arrivals = 0
        self._written = False  # whether its `RunWriter` was made

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
            return self._counts.tolist()

    @property
    def elapsed(self) -> float:
        """Seconds from start to end (or to now, while running)."""
        end = self.ended if self.ended is not None else time.perf_counter()
        return end - self.started

    def arrivals(self) -> tuple[np.ndarray, np.ndarray]:
        """When the run's chunks reached the host: ``(rows, times)``, one pair per chunk that
        brought new rows, ``rows[k]`` the rows received by then (the most of any lane: the
        lanes of a vmap step together) and ``times[k]`` the host's wall clock then (seconds
        since the epoch, as `time.time`). Both ascend; read-only."""
        with self._lock:
            n = self._arrivals
            rows, times = self._arrived_rows[:n], self._arrived_at[:n]
        rows.setflags(write=False)
        times.setflags(write=False)
        return rows, times

    def row_times(self, rows: Any) -> np.ndarray:
        """The time (seconds since the epoch) at which rows ``rows`` (indices, from 0; any
        shape, fractions allowed) reached the host, interpolated between chunk arrivals: the
        last row of a chunk at the chunk's arrival, the rows before it evenly back to the
        previous chunk's last row (a chunk's resolution). The rows of the first chunk share
        its time. NaN for every row before any chunk arrived."""
        got, times = self.arrivals()
        rows = np.asarray(rows, np.float64)
        out = np.asarray(
            np.interp(rows, got - 1, times) if len(got) else np.full(rows.shape, np.nan)
        )
        out.setflags(write=False)  # (as every array a run hands out)
        return out

    def times(self, lane: int = 0) -> np.ndarray:
        """When each row of ``lane`` received so far reached the host (`row_times`): seconds
        since the epoch (``datetime.datetime.fromtimestamp`` reads one), ascending."""
        return self.row_times(np.arange(self.counts[lane] if self.counts else 0))

    def lane_rows(self, lane: int = 0) -> list[np.ndarray]:
        """All rows of ``lane`` received so far, one read-only array per leaf (see `rows_since`)."""
        return self.rows_since(lane, 0)

    def rows_since(self, lane: int, start: int, stop: int | None = None) -> list[np.ndarray]:
        """Rows ``start ..`` of ``lane`` (up to row ``stop``, excluded, if given), one read-only
        array per leaf (a view when they lie in one storage segment, as a live view's new rows
        nearly always do).

        A live view reads just what arrived since its last update, so each update costs the new
        rows, not the whole run; a zoomed view reads the rows of its steps only.
        """
        with self._lock:
            if not self._counts.size:  # no chunk arrived yet
                return [_empty(s, d) for s, d in self._leaf_specs()]
            end, size = int(self._counts[lane]), self._seg_rows
            if stop is not None:
                end = max(0, min(end, stop))
            start = min(start, end)
            first, last = start // size, -(-end // size)
            pieces = [
                [buf[lane, max(start - k * size, 0) : end - k * size] for buf in self._segs[k]]
                for k in range(first, last)
            ]
        if not pieces:
            return [_empty(s, d) for s, d in self._leaf_specs()]
        out = [p[0] if len(p) == 1 else np.concatenate(p) for p in zip(*pieces, strict=True)]
        for rows in out:
            rows.setflags(write=False)  # shared by every sink: nobody edits it in place
        return out

    def block(self, lanes: Any, start: int, stop: int) -> list[np.ndarray]:
        """Rows ``start .. stop`` (``stop`` excluded) of each of ``lanes`` (ascending, every one
        with at least ``stop`` rows), one read-only array per leaf of shape
        ``(len(lanes), stop - start, *shape)``: `rows_since` for many lanes at once, one copy
        per leaf (a view when the lanes are consecutive and the rows lie in one segment), so
        a reader of thousands of lanes has no Python loop over them.
        """
        if type(self).rows_since is not Run.rows_since:  # a subclass keeps its rows elsewhere
            per_lane = [self.rows_since(int(lane), start, stop) for lane in lanes]
            return [np.stack(leaf) for leaf in zip(*per_lane, strict=True)] if per_lane else []
        return self._joined(lanes, start, stop, *self._pieces(lanes, start, stop))

    def _joined(
        self, lanes: Any, start: int, stop: int, at: Any, pieces: list[list[tuple]]
    ) -> list[np.ndarray]:
        """`block`'s arrays from `_pieces`: one read-only array per leaf, segments joined."""
        if not pieces or not len(lanes):
            out = [
                np.zeros((len(lanes), max(0, stop - start), *s), np_dtype(d))
                for s, d in self._leaf_specs()
            ]
        else:
            out = []
            for parts in zip(*pieces, strict=True):  # one leaf's, segment by segment
                rows = [buf[at, lo - k : hi - k] for k, lo, hi, buf in parts]
                out.append(rows[0] if len(rows) == 1 else np.concatenate(rows, 1))
        for leaf in out:
            leaf.setflags(write=False)
        return out

    def columns(self, lanes: Any, start: int, stop: int, leaf: int, index: int) -> np.ndarray:
        """Component ``index`` (of leaf ``leaf``'s flattened shape; 0 for a scalar) in rows
        ``start .. stop`` of each of ``lanes`` (as `block`), as one read-only C-ordered
        ``(stop - start, len(lanes))`` array: each step's values side by side, as a band over
        a sweep's lanes sorts them. One copy, segment by segment, from the run's storage
        (`block` and a transpose copy twice, the second across the whole block)."""
        if type(self).rows_since is not Run.rows_since:  # a subclass keeps its rows elsewhere
            rows = self.block(lanes, start, stop)[leaf]
            out = np.ascontiguousarray(rows.reshape(len(rows), stop - start, -1)[:, :, index].T)
        else:
            at, pieces = self._pieces(lanes, start, stop)
            dtype = np_dtype(self._leaf_specs()[leaf][1])
            out = np.empty((max(0, stop - start), len(lanes)), dtype)
            for k, lo, hi, buf in (p[leaf] for p in pieces) if len(lanes) else ():
                rows = buf[at, lo - k : hi - k]
                out[lo - start : hi - start] = rows.reshape(len(rows), hi - lo, -1)[:, :, index].T
        out.setflags(write=False)
        return out

    def _pieces(
        self, lanes: Any, start: int, stop: int, short_ok: bool = False
    ) -> tuple[Any, list[list[tuple]]]:
        """``lanes`` as an index, and per storage segment holding rows ``start .. stop``, per
        leaf: ``(segment's first row, first row, end row, storage)`` (checked: every lane has
        the rows, unless ``short_ok``: then a short lane's rows past its count are undefined)."""
        lanes = np.asarray(lanes, np.int64)
        with self._lock:
            have = np.asarray(self._counts, np.int64)[lanes]
            if len(lanes) and ((have.min() < stop and not short_ok) or start < 0):
                raise ValueError(f"run {self.id}: rows {start}..{stop} of lanes not received")
            at: slice | np.ndarray | list[int]
            at, size = lane_index(lanes.tolist()) if len(lanes) else [], self._seg_rows
            segments = range(max(start, 0) // size, -(-stop // size)) if stop > start else range(0)
            pieces = [
                [(k * size, max(start, k * size), min(stop, (k + 1) * size), buf) for buf in seg]
                for k, seg in zip(segments, self._segs[segments.start : segments.stop], strict=True)
            ]
        return at, pieces

    def latest(self) -> tuple[np.ndarray, list[np.ndarray]]:
        """Each lane's last row received: ``(has, leaves)``, ``has`` whether a lane has a row
        yet (one without reads zeros), ``leaves[i]`` of shape ``(lanes, *shape)``. One gather
        per leaf and segment, no Python loop over lanes: a sweep's figures are over all of
        them, at every update."""
        if type(self).rows_since is not Run.rows_since:  # a subclass keeps its rows elsewhere
            counts = np.asarray(self.counts, np.int64)
            out = [np.zeros((len(counts), *s), np_dtype(d)) for s, d in self._leaf_specs()]
            for n in np.unique(counts[counts > 0]).tolist():  # `block`, lanes of a length
                lanes = np.flatnonzero(counts == n)
                for leaf, rows in zip(out, self.block(lanes, n - 1, n), strict=True):
                    leaf[lanes] = rows[:, 0]
            return counts > 0, out
        with self._lock:
            counts = self._counts.copy()
            row = np.maximum(counts - 1, 0)
            seg, off = row // self._seg_rows, row % self._seg_rows
            has = counts > 0
            out = [np.zeros((len(counts), *s), np_dtype(d)) for s, d in self._leaf_specs()]
            for k in np.unique(seg[has]).tolist():
                pick = np.flatnonzero(has & (seg == k))
                for leaf, buf in zip(out, self._segs[k], strict=True):
                    leaf[pick] = buf[pick, off[pick]]
        return has, out

    def _leaf_specs(self) -> list[tuple[tuple[int, ...], str]]:
        return list(zip(self.layout.shapes, self.layout.dtypes, strict=True))

    def history(self) -> Any:
        """The streamed rows in the form of ``History.to_numpy()`` (a list per lane if batched).

        The arrays are read-only views of the run's storage (shared by every sink); copy them
        (``np.array(...)``) to edit.
        """
        unflatten = self.layout.treedef.unflatten
        if self.lanes is None or type(self).rows_since is not Run.rows_since:
            trees = [unflatten(self.lane_rows(i)) for i in range(self.lanes or 1)]
            return trees[0] if self.lanes is None else trees
        # Every lane at once, the segments joined once per leaf (as `block`), not once per
        # lane: a sweep of 4,096 lanes in ~40 segments took seconds read lane by lane.
        counts = np.asarray(self.counts, np.int64)
        lanes, end = range(len(counts)), int(counts.max(initial=0))
        leaves = self._joined(lanes, 0, end, *self._pieces(lanes, 0, end, short_ok=True))
        return [unflatten([x[i, :c] for x in leaves]) for i, c in enumerate(counts.tolist())]

    def __repr__(self) -> str:
        return (
            f"Run(id={self.id}, status={self.status!r}, rows={self.counts}, "
            f"fields={self.layout.names})"
        )


class RunWriter:
    """The writing half of a `Run`: its lanes, its rows, when they came and how it ended.

    A run has one writer, made by whoever makes the run: the hub for a run that streams in
    (`Hub`, its run table's entry holds it), the store's reader for a run read back from a
    file (`load_runs`). Sinks get the `Run` alone, which only reads: "who may change this
    run?" has one answer. Making a second writer for a run raises.

    Examples
    --------
    >>> import jax, numpy as np
    >>> from jaxhist_widget import _wire
    >>> layout = _wire.Layout(("x",), ((),), ("float32",), jax.tree_util.tree_structure(0.0),
    ...                       max_steps=9, chunk=4, every=None)
    >>> run = Run(1, layout)
    >>> rows = RunWriter(run)
    >>> rows.lanes(None)
    >>> rows.append(0, 0, [np.array([3.0, 2.0], np.float32)])
    >>> rows.finish([1])
    >>> run.status, run.lane_rows(0)[0].tolist()
    ('converged', [3.0, 2.0])
    """

    def __init__(self, run: Run) -> None:
        with run._lock:
            if run._written:
                raise RuntimeError(f"run {run.id} has a writer already: it is the hub's")
            run._written = True
        #: The run this writes (what its sinks read).
        self.run = run

    def named(self, name: str | None, given: bool) -> None:
        """Name the run as it starts (before any sink sees it); ``given``: by the user."""
        self.run.name, self.run.name_given = name, given

    def lanes(self, lanes: int | None) -> None:
        """Size the run for ``lanes`` vmap lanes (None: unbatched), at its first chunk; a
        later call changes nothing."""
        r = self.run
        if r.lanes is None and not r._counts.size:
            r.lanes = lanes
            n = 1 if lanes is None else lanes
            r._counts = np.zeros(n, np.int64)
            r.statuses = ["running"] * n
            per_row = max(1, n * r.layout.row_nbytes)
            # max_steps 0: no known cap (a Python loop's `jhw.log` run)
            cap = r.layout.max_steps + 1 if r.layout.max_steps > 0 else SEGMENT_BYTES
            r._seg_rows = min(max(SEGMENT_BYTES // per_row, 16), cap)

    def append(self, lane: int, start: int, leaves: list[np.ndarray]) -> None:
        """Append rows ``start ..`` of ``lane``; rows must arrive in order, each once."""
        self.append_lanes([lane], start, [np.expand_dims(x, 0) for x in leaves])

    def append_lanes(
        self, lanes: list[int] | np.ndarray, start: int, leaves: list[np.ndarray]
    ) -> None:
        """Append rows ``start ..`` of each of ``lanes`` (ascending; all at the same row).

        ``leaves[i]`` has shape ``(len(lanes), rows, *shape)`` and is copied; rows arrive in
        order, each once.
        """
        r = self.run
        rows, at, size = leaves[0].shape[1], lane_index(lanes), r._seg_rows
        with r._lock:
            wrong = r._counts[at] != start
            if wrong.any():
                lane = int(np.asarray(lanes)[np.flatnonzero(wrong)[0]])
                raise RuntimeError(
                    f"run {r.id} lane {lane}: rows from {start}, not {r._counts[lane]}"
                )
            done = 0
            while done < rows:
                seg, off = divmod(start + done, size)
                while len(r._segs) <= seg:
                    # np.empty: pages are touched only as rows arrive
                    r._segs.append(
                        [
                            np.empty((len(r._counts), size, *s), np_dtype(d))
                            for s, d in r._leaf_specs()
                        ]
                    )
                take = min(rows - done, size - off)
                for buf, leaf in zip(r._segs[seg], leaves, strict=True):
                    buf[at, off : off + take] = leaf[:, done : done + take]
                done += take
            r._counts[at] = start + rows

    def install(self, arrays: list[np.ndarray], counts: Any, statuses: list[str]) -> None:
        """Take a run's rows as read back (one array per leaf, ``(lanes, rows, ...)``), kept
        as its one storage segment (no copy), with each lane's row count and status."""
        r = self.run
        with r._lock:
            rows = arrays[0].shape[1] if arrays else 0
            r._segs = [arrays] if rows else []
            r._seg_rows = max(1, rows)
            r._counts[:] = [int(c) for c in counts]  # in place: its length is the lanes
            r.statuses = list(statuses)

    def arrived(self, rows: int, perf: float) -> None:
        """A chunk that brings the run to ``rows`` rows (its furthest lane's) was received at
        ``perf`` (`time.perf_counter`): keep the pair (rows, wall time), when it goes past the
        last pair's rows."""
        r = self.run
        with r._lock:
            n = r._arrivals
            if rows <= 0 or (n and rows <= r._arrived_rows[n - 1]):
                return  # no row past the last pair: its time is already known
            if n == len(r._arrived_rows):
                r._arrived_rows = np.concatenate([r._arrived_rows, np.zeros(n, np.int64)])
                r._arrived_at = np.concatenate([r._arrived_at, np.zeros(n)])
            r._arrived_rows[n] = rows
            r._arrived_at[n] = r.started_wall + (perf - r.started)
            r._arrivals = n + 1

    def finish(self, codes: list[int]) -> None:
        """End the run, each lane with its status code (`STATUSES`; a code past them is a
        stop)."""
        code = np.asarray(codes, np.int64)
        known = (code >= 0) & (code < len(STATUSES))
        names = _NAMES[np.where(known, code, STATUSES.index("stopped"))].tolist()
        with self.run._lock:
            self.run.statuses = names
            self.run.ended = time.perf_counter()

    def reopen(self) -> None:
        """Undo `finish` for a run given up for dead that turned out to be alive."""
        with self.run._lock:
            self.run.statuses = ["running"] * len(self.run.statuses)
            self.run.ended = None


def lane_index(lanes: list[int] | np.ndarray) -> slice | np.ndarray:
    """Ascending ``lanes`` as a numpy index: a slice when consecutive (all lanes, in lockstep
    under vmap), so that indexing with it is a plain strided copy rather than a gather."""
    lanes = np.asarray(lanes, np.int64)
    if lanes.size and lanes[-1] - lanes[0] == lanes.size - 1:
        return slice(int(lanes[0]), int(lanes[-1]) + 1)
    return lanes


def _empty(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    out = np.zeros((0, *shape), np_dtype(dtype))
    out.setflags(write=False)
    return out
