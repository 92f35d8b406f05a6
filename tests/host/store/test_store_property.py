"""A store's round trip, over random names (any ``str``), dtypes, shapes, leaf counts, lanes,
chunks and run counts: what goes in through the hub comes back bit for bit, under its exact
names, and the SQL view serves every value of it."""

from __future__ import annotations

import sqlite3
import tempfile
from pathlib import Path

import ml_dtypes
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import jaxhist_widget as jhw

from ...helpers.stores import DTYPES, Stream, record_layout, same_bits

ALL_DTYPES = [*DTYPES, "int64", "uint64", "float64"]
ODD = ["\x00", "\ud800", "\udce9", "\x1b[0m", '"', "'", ".", "[0]", " ", "\n", "é"]

names = st.lists(st.one_of(st.characters(), st.sampled_from(ODD)), min_size=1, max_size=8).map(
    "".join
)
leaf = st.tuples(
    names, st.sampled_from(ALL_DTYPES), st.sampled_from([(), (3,), (2, 2), (0,), (1,)])
)
run = st.fixed_dictionaries(
    {
        "name": names.filter(lambda s: s.strip()),
        "leaves": st.lists(leaf, min_size=1, max_size=5, unique_by=lambda x: x[0]),
        "lanes": st.sampled_from([None, 1, 2, 5]),
        "sends": st.lists(st.integers(0, 40), min_size=1, max_size=4),
        "seed": st.integers(0, 2**32 - 1),
    }
)


def values(rng, dtype_name, shape):
    """Random bit patterns of a dtype (NaNs, infinities and -0 among them)."""
    dt = np.dtype(getattr(ml_dtypes, dtype_name, dtype_name))
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    is_float = dtype_name.startswith(("float", "bfloat"))
    bits = (ml_dtypes.finfo if is_float else ml_dtypes.iinfo)(dt).bits
    unsigned = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize]
    raw = rng.integers(0, 2**bits, shape, dtype=np.uint64, endpoint=False) if bits < 64 else (
        rng.integers(0, 2**63, shape, dtype=np.uint64) * 2 + rng.integers(0, 2, shape, np.uint64)
    )  # fmt: skip
    return raw.astype(unsigned).view(dt)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(run, min_size=1, max_size=3))
def test_what_goes_into_a_store_comes_back_exactly(runs):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "runs.db"
        sent = []
        store = jhw.Store(path)
        with store:
            for spec in runs:
                rng = np.random.default_rng(spec["seed"])
                leaf_names, dtypes, shapes = zip(*spec["leaves"], strict=True)
                layout = record_layout(leaf_names, dtypes, shapes)
                store.name = spec["name"]
                stream = Stream(layout, spec["lanes"])
                b = 1 if spec["lanes"] is None else spec["lanes"]
                rows = [[[] for _ in range(b)] for _ in leaf_names]
                for k in spec["sends"]:
                    counts = rng.integers(0, k + 1, b)
                    chunk = [
                        values(rng, d, (b, k, *s)) for d, s in zip(dtypes, shapes, strict=True)
                    ]
                    stream.send(chunk, counts)
                    for j, x in enumerate(chunk):
                        for lane in range(b):
                            rows[j][lane].append(x[lane, : counts[lane]])
                stream.end()
                sent.append((spec, leaf_names, dtypes, shapes, rows))
        back = jhw.load_runs(path)
        assert len(back) == len(sent)
        total = 0
        for got, (spec, leaf_names, dtypes, shapes, rows) in zip(back, sent, strict=True):
            assert got.name == spec["name"] and got.layout.names == leaf_names
            assert got.lanes == spec["lanes"] and got.status == "converged"
            for lane in range(len(got.counts)):
                for j, lane_rows in enumerate(got.lane_rows(lane)):
                    dt = np.dtype(getattr(ml_dtypes, dtypes[j], dtypes[j]))
                    want = np.concatenate(rows[j][lane]) if rows[j][lane] else np.zeros(
                        (0, *shapes[j]), dt
                    )  # fmt: skip
                    same_bits(lane_rows, want)
            total += sum(got.counts) * len(leaf_names)
        with sqlite3.connect(path) as conn:
            assert conn.execute("SELECT count(*) FROM history").fetchone() == (total,)
        store.close()
