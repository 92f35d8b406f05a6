"""Runs on disk: a `Store` files every chunk as it arrives, exactly, and runs read back from it
behave like the runs a `Recorder` keeps, in pandas and in a `LivePlot`.

The crash and concurrency tests start real Python processes: one killed with SIGKILL mid-run,
two writing one file at once.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
import warnings

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from jax import lax

import jaxhist_widget as jhw
from jaxhist_widget._wire import itemsize_bits

from ..helpers import ROOT

A = jnp.asarray(np.random.default_rng(0).normal(size=(16, 16)) / 6, jnp.float32)


def tanh_loop(x0, max_steps=40, **kw):
    """``x = tanh(A @ x)`` until the step is small, recording a scalar and a vector leaf."""

    def body(c):
        x, _ = c
        y = jnp.tanh(A @ x)
        return y, jnp.linalg.norm(y - x)

    return jhw.while_loop(
        lambda c: c[1] > 1e-3,
        body,
        (x0, jnp.float32(1.0)),
        max_steps=max_steps,
        record=lambda c: {"x": c[0], "step": c[1]},
        **kw,
    )


def starts(lanes):
    return jnp.asarray(np.random.default_rng(lanes).normal(size=(lanes, 16)), jnp.float32)


def same_bits(a, b):
    """Equal bit for bit (NaN payloads and -0 included), with the same dtype and shape."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
    np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))


# ------------------------------------------------------------------------- round trip
NARROW = ["float4_e2m1fn", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn",
          "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
          "int2", "uint2", "int4", "uint4"]  # fmt: skip
PLAIN = ["bool", "int8", "uint8", "int16", "uint16", "bfloat16", "float16", "int32", "uint32",
         "float32"]  # fmt: skip
DTYPES = [d for d in NARROW + PLAIN if hasattr(jnp, d) or d == "bool"]


@pytest.mark.slow
@pytest.mark.parametrize("name", DTYPES)
def test_every_dtype_round_trips_bit_exact_scalar_and_vector_with_lanes(tmp_path, name):
    """Every bit pattern of the dtype's width (NaNs, -0, inf), as a scalar and a vector leaf,
    unbatched and over 3 vmap lanes, reads back from the file bit for bit."""
    dtype = jnp.dtype(name)
    if dtype == jnp.bool_:
        unsigned, width = None, 2
    else:
        bits = itemsize_bits(dtype)
        unsigned = {2: jnp.uint2, 4: jnp.uint4, 8: jnp.uint8, 16: jnp.uint16, 32: jnp.uint32}
        unsigned, width = unsigned[bits], min(2**bits, 256)

    def record(c):
        i, offset = c
        codes = (offset + i * 7 + jnp.arange(width)) % width
        if unsigned is None:
            return {"v": codes.astype(jnp.bool_), "s": (i % 2).astype(jnp.bool_)}
        pattern = codes.astype(unsigned)
        return {"v": lax.bitcast_convert_type(pattern, dtype),
                "s": lax.bitcast_convert_type(pattern[0], dtype)}  # fmt: skip

    def loop(offset):
        return jhw.while_loop(
            lambda c: c[0] < 9,
            lambda c: (c[0] + 1, c[1]),
            (jnp.int32(0), offset),
            max_steps=12,
            record=record,
            stream_every=4,
        )

    path = tmp_path / "runs.db"
    with jhw.Store(path):
        _, one = jax.jit(loop)(jnp.int32(1))
        _, many = jax.jit(jax.vmap(loop))(jnp.arange(3, dtype=jnp.int32))
    single, batched = jhw.load_runs(path)
    want = np.dtype(getattr(ml_dtypes, name, name))
    assert single.lanes is None and batched.lanes == 3
    devices, hosts = [one.to_numpy(), *many.to_numpy()], [single.history(), *batched.history()]
    for dev, host in zip(devices, hosts, strict=True):
        for key in ("v", "s"):
            assert host[key].dtype == want
            same_bits(host[key], dev[key])


def test_nan_payloads_signed_zero_and_inf_read_back_exactly(tmp_path):
    """SQLite stores NaN as NULL and a REAL column turns -0.0 into 0.0: neither may show."""
    patterns = np.array(
        [0x7FC00001, 0xFFC00000, 0x7F800001, 0x80000000, 0x7F800000, 0xFF800000, 0x3F800000],
        np.uint32,
    )
    values = jnp.asarray(patterns.view(np.float32))

    def loop(v):
        return jhw.while_loop(
            lambda c: c[0] < len(patterns) - 1,
            lambda c: (c[0] + 1, c[1]),
            (jnp.int32(0), v),
            max_steps=10,
            record=lambda c: {"s": c[1][c[0]], "v": c[1]},
        )

    path = tmp_path / "runs.db"
    with jhw.Store(path):
        _, hist = jax.jit(loop)(values)
    [run] = jhw.load_runs(path)
    same_bits(run.history()["s"], hist.to_numpy()["s"])
    same_bits(run.history()["s"], patterns.view(np.float32))
    same_bits(run.history()["v"], hist.to_numpy()["v"])


