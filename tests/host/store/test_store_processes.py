"""A store across processes: a writer killed mid-run, two writing one file, and the magics'
``--store`` (a good path files the cells' runs; a bad one fails the cell before it runs).

Real Python processes, hence all slow.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import time

import numpy as np
import pytest

import jaxhist_widget as jhw

from ...helpers.stores import CHILD_ENV, child

pytestmark = pytest.mark.slow


KILLED = """
import sys, time, jax, jax.numpy as jnp, jaxhist_widget as jhw

class Stalled(jhw.Store):
    # Sees each chunk in the loop's own host call (rows_can_wait=False) and, past 20,000 rows,
    # holds the loop there: the run cannot end before the kill, while the worker goes on
    # filing every row received.
    rows_can_wait = False
    def on_rows(self, run, lanes):
        super().on_rows(run, lanes)
        if run.counts[0] > 20_000:
            time.sleep(3600)

A = jnp.eye(32) * 0.999
def body(c):
    i, x = c
    return i + 1, jnp.tanh(A @ x) + 1e-3
with Stalled(sys.argv[1]):
    jhw.while_loop(lambda c: c[0] < 10**6, body, (jnp.int32(0), jnp.ones(32)),
                   max_steps=10**6, record=lambda c: {"i": c[0], "x0": c[1][0]})
print("finished", flush=True)
"""


def filed_rows(path):
    """Rows of run 1 committed to the file so far (0 before it exists)."""
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
            row = conn.execute("SELECT rows FROM runs WHERE id=1").fetchone()
    except sqlite3.Error:
        return 0
    return json.loads(row[0])[0] if row and row[0] else 0


def test_a_writer_killed_mid_run_leaves_every_filed_chunk_readable(tmp_path):
    path = tmp_path / "runs.db"
    proc = subprocess.Popen([*child(KILLED), str(path)], env=CHILD_ENV)
    try:
        deadline = time.monotonic() + 120
        while (seen := filed_rows(path)) <= 20_000:  # the kill lands mid-run, rows filed
            assert proc.poll() is None, "the child ended before the kill"
            assert time.monotonic() < deadline, f"only {seen} rows filed"
            time.sleep(0.05)
        [alive] = jhw.load_runs(path)  # read while its writer is still at it
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert alive.status == "running" and alive.statuses == ["running"]
    [run] = jhw.load_runs(path)
    assert run.status == "interrupted" and run.statuses == ["interrupted"]  # its writer died
    assert run.ended_at is None and run.incomplete is None
    rows = run.history()
    assert run.counts[0] >= seen > 20_000
    np.testing.assert_array_equal(rows["i"], np.arange(run.counts[0]))  # from step 0, no gap
    with sqlite3.connect(path) as conn:  # and so says SQLite itself
        n, top = conn.execute(
            "SELECT count(*), max(step) FROM history WHERE run=1 AND field='i'"
        ).fetchone()
    assert n == top + 1 == run.counts[0]


WRITER = """
import sys, os, time, jax, jax.numpy as jnp, jaxhist_widget as jhw
path, who, go = sys.argv[1], sys.argv[2], sys.argv[3]
loop = jax.jit(lambda k: jhw.while_loop(lambda c: c[0] < 300, lambda c: (c[0] + 1, c[1]),
               (jnp.int32(0), k), max_steps=400, record=lambda c: {"i": c[0], "k": c[1]},
               stream_every=1))
loop(jnp.int32(0)).__class__  # compiled before the start line
while not os.path.exists(go):
    time.sleep(0.005)
for k in range(3):
    with jhw.Store(path, name=f"{who}-{k}"):
        loop(jnp.int32(k))
