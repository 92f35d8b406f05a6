"""Bringing a store file to the current format: a new file's tables, or an older file's runs
moved from its ``rows`` table (a column per leaf) into blocks.

Host runtime. Run by a writer's connection (`_file.connect`) inside its write transaction,
so another process sees the file either as it was or upgraded, never half way. Readers never
upgrade: they read older files as they are (`_legacy`). A process of an older version of
the package still writing the file when it is upgraded fails to file (it reports it) and its
runs stay as filed so far.
"""

from __future__ import annotations

import sqlite3
import sys

import numpy as np

from ..runtime import RunWriter
from . import _blocks as blocks
from . import _legacy as legacy
from . import _schema as schema
from ._stored import StoredRun, layout_of

__all__ = ["upgrade"]


def upgrade(conn: sqlite3.Connection) -> None:
    """Make the file of ``conn`` a current store (caller holds a write transaction)."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version == schema.VERSION:
        return  # another writer did it while this one waited for the lock
    tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "runs" in tables and version in schema.LEGACY:
        _from_rows(conn)
    else:
        schema.create(conn)
    conn.execute(f"PRAGMA user_version={schema.VERSION}")


def _from_rows(conn: sqlite3.Connection) -> None:
    """Move every run of a version 0-3 file into blocks, then drop the old tables and view."""

    have = {r[1] for r in conn.execute("PRAGMA table_info(runs)")}
    for col in schema.ADDED:
        if col not in have:
            conn.execute(f"ALTER TABLE runs ADD COLUMN {col} TEXT")
    conn.execute("DROP VIEW IF EXISTS history")
    schema.create(conn)
    conn.row_factory = sqlite3.Row
    try:
        lines = conn.execute("SELECT * FROM runs ORDER BY id").fetchall()
    finally:
        conn.row_factory = None
    for line in lines:
        layout = layout_of(line)
        run = StoredRun(int(line["id"]), layout, line)
        rows = RunWriter(run)
        rows.lanes(line["lanes"])
        arrays, counts = legacy.read(conn, line, layout, len(run.counts))
        rows.install(arrays, counts, list(run.statuses))
        written = np.zeros(len(counts), np.int64)
        todo = blocks.groups(written, np.asarray(counts, np.int64))
        conn.executemany(
            "INSERT INTO fields VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            blocks.field_lines(run.id, layout),
        )
        conn.executemany(blocks.INSERT, blocks.encode(run, run.id, todo))
        specs = zip(layout.dtypes, layout.shapes, strict=True)
        codecs = [schema.codec(d, tuple(s))["codec"] for d, s in specs]
        conn.execute(
            "UPDATE runs SET kinds=?, columns=?, byteorder=?, name_json=? WHERE id=?",
            (
                schema.dumps(codecs),
                schema.dumps([schema.display(n) for n in layout.names]),
                sys.byteorder,
                schema.dumps(line["name"]) if line["name"] is not None else None,
                run.id,
            ),
        )
    conn.execute("DROP TABLE IF EXISTS nan_bits")
    conn.execute("DROP TABLE IF EXISTS rows")
