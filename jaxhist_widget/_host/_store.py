"""`Store`: a sink that appends every chunk of every run to an SQLite file as it arrives.

Host runtime. Each chunk is one committed transaction, so a process killed at any point (``kill
-9``, an out-of-memory kill, a kernel restart) leaves every chunk the store had filed readable,
by this package (`load_runs`) or by any SQLite reader. The format is `_store_schema`'s.
"""

from __future__ import annotations

import datetime
import os
import socket
import sqlite3
import threading
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np

from . import _store_schema as schema
from ._run import Run
from ._sink import Sink
from ._stored import StoredRun, load_runs, tree_to_json

__all__ = ["Store"]

#: Rows one INSERT statement files, at most (see `Store._write_rows`).
_ROWS_PER_INSERT = 256
#: Values one statement may bind: SQLite's limit since 3.32 is 32766.
_MAX_VARIABLES = 32_000
#: Runs whose rows the store still files should more come (each a few numbers).
_MAX_ENTRIES = 1024


class _Open:
    """What the store knows of one run it is writing: its id in the file and rows written."""

    __slots__ = ("columns", "db_id", "kinds", "lanes_known", "written")

    def __init__(self, db_id: int, columns: list[str], kinds: list[str]) -> None:
        self.db_id, self.columns, self.kinds = db_id, columns, kinds
        self.written: list[int] = []
        self.lanes_known = False


