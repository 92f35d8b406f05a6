"""Runs read back from a `Store` file: `load_runs` and `StoredRun`.

Host runtime. A `StoredRun` is a `Run` (the same reading API: `history`, `lane_rows`, `counts`,
`lanes`, `status`), filled from the file, so whatever draws or exports a run takes it as is.
"""

from __future__ import annotations

import datetime
import json
import os
import shutil
import sqlite3
import time
from pathlib import Path
from typing import Any

import numpy as np

from ..._wire import Layout
from ..runtime import Run, RunWriter
from . import _blocks as blocks
from . import _file as files
from . import _legacy as legacy
from . import _schema as schema
from ._liveness import file_ident, writer_gone
from ._open_stores import flush_stores

__all__ = ["INTERRUPTED", "StoredRun", "load_runs", "table", "tree_from_json", "tree_to_json"]

#: The status of a stored run whose rows end before the run did: its writer died, or gave up.
INTERRUPTED = "interrupted"


class StoredRun(Run):
    """A run read back from a store: a `Run` that has ended, plus its stored name and times.

    Attributes
    ----------
    id
        The run's id in the store (``runs.id``).
    name
        Its name (`Store`'s ``name``, or ``run <id>``), exactly as given (any ``str``).
    started_at, ended_at
        ISO 8601 UTC times it started and ended (``ended_at`` None if its end was never filed:
        its process is still writing it, or died).
    status
        The `Run` statuses as stored; ``"running"`` for a run its writer is still at, and
        ``"interrupted"`` for one whose rows in the file end before the run did: its writer
        died before ending it (``kill -9``, an out-of-memory kill, a kernel restart), or gave
        up filing it (`incomplete` says why). Its rows up to then are here. The file itself
        still says ``running`` for a run whose writer died (a reader never writes): see
        `_liveness.writer_gone` for how it is told apart.
    statuses
        Per lane, how the computation ended where its writer filed the end (so a run whose
        filing was given up may read ``interrupted`` with lanes ``converged``).
    incomplete
        Why the file lacks rows of this run when its writer gave up filing it (the disk was
        full, say), or holds none that can be read (leaves an older ``jhw.log`` filed as Python
        objects: the run is listed without rows, the file's other runs read as ever), else
        None.

    The file keeps no chunk arrivals (the store's format stays as it is, and its blocks are
    filed in batches, not per chunk): `arrivals` and `times` spread the rows evenly from
    ``started_at`` to ``ended_at`` (a run's resolution, not a chunk's).
    """

    def __init__(
        self,
        db_id: int,
        layout: Layout,
        line: sqlite3.Row,
        file: tuple[int, int] | None = None,
    ) -> None:
        # ``file``: the (device, inode) of the store read, to ask whether this process is
        # still filing the run (`_liveness.filing_here`).
        super().__init__(db_id, layout)
        keys = line.keys()
        exact = line["name_json"] if "name_json" in keys else None
        name = schema.from_exact(json.loads(exact)) if exact else line["name"]
        self.name: str = name if name is not None else f"run {db_id}"
        self.name_given = name is not None
        self.started_at: str | None = line["started"]
        self.ended_at: str | None = line["ended"]
        self.incomplete: str | None = line["incomplete"] if "incomplete" in keys else None
        self._stored_status: str = line["status"]
        if (self._stored_status == "running" and _writer_gone(line, file)) or self.incomplete:
            self._stored_status = INTERRUPTED
        # Run measures time on the perf_counter clock: keep the stored duration.
        elapsed = line["elapsed"]
        self.ended = time.perf_counter()
        self.started = self.ended - (elapsed if elapsed is not None else 0.0)

    @property
    def status(self) -> str:
        return self._stored_status

    def arrivals(self) -> tuple[np.ndarray, np.ndarray]:
        """Row 0 at ``started_at``, the last row at ``ended_at`` (see the class docstring);
        none before a row was filed, one pair while its end is not."""
        rows = max(self.counts, default=0)
        start, end = _epoch(self.started_at), _epoch(self.ended_at)
        pairs = [(1, start), (rows, end)] if rows > 1 and end is not None else [(rows, start)]
        pairs = [(r, t) for r, t in pairs if r > 0 and t is not None]
        out = (np.array([r for r, _ in pairs], np.int64), np.array([t for _, t in pairs], float))
        for a in out:
            a.setflags(write=False)
        return out

    def to_pandas(self) -> Any:
        """The rows as a `pandas.DataFrame`: ``step`` (and ``lane`` under vmap), then one column
        per scalar leaf and one per component of the others (``x[0]``, ...); see `table`."""
        import pandas as pd

        return pd.DataFrame(table(self))

    def __repr__(self) -> str:
        return (
            f"StoredRun(id={self.id}, name={self.name!r}, status={self.status!r}, "
            f"rows={self.counts}, fields={self.layout.names})"
        )


