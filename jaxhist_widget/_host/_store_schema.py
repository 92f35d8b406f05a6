"""The on-disk format of a `Store`: one SQLite file, readable without this package.

Host runtime, stdlib and numpy only. Three tables and a view::

    runs(id, name, started, ended, elapsed, status, statuses, steps, rows, lanes, max_steps,
         fields, columns, dtypes, shapes, kinds, tree, host, pid, writer, heartbeat,
         step_counters)
    rows(run, lane, step, <one column per leaf>)      -- one row per (run, lane, step)
    nan_bits(run, lane, step, col, bits)               -- exact bytes of every NaN value
    history                                            -- rows joined with their run's name/status

``runs`` holds one line per run: ``fields``, ``columns``, ``dtypes``, ``shapes``, ``kinds``,
``statuses``, ``rows`` (rows per lane) and ``step_counters`` (the leaves that count the steps,
which a plot leaves out by default) are JSON lists, ``tree`` the record's structure (JSON,
to rebuild rows in the form of ``History.to_numpy()``), ``lanes`` is NULL for a run without
vmap (its rows have ``lane = 0``), ``steps`` the most steps any lane took.

A run's ``status`` is ``running`` until its writer ends it. A writer killed mid-run (``kill -9``,
an out-of-memory kill) never does, so the file alone cannot tell it from a live one; ``host``,
``pid``, ``writer`` (the process's identity on its host: boot id and start time, so a reused pid
is not taken for the writer) and ``heartbeat`` (UTC time of its last commit) let a reader tell
(`writer_gone`): `load_runs` reports such a run as ``interrupted``. The file keeps ``running``.
``PRAGMA user_version`` is the format's version (`VERSION`); a file of an older version is
brought up to date by the first writer that opens it (columns added, nothing rewritten), and
read as it is meanwhile.

A leaf's column holds, per `kind`:

``int``
    bool and integer scalars up to 64 bits signed / 32 bits unsigned, as SQLite INTEGER.
``float``
    real floating scalars (float64 .. float4, bfloat16, float8 variants) as SQLite REAL: every
    such value is exactly a float64. SQLite has no NaN (it stores NULL), so a NaN is NULL there
    and its exact bytes are in ``nan_bits``.
``blob``
    everything else (vectors, complex, uint64): each row's element bytes, C order, in the
    machine's byte order, dtype and shape from ``runs``.

``rows`` is a WITHOUT ROWID table: its rows are kept in key order in one B-tree, so filing a row
updates one tree rather than a table and its key's index (about half the cost per row), and a
run's rows are read in order without a sort.

The leaf columns are declared without a type on purpose: a column typed REAL turns -0.0 into
0.0 and 2.0 into the integer 2 on disk; untyped, SQLite stores exactly the value given.
"""

from __future__ import annotations

import datetime
import json
import os
import socket
import sqlite3
import time

import numpy as np

__all__ = [
    "INDEX",
    "SCHEMA",
    "STALE_S",
    "VERSION",
    "column_names",
    "connect",
    "ensure_columns",
    "kind_of",
    "writer_gone",
    "writer_token",
]

#: The format's version (``PRAGMA user_version``): 1 had no ``writer`` / ``heartbeat``, 2 no
#: ``step_counters``.
VERSION = 3
#: A running run written on another host whose writer committed nothing for this long reads
#: as interrupted (its process cannot be looked up from here). With ``stream_every="auto"``
#: chunks come every fraction of a second, so only a run whose chunk of rows takes longer than
#: this to compute is misread.
STALE_S = 600.0