def test_matrix_and_zero_size_leaves_read_back_with_their_shapes(tmp_path):
    def loop(x):
        return jhw.while_loop(
            lambda c: c[0] < 5,
            lambda c: (c[0] + 1, c[1] * 2.0 - 1.0),
            (jnp.int32(0), x),
            max_steps=8,
            record=lambda c: {"m": c[1], "empty": c[1][0, :0]},
        )

    path = tmp_path / "runs.db"
    with jhw.Store(path):
        _, hist = jax.jit(loop)(jnp.arange(6.0, dtype=jnp.float32).reshape(2, 3))
    [run] = jhw.load_runs(path)
    host, dev = run.history(), hist.to_numpy()
    assert host["m"].shape == (6, 2, 3) and host["empty"].shape == (6, 0)
    for key in ("m", "empty"):
        same_bits(host[key], dev[key])


def test_lanes_vectors_status_and_record_structure_read_back(tmp_path):
    path = tmp_path / "runs.db"
    with jhw.Store(path, name="sweep") as store:
        _, hist = jax.jit(jax.vmap(tanh_loop))(starts(4))
        store.name = "single"
        _, one = jax.jit(lambda x: tanh_loop(x, max_steps=5))(starts(1)[0])
    sweep, single = store.runs()
    assert (sweep.name, sweep.lanes, sweep.status) == ("sweep", 4, "converged")
    assert (single.name, single.lanes, single.status) == ("single", None, "max_steps")
    assert single.counts == [6] and single.statuses == ["max_steps"]
    assert sweep.counts == [len(h["x"]) for h in hist.to_numpy()]
    for dev, host in zip(hist.to_numpy(), sweep.history(), strict=True):
        assert set(host) == {"x", "step"}  # the record's dict, not a flat list
        same_bits(host["x"], dev["x"])
        same_bits(host["step"], dev["step"])
    same_bits(single.history()["x"], one.to_numpy()["x"])
    assert single.elapsed > 0 and single.started_at and single.ended_at


def test_the_file_is_plain_sqlite_readable_with_pandas(tmp_path):
    pd = pytest.importorskip("pandas")
    path = tmp_path / "runs.db"
    with jhw.Store(path, name="adam"):
        _, hist = jax.jit(jax.vmap(tanh_loop))(starts(2))
    with sqlite3.connect(path) as conn:
        runs = pd.read_sql("SELECT id, name, status, steps, lanes, fields FROM runs", conn)
        rows = pd.read_sql(
            "SELECT lane, step, step_value FROM history WHERE run_name='adam' ORDER BY lane, step",
            conn,
        )
    assert runs.to_dict("records") == [
        {
            "id": 1,
            "name": "adam",
            "status": "converged",
            "steps": max(len(h["x"]) for h in hist.to_numpy()) - 1,
            "lanes": 2,
            "fields": '["step","x"]',
        }
    ]
    for lane, dev in enumerate(hist.to_numpy()):
        got = rows[rows.lane == lane]
        np.testing.assert_array_equal(got.step, np.arange(len(dev["step"])))
        np.testing.assert_array_equal(got.step_value, dev["step"].astype(np.float64))


def test_to_pandas_gives_a_column_per_scalar_and_component(tmp_path):
    pytest.importorskip("pandas")
    path = tmp_path / "runs.db"
    with jhw.Store(path):
        _, hist = jax.jit(jax.vmap(tanh_loop))(starts(2))
    df = jhw.load_runs(path)[0].to_pandas()
    assert list(df.columns[:4]) == ["step", "lane", "step_value", "x[0]"]
    assert len(df.columns) == 3 + 16
    for lane, dev in enumerate(hist.to_numpy()):
        got = df[df.lane == lane]
        np.testing.assert_array_equal(got["x[3]"], dev["x"][:, 3])
        np.testing.assert_array_equal(got.step, np.arange(len(dev["x"])))


def test_a_store_that_cannot_write_never_stops_the_run(tmp_path):
    (tmp_path / "dir.db").mkdir()  # a directory where the file should be
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with jhw.Store(tmp_path / "dir.db"):
            _, hist = jax.jit(tanh_loop)(starts(1)[0])
    assert len(hist.to_numpy()["x"]) > 1
    assert any("Store" in str(w.message) for w in caught)


def test_loading_a_missing_store_says_where_it_looked(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"nothing\.db"):
        jhw.load_runs(tmp_path / "nothing.db")


# -------------------------------------------------------------------- processes
def child(code: str) -> list[str]:
    return [sys.executable, "-c", textwrap.dedent(code)]


CHILD_ENV = {**os.environ, "PYTHONPATH": str(ROOT), "JAX_PLATFORMS": "cpu"}

