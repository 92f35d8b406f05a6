"""A stored run whose writer died reads back as ``interrupted``; one still being written as
``running``: judged from the writer's host, pid, identity and last commit."""

from __future__ import annotations

import datetime
import os
import socket
import sqlite3
import subprocess
import sys

import jax.numpy as jnp
import numpy as np
import pytest

import jaxhist_widget as jhw
from jaxhist_widget._host.store import _liveness as liveness
from jaxhist_widget._host.store import _schema as schema

from ...helpers.stores import CHILD_ENV


def halve(x0: float = 10.0):
    return jhw.while_loop(lambda x: x > 1.0, lambda x: x / 2, jnp.float32(x0), max_steps=9)


def stored(tmp_path):
    path = tmp_path / "runs.db"
    with jhw.Store(path, name="halving"):
        halve()
    return path


def set_running(path, **writer):
    """Make run 1 look as if its writer never ended it, with the given writer columns."""
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE runs SET status='running', statuses=NULL, ended=NULL WHERE id=1")
        for key, value in writer.items():
            conn.execute(f"UPDATE runs SET {key}=? WHERE id=1", (value,))


def ago(seconds: float) -> str:
    then = datetime.datetime.now(datetime.UTC) - datetime.timedelta(seconds=seconds)
    return then.isoformat()


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()  # reaped: the pid names no process (until the system hands it out again)
    return proc.pid


def test_a_finished_run_keeps_its_status_and_records_its_writer(tmp_path):
    path = stored(tmp_path)
    with sqlite3.connect(path) as conn:
        host, pid, writer, beat = conn.execute(
            "SELECT host, pid, writer, heartbeat FROM runs"
        ).fetchone()
        version = conn.execute("PRAGMA user_version").fetchone()[0]
    assert (host, pid, version) == (socket.gethostname(), os.getpid(), schema.VERSION)
    assert beat and datetime.datetime.fromisoformat(beat).tzinfo is not None
    if os.path.exists("/proc/self/stat"):
        assert writer == liveness.writer_token(os.getpid())
    [run] = jhw.load_runs(path)
    assert run.status == "converged"


def test_a_run_this_process_is_writing_reads_as_running(tmp_path):
    path = tmp_path / "runs.db"
    store = jhw.Store(path)
    with store:  # a Python loop's run, open until the block ends
        for i in range(3):
            jhw.log(i=i)
        assert store.flush(10)
        [run] = jhw.load_runs(path)
        assert run.status == "running" and run.statuses == ["running"]
        set_running(path, writer=None)  # as a writer without /proc records it: the same
        assert jhw.load_runs(path)[0].status == "running"
    [run] = jhw.load_runs(path)
    assert run.status == "converged" and run.counts == [3]


def test_a_run_whose_writer_pid_is_gone_reads_as_interrupted(tmp_path):
    path = stored(tmp_path)
    set_running(path, pid=dead_pid(), writer=None)
    [run] = jhw.load_runs(path)
    assert run.status == "interrupted" and run.statuses == ["interrupted"]
    np.testing.assert_array_equal(run.history(), [10.0, 5.0, 2.5, 1.25, 0.625])  # rows kept


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="needs /proc")
def test_a_plot_draws_an_interrupted_run_and_says_so(tmp_path):
    # What a user sees reloading last night's runs after the kernel was killed.
    path = stored(tmp_path)
    set_running(path, pid=dead_pid(), writer=None)
    live = jhw.LivePlot()
    live.add_run(jhw.load_runs(path)[0])
    assert live.panel.status == "interrupted" and live.panel.error == ""
    assert live.panel.step == 4
    assert "interrupted, 4 / 9 steps" in live._repr_mimebundle_()["text/plain"]


def test_a_reused_pid_is_not_taken_for_the_writer(tmp_path):
    path = stored(tmp_path)
    parent = os.getppid()  # alive, but not the process that wrote the run
    token = liveness.writer_token(parent)
    set_running(path, pid=parent, writer=token)
    assert jhw.load_runs(path)[0].status == "running"
    boot, ticks = token.rsplit(":", 1)
    set_running(path, writer=f"{boot}:{int(ticks) + 1}")  # same pid, another start time
    assert jhw.load_runs(path)[0].status == "interrupted"


def test_a_run_from_another_host_is_judged_by_its_last_commit(tmp_path):
    path = stored(tmp_path)
    set_running(path, host="elsewhere", heartbeat=ago(liveness.STALE_S / 10))
    assert jhw.load_runs(path)[0].status == "running"
    set_running(path, heartbeat=ago(liveness.STALE_S * 2))
    assert jhw.load_runs(path)[0].status == "interrupted"
    set_running(path, heartbeat=None)  # nothing to judge by: as stored
    assert jhw.load_runs(path)[0].status == "running"


def test_a_dead_writer_with_the_readers_own_pid_reads_as_interrupted(tmp_path):
    # A restarted container hands the new process the pid its killed predecessor had: the
    # run's writer token (boot id, start time) tells them apart.
    path = stored(tmp_path)
    token = liveness.writer_token(os.getpid())
    if token is None:
        pytest.skip("needs /proc")
    boot, ticks = token.rsplit(":", 1)
    set_running(path, pid=os.getpid(), writer=f"{boot}:{int(ticks) - 1}")
    [run] = jhw.load_runs(path)
    assert run.status == "interrupted" and run.statuses == ["interrupted"]
    # This process's token too, or none (no /proc where it was written): this process is not
    # filing it, so another process with this pid was, and is gone.
    set_running(path, pid=os.getpid(), writer=token)
    assert jhw.load_runs(path)[0].status == "interrupted"
    set_running(path, pid=os.getpid(), writer=None)
    assert jhw.load_runs(path)[0].status == "interrupted"


KILLED = """
import sys, time, jaxhist_widget as jhw
store = jhw.Store(sys.argv[1])
with store:
    for i in range(5):
        jhw.log(i=i)
    t = time.monotonic()
    while not sum(store.runs()[0].counts) and time.monotonic() - t < 60:
        time.sleep(0.01)  # the first row on its way through the worker
    print("filed", flush=True)
    time.sleep(3600)
"""


def test_a_killed_writers_run_reads_interrupted_to_a_reader_that_has_its_pid(tmp_path):
    # A real writer killed mid-run; then its line names this process's pid, as it would for
    # the next process of a restarted container, where the writer could record no identity
    # (no /proc, or no boot id in a sandbox).
    path = tmp_path / "runs.db"
    proc = subprocess.Popen(
        [sys.executable, "-c", KILLED, str(path)], stdout=subprocess.PIPE, text=True, env=CHILD_ENV
    )
    try:
        assert proc.stdout.readline().strip() == "filed"
        [alive] = jhw.load_runs(path)
    finally:
        proc.kill()
        proc.wait()
    assert alive.status == "running"
    assert jhw.load_runs(path)[0].status == "interrupted"  # its pid is gone
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE runs SET pid=?, writer=NULL WHERE id=1", (os.getpid(),))
    [run] = jhw.load_runs(path)
    assert run.status == "interrupted" and run.statuses == ["interrupted"]
    assert run.history()["i"].tolist() == list(range(run.counts[0])) and run.counts[0] >= 1
