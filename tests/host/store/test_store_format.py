"""The store's format has no limit a user can reach and reads every version: thousands of leaves
in one run or across runs (SQLite allows 2,000 columns a table), the ``history`` view giving every
value as SQL for every run, and files of versions 0 to 3 read as they are and upgraded.

Runs are streamed through the hub as a compiled loop would send them (a loop recording 2,500
leaves takes XLA minutes to compile).
"""

from __future__ import annotations

import sqlite3

import ml_dtypes
import numpy as np
import pytest

import jaxhist_widget as jhw
from jaxhist_widget._host.store import _schema as schema

from ...helpers.legacy_store import write_legacy
from ...helpers.stores import DTYPES, Stream, record_layout, same_bits


def test_a_run_of_2500_leaves_files_and_reads_back_with_its_sql_view(tmp_path):
    path, n = tmp_path / "runs.db", 2500
    names = [f"w{i}" for i in range(n)]
    rng = np.random.default_rng(0)
    values = [rng.normal(size=(1, 7)).astype(np.float32) for _ in names]
    with jhw.Store(path):
        run = Stream(record_layout(names, ["float32"] * n))
        run.send(values)
        run.end()
    [back] = jhw.load_runs(path)
    assert back.layout.names == tuple(names) and back.counts == [7]
    for got, want in zip(back.lane_rows(0), values, strict=True):
        same_bits(got, want[0])
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT field, step, value FROM history WHERE run=1").fetchall()
    assert len(rows) == n * 7
    table = {(f, s): v for f, s, v in rows}
    assert table["w2499", 6] == float(values[-1][0, 6]) and table["w0", 0] == float(values[0][0, 0])


def test_3000_distinct_leaf_names_over_many_runs_file_and_read(tmp_path):
    path = tmp_path / "runs.db"
    runs = [[f"r{k}.leaf{i}" for i in range(100)] for k in range(30)]
    with jhw.Store(path):
        for k, names in enumerate(runs):
            run = Stream(record_layout(names, ["int32"] * 100))
            run.send([np.full((1, 3), 1000 * k + i, np.int32) for i in range(100)])
            run.end()
    back = jhw.load_runs(path)
    assert [r.layout.names for r in back] == [tuple(n) for n in runs]
    assert back[29].lane_rows(0)[99].tolist() == [29099] * 3
    with sqlite3.connect(path) as conn:  # the view serves every run, the last included
        got = conn.execute(
            "SELECT value FROM history WHERE run=30 AND field='r29.leaf99' ORDER BY step"
        ).fetchall()
        assert got == [(29099,)] * 3
        assert conn.execute("SELECT count(DISTINCT field) FROM history").fetchone() == (3000,)


def patterns(name: str) -> np.ndarray:
    """Every bit pattern of a dtype up to 16 bits; a sample (signs, zeros, infs, NaNs and
    subnormals among them) of wider ones."""
    dt = np.dtype(getattr(ml_dtypes, name, name))
    if dt == np.bool_:
        return np.array([True, False, True])
    bits = (ml_dtypes.finfo if name.startswith(("float", "bfloat")) else ml_dtypes.iinfo)(dt).bits
    unsigned = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize]
    if bits <= 16:
        return np.arange(2**bits, dtype=np.uint64).astype(unsigned).view(dt)
    rng = np.random.default_rng(bits)
    edge = [0, 1, 2 ** (bits - 1), 2 ** (bits - 1) + 1, 2**bits - 1, 2 ** (bits - 1) - 1]
    sample = rng.integers(0, 2**63, 3000, dtype=np.uint64) * 2 + 1
    return np.concatenate([np.array(edge, np.uint64), sample]).astype(unsigned).view(dt)


def test_the_sql_view_decodes_every_dtype_exactly(tmp_path):
    """Each value of the view is what numpy says the bits are (NaN is NULL, SQL has none)."""
    path = tmp_path / "runs.db"
    names = [*DTYPES, "int64", "float64"]
    columns = [patterns(d) for d in names]
    with jhw.Store(path) as store:
        for name, values in zip(names, columns, strict=True):
            run = Stream(record_layout([name], [values.dtype.name], max_steps=70_000))
            run.send([values[None, :]])
            run.end()
    # (the block waits `exit_wait` for its rows; a loaded machine may need longer)
    store.flush()
    with sqlite3.connect(path) as conn:
        for k, (name, values) in enumerate(zip(names, columns, strict=True), 1):
            got = conn.execute(
                "SELECT value FROM history WHERE run=? ORDER BY step", (k,)
            ).fetchall()
            with np.errstate(invalid="ignore", over="ignore"):
                want = values.astype(np.float64) if name != "int64" else values
            got = np.array([np.nan if v is None else v for (v,) in got], want.dtype)
            same = (got == want) & (np.signbit(got) == np.signbit(want)) | (
                np.isnan(got) & np.isnan(want)
            )
            assert same.all(), (name, values[~same][:5], got[~same][:5])


LEGACY_RUNS = [
    {
        "name": "old",
        "status": "converged",
        "lanes": None,
        "leaves": {
            "loss": np.array([[1.5, np.nan, -0.0, np.inf]], np.float32),
            "i": np.array([[0, 1, 2, 3]], np.int32),
            "x": np.arange(12, dtype=np.float32).reshape(1, 4, 3),
            "ok": np.array([[True, False, True, True]]),
            "h": np.array([[0.5, -2.0, 1e-7, 3.0]], ml_dtypes.bfloat16),
        },
    },
    {
        "name": "sweep",
        "status": "max_steps",
        "lanes": 2,
        "leaves": {"loss": np.array([[1.0, 2.0], [3.0, 4.0]], np.float64)},
    },
]
# A NaN with a payload: the old format kept its bits apart (nan_bits).
LEGACY_RUNS[0]["leaves"]["loss"].view(np.uint32)[0, 1] = 0x7FC00123


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_a_file_of_an_older_version_reads_as_it_is_and_is_upgraded_by_a_writer(tmp_path, version):
    path = tmp_path / "old.db"
    write_legacy(path, version, LEGACY_RUNS)
    before = path.read_bytes()

    def check(runs):
        old, sweep = runs[:2]
        assert (old.name, old.status, sweep.lanes, sweep.counts) == ("old", "converged", 2, [2, 2])
        for (key, want), got in zip(
            LEGACY_RUNS[0]["leaves"].items(), old.lane_rows(0), strict=True
        ):
            same_bits(got, want[0]), key
        same_bits(sweep.lane_rows(1)[0], LEGACY_RUNS[1]["leaves"]["loss"][1])

    check(jhw.load_runs(path))
    assert path.read_bytes() == before  # a reader never writes
    with jhw.Store(path, name="new"):
        run = Stream(record_layout(["v"], ["float32"]))
        run.send([np.array([[7.0, 8.0]], np.float32)])
        run.end()
    runs = jhw.load_runs(path)
    check(runs)
    assert runs[2].name == "new" and runs[2].lane_rows(0)[0].tolist() == [7.0, 8.0]
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == schema.VERSION
        assert conn.execute(
            "SELECT value FROM history WHERE run=1 AND field='i' ORDER BY step"
        ).fetchall() == [(0,), (1,), (2,), (3,)]
        tables = {n for (n,) in conn.execute("SELECT name FROM sqlite_master")}
    assert "rows" not in tables and "nan_bits" not in tables
