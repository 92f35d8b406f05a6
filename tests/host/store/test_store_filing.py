"""Filing never loses a run and never holds up the loop: every run a store receives is filed
whole however many are open at once; SQLite runs only on the worker, never in the loop's host
calls; a file locked by another program delays filing, not the loop, and filing resumes with
every row; a full disk or a deleted file is said once, marked in the file, and never touches the
computation.
"""

from __future__ import annotations

import sqlite3
import subprocess
import threading
import time
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxhist_widget as jhw
from jaxhist_widget._host.store import _file as files
from jaxhist_widget._host.store import _store

from ...helpers.signals import press
from ...helpers.stores import CHILD_ENV, Stream, child, record_layout


class Inline(jhw.Sink):
    """A sink that sees each chunk in the loop's own host call (as a `LivePlot` does), and
    notes which threads those calls ran on."""

    rows_can_wait = False

    def __init__(self) -> None:
        super().__init__()
        self.threads: set[int] = set()

    def on_start(self, run):
        self.threads.add(threading.get_ident())

    def on_rows(self, run, lanes):
        self.threads.add(threading.get_ident())


def nested(outer_steps):
    """The nesting of docs/guide/limits.md: an outer loop whose every step runs an inner loop (its
    own run)."""

    def inner(x):
        return jhw.while_loop(lambda c: c < x + 3.0, lambda c: c + 1.0, x, max_steps=8)[0]

    def outer(x0):
        return jhw.while_loop(
            lambda c: c[0] < outer_steps,
            lambda c: (c[0] + 1, inner(c[1]) * 0.5),
            (jnp.int32(0), x0),
            max_steps=outer_steps,
        )

    return jax.jit(outer)


def test_every_run_of_a_nested_loop_is_filed_whole(tmp_path):
    path = tmp_path / "runs.db"
    with jhw.Store(path) as store, jhw.Recorder() as rec:
        _, hist = nested(1200)(jnp.float32(1.0))
    runs = store.runs()
    assert len(runs) == len(rec.runs) == 1201
    [outer] = [r for r in runs if r.counts == [1201]]
    assert outer.status == rec.runs[0].status == "converged" and outer.incomplete is None
    np.testing.assert_array_equal(outer.history()[0], np.arange(1201))
    np.testing.assert_array_equal(outer.history()[1], hist.to_numpy()[1])
    inner = [r for r in runs if r is not outer]
    assert all(r.status == "converged" and r.counts == [4] for r in inner)


@pytest.mark.usefixtures("sinks_told_in_the_loops_call")
def test_no_sqlite_runs_in_the_loops_host_calls(tmp_path, monkeypatch):
    statements: list[tuple[int, str]] = []
    connect = files.connect

    def traced(path, upgrade):
        conn = connect(path, upgrade)
        conn.set_trace_callback(lambda sql: statements.append((threading.get_ident(), sql)))
        return conn

    monkeypatch.setattr(files, "connect", traced)
    inline = Inline()
    with jhw.Store(tmp_path / "runs.db"), inline:
        nested(50)(jnp.float32(1.0))
        jax.vmap(nested(20))(jnp.ones(3, jnp.float32))
    assert len(statements) > 100
    assert inline.threads and not inline.threads & {t for t, _ in statements}


def locked(path):
    """Another program's connection holding ``path``'s write lock (an open transaction)."""
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    return other


def test_a_locked_file_delays_filing_not_the_loop_and_filing_resumes_whole(tmp_path, monkeypatch):
    path = tmp_path / "runs.db"
    store = jhw.Store(path)
    with store:  # the file exists (a first run filed), then another program locks it
        jhw.while_loop(lambda x: x < 3.0, lambda x: x + 1.0, 0.0, max_steps=5)
    other = locked(path)
    monkeypatch.setattr(_store, "LOCK_WARN_S", 0.5)
    store.exit_wait = 1.0
    loop = jax.jit(
        lambda x: jhw.while_loop(
            lambda c: c[0] < 3000,
            lambda c: (c[0] + 1, c[1] * 0.999),
            (jnp.int32(0), x),
            max_steps=3000,
            stream_every=100,
        )
    )
    done: dict[str, object] = {}

    def run():  # in a thread: a loop that hung on the lock would not hang the test
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            t = time.perf_counter()
            with store, Inline():
                done["loop_s"] = time.perf_counter() - t
                _, done["hist"] = loop(jnp.float32(1.0))
                done["loop_s"] = time.perf_counter() - t
                time.sleep(1.0)  # still locked: past LOCK_WARN_S
            done["block_s"] = time.perf_counter() - t
            # (the Store's own: catch_warnings records every thread's, and a background thread
            # of an earlier test may warn meanwhile)
            done["warnings"] = [str(w.message) for w in caught if "Store:" in str(w.message)]

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(60)
    try:
        assert not thread.is_alive(), "the loop or its block waited on the locked file"
        assert done["block_s"] < 1.0 + 1.0 + 1.0  # the loop, the sleep, slack: no exit_wait
        said = done["warnings"]
        assert len(said) == 1 and "holds the write lock" in said[0], said  # once
        assert all(str(path) in w for w in said)
        assert [r.counts for r in jhw.load_runs(path)] == [[4]]  # nothing more filed yet
    finally:
        other.execute("COMMIT")  # the other program lets go
        other.close()
    assert store.flush(30)
    _, run2 = jhw.load_runs(path)
    assert run2.status == "converged" and run2.counts == [3001]
    np.testing.assert_array_equal(run2.history()[0], np.arange(3001))
    np.testing.assert_array_equal(run2.history()[1], done["hist"].to_numpy()[1])


