"""Any ``str`` is a name: run and leaf names with NUL, control characters, lone surrogates and the
escapes ``os.fsdecode`` gives a Latin-1 file name are filed and read back exactly; two leaves
whose paths spell alike get distinct names, the same in every sink; a leaf named ``step`` or
``lane`` keeps its column in a table.
"""

from __future__ import annotations

import os
import sqlite3

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxhist_widget as jhw

ODD = [
    "nul\x00inside",
    "\x1b[31mred\x1b[0m",
    "lone \ud800 surrogate",
    os.fsdecode(b"caf\xe9 latin-1"),  # 'caf\udce9 latin-1'
    "quote \" and ' and ; DROP TABLE runs",
    "tab\tnew\nline",
    "émoji 🙂",
]


def test_odd_run_and_leaf_names_are_filed_and_read_back_exactly(tmp_path):
    path = tmp_path / "runs.db"
    record = {name: k for k, name in enumerate(ODD)}

    def loop(x):
        return jhw.while_loop(
            lambda c: c < 3.0,
            lambda c: c + 1.0,
            x,
            max_steps=5,
            record=lambda c: {name: c * k for name, k in record.items()},
        )

    store, run = jhw.Store(path), jax.jit(loop)
    with store:
        for name in ODD:
            with store.named(name):
                run(jnp.float32(0.0))
    runs = jhw.load_runs(path)
    assert [r.name for r in runs] == ODD
    by_name = dict(zip(runs[0].layout.names, runs[0].lane_rows(0), strict=True))
    assert set(by_name) == set(ODD)
    for name, k in record.items():
        np.testing.assert_array_equal(by_name[name], np.arange(4, dtype=np.float32) * k)
    pd = pytest.importorskip("pandas")
    with sqlite3.connect(path) as conn:  # SQL readers see valid text, an escape for a surrogate
        fields = set(pd.read_sql("SELECT DISTINCT field FROM history", conn).field)
        names = list(pd.read_sql("SELECT name FROM runs", conn).name)
    assert "lone \\ud800 surrogate" in fields and "caf\\udce9 latin-1" in names


def test_leaves_whose_paths_spell_alike_get_distinct_names_in_every_sink(tmp_path):
    pytest.importorskip("bqplot")

    def loop(x):
        return jhw.while_loop(
            lambda c: c < 3.0,
            lambda c: c + 1.0,
            x,
            max_steps=5,
            record=lambda c: {"a.b": c * 10.0, "a": {"b": c * 100.0}},
        )

    path = tmp_path / "runs.db"
    live = jhw.LivePlot(fields=["a.b", "a.b (2)"])
    with jhw.Store(path), jhw.Recorder() as rec, live:
        jax.jit(loop)(jnp.float32(0.0))
    want = {"a.b": np.arange(4.0) * 100, "a.b (2)": np.arange(4.0) * 10}  # "a" sorts first
    for run in (rec.runs[0], jhw.load_runs(path)[0], live.runs[0]):
        assert run.layout.names == ("a.b", "a.b (2)")
        for name, rows in zip(run.layout.names, run.lane_rows(0), strict=True):
            np.testing.assert_array_equal(rows, want[name])
    table = jhw.load_runs(path)[0].to_pandas()
    np.testing.assert_array_equal(table["a.b (2)"], want["a.b (2)"])
    drawn = [np.asarray(m.y, np.float64) for f in live.figures for m in f.marks]
    for values in want.values():  # each leaf drawn, neither twice
        assert sum(np.array_equal(y.ravel(), values) for y in drawn) == 1


def test_leaves_named_step_and_lane_keep_their_columns(tmp_path):
    pytest.importorskip("pandas")
    path = tmp_path / "runs.db"

    def loop(x):
        return jhw.while_loop(
            lambda c: c < x + 2.0,
            lambda c: c + 1.0,
            x,
            max_steps=5,
            record=lambda c: {"step": c, "lane": -c, "step_value": 2 * c},
        )

    with jhw.Store(path):
        jax.jit(jax.vmap(loop))(jnp.array([0.0, 10.0]))
    table = jhw.load_runs(path)[0].to_pandas()
    assert list(table.columns) == ["step", "lane", "lane_value", "step_value",
                                   "step_value_value"]  # fmt: skip
    lane1 = table[table.lane == 1]
    np.testing.assert_array_equal(lane1.step, [0, 1, 2])
    np.testing.assert_array_equal(lane1.step_value, [10.0, 11.0, 12.0])  # the leaf "step"
    np.testing.assert_array_equal(lane1.lane_value, [-10.0, -11.0, -12.0])
    np.testing.assert_array_equal(lane1.step_value_value, [20.0, 22.0, 24.0])