KILLED = """
import sys, time, jax, jax.numpy as jnp, jaxhist_widget as jhw

class Told(jhw.Store):
    # says how many rows of lane 0 were filed, once they are committed; past 20,000 it files
    # no more, so the run cannot end (its last chunk waits for its filing) before the kill
    def on_rows(self, run, lanes):
        super().on_rows(run, lanes)
        print(run.counts[0], flush=True)
        if run.counts[0] > 20_000:
            time.sleep(3600)

A = jnp.eye(32) * 0.999
def body(c):
    i, x = c
    return i + 1, jnp.tanh(A @ x) + 1e-3
with Told(sys.argv[1]):
    jhw.while_loop(lambda c: c[0] < 10**6, body, (jnp.int32(0), jnp.ones(32)),
                   max_steps=10**6, record=lambda c: {"i": c[0], "x0": c[1][0]})
print("finished", flush=True)
"""


@pytest.mark.slow
def test_a_writer_killed_mid_run_leaves_every_filed_chunk_readable(tmp_path):
    path = tmp_path / "runs.db"
    proc = subprocess.Popen(
        [*child(KILLED), str(path)], stdout=subprocess.PIPE, text=True, env=CHILD_ENV
    )
    seen = 0
    try:
        for line in proc.stdout:  # several chunks filed, then the kill lands mid-run
            assert line.strip() != "finished", "the loop ended before the kill"
            seen = int(line)
            if seen > 20_000:
                break
        [alive] = jhw.load_runs(path)  # read while its writer is still at it
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == -signal.SIGKILL and seen > 20_000
    assert alive.status == "running" and alive.statuses == ["running"]
    [run] = jhw.load_runs(path)
    assert run.status == "interrupted" and run.statuses == ["interrupted"]  # its writer died
    assert run.ended_at is None
    rows = run.history()
    assert run.counts[0] >= seen
    np.testing.assert_array_equal(rows["i"], np.arange(run.counts[0]))  # from step 0, no gap
    with sqlite3.connect(path) as conn:  # and so says SQLite itself
        n, top = conn.execute("SELECT count(*), max(step) FROM rows WHERE run=1").fetchone()
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


@pytest.mark.slow
def test_two_processes_writing_one_store_lose_nothing(tmp_path):
    path, go = tmp_path / "runs.db", tmp_path / "go"
    procs = [
        subprocess.Popen([*child(WRITER), str(path), who, str(go)], env=CHILD_ENV)
        for who in ("a", "b")
    ]
    time.sleep(1.0)
    go.touch()  # both start writing at once: 301 commits a run, interleaved
    assert [p.wait(timeout=240) for p in procs] == [0, 0]
    runs = jhw.load_runs(path)
    assert sorted(r.name for r in runs) == [f"{w}-{k}" for w in "ab" for k in range(3)]
    for run in runs:
        k = int(run.name[-1])
        assert run.status == "converged" and run.counts == [301]
        np.testing.assert_array_equal(run.history()["i"], np.arange(301))
        np.testing.assert_array_equal(run.history()["k"], np.full(301, k))
    ids = [r.id for r in runs]
    assert ids == sorted(set(ids))


# ------------------------------------------------------------------------ LivePlot
def test_a_stored_run_is_drawn_beside_a_live_run(tmp_path):
    pytest.importorskip("bqplot")
    path = tmp_path / "runs.db"
    with jhw.Store(path, name="baseline"):
        _, base = jax.jit(lambda x: tanh_loop(x, max_steps=30))(starts(1)[0])
    [stored] = jhw.load_runs(path)
    live = jhw.LivePlot(fields="step")
    live.add_run(stored)
    assert live.runs == [stored]
    with live:
        jax.jit(lambda x: tanh_loop(x, max_steps=30))(starts(1)[0] * 2)
    assert live.runs[0] is stored and len(live.runs) == 2  # the baseline stays
    marks = live.figure.marks
    assert len(marks) == 2
    np.testing.assert_allclose(marks[0].y, base.to_numpy()["step"])  # every row: few of them
    # told apart by colour like a kept run, and listed by its stored name
    assert marks[0].colors != marks[1].colors and marks[0].labels == ["step · baseline"]
    assert [r["name"] for r in live.panel.runs] == ["baseline", "run 2"]
    np.testing.assert_array_equal(live.history(0)["step"], base.to_numpy()["step"])


def test_a_liveplot_with_store_files_every_run_it_draws(tmp_path):
    pytest.importorskip("bqplot")
    path = tmp_path / "runs.db"
    live = jhw.LivePlot(store=path, keep_runs=True)
    with live:
        _, one = jax.jit(tanh_loop)(starts(1)[0])
    live.run(jax.jit(jax.vmap(tanh_loop)), starts(3))
    runs = jhw.load_runs(path)
    assert [r.lanes for r in runs] == [None, 3]
    assert [r.status for r in runs] == [r.status for r in live.runs]
    same_bits(runs[0].history()["x"], one.to_numpy()["x"])
    for stored, drawn in zip(runs[1].history(), live.history(1), strict=True):
        same_bits(stored["step"], drawn["step"])


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


@pytest.mark.slow
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
