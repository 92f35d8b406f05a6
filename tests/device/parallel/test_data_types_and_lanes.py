"""Data and lanes: lanes as a sequence, typed keys, every dtype, zero lanes, read-only
host rows, finite gradients through the padding, byte-sized chunks, no widget leak per run.

Each test names the behaviour it guards. Steps are real compute (``tanh(A @ x)``) unless the
test is about something else (a dtype's bit patterns, a key stream).
"""

from __future__ import annotations

import itertools
import time
import warnings

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from jax import lax

import jaxhist_widget as jhw
from jaxhist_widget._host import HUB
from jaxhist_widget._wire import (
    itemsize_bits,  # jax.dtypes.itemsize_bits is not in jax 0.8.0
)

from ...helpers.backends import BACKEND, PATTERN_BASE, records_here
from ...helpers.loops import bit_pattern_loop, bit_patterns

# Sweeps of dtypes, transforms and compiled programs: kept out of the quick subset.
pytestmark = pytest.mark.slow

A = jnp.asarray(np.random.default_rng(0).normal(size=(32, 32)) / 8, jnp.float32)


def tanh_loop(x0, tol=1e-3, max_steps=60, **kw):
    """``x = tanh(A @ x)`` until the step is small: a compute-bound body with no Python in it."""

    def body(c):
        x, _ = c
        y = jnp.tanh(A @ x)
        return y, jnp.linalg.norm(y - x)

    return jhw.while_loop(
        lambda c: c[1] > tol,
        body,
        (x0, jnp.float32(1.0)),
        max_steps=max_steps,
        record=lambda c: {"x": c[0], "step": c[1]},
        **kw,
    )


def lane_starts(lanes):
    return jnp.asarray(np.random.default_rng(lanes).normal(size=(lanes, 32)), jnp.float32)


@pytest.fixture
def payload_bytes(monkeypatch):
    """Bytes of each payload handed to the host (patched before tracing: bound then)."""
    moved: dict[str, list[int]] = {"receive_chunk": []}
    for name in moved:
        real = getattr(HUB, name)

        def wrapper(layout, *args, _real=real, _name=name):
            moved[_name].append(sum(np.asarray(a).nbytes for a in args))
            return _real(layout, *args)

        monkeypatch.setattr(HUB, name, wrapper)
    return moved


# ---------------------------------------------------------------- finding 3: lanes
def test_batched_history_indexes_and_iterates_like_a_list():
    x0 = lane_starts(5)
    _, hist = jax.jit(jax.vmap(tanh_loop))(x0)
    # list(hist) used to never end (an out-of-range lane was clamped): bound it to fail instead
    lanes = list(itertools.islice(iter(hist), 10))
    assert len(lanes) == 5 and len(list(hist)) == 5
    trimmed = hist.to_numpy()
    for lane, rows in zip(lanes, trimmed, strict=True):
        np.testing.assert_array_equal(lane.to_numpy()["x"], rows["x"])
    np.testing.assert_array_equal(hist[-1].to_numpy()["x"], trimmed[4]["x"])
    np.testing.assert_array_equal(hist[-5].to_numpy()["step"], trimmed[0]["step"])
    for bad in (5, -6, 100):
        with pytest.raises(IndexError, match="out of range"):
            hist[bad]
    with pytest.raises(TypeError, match="indexed by int"):
        hist[1.0]
    _, single = tanh_loop(x0[0])
    with pytest.raises(TypeError, match="not batched"):
        list(single)


# ----------------------------------------------------------- finding 8: typed PRNG keys
def key_body(c):
    key, x, i = c
    key, sub = jax.random.split(key)
    return key, x + jax.random.normal(sub, x.shape), i + 1


def key_cond(c):
    return c[2] < 12


def key_walk(key, max_steps=20):
    """A random walk whose carry holds a typed key (``jax.random.key``)."""
    return jhw.while_loop(key_cond, key_body, (key, jnp.zeros(3), jnp.int32(0)), max_steps=20)