def load_runs(path: str | os.PathLike[str]) -> list[StoredRun]:
    """Every run in the store at ``path``, oldest first, read in one consistent snapshot.

    Each is a `StoredRun`: rows per lane exactly as streamed (every dtype, vector leaves),
    ``history()`` in the form of ``History.to_numpy()``, ``to_pandas()``. A run that was being
    written when its process died has the rows of every chunk filed before, from step 0, and
    status ``"interrupted"``. Rows a `Store` of this process received are filed first (see
    `Store.flush`). A store on a read-only location (a mounted archive, another user's
    folder) is read too. Files of older format versions are read as they are.

    Raises
    ------
    FileNotFoundError
        If there is no file at ``path`` (or no directory).
    ValueError
        If the file is not a store (another application's, truncated, damaged) or of a newer
        format version than this package reads; the message says which.
    """
    path = Path(os.fsdecode(path))
    if not path.exists():
        raise FileNotFoundError(f"No store at {str(path)!r}: write one with jhw.Store(path).")
    flush_stores(path)
    ident = file_ident(path)  # before the read: a run this process files is known by it
    version, conn, folder = files.open_reader(path)
    if conn is None or version is None:  # (both or neither: no store there yet)
        return []
    conn.row_factory = sqlite3.Row
    try:
        conn.execute("BEGIN")  # one snapshot: a writer going on meanwhile is not half seen
        try:
            lines = conn.execute("SELECT * FROM runs ORDER BY id").fetchall()
            return [_load(conn, line, version, ident) for line in lines]
        finally:
            conn.execute("COMMIT")
    finally:
        conn.close()
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


def layout_of(line: sqlite3.Row) -> Layout:
    """The `Layout` a ``runs`` line describes (any version)."""
    names = tuple(schema.from_exact(n) for n in json.loads(line["fields"]))
    max_steps = int(line["max_steps"])
    keys = line.keys()  # (`in line` would look among a Row's values)
    counters = line["step_counters"] if "step_counters" in keys else None
    return Layout(
        names,
        tuple(tuple(s) for s in json.loads(line["shapes"])),
        tuple(json.loads(line["dtypes"])),
        tree_from_json(line["tree"], len(names)),
        max_steps,
        max_steps + 1,
        None,
        tuple(json.loads(counters)) if counters else (),
    )


def _load(
    conn: sqlite3.Connection, line: sqlite3.Row, version: int, ident: tuple[int, int] | None
) -> StoredRun:
    layout = layout_of(line)
    run = StoredRun(int(line["id"]), layout, line, ident)
    rows = RunWriter(run)  # the reader's: nothing else writes a run read back
    rows.lanes(line["lanes"])
    lanes = len(run.counts)
    objects = [n for n, d in zip(layout.names, layout.dtypes, strict=True) if d == "object"]
    if objects:
        # Filed by a jhw.log that took a dict or None (before it refused them): what was
        # filed are a process's pointers, not values. The run is listed without rows and the
        # other runs of the file are read as ever.
        run.incomplete = (
            f"its leaves {objects} were filed as Python objects (pointers, not values) by an "
            "older jhw.log, so its rows cannot be read"
        )
        run._stored_status = INTERRUPTED
        specs = zip(layout.shapes, layout.dtypes, strict=True)
        empty = [np.zeros((lanes, 0, *shape), dtype) for shape, dtype in specs]
        rows.install(empty, np.zeros(lanes, np.int64), [INTERRUPTED] * lanes)
        return run
    if version in schema.LEGACY:
        arrays, counts = legacy.read(conn, line, layout, lanes)
    else:
        (most,) = conn.execute(
            "SELECT max(first + nrows) FROM blocks WHERE run=?", (run.id,)
        ).fetchone()
        most = int(most or 0)
        byteorder = line["byteorder"]
        arrays, counts = blocks.read(conn, run.id, layout, lanes, most, byteorder)
    statuses = json.loads(line["statuses"]) if line["statuses"] else None
    rows.install(arrays, counts, statuses or [run.status] * lanes)
    return run