def test_leaving_a_block_never_waits_for_a_locked_file_and_every_row_is_filed_after(tmp_path):
    # Another program holds the file's write lock through the whole block: the block ends as
    # soon as its loop does (not after exit_wait), says once that the rows wait, and they are
    # filed, every one, when the lock goes. A Python loop's block (jhw.log) and a while_loop's.
    path = tmp_path / "runs.db"
    store = jhw.Store(path)  # exit_wait: the default 10 s
    with store:  # the file exists, then another program locks it
        jhw.log(x=0.0)
    other = locked(path)
    loop = jax.jit(
        lambda x: jhw.while_loop(
            lambda c: c[0] < 20_000,
            lambda c: (c[0] + 1, c[1] * 0.999),
            (jnp.int32(0), x),
            max_steps=20_000,
        )
    )
    loop(jnp.float32(1.0))  # compiled
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with store:
                _, hist = loop(jnp.float32(1.0))
                t = time.perf_counter()
            while_s = time.perf_counter() - t
            with store:
                for i in range(5000):
                    jhw.log(x=float(i))
                t = time.perf_counter()
            log_s = time.perf_counter() - t
            assert jhw.load_runs(path)[0].counts == [1]  # nothing more filed, no wait either
            read_s = time.perf_counter() - t - log_s
        said = [str(w.message) for w in caught if "Store:" in str(w.message)]
        assert while_s < 1.0 and log_s < 1.0 and read_s < 1.0, (while_s, log_s, read_s)
        assert len(said) == 1 and "holds the write lock" in said[0], said
        assert "wait in memory" in said[0] and str(path) in said[0]
    finally:
        other.execute("COMMIT")  # the other program lets go
        other.close()
    assert store.flush(30)
    _, first, second = jhw.load_runs(path)
    assert first.status == second.status == "converged"
    np.testing.assert_array_equal(first.history()[1], hist.to_numpy()[1])
    assert second.history()["x"].tolist() == [float(i) for i in range(5000)]


def test_a_full_disk_is_said_once_marked_and_never_touches_the_run(tmp_path, monkeypatch):
    path = tmp_path / "runs.db"
    connect = files.connect

    def small_disk(p, upgrade):  # SQLite's own page limit: "database or disk is full", for real
        conn = connect(p, upgrade)
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count={pages + 30}")
        return conn

    monkeypatch.setattr(files, "connect", small_disk)
    big = jax.jit(
        lambda x: jhw.while_loop(
            lambda c: c[0] < 20_000,
            lambda c: (c[0] + 1, c[1] * 0.999),
            (jnp.int32(0), x),
            max_steps=20_000,
            stream_every=500,
        )
    )
    store = jhw.Store(path, name="big")

    class Paced(jhw.Sink):  # each chunk filed before the next comes: the disk fills mid-run
        rows_can_wait = False

        def on_rows(self, run, lanes):
            store.flush(10)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with store, Paced(), jhw.Recorder() as rec:
            _, hist = big(jnp.float32(1.0))
            big(jnp.float32(2.0))  # the next run: tried afresh, fails the same
    said = [str(w.message) for w in caught if "Store" in str(w.message)]
    assert len(said) == 1, said
    assert str(path) in said[0] and "the disk is full" in said[0] and "big" in said[0]
    assert "rollback" not in said[0]
    np.testing.assert_array_equal(hist.to_numpy()[0], np.arange(20_001))  # the run: whole
    assert rec.runs[0].counts == [20_001] and rec.runs[0].status == "converged"
    runs = store.runs()
    assert runs and all(r.status == "interrupted" for r in runs)
    first = runs[0]
    assert "disk is full" in first.incomplete and first.statuses == ["converged"]
    n = first.counts[0]
    assert 0 < n < 20_001
    np.testing.assert_array_equal(first.history()[0], np.arange(n))  # a prefix, no gap