def test_typed_key_in_the_carry_is_recorded_as_key_data():
    with jhw.Recorder() as rec:
        (key, x, _), hist = jax.jit(key_walk)(jax.random.key(7))
    # the carry comes back as a typed key, exactly the one lax computes
    assert jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key)
    ref_key, ref_x, _ = lax.while_loop(
        key_cond, key_body, (jax.random.key(7), jnp.zeros(3), jnp.int32(0))
    )
    np.testing.assert_array_equal(jax.random.key_data(key), jax.random.key_data(ref_key))
    np.testing.assert_array_equal(x, ref_x)
    # the history holds each step's key as its raw data (uint32), on device and on the host
    device = hist.to_numpy()
    assert device[0].dtype == np.uint32 and device[0].shape == (13, 2)
    k, want = jax.random.key(7), []
    for _ in range(13):
        want.append(np.asarray(jax.random.key_data(k)))
        k = jax.random.split(k)[0]
    np.testing.assert_array_equal(device[0], np.stack(want))
    streamed = rec.history()
    for d, s in zip(device, streamed, strict=True):
        assert s.dtype == d.dtype
        np.testing.assert_array_equal(s, d)
    # and wraps back into the same keys
    back = jax.random.wrap_key_data(device[0][-1])
    np.testing.assert_array_equal(jax.random.key_data(back), jax.random.key_data(key))


def test_typed_keys_under_vmap():
    keys = jax.random.split(jax.random.key(3), 4)
    with jhw.Recorder() as rec:
        (final, _, _), hist = jax.vmap(key_walk)(keys)
    assert jax.dtypes.issubdtype(final.dtype, jax.dtypes.prng_key) and final.shape == (4,)
    for lane, (dev, host) in enumerate(zip(hist.to_numpy(), rec.history(), strict=True)):
        np.testing.assert_array_equal(host[0], dev[0])
        np.testing.assert_array_equal(dev[0][-1], jax.random.key_data(final[lane]))


# ------------------------------------------------------------------ finding 9: dtypes
#: Every dtype JAX computes with on CPU that a record can hold (complex is refused).
NARROW = [
    "float4_e2m1fn", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn",
    "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
    "int2", "uint2", "int4", "uint4",
]  # fmt: skip
PLAIN = ["bool", "int8", "uint8", "int16", "uint16", "bfloat16", "float16", "int32", "uint32",
         "float32"]  # fmt: skip
ALL_DTYPES = [d for d in NARROW + PLAIN if hasattr(jnp, d) or d == "bool"]


@pytest.mark.parametrize("name", ALL_DTYPES)
@pytest.mark.parametrize("batched", [False, True])
def test_every_cpu_dtype_streams_bit_exact_with_its_numpy_dtype(name, batched):
    dtype, base = jnp.dtype(name), PATTERN_BASE.get(name, 0)
    unsigned, width = (None, 2) if dtype == jnp.bool_ else bit_patterns(dtype)
    loop = bit_pattern_loop(dtype, base=base)

    def run():
        if batched:
            return jax.jit(jax.vmap(loop))(jnp.arange(3, dtype=jnp.int32))
        return jax.jit(loop)(jnp.int32(1))

    if not records_here(name):
        with pytest.raises(TypeError, match=f"dtype {name}, which this TPU .* cannot store"):
            run()
        return
    with jhw.Recorder() as rec:
        _, hist = run()
    device = hist.to_numpy() if batched else [hist.to_numpy()]
    streamed = rec.history() if batched else [rec.history()]
    assert rec.runs[-1].status == "converged"
    want = np.dtype(getattr(ml_dtypes, name, name))
    offsets = range(3) if batched else [1]
    for offset, dev, host in zip(offsets, device, streamed, strict=True):
        for key in ("v", "s"):
            assert dev[key].dtype == want, (key, dev[key].dtype)
            assert host[key].dtype == want, (key, host[key].dtype)  # not |V1, not an error
            # bit-exact: compare the raw bytes (NaN payloads and -0 included)
            np.testing.assert_array_equal(host[key].view(np.uint8), dev[key].view(np.uint8))
            assert host[key].shape == dev[key].shape and len(dev[key]) == 10
        if unsigned is not None and want.itemsize * 8 == itemsize_bits(dtype):
            # ... and the device history holds the very patterns recorded: a write that went
            # through a float conversion would quiet or canonicalise NaNs on both sides alike
            codes = base + (offset + 7 * np.arange(10)[:, None] + np.arange(width)) % width
            bits = np.dtype(f"u{want.itemsize}")
            np.testing.assert_array_equal(dev["v"].view(bits), codes)
            np.testing.assert_array_equal(dev["s"].view(bits), codes[:, 0])


