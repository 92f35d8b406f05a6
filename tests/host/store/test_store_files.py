"""What is at a store's path: a `Store` refuses at once, naming the path and the fix, anything it
must not write to, and leaves it byte for byte as it was (times included); `load_runs` reads a
store where it may not write (a read-only mount), its write-ahead log included.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import jaxhist_widget as jhw
from jaxhist_widget._host.store import _schema as schema

from ...helpers.stores import CHILD_ENV, Stream, record_layout


def small_store(path, name="one", values=(1.0, 2.0, 3.0)):
    with jhw.Store(path, name=name) as store:
        run = Stream(record_layout(["v"], ["float32"]))
        run.send([np.array([values], np.float32)])
        run.end()
    return store


def snapshot(folder):
    """Every file of ``folder``: bytes and modification time."""
    return {
        p.name: (p.read_bytes() if p.is_file() else None, p.stat().st_mtime_ns)
        for p in sorted(folder.iterdir())
    }


def foreign_db(path):
    with sqlite3.connect(path) as conn:  # another application's, with a table named runs
        conn.execute("CREATE TABLE runs (id INTEGER PRIMARY KEY, what TEXT)")
        conn.execute("CREATE TABLE notes (body TEXT)")
        conn.execute("INSERT INTO runs (what) VALUES ('mine')")
    conn.close()


def truncated_store(path):
    store = small_store(path)
    store.close()  # folds the write-ahead log into the file
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def newer_store(path):
    store = small_store(path)
    store.close()
    with sqlite3.connect(path) as conn:
        conn.execute(f"PRAGMA user_version={schema.VERSION + 1}")
    conn.close()


@pytest.mark.parametrize(
    ("case", "error", "says"),
    [
        ("text", ValueError, "is not an SQLite file"),
        ("foreign", ValueError, "another application"),
        ("truncated", ValueError, "truncated"),
        ("newer", ValueError, "newer than this version"),
    ],
)
def test_a_file_that_is_not_a_store_is_refused_untouched(tmp_path, case, error, says):
    path = tmp_path / "runs.db"
    {
        "text": lambda: path.write_text("x,y\n1,2\n"),
        "foreign": lambda: foreign_db(path),
        "truncated": lambda: truncated_store(path),
        "newer": lambda: newer_store(path),
    }[case]()
    before = snapshot(tmp_path)
    with pytest.raises(error, match=says) as raised:
        jhw.Store(path)
    assert str(path) in str(raised.value) and "nothing was written" in str(raised.value)
    with pytest.raises(error, match=says):
        jhw.load_runs(path)
    assert snapshot(tmp_path) == before  # bytes and times, and no file beside it


def test_a_missing_directory_or_a_directory_is_refused_with_the_fix(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"does not exist\. Create it first"):
        jhw.Store(tmp_path / "no" / "such" / "runs.db")
    (tmp_path / "runs.db").mkdir()
    with pytest.raises(IsADirectoryError, match=r"is a directory: give a file path"):
        jhw.Store(tmp_path / "runs.db")
    assert list((tmp_path / "runs.db").iterdir()) == []


def test_an_empty_file_becomes_a_store(tmp_path):
    path = tmp_path / "runs.db"
    path.touch()  # what tempfile.NamedTemporaryFile or `touch` leaves
    small_store(path)
    assert [r.lane_rows(0)[0].tolist() for r in jhw.load_runs(path)] == [[1.0, 2.0, 3.0]]


# ------------------------------------------------------------------- read-only places
READ = """
import sys, jaxhist_widget as jhw
runs = jhw.load_runs(sys.argv[1])
print([(r.name, r.lane_rows(0)[0].tolist()) for r in runs])
"""


def read_only(folder, path):
    """``load_runs(path)`` in a fresh process that cannot write ``folder``: a read-only bind
    mount of it (in a user namespace: as root, permissions alone do not stop a write), or
    without write permission for another user."""
    code = textwrap.dedent(READ)
    if os.geteuid() != 0:
        os.chmod(folder, 0o555)
        try:
            return subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                                  text=True, env=CHILD_ENV, timeout=120)  # fmt: skip
        finally:
            os.chmod(folder, 0o755)
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare to make a read-only place as root")
    script = (f'mount --bind "{folder}" "{folder}" && mount -o remount,bind,ro "{folder}" && '
              f'exec "{sys.executable}" -c "$0" "{path}"')  # fmt: skip
    out = subprocess.run(["unshare", "-rm", "sh", "-c", script, code], capture_output=True,
                         text=True, env=CHILD_ENV, timeout=120)  # fmt: skip
    if "mount" in out.stderr and out.returncode:
        pytest.skip(f"no read-only mount here: {out.stderr[:200]}")
    return out


@pytest.mark.slow
@pytest.mark.parametrize("log", ["folded", "left"])
def test_a_store_in_a_read_only_place_is_read(tmp_path, log):
    """Folded: the writer closed the file (no write-ahead log). Left: a copy taken while the
    writer had it open, its last run only in the write-ahead log (as a killed writer leaves)."""
    source, archive = tmp_path / "live", tmp_path / "archive"
    source.mkdir()
    archive.mkdir()
    first = small_store(source / "runs.db", "first")
    second = small_store(source / "runs.db", "second", (4.0, 5.0))
    if log == "folded":
        first.close()
        second.close()  # the last connection to close folds the log into the file
    wal = source / "runs.db-wal"
    assert wal.exists() == (log == "left")
    for p in source.iterdir():
        if not p.name.endswith("-shm"):
            shutil.copy(p, archive / p.name)
    before = snapshot(archive)
    out = read_only(archive, archive / "runs.db")
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[('first', [1.0, 2.0, 3.0]), ('second', [4.0, 5.0])]"
    assert snapshot(archive) == before
    first.close()
    second.close()


@pytest.mark.slow
def test_an_empty_database_in_a_read_only_place_has_no_runs(tmp_path):
    """An SQLite file with no table yet in WAL mode, copied with its write-ahead log while its
    writer had it open, reads as no runs where it may not be written too (it raised "no such
    table: runs" there: the file is read through a copy, whose emptiness went unchecked)."""
    source, archive = tmp_path / "live", tmp_path / "archive"
    source.mkdir()
    archive.mkdir()
    conn = sqlite3.connect(source / "runs.db")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE t (x)")
    conn.execute("DROP TABLE t")
    conn.commit()
    for p in source.iterdir():
        if not p.name.endswith("-shm"):
            shutil.copy(p, archive / p.name)
    conn.close()
    assert (archive / "runs.db-wal").exists()
    out = read_only(archive, archive / "runs.db")
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]"


