"""Filing a `Store`'s runs into its file: the part of the store that touches SQLite.

Host runtime. Runs only on the package's worker, one task at a time per store (the store's own
key), never in a loop's host call. Each call of `Writer.file` commits, in one transaction, what
a run has that the file lacks: its line (at the first call), its new rows as blocks, its end.
What a failure means is decided here:

- another program holds the file's write lock: `Locked` is raised after a short wait, and the
  store tries again later (the rows wait in the run, in memory);
- the disk is full, the file vanished or was replaced, it turned read-only or damaged: the
  store gives up on that run (`Filing.gave_up` says why), marks it in the file where it still
  can (``runs.incomplete``), and files new runs afresh.
"""

from __future__ import annotations

import contextlib
import datetime
import os
import socket
import sqlite3
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from ..runtime import Run
from . import _blocks as blocks
from . import _file as files
from . import _schema as schema
from ._liveness import note_filing, writer_token
from ._migrate import upgrade
from ._stored import tree_to_json

__all__ = ["Filing", "Locked", "Writer", "utc_now"]


#: Runs of up to this many lanes have ``runs.rows`` written at every commit.
_ROWS_LANES = 64


class Locked(Exception):
    """Another program holds the file's write lock: try again later."""


class Filing:
    """What a store knows of one run it files: its line in the file and the rows filed."""

    __slots__ = ("__weakref__", "db_id", "end", "end_filed", "ended", "gave_up", "gen",
                 "marked", "name", "rows_at", "run", "started", "written")  # fmt: skip

    def __init__(self, run: Run, name: str | None, started: str) -> None:
        self.run, self.name, self.started = run, name, started
        self.db_id: int | None = None  # its id in the file, once its line is committed
        self.gen = 0  # which opening of the file that id belongs to
        self.written = np.zeros(0, np.int64)  # rows committed, per lane
        self.rows_at = 0.0  # when ``runs.rows`` was last written (monotonic)
        self.ended = False
        self.end_filed = False
        self.end: tuple[str, list[str], float, str] | None = None  # status, statuses, s, at
        self.gave_up: str | None = None  # why no more rows of it are filed
        self.marked = False  # the file says so (runs.incomplete)

    @property
    def filing(self) -> bool:
        """Whether its line in the file says ``running`` because this process is at it: its
        end not filed, and not given up (`_liveness.filing_here` asks)."""
        return not self.end_filed and self.gave_up is None

    @property
    def done(self) -> bool:
        """Nothing more to file: ended and filed whole, or given up and marked at its end."""
        if self.gave_up is not None:
            return self.ended
        return self.ended and self.db_id is not None and self.filed_all() and self.end_filed

    def filed_all(self) -> bool:
        counts = self.run.counts
        return len(self.written) == len(counts) and bool((self.written == counts).all())

    def rows_filed(self) -> int:
        return int(self.written.sum())


