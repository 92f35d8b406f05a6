"""Runs on disk: a `Store` files every chunk as it arrives, exactly, and runs read back from it
behave like the runs a `Recorder` keeps, in SQL, in pandas and in a `LivePlot`.
"""

from __future__ import annotations

import sqlite3

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import jaxhist_widget as jhw

from ...helpers.backends import PATTERN_BASE, records_here
from ...helpers.loops import bit_pattern_loop
from ...helpers.stores import DTYPES, same_bits, starts, tanh_loop


# ------------------------------------------------------------------------- round trip
@pytest.mark.slow
@pytest.mark.parametrize("name", DTYPES)
def test_every_dtype_round_trips_bit_exact_scalar_and_vector_with_lanes(tmp_path, name):
    """Every bit pattern of the dtype's width (NaNs, -0, inf), as a scalar and a vector leaf,
    unbatched and over 3 vmap lanes, reads back from the file bit for bit."""
    if not records_here(name):  # tests/device checks that the chip refuses it
        pytest.skip(f"this chip cannot record {name}")
    loop = bit_pattern_loop(name, base=PATTERN_BASE.get(name, 0))

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
    """The ``history`` view gives every value as SQL, one line per run, lane, step and leaf,
    without this package: what a pandas user reads, pivoted to a column per leaf."""
    pd = pytest.importorskip("pandas")
    path = tmp_path / "runs.db"
    with jhw.Store(path, name="adam"):
        _, hist = jax.jit(jax.vmap(tanh_loop))(starts(2))
    with sqlite3.connect(path) as conn:
        runs = pd.read_sql("SELECT id, name, status, steps, lanes, fields FROM runs", conn)
        long = pd.read_sql("SELECT * FROM history WHERE run_name='adam'", conn)
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
    assert list(long.columns) == ["run_name", "run_status", "run", "lane", "step", "field",
                                  "value"]  # fmt: skip
    wide = long[long.field == "step"].pivot(index=["lane", "step"], columns="field", values="value")
    for lane, dev in enumerate(hist.to_numpy()):
        got = wide.loc[lane]
        np.testing.assert_array_equal(got.index, np.arange(len(dev["step"])))
        np.testing.assert_array_equal(got["step"].astype(np.float32), dev["step"])
    x = long[(long.field == "x") & (long.lane == 1)].sort_values("step")
    vectors = np.stack([np.frombuffer(v, np.float32) for v in x.value])  # a vector: its bytes
    np.testing.assert_array_equal(vectors, hist.to_numpy()[1]["x"])


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


def test_loading_a_missing_store_says_where_it_looked(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"nothing\.db"):
        jhw.load_runs(tmp_path / "nothing.db")


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


def test_a_store_handed_a_run_twice_files_it_once(tmp_path):
    """Attached, and the store= of an attached plot: both hand it each run."""
    pytest.importorskip("bqplot")
    path = tmp_path / "runs.db"
    store = jhw.Store(path)
    with store, jhw.LivePlot(store=store):
        _, one = jax.jit(tanh_loop)(starts(1)[0])
    [run] = jhw.load_runs(path)
    same_bits(run.history()["x"], one.to_numpy()["x"])
