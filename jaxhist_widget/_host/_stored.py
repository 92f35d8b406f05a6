"""Runs read back from a `Store` file: `load_runs` and `StoredRun`.

Host runtime. A `StoredRun` is a `Run` (the same reading API: `history`, `lane_rows`, `counts`,
`lanes`, `status`), filled from the file, so whatever draws or exports a run takes it as is.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path
from typing import Any

import numpy as np

from .._wire import Layout, np_dtype
from . import _store_schema as schema
from ._run import Run

__all__ = ["INTERRUPTED", "StoredRun", "load_runs", "tree_from_json", "tree_to_json"]

#: The status of a stored run whose writer died before ending it.
INTERRUPTED = "interrupted"


class StoredRun(Run):
    """A run read back from a store: a `Run` that has ended, plus its stored name and times.

    Attributes
    ----------
    id
        The run's id in the store (``runs.id``).
    name
        Its name (`Store`'s ``name``, or ``run <id>``).
    started_at, ended_at
        ISO 8601 UTC times it started and ended (``ended_at`` None if it never ended: its
        process is still writing it, or died).
    status
        The `Run` statuses as stored; ``"running"`` for a run its writer is still at, and
        ``"interrupted"`` for one whose writer died before ending it (``kill -9``, an
        out-of-memory kill, a kernel restart): its rows up to the last filed chunk are here.
        The file itself still says ``running`` for such a run (a reader never writes): see
        `_store_schema.writer_gone` for how it is told apart.
    """

    def __init__(self, db_id: int, layout: Layout, line: sqlite3.Row) -> None:
        super().__init__(db_id, layout)
        self.name: str = line["name"] or f"run {db_id}"
        self.name_given = line["name"] is not None
        self.started_at: str | None = line["started"]
        self.ended_at: str | None = line["ended"]
        self._stored_status: str = line["status"]
        if self._stored_status == "running" and _writer_gone(line):
            self._stored_status = INTERRUPTED
        # Run measures time on the perf_counter clock: keep the stored duration.
        elapsed = line["elapsed"]
        self.ended = time.perf_counter()
        self.started = self.ended - (elapsed if elapsed is not None else 0.0)

    @property
    def status(self) -> str:
        return self._stored_status

    def to_pandas(self) -> Any:
        """The rows as a `pandas.DataFrame`: ``step`` (and ``lane`` under vmap), then one column
        per scalar leaf and one per component of the others (``x[0]``, ...)."""
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
    status ``"interrupted"``.

    Raises
    ------
    FileNotFoundError
        If there is no file at ``path``.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"No store at {str(path)!r}: write one with jhw.Store(path).")
    conn = sqlite3.connect(str(path), timeout=schema.BUSY_TIMEOUT_S, isolation_level=None)
    conn.row_factory = sqlite3.Row
    try:
        conn.execute("BEGIN")  # one snapshot: a writer going on meanwhile is not half seen
        try:
            lines = conn.execute("SELECT * FROM runs ORDER BY id").fetchall()
            return [_load(conn, line) for line in lines]
        finally:
            conn.execute("COMMIT")
    finally:
        conn.close()


def _load(conn: sqlite3.Connection, line: sqlite3.Row) -> StoredRun:
    names = tuple(json.loads(line["fields"]))
    shapes = tuple(tuple(s) for s in json.loads(line["shapes"]))
    dtypes = tuple(json.loads(line["dtypes"]))
    columns, kinds = json.loads(line["columns"]), json.loads(line["kinds"])
    treedef = tree_from_json(line["tree"], len(names))
    max_steps = int(line["max_steps"])
    keys = line.keys()
    counters = line["step_counters"] if "step_counters" in keys else None  # version 3
    layout = Layout(
        names,
        shapes,
        dtypes,
        treedef,
        max_steps,
        max_steps + 1,
        None,
        tuple(json.loads(counters)) if counters else (),
    )
    run = StoredRun(int(line["id"]), layout, line)
    lanes = line["lanes"]
    run._ensure_lanes(lanes)
    cols = ",".join(map(schema.quote, columns))
    fetched = conn.execute(
        f"SELECT lane, step, {cols} FROM rows WHERE run=? ORDER BY lane, step", (run.id,)
    ).fetchall()
    nans: dict[tuple[int, int, str], bytes] = {
        (lane, step, col): bits
        for lane, step, col, bits in conn.execute(
            "SELECT lane, step, col, bits FROM nan_bits WHERE run=?", (run.id,)
        )
    }
    per_lane: dict[int, list[tuple[Any, ...]]] = {}
    for r in fetched:
        per_lane.setdefault(r[0], []).append(tuple(r))
    for lane in range(len(run.counts)):
        got = per_lane.get(lane, [])
        # Rows from step 0 up to the first missing one (a store only ever has them contiguous).
        n = next((i for i, r in enumerate(got) if r[1] != i), len(got))
        if n == 0:
            continue
        leaves = []
        for j, (col, kind, shape, dtype) in enumerate(
            zip(columns, kinds, shapes, dtypes, strict=True)
        ):
            values = [r[2 + j] for r in got[:n]]
            leaf = _decode(kind, values, shape, np_dtype(dtype))
            for (nl, step, nc), bits in nans.items():
                if nl == lane and nc == col and step < n:
                    leaf[step] = np.frombuffer(bits, leaf.dtype)[0]
            leaves.append(leaf[None])
        run.append_lanes([lane], 0, leaves)
    statuses = json.loads(line["statuses"]) if line["statuses"] else None
    run.statuses = statuses or [run.status] * len(run.counts)
    return run


def _writer_gone(line: sqlite3.Row) -> bool:
    """Whether the writer of this ``running`` line died (see `_store_schema.writer_gone`);
    a version 1 file has no ``writer`` / ``heartbeat`` columns."""
    keys = line.keys()

    def get(key: str) -> Any:
        return line[key] if key in keys else None

    pid = get("pid")
    return schema.writer_gone(
        get("host"), int(pid) if pid is not None else None, get("writer"), get("heartbeat")
    )


def _decode(kind: str, values: list[Any], shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    if kind == "int":
        return np.array(values, np.int64).astype(dtype)
    if kind == "float":
        return np.array(values, np.float64).astype(dtype)  # NULL (a NaN) comes back as NaN
    flat = np.frombuffer(b"".join(values), dtype)
    return flat.reshape(len(values), *shape).copy()


def table(run: Run) -> dict[str, np.ndarray]:
    """Columns of ``run``: ``step`` (``lane`` under vmap), one per scalar leaf, one per
    component of the others; lanes one after the other."""
    batched = run.lanes is not None
    parts = []
    for lane in range(len(run.counts)) if run.counts else [0]:
        rows = run.lane_rows(lane)
        n = len(rows[0])
        cols: dict[str, np.ndarray] = {"step": np.arange(n)}
        if batched:
            cols["lane"] = np.full(n, lane)
        for name, shape, leaf in zip(run.layout.names, run.layout.shapes, rows, strict=True):
            name = f"{name}_value" if name in ("step", "lane") else name
            if shape == ():
                cols[name] = leaf
            else:
                flat = leaf.reshape(n, -1)
                for k in range(flat.shape[1]):
                    cols[f"{name}[{','.join(map(str, np.unravel_index(k, shape)))}]"] = flat[:, k]
        parts.append(cols)
    return {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}


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
            return {"d": [[k, enc(v)] for k, v in x.items()]}
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
            return {k: dec(v) for k, v in x["d"]}
        items = [dec(v) for v in x.get("l", x.get("t", []))]
        return items if "l" in x else tuple(items)

    if text is None:
        return jax.tree_util.tree_structure(0 if leaves == 1 else (0,) * leaves)
    return jax.tree_util.tree_structure(dec(json.loads(text)))