class Writer:
    """A store's connection and its transactions (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn: sqlite3.Connection | None = None
        self._ident: tuple[int, int] | None = None  # the file's (device, inode) when opened
        self._gen = 0
        self._pid = os.getpid()
        self._lock = threading.Lock()  # the connection: the worker's task vs `close`

    def close(self) -> None:
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None

    def file(self, f: Filing) -> None:
        """Commit what ``f``'s run has that the file lacks; raises `Locked`; on any other
        failure gives up on the run (``f.gave_up``)."""
        with self._lock:
            try:
                if f.gave_up is not None:
                    if not f.marked and f.ended:
                        self._mark(f)
                    return
                conn = self._connection()
                if f.db_id is not None and f.gen != self._gen:
                    raise _Vanished
                self._commit(conn, f)
            except Locked:
                raise
            except sqlite3.OperationalError as e:
                if "locked" in str(e) or "busy" in str(e):
                    raise Locked from None
                self._give_up(f, _cause(e))
            except _Vanished:
                f.gave_up = (
                    "the file was deleted or replaced while the run was being filed, so its "
                    "rows are not on disk (new runs go to a new file at the same path)"
                )
            except (sqlite3.DatabaseError, OSError, files.StoreFileError) as e:
                self._give_up(f, _cause(e))

    # ------------------------------------------------------------------ internals
    def _connection(self) -> sqlite3.Connection:
        if self._pid != os.getpid():  # a forked child: the parent's connection is not ours
            self._conn, self._pid = None, os.getpid()
        if self._conn is not None:
            try:
                st = os.stat(self.path)
                same = (st.st_dev, st.st_ino) == self._ident
            except FileNotFoundError:
                same = False
            if same:
                return self._conn
            # Deleted or replaced: the runs filed into it are lost with it (given up: see
            # `file`); the runs from now on go to a new file at the path.
            self._reset()
        conn = files.connect(self.path, upgrade)
        st = os.stat(self.path)
        self._conn, self._ident = conn, (st.st_dev, st.st_ino)
        self._gen += 1
        return conn

    def _reset(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
        self._conn = None

    def _commit(self, conn: sqlite3.Connection, f: Filing) -> None:
        run = f.run
        ended, end = f.ended, f.end  # before the counts: an end seen means its rows are in
        counts = np.asarray(run.counts, np.int64)
        written = np.zeros(len(counts), np.int64)
        written[: len(f.written)] = f.written[: len(counts)]
        now = utc_now()
        conn.execute("BEGIN IMMEDIATE")
        try:
            db_id = f.db_id
            if db_id is None:
                db_id = self._insert_line(conn, f, now)
                # Before the line is committed: a reader in this process that sees it
                # ``running`` with its own pid knows it for its own (`_liveness`).
                if self._ident is not None:
                    note_filing(self._ident, db_id, f)
            todo = blocks.groups(written, counts)
            if todo:
                conn.executemany(blocks.INSERT, blocks.encode(run, db_id, todo))
            line: dict[str, Any] = {
                "steps": max(int(counts.max()) - 1, 0) if len(counts) else 0,
                "lanes": run.lanes,
                "heartbeat": now,
                "status": "running",
            }
            # The rows per lane as JSON: a few KB a commit for thousands of lanes, so for many
            # lanes once a second and at the end (readers take the rows from the blocks).
            clock = time.monotonic()
            rows_now = ended or len(counts) <= _ROWS_LANES or clock - f.rows_at >= 1.0
            if rows_now:
                line["rows"] = schema.dumps(counts.tolist())
            if ended and end is not None:
                status, statuses, elapsed, at = end
                line.update(status=status, statuses=schema.dumps(statuses), ended=at)
                line["elapsed"] = elapsed
            sets = ",".join(f"{k}=?" for k in line)
            conn.execute(f"UPDATE runs SET {sets} WHERE id=?", [*line.values(), db_id])
            conn.execute("COMMIT")
        except BaseException:
            _rollback(conn)
            raise
        f.db_id, f.gen, f.written = db_id, self._gen, counts
        if rows_now:
            f.rows_at = clock
        f.end_filed = ended

    def _insert_line(self, conn: sqlite3.Connection, f: Filing, now: str) -> int:
        layout = f.run.layout
        specs = zip(layout.dtypes, layout.shapes, strict=True)
        codecs = [schema.codec(d, tuple(s))["codec"] for d, s in specs]
        line = {
            "name": None if f.name is None else schema.display(f.name),
            "name_json": None if f.name is None else schema.dumps(schema.exact(f.name)),
            "started": f.started,
            "status": "running",
            "max_steps": layout.max_steps,
            "fields": schema.dumps([schema.exact(n) for n in layout.names]),
            "step_counters": schema.dumps(list(layout.step_counters)),
            "columns": schema.dumps([schema.display(n) for n in layout.names]),
            "dtypes": schema.dumps(list(layout.dtypes)),
            "shapes": schema.dumps([list(s) for s in layout.shapes]),
            "kinds": schema.dumps(codecs),
            "tree": tree_to_json(layout.treedef),
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "writer": _token(),
            "heartbeat": now,
            "byteorder": sys.byteorder,
        }
        keys, marks = ",".join(line), ",".join("?" * len(line))
        cur = conn.execute(f"INSERT INTO runs ({keys}) VALUES ({marks})", list(line.values()))
        db_id = int(cur.lastrowid or 0)
        if f.name is None:
            conn.execute("UPDATE runs SET name=? WHERE id=?", (f"run {db_id}", db_id))
        conn.executemany(
            "INSERT INTO fields VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            blocks.field_lines(db_id, layout),
        )
        return db_id

    def _give_up(self, f: Filing, cause: str) -> None:
        f.gave_up = cause
        self._mark(f)

    def _mark(self, f: Filing) -> None:
        """Say in the file why its rows of ``f``'s run stop (and how it ended, if it did);
        best effort: with the disk full this may fail too, and is tried again at the end."""
        if f.db_id is None or f.gen != self._gen or self._conn is None:
            f.marked = True  # nothing of it is in this file to mark
            return
        conn = self._conn
        line: dict[str, Any] = {"incomplete": f.gave_up}
        if f.ended and f.end is not None:
            status, statuses, elapsed, at = f.end
            line.update(status=status, statuses=schema.dumps(statuses), ended=at, elapsed=elapsed)
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                sets = ",".join(f"{k}=?" for k in line)
                conn.execute(f"UPDATE runs SET {sets} WHERE id=?", [*line.values(), f.db_id])
                conn.execute("COMMIT")
            except BaseException:
                _rollback(conn)
                raise
            f.marked = f.ended
        except sqlite3.Error:
            pass


class _Vanished(Exception):
    """The file this writer opened is no longer at its path."""


def _rollback(conn: sqlite3.Connection) -> None:
    # SQLite rolls back by itself on some errors (a full disk): a second ROLLBACK would fail
    # with "no transaction is active" and hide the real cause.
    if conn.in_transaction:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")


def _cause(e: BaseException) -> str:
    """What went wrong, in words a user understands, with SQLite's own words after."""
    text = str(e)
    low = text.lower()
    if isinstance(e, files.StoreFileError):
        return f"the file is no longer a store it can write ({text})"
    if "full" in low:
        return f"the disk is full, or the file reached its size limit (SQLite: {text})"
    if "readonly" in low or "read-only" in low:
        return f"the file or its folder became read-only (SQLite: {text})"
    if "unable to open" in low:
        return f"the file cannot be opened: its folder may have been removed (SQLite: {text})"
    if "malformed" in low or "not a database" in low:
        return f"the file is damaged (SQLite: {text})"
    if "i/o" in low:
        return f"the disk failed to write it (SQLite: {text})"
    return f"{type(e).__name__}: {text}"


_TOKEN: tuple[int, str | None] | None = None


def _token() -> str | None:
    global _TOKEN
    if _TOKEN is None or _TOKEN[0] != os.getpid():
        _TOKEN = (os.getpid(), writer_token(os.getpid()))
    return _TOKEN[1]


def utc_now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat()
