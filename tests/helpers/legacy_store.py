"""Store files as format versions 0 to 3 wrote them (a ``rows`` table with a column per leaf,
NaNs as NULL with their bytes in ``nan_bits``), to check that they still open.

Written here with plain SQL, following those versions' writer: a test of today's reader must
not depend on the writer it replaced.
"""

from __future__ import annotations

import json
import sqlite3

import numpy as np

_RUNS = """CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT, started TEXT,
ended TEXT, elapsed REAL, status TEXT NOT NULL, statuses TEXT, steps INTEGER NOT NULL DEFAULT 0,
rows TEXT, lanes INTEGER, max_steps INTEGER, fields TEXT NOT NULL, columns TEXT NOT NULL,
dtypes TEXT NOT NULL, shapes TEXT NOT NULL, kinds TEXT NOT NULL, tree TEXT, host TEXT,
pid INTEGER{added})"""
_REST = [
    """CREATE TABLE rows (run INTEGER NOT NULL REFERENCES runs(id), lane INTEGER NOT NULL,
    step INTEGER NOT NULL, PRIMARY KEY (run, lane, step)) WITHOUT ROWID""",
    """CREATE TABLE nan_bits (run INTEGER NOT NULL, lane INTEGER NOT NULL,
    step INTEGER NOT NULL, col TEXT NOT NULL, bits BLOB NOT NULL,
    PRIMARY KEY (run, lane, step, col))""",
    """CREATE VIEW history AS SELECT runs.name AS run_name, runs.status AS run_status,
    rows.* FROM rows JOIN runs ON runs.id = rows.run""",
]
_ADDED = {0: "", 1: "", 2: ", writer TEXT, heartbeat TEXT", 3: ", writer TEXT, heartbeat TEXT, step_counters TEXT"}  # fmt: skip  # noqa: E501


def _kind(dtype: np.dtype, shape: tuple[int, ...]) -> str:
    name = dtype.name
    if shape != ():
        return "blob"
    if name == "bool" or (name.startswith(("int", "uint")) and name != "uint64"):
        return "int"
    if name.startswith(("float", "bfloat")):
        return "float"
    return "blob"


def write_legacy(path, version: int, runs: list[dict]) -> None:
    """A store file of format ``version`` holding ``runs``: each a dict with ``name``,
    ``status``, ``lanes`` (None: unbatched) and ``leaves`` ({name: array (lanes or 1, rows,
    *shape)}, as a flat record of those leaves in that order)."""
    conn = sqlite3.connect(path)
    conn.execute(_RUNS.format(added=_ADDED[version]))
    for statement in _REST:
        conn.execute(statement)
    columns_made: set[str] = set()
    for run_id, run in enumerate(runs, 1):
        names = list(run["leaves"])
        arrays = [np.asarray(run["leaves"][n]) for n in names]
        shapes = [list(a.shape[2:]) for a in arrays]
        kinds = [_kind(a.dtype, a.shape[2:]) for a in arrays]
        cols = [f"{n}_value" if n in ("run", "lane", "step") else n for n in names]
        for col in cols:
            if col.lower() not in columns_made:
                conn.execute(f'ALTER TABLE rows ADD COLUMN "{col}"')
                columns_made.add(col.lower())
        lanes, rows = arrays[0].shape[:2]
        line = {
            "name": run["name"],
            "status": run["status"],
            "statuses": json.dumps([run["status"]] * lanes),
            "steps": rows - 1,
            "rows": json.dumps([rows] * lanes),
            "lanes": run["lanes"],
            "max_steps": rows + 5,
            "fields": json.dumps(names),
            "columns": json.dumps(cols),
            "dtypes": json.dumps([a.dtype.name for a in arrays]),
            "shapes": json.dumps(shapes),
            "kinds": json.dumps(kinds),
            "tree": json.dumps({"t": ["L"] * len(names)}) if len(names) > 1 else None,
            "host": "elsewhere",
            "pid": 1,
        }
        keys = ",".join(line)
        conn.execute(f"INSERT INTO runs ({keys}) VALUES ({','.join('?' * len(line))})",
                     list(line.values()))  # fmt: skip
        marks = ",".join("?" * (3 + len(cols)))
        quoted = ",".join(f'"{c}"' for c in cols)
        for lane in range(lanes):
            for step in range(rows):
                values = []
                for col, kind, a in zip(cols, kinds, arrays, strict=True):
                    v = a[lane, step]
                    if kind == "int":
                        values.append(int(v))
                    elif kind == "float":
                        f = float(np.asarray(v).astype(np.float64))
                        if np.isnan(f):
                            values.append(None)
                            bits = np.asarray(v).tobytes()
                            conn.execute("INSERT INTO nan_bits VALUES (?,?,?,?,?)",
                                         (run_id, lane, step, col, bits))  # fmt: skip
                        else:
                            values.append(f)
                    else:
                        values.append(np.ascontiguousarray(v).tobytes())
                conn.execute(f"INSERT INTO rows (run, lane, step, {quoted}) VALUES ({marks})",
                             [run_id, lane, step, *values])  # fmt: skip
    conn.execute(f"PRAGMA user_version={version}")
    conn.commit()
    conn.close()