FLOAT_STORAGE = [d for d in ("float8_e4m3fn", "float8_e5m2", "float4_e2m1fn", "float8_e3m4",
                             "bfloat16", "float16") if hasattr(jnp, d)]  # fmt: skip


@pytest.mark.parametrize("name", FLOAT_STORAGE)
def test_storage_dtype_applies_to_float_leaves_and_streams(name):
    if not records_here(name):
        with pytest.raises(TypeError, match="pass dtype= a wider float"):
            jax.jit(lambda x: tanh_loop(x, dtype=jnp.dtype(name)))(lane_starts(1)[0])
        return
    with jhw.Recorder() as rec:
        _, hist = jax.jit(lambda x: tanh_loop(x, dtype=jnp.dtype(name)))(lane_starts(1)[0])
    device, streamed = hist.to_numpy(), rec.history()
    for key in ("x", "step"):
        assert device[key].dtype == np.dtype(getattr(ml_dtypes, name, name))
        assert streamed[key].dtype == device[key].dtype
        np.testing.assert_array_equal(streamed[key].view(np.uint8), device[key].view(np.uint8))
    # masked helpers work in storage types without inf (inf there would turn into NaN)
    np.testing.assert_array_equal(
        np.float32(hist.min()["x"]), device["x"].astype(np.float32).min(axis=0)
    )
    np.testing.assert_array_equal(
        np.float32(hist.max()["step"]), device["step"].astype(np.float32).max()
    )


@pytest.mark.parametrize(
    "name", ["int4", "uint4", "uint32", "float8_e4m3fn", "float4_e2m1fn", "float8_e5m2", "bool"]
)
def test_masked_helpers_ignore_padding_in_narrow_dtypes(name):
    """The padding stand-in of min/max must exist in the dtype: inf is NaN in float8_e4m3fn,
    iinfo(int4) needs ml_dtypes, a bare 2**32 - 1 overflows int32."""
    values = jnp.array([3, 1, 2, 0]).astype(name)  # the padding row (0) must be ignored
    hist = jhw.History(values, jnp.int32(3))
    real = np.asarray(values[:3])
    assert np.asarray(hist.min()) == real.min() and np.asarray(hist.max()) == real.max()
    assert int(hist.argmin()) == real.argmin() and int(hist.argmax()) == real.argmax()


@pytest.mark.parametrize("bad", [jnp.int8, jnp.bool_, "int32", jnp.uint4, jnp.complex64, "nope"])
def test_non_floating_storage_dtype_is_refused(bad):
    """Finding 13: ``dtype=jnp.int8`` used to truncate float leaves silently."""
    with pytest.raises(TypeError, match="must be a floating dtype"):
        tanh_loop(lane_starts(1)[0], dtype=bad)