def _epoch(iso: str | None) -> float | None:
    """Seconds since the epoch of a stored ISO 8601 time (UTC when it names no zone)."""
    if not iso:
        return None
    when = datetime.datetime.fromisoformat(iso)
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.UTC)
    return when.timestamp()


def _writer_gone(line: sqlite3.Row, ident: tuple[int, int] | None) -> bool:
    """Whether the writer of this ``running`` line of the file ``ident`` died (see
    `writer_gone`); a version 0 file has no ``writer`` / ``heartbeat`` columns."""
    keys = line.keys()

    def get(key: str) -> Any:
        return line[key] if key in keys else None

    pid = get("pid")
    return writer_gone(
        get("host"),
        int(pid) if pid is not None else None,
        get("writer"),
        get("heartbeat"),
        ident,
        int(line["id"]),
    )


def table(run: Run) -> dict[str, np.ndarray]:
    """Columns of ``run``: ``step`` (``lane`` under vmap), one per scalar leaf, one per
    component of the others (``x[0]``, ...); lanes one after the other.

    Every leaf gets its column: a name already taken (``step``, ``lane``, or a component's
    ``x[0]`` that is also a leaf's name) gets ``_value`` appended until it is free.
    """
    batched = run.lanes is not None
    lanes = list(range(len(run.counts))) if run.counts else [0]
    columns: dict[str, list[np.ndarray]] = {"step": []}
    if batched:
        columns["lane"] = []
    names = []  # (column, leaf, component or None)
    taken = {"step", "lane"}
    for leaf, (name, shape) in enumerate(zip(run.layout.names, run.layout.shapes, strict=True)):
        parts = [(name, None)] if shape == () else [
            (f"{name}[{','.join(map(str, np.unravel_index(k, shape)))}]", k)
            for k in range(int(np.prod(shape, dtype=np.int64)))
        ]  # fmt: skip
        for col, k in parts:
            while col in taken:
                col += "_value"
            taken.add(col)
            names.append((col, leaf, k))
            columns[col] = []
    for lane in lanes:
        rows = run.lane_rows(lane)
        n = len(rows[0]) if rows else 0
        columns["step"].append(np.arange(n))
        if batched:
            columns["lane"].append(np.full(n, lane))
        for col, leaf, k in names:
            columns[col].append(rows[leaf] if k is None else rows[leaf].reshape(n, -1)[:, k])
    return {key: np.concatenate(parts) for key, parts in columns.items()}


# ----------------------------------------------------------------- record structure
class _Leaf:
    """A placeholder leaf while a record's structure is written out."""


def tree_to_json(treedef: Any) -> str | None:
    """The record's structure as JSON (dicts, lists, tuples, None, leaves), or None when it
    holds other nodes (named tuples, dataclasses: they are read back as a flat tuple)."""
    import jax

    def enc(x: Any) -> Any:
        if isinstance(x, _Leaf):
            return "L"
        if x is None:
            return "N"
        if type(x) is dict and all(type(k) is str for k in x):
            return {"d": [[schema.exact(k), enc(v)] for k, v in x.items()]}
        if type(x) in (list, tuple):
            return {"l" if type(x) is list else "t": [enc(v) for v in x]}
        raise TypeError(type(x))

    try:
        example = jax.tree_util.tree_unflatten(
            treedef, [_Leaf() for _ in range(treedef.num_leaves)]
        )
        return schema.dumps(enc(example))
    except TypeError:
        return None


def tree_from_json(text: str | None, leaves: int) -> Any:
    """The treedef `tree_to_json` wrote (a flat tuple, or one leaf, where it wrote None)."""
    import jax

    def dec(x: Any) -> Any:
        if x == "L":
            return 0
        if x == "N":
            return None
        if "d" in x:
            return {schema.from_exact(k): dec(v) for k, v in x["d"]}
        items = [dec(v) for v in x.get("l", x.get("t", []))]
        return items if "l" in x else tuple(items)

    if text is None:
        return jax.tree_util.tree_structure(0 if leaves == 1 else (0,) * leaves)
    return jax.tree_util.tree_structure(dec(json.loads(text)))