def test_a_read_only_file_is_refused_for_writing_and_read(tmp_path):
    path = tmp_path / "runs.db"
    small_store(path).close()
    os.chmod(path, 0o444)
    try:
        if os.geteuid() != 0:  # root writes anyway: the check is by permission bits
            with pytest.raises(PermissionError, match="cannot be written"):
                jhw.Store(path)
        assert [r.name for r in jhw.load_runs(path)] == ["one"]
    finally:
        os.chmod(path, 0o644)


def test_a_store_opened_while_another_process_closes_it_is_not_called_damaged(
    tmp_path, monkeypatch
):
    """A writer closing a store removes its log; a check opening the file just then read a
    "disk I/O error", and a `Store` (or the first filing of a run) called the file damaged:
    with four processes starting on one new store, one of them crashed or lost a run (read
    back "interrupted"). A failure is now tried again before the file is called damaged."""
    from jaxhist_widget._host.store import _file as _store_file

    with jhw.Store(tmp_path / "runs.db"):  # a store, with a run in it
        jhw.while_loop(lambda x: x > 1.0, lambda x: x / 2, 10.0, max_steps=9)
    real, tries = _store_file._open_inspect, []

    def flaky(path, timeout, fails):
        tries.append(path)
        if len(tries) <= fails:
            raise sqlite3.OperationalError("disk I/O error")
        return real(path, timeout)

    monkeypatch.setattr(_store_file, "_open_inspect", lambda p, t: flaky(p, t, fails=2))
    assert _store_file.inspect(tmp_path / "runs.db", writing=True) is not None
    assert len(tries) == 3
    tries.clear()  # an error that lasts: the file is damaged, said after a few tries
    monkeypatch.setattr(_store_file, "_open_inspect", lambda p, t: flaky(p, t, fails=99))
    with pytest.raises(_store_file.StoreFileError, match=r"damaged.*disk I/O error"):
        jhw.Store(tmp_path / "runs.db")
    assert len(tries) == _store_file._ERROR_TRIES