# --------------------------------------------------------------- finding 10: zero lanes
def test_vmap_over_zero_lanes_ends_cleanly_and_matches_lax():
    empty = jnp.zeros((0, 32), jnp.float32)
    rec, live = jhw.Recorder(), jhw.LivePlot()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # how a failing host call is reported
        with rec, live:
            (x, step), hist = jax.jit(jax.vmap(tanh_loop))(empty)
    ref_x, ref_step = jax.vmap(
        lambda x0: lax.while_loop(
            lambda c: c[1] > 1e-3,
            lambda c: (jnp.tanh(A @ c[0]), jnp.linalg.norm(jnp.tanh(A @ c[0]) - c[0])),
            (x0, jnp.float32(1.0)),
        )
    )(empty)
    assert x.shape == ref_x.shape == (0, 32) and step.shape == ref_step.shape == (0,)
    assert x.dtype == ref_x.dtype and step.dtype == ref_step.dtype
    assert hist.values["x"].shape == (0, 61, 32) and hist.length.shape == (0,)
    assert hist.to_numpy() == [] and list(hist) == []
    run = rec.runs[-1]
    assert run.lanes == 0 and run.counts == [] and run.statuses == []
    assert run.status == "converged" and run.ended is not None
    assert rec.history() == [] and live.history() == []
    assert run not in HUB.live_runs()
    assert live.panel.status == "converged" and not live.running


# ----------------------------------------------------------- finding 11: read-only rows
def test_host_rows_are_read_only_so_no_sink_rewrites_another():
    rec, live = jhw.Recorder(), jhw.LivePlot()
    with rec, live:
        _, hist = jax.jit(tanh_loop)(lane_starts(1)[0])
    run = rec.runs[-1]
    before = np.array(run.lane_rows(0)[0])
    views = [
        rec.history()["step"],
        live.history()["x"],
        run.history()["step"],
        run.lane_rows(0)[1],
        run.rows_since(0, 3)[0],
    ]
    for arr in views:
        with pytest.raises(ValueError, match="read-only"):
            arr[0] = -1
    np.testing.assert_array_equal(run.lane_rows(0)[0], before)
    np.testing.assert_array_equal(live.history()["step"], hist.to_numpy()["step"])
    copy = np.array(rec.history()["step"])  # the documented way to edit
    copy[0] = -1
    assert rec.history()["step"][0] != -1


# ------------------------------------------------------- finding 12: finite gradients
def test_gradient_of_a_transformed_history_is_finite_and_correct():
    """The issue's expression: values transformed before a masked reduction."""
    _, hist = jax.jit(tanh_loop)(lane_starts(1)[0])
    v, length = hist.values["step"], hist.length
    n = int(length)
    assert n < v.shape[0]  # there are padding rows
    real = np.asarray(v[:n], np.float64)

    g = jax.grad(lambda t: jhw.History((v - t) ** 2, length).mean())(jnp.float32(0.25))
    assert np.isfinite(float(g)), "NaN padding times a zero cotangent"
    np.testing.assert_allclose(float(g), -2 * np.mean(real - 0.25), rtol=1e-5)

    # a transform with a restricted domain: finite on the real rows, so on the padding too
    g = jax.grad(lambda t: jhw.History(jnp.log(v + t), length).sum())(jnp.float32(0.5))
    np.testing.assert_allclose(float(g), np.sum(1 / (real + 0.5)), rtol=1e-5)


def test_padding_rows_repeat_row_zero_and_gradients_stay_finite_under_vmap():
    x0 = lane_starts(4)
    _, hist = jax.jit(jax.vmap(lambda x: tanh_loop(x, tol=1e-2)))(x0)
    values = np.asarray(hist.values["x"])
    for lane, n in enumerate(np.asarray(hist.length)):
        assert n < values.shape[1]
        padding = values[lane, n:]
        np.testing.assert_array_equal(padding, np.broadcast_to(values[lane, 0], padding.shape))

    def loss(t):
        return jhw.History((hist.values["x"] - t) ** 2, hist.length).mean().sum()

    g = jax.grad(loss)(jnp.float32(0.5))
    want = sum(
        -2 * np.mean(rows["x"].astype(np.float64) - 0.5, axis=0).sum() for rows in hist.to_numpy()
    )
    np.testing.assert_allclose(float(g), want, rtol=1e-4)


def test_tail_needs_an_int():
    """Finding 13: ``tail(2.7)`` was accepted (as 2)."""
    _, hist = tanh_loop(lane_starts(1)[0])
    for bad in (2.7, True, "2", jnp.float32(2)):
        with pytest.raises(TypeError, match="static Python int"):
            hist.tail(bad)
    _, valid = hist.tail(np.int64(2))
    assert valid.shape == (2,)