"""


def test_two_processes_writing_one_store_lose_nothing(tmp_path):
    path, go = tmp_path / "runs.db", tmp_path / "go"
    procs = [
        subprocess.Popen(
            [*child(WRITER), str(path), who, str(go)], env=CHILD_ENV, stderr=subprocess.PIPE
        )
        for who in ("a", "b")
    ]
    time.sleep(1.0)
    go.touch()  # both start writing at once: 301 commits a run, interleaved
    errors = [p.communicate(timeout=240)[1].decode(errors="replace") for p in procs]
    assert [p.returncode for p in procs] == [0, 0], errors
    runs = jhw.load_runs(path)
    assert sorted(r.name for r in runs) == [f"{w}-{k}" for w in "ab" for k in range(3)]
    for run in runs:
        k = int(run.name[-1])
        said = (run.name, run.status, run.counts, run.incomplete, errors)
        assert run.status == "converged" and run.counts == [301], said
        np.testing.assert_array_equal(run.history()["i"], np.arange(301))
        np.testing.assert_array_equal(run.history()["k"], np.full(301, k))
    ids = [r.id for r in runs]
    assert ids == sorted(set(ids))


MAGIC = """
import sys
from IPython.terminal.interactiveshell import TerminalInteractiveShell
shell = TerminalInteractiveShell.instance()
path = sys.argv[1]
halve = "_ = jhw.while_loop(lambda x: x > 1.0, lambda x: x / 2, {}, max_steps=9)"
for cell in [
    "%load_ext jaxhist_widget",
    "import jaxhist_widget as jhw",
    f"%jaxhist on --store {path}",
    halve.format(10.0),
    "%jaxhist off",
    f"%%jaxhist --store {path}\\n" + halve.format(40.0),
]:
    r = shell.run_cell(cell)
    assert r.success, (cell, r.error_in_exec or r.error_before_exec)
"""


def test_the_magics_store_option_files_the_cells_runs(tmp_path):
    pytest.importorskip("IPython")
    path = tmp_path / "runs.db"
    out = subprocess.run(
        [*child(MAGIC), str(path)], capture_output=True, text=True, env=CHILD_ENV, timeout=120
    )
    assert out.returncode == 0, out.stderr[-3000:]
    runs = jhw.load_runs(path)
    assert [r.history().tolist() for r in runs] == [
        [10.0, 5.0, 2.5, 1.25, 0.625],
        [40.0, 20.0, 10.0, 5.0, 2.5, 1.25, 0.625],
    ]


BAD_MAGIC = """
import sys
from IPython.terminal.interactiveshell import TerminalInteractiveShell
shell = TerminalInteractiveShell.instance()
bad = sys.argv[1]
shell.run_cell("%load_ext jaxhist_widget")
shell.run_cell("import jaxhist_widget as jhw; ran = []")
for cell in [f"%%jaxhist --store {bad}\\nran.append(1)", f"%jaxhist on --store {bad}"]:
    r = shell.run_cell(cell)
    error = r.error_in_exec or r.error_before_exec
    print("FAILED" if not r.success else "OK", type(error).__name__, str(error).replace("\\n", " "))
print("ran", shell.user_ns["ran"])
"""


@pytest.mark.parametrize("bad", ["missing", "text", "foreign"])
def test_the_magics_refuse_a_bad_store_before_the_cell_runs(tmp_path, bad):
    pytest.importorskip("IPython")
    path = {
        "missing": tmp_path / "no" / "such" / "runs.db",
        "text": tmp_path / "notes.txt",
        "foreign": tmp_path / "app.db",
    }[bad]
    if bad == "text":
        path.write_text("not a database\n")
    if bad == "foreign":
        with sqlite3.connect(path) as conn:
            conn.execute("CREATE TABLE runs (id INTEGER PRIMARY KEY, what TEXT)")
    before = path.read_bytes() if path.exists() else None
    out = subprocess.run(
        [*child(BAD_MAGIC), str(path)], capture_output=True, text=True, env=CHILD_ENV, timeout=120
    )
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.splitlines()
    verdicts = [line for line in lines if line.startswith(("FAILED", "OK"))]
    assert len(verdicts) == 2 and all(v.startswith("FAILED UsageError") for v in verdicts), lines
    assert all(str(path) in v for v in verdicts)  # each names the path
    assert "ran []" in lines  # the %%jaxhist cell's body never ran
    assert (path.read_bytes() if path.exists() else None) == before