#: The columns every rows line has before the leaves' (a leaf named so gets a ``_value`` suffix).
INDEX = ("run", "lane", "step")

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT,
    started TEXT,
    ended TEXT,
    elapsed REAL,
    status TEXT NOT NULL,
    statuses TEXT,
    steps INTEGER NOT NULL DEFAULT 0,
    rows TEXT,
    lanes INTEGER,
    max_steps INTEGER,
    fields TEXT NOT NULL,
    columns TEXT NOT NULL,
    dtypes TEXT NOT NULL,
    shapes TEXT NOT NULL,
    kinds TEXT NOT NULL,
    tree TEXT,
    host TEXT,
    pid INTEGER,
    writer TEXT,
    heartbeat TEXT,
    step_counters TEXT
);
CREATE TABLE IF NOT EXISTS rows (
    run INTEGER NOT NULL REFERENCES runs(id),
    lane INTEGER NOT NULL,
    step INTEGER NOT NULL,
    PRIMARY KEY (run, lane, step)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS nan_bits (
    run INTEGER NOT NULL,
    lane INTEGER NOT NULL,
    step INTEGER NOT NULL,
    col TEXT NOT NULL,
    bits BLOB NOT NULL,
    PRIMARY KEY (run, lane, step, col)
);
CREATE VIEW IF NOT EXISTS history AS
    SELECT runs.name AS run_name, runs.status AS run_status, rows.*
    FROM rows JOIN runs ON runs.id = rows.run;
"""

#: How long a writer waits for another process's transaction before giving up on one chunk
#: (the chunk stays queued in the sink and goes with the next one).
BUSY_TIMEOUT_S = 60.0


def connect(path: str) -> sqlite3.Connection:
    """Open (and create if need be) the store at ``path``: WAL, schema in place.

    Autocommit mode: each writer opens its own ``BEGIN IMMEDIATE`` transaction per chunk.
    """
    conn = sqlite3.connect(
        path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
    )
    # WAL: readers never block the writer, and a commit is one append to the log, so a process
    # killed at any point leaves every committed chunk readable. synchronous=NORMAL skips the
    # fsync per commit: a killed process loses nothing committed (the OS has the pages); only
    # a power cut may lose the last commits.
    _retry(lambda: conn.execute("PRAGMA journal_mode=WAL"))
    conn.execute("PRAGMA synchronous=NORMAL")

    def create() -> None:
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in SCHEMA.split(";"):
                if statement.strip():
                    conn.execute(statement)
            _migrate(conn)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    _retry(create)
    return conn


def _migrate(conn: sqlite3.Connection) -> None:
    """Bring a file of an older version up to `VERSION` (caller holds a write transaction)."""
    if conn.execute("PRAGMA user_version").fetchone()[0] >= VERSION:
        return
    have = {r[1] for r in conn.execute("PRAGMA table_info(runs)")}
    for col in ("writer", "heartbeat", "step_counters"):  # versions 2, 3
        if col not in have:
            conn.execute(f"ALTER TABLE runs ADD COLUMN {col} TEXT")
    conn.execute(f"PRAGMA user_version={VERSION}")


def _retry(fn, tries: int = 50) -> None:  # type: ignore[no-untyped-def]
    # Switching a fresh file to WAL, or two processes creating the schema at once, can answer
    # "database is locked" without waiting on the busy handler: try again shortly.
    for i in range(tries):
        try:
            fn()
            return
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or i == tries - 1:
                raise
            time.sleep(0.02 * (i + 1))


def kind_of(dtype: str, shape: tuple[int, ...]) -> str:
    """How a leaf is stored: ``int``, ``float`` or ``blob`` (see the module docstring)."""
    if shape != ():
        return "blob"
    if dtype == "bool" or (dtype.startswith(("int", "uint")) and dtype != "uint64"):
        return "int"
    if dtype.startswith(("float", "bfloat")) and np.dtype(dtype).kind != "c":
        return "float"
    return "blob"


def column_names(names: tuple[str, ...]) -> list[str]:
    """One rows column per leaf name, unique in SQLite's sense (case-insensitive), never an
    index column's name."""
    taken = {c.lower() for c in INDEX}
    out = []
    for name in names:
        col = f"{name}_value" if name.lower() in INDEX else name
        base, k = col, 2
        while col.lower() in taken:
            col, k = f"{base}_{k}", k + 1
        taken.add(col.lower())
        out.append(col)
    return out


def ensure_columns(conn: sqlite3.Connection, columns: list[str]) -> None:
    """Add to ``rows`` the columns it lacks (caller holds a write transaction)."""
    have = {r[1].lower() for r in conn.execute("PRAGMA table_info(rows)")}
    for col in columns:
        if col.lower() not in have:
            conn.execute(f"ALTER TABLE rows ADD COLUMN {quote(col)}")
            have.add(col.lower())


def quote(name: str) -> str:
    """``name`` as an SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def dumps(value: object) -> str:
    return json.dumps(value, separators=(",", ":"))


# ------------------------------------------------------------------------ liveness
def writer_token(pid: int) -> str | None:
    """The identity of process ``pid`` on this host: boot id and start time (clock ticks since
    boot), which no later process with the same pid shares; None where ``/proc`` is missing
    (not Linux) or has no such process."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            boot = f.read().strip()
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    # fields[0] is field 3 of proc(5) (the state), so the start time (field 22) is fields[19].
    return None if fields[0] in ("Z", "X") else f"{boot}:{fields[19]}"


def writer_gone(
    host: str | None, pid: int | None, token: str | None, heartbeat: str | None
) -> bool:
    """Whether the process that wrote a ``running`` run is certainly gone (killed mid-run).

    On this host: its pid is not alive (or a zombie), or is now another process (its
    `writer_token` differs). On another host: its last commit (``heartbeat``) is older than
    `STALE_S`. A run of a version 1 file from another host (no heartbeat) is never judged gone.
    """
    if host == socket.gethostname() and pid is not None:
        if pid == os.getpid():
            return False
        if not _alive(pid):
            return True
        if token is None:
            return False
        now = writer_token(pid)
        return now is None or now != token
    if heartbeat is None:
        return False
    try:
        beat = datetime.datetime.fromisoformat(heartbeat)
    except ValueError:
        return False
    age = datetime.datetime.now(datetime.UTC) - beat
    return age.total_seconds() > STALE_S


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    except OSError:
        return False
    try:  # a zombie (dead, not yet reaped by its parent) answers kill(0) too
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return True  # no /proc (not Linux): kill(0) said alive