@pytest.mark.usefixtures("sinks_told_in_the_loops_call")
def test_a_file_deleted_mid_run_is_said_and_the_next_run_goes_to_a_new_file(tmp_path):
    path = tmp_path / "runs.db"
    store = jhw.Store(path, name="first")

    class Deleter(jhw.Sink):
        rows_can_wait = False

        deleted = False

        def on_rows(self, run, lanes):
            if run.counts[0] >= 40 and not self.deleted:
                assert store.flush(10) and path.exists()  # some rows filed
                for p in tmp_path.iterdir():
                    p.unlink()
                self.deleted = True

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with store, Deleter():
            _, hist = jhw.while_loop(
                lambda x: x < 100.0, lambda x: x + 1.0, 0.0, max_steps=200, stream_every=10
            )
    said = [str(w.message) for w in caught if "Store" in str(w.message)]
    assert len(said) == 1 and str(path) in said[0] and "deleted or replaced" in said[0], said
    assert len(hist.to_numpy()) == 101
    store.name = "second"
    with store:
        jhw.while_loop(lambda x: x < 3.0, lambda x: x + 1.0, 0.0, max_steps=5)
    assert [(r.name, r.counts) for r in jhw.load_runs(path)] == [("second", [4])]


def test_many_runs_open_at_once_are_all_filed(tmp_path):
    """1,500 runs open together (their loops in flight at once), each filed whole."""
    path = tmp_path / "runs.db"
    layout = record_layout(["v"], ["float32"])
    with jhw.Store(path) as store:
        runs = [Stream(layout) for _ in range(1500)]
        for k, run in enumerate(runs):
            run.send([np.full((1, 2), k, np.float32)])
        for k, run in enumerate(runs):
            run.send([np.full((1, 1), -k, np.float32)])
            run.end()
    back = store.runs()
    assert len(back) == 1500
    for k, run in enumerate(back):
        assert run.status == "converged" and run.lane_rows(0)[0].tolist() == [k, k, -k]


CTRL_C = """
import sys, time, jaxhist_widget as jhw
store = jhw.Store(sys.argv[1])
store.exit_wait = 60.0
print("ready", flush=True)
sys.stdin.readline()  # the parent locked the file
t = time.monotonic()
with store:  # its end does not wait for the locked file
    jhw.while_loop(lambda c: c < 500.0, lambda c: c + 1.0, 0.0, max_steps=600,
                   stream_every=50)
print(f"loop done {time.monotonic() - t:.1f}", flush=True)
t = time.monotonic()
try:
    store.flush()  # waits for the lock to go, as long as it takes
except KeyboardInterrupt:
    print(f"interrupted after {time.monotonic() - t:.1f} s", flush=True)
sys.stdin.readline()  # the parent let go of the file; Python's end files the rest
"""


@pytest.mark.slow
def test_ctrl_c_ends_the_wait_for_a_locked_file_and_filing_finishes_later(tmp_path):
    path = tmp_path / "runs.db"
    with jhw.Store(path) as store:
        jhw.while_loop(lambda x: x < 3.0, lambda x: x + 1.0, 0.0, max_steps=5)
    store.close()
    proc = subprocess.Popen([*child(CTRL_C), str(path)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, env=CHILD_ENV)  # fmt: skip
    other = None
    try:
        assert proc.stdout.readline().strip() == "ready"
        other = locked(path)
        proc.stdin.write("\n")
        proc.stdin.flush()
        said = proc.stdout.readline().strip()
        assert said.startswith("loop done") and float(said.split()[2]) < 30.0, said  # not 60
        time.sleep(0.5)  # in store.flush()
        press(proc)
        said = proc.stdout.readline().strip()
        assert said.startswith("interrupted after"), said
        assert float(said.split()[2]) < 10.0
        other.execute("COMMIT")
        proc.stdin.write("\n")
        proc.stdin.flush()
        assert proc.wait(60) == 0
    finally:
        if other is not None:
            other.close()
        proc.kill()
        proc.wait()
    _, second = jhw.load_runs(path)
    assert second.status == "converged" and second.counts == [501]
    np.testing.assert_array_equal(second.history(), np.arange(501, dtype=np.float32))