# --------------------------------------------------- finding 14: chunks sized by bytes
def test_auto_chunks_are_sized_by_bytes(payload_bytes):
    """Large rows flushed one at a time (slow steps) must not each carry a 16-row window."""
    # the byte budgets of the backend the loops are traced for (an accelerator's are larger)
    w = jhw._wire
    single, lanes = (
        (w.ACCEL_CHUNK_BYTES, w.ACCEL_LANES_CHUNK_BYTES)
        if BACKEND != "cpu"
        else (
            w.CHUNK_BYTES,
            w.LANES_CHUNK_BYTES,
        )
    )
    width = single // 4  # float32 rows of the whole per-flush budget

    def slow(x):
        time.sleep(0.06)  # slower than the ~50 ms auto target: one row per flush
        return x

    def body(c):
        i, x = c
        x = jax.pure_callback(slow, jax.ShapeDtypeStruct(x.shape, x.dtype), x)
        return i + 1, jnp.tanh(x * 0.5 + 1.0)

    loop = jax.jit(
        lambda x: jhw.while_loop(lambda c: c[0] < 6, body, (jnp.int32(0), x), max_steps=40)
    )
    with jhw.Recorder() as rec:
        _, hist = loop(jnp.zeros(width, jnp.float32))
    run = rec.runs[-1]
    np.testing.assert_array_equal(rec.history()[1], hist.to_numpy()[1])
    row = run.layout.row_nbytes
    moved = sum(payload_bytes["receive_chunk"])
    rows = run.counts[0] * row
    # every flush carries at least one row in a two-row window (and the last one ends the run)
    assert moved <= 2 * rows + 4096, (moved, rows)
    assert run.layout.chunk == 2

    # tiny rows are not capped at 1024 per window: a window fills the byte budget
    with jhw.Recorder() as rec:
        jhw.while_loop(lambda x: x < 1e9, lambda x: x + 1.0, 0.0, max_steps=100_000)
    assert rec.runs[-1].layout.chunk == min(single // 4, 100_001)  # or the whole loop

    # ... and vmap lanes share that budget: 64 lanes do not send 64 windows of it per call
    payload_bytes["receive_chunk"].clear()
    with jhw.Recorder() as rec:
        jax.vmap(
            lambda x: jhw.while_loop(lambda x: x < 5e3, lambda x: x + 1.0, x, max_steps=10**5)
        )(jnp.arange(64, dtype=jnp.float32))
    sizes = payload_bytes["receive_chunk"]
    assert sizes and max(sizes) <= lanes + 4 * (3 + 4 * 64)
    np.testing.assert_array_equal(rec.history()[3], np.arange(3, 5001, dtype=np.float32))


# ------------------------------------------------- finding 15: no widget leak per run
def _widget_count() -> int:
    from ipywidgets.widgets.widget import _instances

    return len(_instances)


def test_replaced_runs_close_their_marks():
    live = jhw.LivePlot(keep_runs=False)
    loop = jax.jit(tanh_loop)
    x0 = lane_starts(1)[0]
    with live:
        loop(x0)
    baseline = _widget_count()
    # one chart per field: the scalar's line; the vector's median line over its two bands
    drawn = len([m for f in live.figures for m in f.marks])
    assert drawn == 4
    for _ in range(100):
        with live:
            loop(x0)
    assert _widget_count() == baseline
    marks = [m for f in live.figures for m in f.marks]
    assert len(marks) == drawn and all(m.comm is not None for m in marks)
    # switching keep_runs off and clear() close what they drop too
    live.keep_runs = True
    for _ in range(3):
        with live:
            loop(x0)
    live.keep_runs = False
    assert _widget_count() == baseline
    live.clear()
    assert _widget_count() == baseline - drawn  # the run's marks
    assert [m for f in live.figures for m in f.marks] == []