class Store(Sink):
    """Append every run started while attached to the SQLite file ``path``, chunk by chunk.

    Each chunk is committed as it arrives, so killing the process mid-run keeps every chunk
    filed before the kill; what a ``kill -9`` loses is only the rows not yet committed: those
    the loop had not yet handed to the host (at most one chunk per lane, some 50 ms of rows
    with ``stream_every="auto"``) and those still queued for the worker thread. When the run
    returns (leaving the ``with`` block), every row handed to the store is committed. A commit
    is on disk for any later reader once made (a process crash loses nothing committed; only a
    power cut may lose the last commits: WAL with ``synchronous=NORMAL``). A run whose writer
    died reads back with status ``"interrupted"`` (`StoredRun`). Several processes may write
    one file at once (each waits its turn per chunk). Rows are exact: every dtype, vmap lanes
    and vector leaves read back bit for bit (`runs`, `load_runs`); the file is plain SQLite
    (see `_store_schema` for its tables, and the ``history`` view), e.g.
    ``pandas.read_sql("SELECT * FROM history", sqlite3.connect(path))``.

    Writing holds up the loop only when SQLite files rows more slowly than the loop makes
    them: the chunks go to the package's worker thread (a store asks for no stop, so its rows
    can wait), unless another sink of the run needs to see the rows first, and the loop waits
    only once a run has many chunks queued there. Filing costs SQLite a few microseconds per
    row (``benchmarks/store.py``), so a loop of very cheap steps runs at that pace.

    A write that fails (disk full, the file locked for over a minute) is reported once as a
    warning and never stops the run; its rows go with the next chunk.

    Parameters
    ----------
    path
        The store's file, created if missing.
    name
        The name given to the runs this store writes (`name` may be changed between runs).

    Examples
    --------
    >>> import tempfile, os, jaxhist_widget as jhw
    >>> path = os.path.join(tempfile.mkdtemp(), "runs.db")
    >>> with jhw.Store(path, name="halving"):
    ...     _ = jhw.while_loop(lambda x: x > 1.0, lambda x: x / 2, 10.0, max_steps=9)
    >>> [run] = jhw.load_runs(path)
    >>> run.name, run.status, run.history().tolist()
    ('halving', 'converged', [10.0, 5.0, 2.5, 1.25, 0.625])
    """

    # The store never asks for a stop from what it sees: its writes may wait for the worker.
    rows_can_wait = True

    def __init__(self, path: str | os.PathLike[str], *, name: str | None = None) -> None:
        super().__init__()
        self.path = Path(path)
        #: The name given to runs that start from now on, unless a named block names them
        #: (`Sink.name`; None: the run's own name, else ``run <id>``).
        self.name = name
        self._conn: sqlite3.Connection | None = None
        self._pid = 0
        self._db_lock = threading.Lock()
        self._open: dict[int, _Open] = {}  # in-process run id -> its line in the file

    # ------------------------------------------------------------------- reading
    def runs(self) -> list[StoredRun]:
        """Every run in the store, oldest first (see `load_runs`)."""
        return load_runs(self.path)

    def close(self) -> None:
        """Close the file (it is opened again when a run starts)."""
        with self._db_lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    # ----------------------------------------------------------------- sink hooks
    def on_start(self, run: Run) -> None:
        layout = run.layout
        columns = schema.column_names(layout.names)
        kinds = [schema.kind_of(d, s) for d, s in zip(layout.dtypes, layout.shapes, strict=True)]
        now = _utc_now()
        # The run's name when the user gave it (`Sink.named`, ``name=``), else this store's,
        # else one made up from the call or the cell (`Run.name`), else "run <id>" below.
        line = {
            "name": run.name if run.name_given else (self.name or run.name),
            "started": now,
            "status": "running",
            "max_steps": layout.max_steps,
            "fields": schema.dumps(list(layout.names)),
            "step_counters": schema.dumps(list(layout.step_counters)),
            "columns": schema.dumps(columns),
            "dtypes": schema.dumps(list(layout.dtypes)),
            "shapes": schema.dumps([list(s) for s in layout.shapes]),
            "kinds": schema.dumps(kinds),
            "tree": tree_to_json(layout.treedef),
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "writer": schema.writer_token(os.getpid()),
            "heartbeat": now,
        }

        def write(conn: sqlite3.Connection) -> int:
            schema.ensure_columns(conn, columns)
            keys = ",".join(line)
            marks = ",".join("?" * len(line))
            cur = conn.execute(f"INSERT INTO runs ({keys}) VALUES ({marks})", list(line.values()))
            db_id = int(cur.lastrowid or 0)
            if line["name"] is None:
                conn.execute("UPDATE runs SET name=? WHERE id=?", (f"run {db_id}", db_id))
            return db_id

        db_id = self._transaction(write)
        with self._db_lock:
            self._open[run.id] = _Open(db_id, columns, kinds)
            while len(self._open) > _MAX_ENTRIES:
                self._open.pop(next(iter(self._open)))

    def on_rows(self, run: Run, lanes: list[int]) -> None:
        self._write_rows(run, lanes)

    def on_end(self, run: Run) -> None:
        with self._db_lock:
            entry = self._open.get(run.id)
        if entry is None:  # its start was never filed (the file could not be written)
            return
        lanes = list(range(len(run.counts)))
        self._write_rows(run, lanes)  # anything a failed write left behind
        ended = _utc_now()

        def write(conn: sqlite3.Connection) -> None:
            conn.execute(
                "UPDATE runs SET status=?, statuses=?, ended=?, elapsed=?, lanes=? WHERE id=?",
                (
                    run.status,
                    schema.dumps(run.statuses),
                    ended,
                    run.elapsed,
                    run.lanes,
                    entry.db_id,
                ),
            )

        self._transaction(write)
        # The run's entry stays (a run given up for dead may send rows after all, and end
        # again): the oldest go once there are many.

    # ------------------------------------------------------------------- writing
    def _write_rows(self, run: Run, lanes: list[int]) -> None:
        """File the rows of ``lanes`` not written yet, in one transaction."""
        with self._db_lock:
            entry = self._open.get(run.id)
        if entry is None:
            return
        counts = run.counts
        if len(entry.written) < len(counts):
            entry.written += [0] * (len(counts) - len(entry.written))
        width = 3 + len(entry.columns)
        blocks: list[np.ndarray] = []
        nans: list[tuple[Any, ...]] = []
        taken = {}
        for lane in lanes:
            start = entry.written[lane]
            leaves = run.rows_since(lane, start)
            n = len(leaves[0])
            if n == 0:
                continue
            # The rows as one object array (run, lane, step, leaves...): numpy makes the Python
            # ints and floats SQLite binds, column by column, without a Python loop per row.
            block = np.empty((n, width), object)
            block[:, 0], block[:, 1] = entry.db_id, lane
            block[:, 2] = np.arange(start, start + n)
            for j, (col, kind, leaf) in enumerate(
                zip(entry.columns, entry.kinds, leaves, strict=True)
            ):
                values = _encode(kind, leaf)
                block[:, 3 + j] = values
                if kind == "float":
                    for i in np.flatnonzero(np.isnan(values)):
                        nans.append(
                            (entry.db_id, lane, start + int(i), col, leaf[i : i + 1].tobytes())
                        )
            blocks.append(block)
            taken[lane] = start + n
        if not taken:
            return
        done = [taken.get(lane, w) for lane, w in enumerate(entry.written)]
        rows = np.concatenate(blocks) if len(blocks) > 1 else blocks[0]
        # Many rows per INSERT: binding is per value anyway, but each statement execution has
        # a fixed cost that one row a statement pays per row (about half the time per row).
        per = max(1, min(_ROWS_PER_INSERT, _MAX_VARIABLES // width))
        full = len(rows) // per * per
        groups = rows[:full].reshape(-1, per * width).tolist()
        rest = rows[full:].tolist()

        def write(conn: sqlite3.Connection) -> None:
            if groups:
                conn.executemany(_insert(entry.columns, per), groups)
            if rest:
                conn.executemany(_insert(entry.columns, 1), rest)
            if nans:
                conn.executemany("INSERT INTO nan_bits VALUES (?,?,?,?,?)", nans)
            conn.execute(
                "UPDATE runs SET rows=?, steps=?, lanes=?, heartbeat=? WHERE id=?",
                (schema.dumps(done), max(done) - 1, run.lanes, _utc_now(), entry.db_id),
            )

        self._transaction(write)
        entry.written = done  # only once committed: a failed write is retried with later rows

    def _transaction(self, fn: Any) -> Any:
        """``fn(conn)`` in one write transaction (waiting for other writers), committed."""
        with self._db_lock:
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                result = fn(conn)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            return result

    def _connection(self) -> sqlite3.Connection:
        # Caller holds _db_lock. A forked child opens its own (a connection must not cross).
        if self._conn is None or self._pid != os.getpid():
            self._conn = schema.connect(str(self.path))
            self._pid = os.getpid()
        return self._conn

    def __repr__(self) -> str:
        return f"Store({str(self.path)!r}, name={self.name!r})"


def _utc_now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat()


def _insert(columns: list[str], rows: int) -> str:
    """An INSERT of ``rows`` rows into ``columns`` (after run, lane, step)."""
    one = f"({','.join('?' * (3 + len(columns)))})"
    return (
        f"INSERT INTO rows (run, lane, step, {','.join(map(schema.quote, columns))}) "
        f"VALUES {','.join([one] * rows)}"
    )


def _encode(kind: str, leaf: np.ndarray) -> np.ndarray:
    """A leaf's rows as what SQLite stores (see `_store_schema`): int64, float64, or each
    row's bytes (an object array: numpy would strip a bytes array's trailing zeros)."""
    if kind == "int":
        return leaf.astype(np.int64)
    if kind == "float":
        return _to_float64(leaf)  # a NaN binds as NULL: its bytes go to nan_bits
    n = len(leaf)
    size = leaf.itemsize * (leaf.size // n if n else 0)
    out = np.empty(n, object)
    if size == 0:  # a zero-size leaf: empty bytes
        out[:] = [b""] * n
        return out
    # Each row as one opaque item: a void array's items are whole `bytes` (numpy's own loop).
    rows = np.ascontiguousarray(leaf).reshape(n, -1)
    out[:] = rows.view(np.dtype((np.void, size))).ravel().tolist()
    return out


def _to_float64(leaf: np.ndarray) -> np.ndarray:
    """``leaf`` as float64, exactly, on whatever thread this runs.

    XLA runs host callbacks on threads that treat subnormal inputs as zero (DAZ), so a plain
    ``astype`` turns a float32 or bfloat16 subnormal into 0 there. The subnormals are rebuilt
    from their bits instead: mantissa times the smallest step, all normal float64 arithmetic.
    """
    with np.errstate(invalid="ignore"):  # a signalling NaN (its bytes are kept apart)
        out = leaf.astype(np.float64)
    if leaf.dtype == np.float64 or leaf.size == 0:
        return out
    info = ml_dtypes.finfo(leaf.dtype)
    if info.nmant == 0:  # no subnormals (float8_e8m0fnu)
        return out
    u = leaf.view(f"u{leaf.dtype.itemsize}").astype(np.int64)
    man = (1 << info.nmant) - 1
    exp = ((1 << info.nexp) - 1) << info.nmant
    sub = ((u & exp) == 0) & ((u & man) != 0)
    if sub.any():
        value = (u[sub] & man).astype(np.float64) * 2.0 ** (int(info.minexp) - info.nmant)
        sign = (u[sub] >> (info.bits - 1)) & 1 if leaf.dtype.name != "float8_e8m0fnu" else 0
        out[sub] = np.where(sign == 1, -value, value)
    return out
