"""What is at a store's path, and opening it: checks that never write, a reader that works on a
read-only location, a writer's connection.

Host runtime, stdlib only. `inspect` looks at a path without changing it (the header read as
bytes, the schema through SQLite's ``immutable`` mode, which takes no lock and writes no side
file), so a path that is not a store is refused with its bytes and times untouched.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from . import _schema as schema

__all__ = ["BUSY_S", "StoreFileError", "connect", "inspect", "open_reader"]

#: How long one write transaction waits for another program's lock before the writer steps
#: back (and tries again later, off the loop: see `_writer`).
BUSY_S = 0.1
#: How long a reader waits for a writer switching the file's journal (a few ms at most).
READ_BUSY_S = 5.0

_MAGIC = b"SQLite format 3\x00"
#: How often `inspect` tries a file that reads as locked, or fails otherwise, and how long it
#: waits between tries (see there).
_LOCKED_TRIES, _ERROR_TRIES, _RETRY_S = 20, 5, 0.05
#: What every store's ``runs`` table has, in all versions.
_RUNS_COLUMNS = {"id", "name", "status", "fields", "dtypes", "shapes", "max_steps", "lanes"}


class StoreFileError(ValueError):
    """The path holds something a `Store` must not write to (nor `load_runs` read)."""


def inspect(path: Path, *, writing: bool) -> int | None:
    """The store format version of the file at ``path``; None when there is no store yet (no
    file, an empty file, or an SQLite file without tables): one is created there on writing.

    Raises, naming the path and what to do, and changing nothing, when the directory is missing,
    the path is a directory, the file is not SQLite, is truncated, is another application's
    database or a store of a newer format; when ``writing``, also when it cannot be written.
    """
    if not _check_path(path, writing):
        return None
    # A writer folding its log in holds the file for a moment, and one closing the file removes
    # its log: a check that opens the file just then reads "locked", or a "disk I/O error" (seen
    # with four processes starting on one new store). So a failure is tried again, a lock for
    # up to a second, any other error for a quarter of one, before the file is called damaged.
    locked = other = 0
    while True:
        try:
            conn = _open_inspect(path, BUSY_S)
            try:
                schema_seen = _schema(conn)
            finally:
                conn.close()
            return _version(path, *schema_seen)
        except sqlite3.DatabaseError as e:
            if "locked" in str(e):
                locked += 1
                if locked >= _LOCKED_TRIES:
                    where = repr(str(path))
                    raise sqlite3.OperationalError(
                        f"{where} stayed locked while it was being checked"
                    ) from None
            else:
                other += 1
                if other >= _ERROR_TRIES:
                    raise _damaged(path, e) from None
            time.sleep(_RETRY_S)


def _check_path(path: Path, writing: bool) -> bool:
    """Check what is at ``path`` without SQLite; False when there is no file or an empty one."""
    where = repr(str(path))
    parent = path.parent
    if not parent.is_dir():
        raise FileNotFoundError(
            f"jaxhist_widget store {where}: the directory {str(parent)!r} does not exist. "
            "Create it first (os.makedirs) or give a path in an existing directory."
        )
    if path.is_dir():
        raise IsADirectoryError(
            f"jaxhist_widget store {where} is a directory: give a file path, e.g. "
            f"{str(path / 'runs.db')!r}."
        )
    if not path.exists():
        if writing and not os.access(parent, os.W_OK):
            raise PermissionError(
                f"jaxhist_widget store {where}: the directory {str(parent)!r} is not writable. "
                "Give a path in a writable directory."
            )
        return False
    if writing and not (os.access(path, os.W_OK) and os.access(parent, os.W_OK)):
        raise PermissionError(
            f"jaxhist_widget store {where} cannot be written (a read-only file or directory): "
            "give another path to write runs; jhw.load_runs(path) reads this one."
        )
    size = path.stat().st_size
    if size == 0:
        return False
    with open(path, "rb") as f:
        _check_header(path, f.read(100), size)
    return True


def _check_header(path: Path, head: bytes, size: int) -> None:
    where = repr(str(path))
    if not head.startswith(_MAGIC):
        raise StoreFileError(
            f"{where} is not an SQLite file (it starts with {head[:16]!r}), so not a "
            "jaxhist_widget store; nothing was written to it. Give a new path (a store is "
            "created there) or an existing store's."
        )
    if len(head) < 100:
        raise StoreFileError(
            f"{where} is a truncated SQLite file ({size:,} bytes, less than its 100-byte "
            "header); nothing was written to it. Restore it from a copy, or give a new path."
        )
    page = int.from_bytes(head[16:18], "big")
    page = 65536 if page == 1 else page
    pages = int.from_bytes(head[28:32], "big")
    # The page count in the header is valid when its change counter matches (SQLite >= 3.7).
    if head[24:28] == head[92:96] and pages and size < pages * page:
        raise StoreFileError(
            f"{where} is a truncated SQLite file ({size:,} bytes where its header says "
            f"{pages * page:,}); nothing was written to it. Restore it from a copy, or give "
            "a new path."
        )


def _classify(path: Path, conn: sqlite3.Connection) -> int | None:
    """The store version of the SQLite file open as ``conn`` (None: no tables yet), or raise
    if it is not a store (an SQLite error as damage, unless it says "locked")."""
    try:
        schema_seen = _schema(conn)
    except sqlite3.OperationalError as e:
        if "locked" in str(e):
            raise
        raise _damaged(path, e) from None
    except sqlite3.DatabaseError as e:
        raise _damaged(path, e) from None
    return _version(path, *schema_seen)


def _schema(conn: sqlite3.Connection) -> tuple[set[str], int, set[str]]:
    """The tables, the ``user_version`` and the ``runs`` columns of the file open as ``conn``
    (SQLite's errors as raised)."""
    tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    runs = {r[1] for r in conn.execute("PRAGMA table_info(runs)")}
    return tables, version, runs


def _version(path: Path, tables: set[str], version: int, runs: set[str]) -> int | None:
    """`_classify` of a schema read (`_schema`)."""
    where = repr(str(path))
    tables -= {"sqlite_sequence"}
    if not tables and version == 0:
        return None  # an empty database: a store can be made in it
    data = "rows" if version in schema.LEGACY else "blocks"
    if "runs" not in tables or data not in tables or not runs >= _RUNS_COLUMNS:
        if "runs" in tables and version > schema.VERSION:
            raise _newer(path, version)
        shown = ", ".join(sorted(tables)[:6]) + (", ..." if len(tables) > 6 else "")
        raise StoreFileError(
            f"{where} is an SQLite database of another application (tables: {shown}), not a "
            "jaxhist_widget store; nothing was written to it. Give a new path (a store is "
            "created there) or an existing store's."
        )
    if version > schema.VERSION:
        raise _newer(path, version)
    return int(version)


def _damaged(path: Path, e: Exception) -> StoreFileError:
    return StoreFileError(
        f"{str(path)!r} is a damaged or truncated SQLite file (SQLite: {e}); nothing was "
        "written to it. Restore it from a copy, or give a new path."
    )


def _newer(path: Path, version: int) -> StoreFileError:
    return StoreFileError(
        f"{str(path)!r} is a jaxhist_widget store of format version {version}, newer than this "
        f"version of the package reads and writes (up to {schema.VERSION}); nothing was written "
        "to it. Upgrade jaxhist_widget (pip install -U jaxhist_widget), or give a new path."
    )


def _open_inspect(path: Path, timeout: float) -> sqlite3.Connection:
    # immutable=1: no lock, no -wal/-shm file, nothing written. A write-ahead log beside the
    # file may hold what was committed last (the schema itself, for a new file): then open
    # read-only through SQLite's usual locking to see it (a reader of a read-only place goes
    # through `open_reader` instead).
    wal = Path(f"{path}-wal")
    if wal.exists() and wal.stat().st_size > 0:
        return _uri(path, "mode=ro", timeout)
    return _uri(path, "immutable=1", 0.0)


def _uri(path: Path, query: str, timeout: float) -> sqlite3.Connection:
    conn = sqlite3.connect(
        f"{path.absolute().as_uri()}?{query}",
        uri=True,
        timeout=timeout,
        isolation_level=None,
        check_same_thread=False,
    )
    conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # opened for real
    return conn


# ---------------------------------------------------------------------------- reading
def open_reader(path: Path) -> tuple[int | None, sqlite3.Connection | None, Path | None]:
    """The format version of the store at ``path``, a read-only connection to it (None when
    there is no store yet), and a temporary folder to remove after, if one was needed.
    Raises as `inspect` does for what is not a store.

    In a folder this process may not write (a read-only mount, another user's files), SQLite
    cannot make the ``-shm`` file a store in WAL mode needs to be read: without a write-ahead
    log the file is read as immutable; with one (its writer was killed before folding it in),
    the file and its log are copied to a temporary folder and read there, so no committed row
    is missed.
    """
    if not _check_path(path, writing=False):
        return None, None, None
    # What it is, first, without a side file (a reader's connection to a WAL file makes its
    # -shm and -wal): nothing beside a file that is not a store.
    try:
        conn = _open_inspect(path, READ_BUSY_S)
    except sqlite3.OperationalError as e:  # a log in a read-only place: classified below
        if "locked" in str(e):
            raise
    else:
        try:
            if _classify(path, conn) is None:
                return None, None, None
        finally:
            conn.close()
    conn, folder = _reader(path)
    try:
        version = _classify(path, conn)
    except BaseException:
        conn.close()
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
        raise
    if version is None:  # no tables yet, as above (its log kept it from being seen there)
        conn.close()
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
        return None, None, None
    return version, conn, folder


def _reader(path: Path) -> tuple[sqlite3.Connection, Path | None]:
    try:
        return _uri(path, "mode=ro", READ_BUSY_S), None
    except sqlite3.OperationalError as e:
        if "locked" in str(e):
            raise
    except sqlite3.DatabaseError as e:
        raise _damaged(path, e) from None
    wal = Path(f"{path}-wal")
    if not (wal.exists() and wal.stat().st_size > 0):
        return _uri(path, "immutable=1", 0.0), None
    folder = Path(tempfile.mkdtemp(prefix="jhw-store-"))
    try:
        shutil.copyfile(path, folder / "runs.db")
        shutil.copyfile(wal, folder / "runs.db-wal")
        return _uri(folder / "runs.db", "mode=rw", READ_BUSY_S), folder
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise


# ---------------------------------------------------------------------------- writing
def connect(path: Path, upgrade: Callable[[sqlite3.Connection], None]) -> sqlite3.Connection:
    """A writer's connection to the store at ``path``, in WAL mode, created or brought up to
    date by ``upgrade`` (`_migrate.upgrade`, handed in: the migration reads runs, and the
    reader imports this module) if need be; raises `sqlite3.OperationalError` ("locked") while
    another program holds the file's lock, and `StoreFileError` if the file changed into
    something that is not a store since the `Store` was made."""
    version = inspect(path, writing=True)
    conn = sqlite3.connect(str(path), timeout=BUSY_S, isolation_level=None, check_same_thread=False)
    try:
        # WAL: readers never block the writer, and a commit is one append to the log, so a
        # process killed at any point leaves every committed transaction readable.
        # synchronous=NORMAL skips the fsync per commit: a killed process loses nothing
        # committed (the OS has the pages); only a power cut may lose the last commits.
        if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        # Fold the log into the file every 32 MB rather than SQLite's 4 MB: each fold syncs the
        # file to disk, which at thousands of lanes cost more than filing the rows did
        # (benchmarks/store.py, filing cost).
        conn.execute("PRAGMA wal_autocheckpoint=8192")
        if version != schema.VERSION:
            conn.execute("BEGIN IMMEDIATE")
            try:
                upgrade(conn)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
    except BaseException:
        conn.close()
        raise
    return conn
