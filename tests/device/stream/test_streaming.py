"""Host streaming: routing by run id, chunking, vmap, sink failures, the property test."""

from __future__ import annotations

import functools
import re
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jaxhist_widget as jhw
from jaxhist_widget import _wire
from jaxhist_widget._host import HUB

from ...helpers.backends import cpu_only
from ...helpers.loops import slow_counter


def halve(x0, tol=1.0, max_steps=5, **kw):
    return jhw.while_loop(lambda x: x > tol, lambda x: x / 2, x0, max_steps=max_steps, **kw)


@pytest.fixture
def count_calls(monkeypatch):
    """Count host calls per registry entry point (patch before tracing: they are bound then)."""
    counts = {"open_run": 0, "receive_chunk": 0}
    for name in counts:
        real = getattr(HUB, name)

        def wrapper(*args, _real=real, _name=name):
            counts[_name] += 1
            return _real(*args)

        monkeypatch.setattr(HUB, name, wrapper)
    return counts


# ------------------------------------------------------------------------------ routing
def test_recorders_used_in_turn_get_their_own_rows_from_one_compiled_function():
    solve = jax.jit(halve)
    with jhw.Recorder() as first:
        solve(10.0)
    with jhw.Recorder() as second:
        solve(3.0)  # a jit cache hit: the traced code must not hold the first recorder
    solve(7.0)  # nothing attached: dropped
    jax.effects_barrier()
    assert [r.history().tolist() for r in first.runs] == [[10.0, 5.0, 2.5, 1.25, 0.625]]
    assert [r.history().tolist() for r in second.runs] == [[3.0, 1.5, 0.75]]
    assert HUB.live_runs() == []  # every run was closed and forgotten


def test_several_sinks_at_once_and_nested():
    with jhw.Recorder() as a:
        halve(10.0)
        with jhw.Recorder() as b:
            halve(3.0)
    assert len(a.runs) == 2 and len(b.runs) == 1
    np.testing.assert_array_equal(a.history(), b.history())


def test_nothing_attached_makes_no_chunk_calls(count_calls):
    jax.jit(lambda x: halve(x, tol=1e-30, max_steps=500))(10.0)
    jax.effects_barrier()
    # one call to open the run, and none after: rows are not even packed for sending
    assert count_calls == {"open_run": 1, "receive_chunk": 0}


def test_stream_false_makes_no_host_calls(count_calls):
    with jhw.Recorder() as rec:
        _, hist = jax.jit(lambda x: halve(x, stream=False))(10.0)
    assert sum(count_calls.values()) == 0
    assert rec.runs == [] and int(hist.length) == 5


def test_history_before_any_run_is_a_clear_error():
    with pytest.raises(LookupError, match="no run yet"):
        jhw.Recorder().history()


# ----------------------------------------------------------------------------- chunking
def test_fixed_chunks_one_host_call_per_chunk(count_calls):
    f = jax.jit(lambda x: halve(x, tol=-1.0, max_steps=100, stream_every=16))
    with jhw.Recorder() as rec:
        _, hist = f(1.0)
    # 101 rows: six full chunks of 16 in the loop, then the flush on the last step, which
    # carries the end status and closes the run (no separate closing call)
    assert count_calls["receive_chunk"] == 7
    assert rec.runs[-1].status == "max_steps" and HUB.live_runs() == []
    np.testing.assert_array_equal(rec.history(), hist.to_numpy())


def test_auto_streaming_is_cheap_for_a_fast_loop(count_calls):
    n = 20_000
    with jhw.Recorder() as rec:
        _, _hist = jax.jit(lambda x: halve(x, tol=-1.0, max_steps=n))(1.0)
    assert len(rec.history()) == n + 1
    # a 4-byte row packs 1024 to a call: ~20 calls, not 20 000
    assert count_calls["receive_chunk"] <= n // 512


@pytest.mark.slow  # compiles several loops: kept out of the quick subset
def test_auto_streaming_delivers_rows_of_a_slow_loop_promptly():
    arrivals = []

    class Clock(jhw.Recorder):
        def on_rows(self, run, lanes):
            arrivals.append((time.perf_counter(), run.counts[0]))

    steps = 12
    f = slow_counter(step_seconds=0.06, max_steps=50, steps=steps)
    f(jnp.float32(0))  # compile outside the measurement
    with Clock() as rec:
        t0 = time.perf_counter()
        f(jnp.float32(0))
    assert len(rec.history()[1]) == steps + 1
    # With >= 50 ms steps every row is its own chunk, so each arrives right after its step.
    assert len(arrivals) >= steps - 1
    gaps = np.diff([t0] + [t for t, _ in arrivals])
    assert gaps.max() < 0.5, gaps  # generous: the point is "not held back until the end"


# --------------------------------------------------------------------------------- vmap
def test_vmap_one_host_call_per_chunk_for_the_whole_batch(count_calls):
    lanes = 64
    x0 = jnp.linspace(1.0, 1e6, lanes)
    f = jax.jit(jax.vmap(lambda x: halve(x, tol=1.0, max_steps=40, stream_every=8)))
    with jhw.Recorder() as rec:
        _, hist = f(x0)
    dev = hist.to_numpy()
    got = rec.history()
    assert len(got) == lanes
    for lane in range(lanes):
        np.testing.assert_array_equal(got[lane], dev[lane])
    # the longest lane has 21 rows: chunks at 8, 16, and a forced flush at its end (one call
    # flushes every lane that is due); far fewer calls than lanes x chunks
    longest = max(len(d) for d in dev)
    assert count_calls["receive_chunk"] <= longest // 8 + len({len(d) for d in dev}) + 1
    assert count_calls["receive_chunk"] < lanes
    assert count_calls["open_run"] == 1
    run = rec.runs[-1]
    assert run.lanes == lanes and run.status == "converged"


def test_lanes_that_finished_early_emit_no_extra_rows():
    seen = []

    class Spy(jhw.Recorder):
        def on_rows(self, run, lanes):
            seen.append((tuple(lanes), tuple(run.counts)))

    with Spy() as rec:
        jax.vmap(lambda x: halve(x, max_steps=20, stream_every=1))(jnp.array([0.5, 4.0, 1e5]))
    final = rec.runs[-1].counts
    assert final == [1, 3, 18]
    for _lanes, counts in seen:  # a lane never grows after it finished
        assert all(c <= f for c, f in zip(counts, final, strict=True))


# ---------------------------------------------------------------------- sink failures
def test_a_failing_sink_never_kills_the_run_or_the_device_history():
    class Broken(jhw.Sink):
        def on_rows(self, run, lanes):
            raise ZeroDivisionError("boom")

    # The warning is awaited outermost: a sink's block ends once the device is done (dispatch
    # may be asynchronous), so the warning comes by the time the innermost block has ended.
    with pytest.warns(RuntimeWarning, match="ZeroDivisionError"), jhw.Recorder() as ok, Broken():
        _final, hist = jax.jit(lambda x: halve(x, stream_every=1))(10.0)
    np.testing.assert_allclose(hist.to_numpy(), [10.0, 5.0, 2.5, 1.25, 0.625])
    np.testing.assert_array_equal(ok.history(), hist.to_numpy())  # other sinks still served


# ------------------------------------------------------------------------- the property
def reference(x0, scale, shift, tol, max_steps):
    rows, x = [np.float32(x0)], np.float32(x0)
    if abs(np.float32(tol)) < np.finfo(np.float32).tiny:
        tol = np.float32(0)  # a subnormal tol is flushed to zero by XLA too (x > tol differs)
    while len(rows) <= max_steps and x > tol:
        x = np.float32(x * np.float32(scale) + np.float32(shift))
        if abs(x) < np.finfo(np.float32).tiny:
            x = np.float32(0)  # XLA on CPU flushes subnormals to zero; numpy does not
        rows.append(x)
    return np.array(rows, np.float32)


def f32(lo, hi):
    # No subnormals: XLA on CPU flushes them to zero (a loop from 1e-45 with `x > 0` takes no
    # step, as `lax.while_loop` does), while the numpy reference compares them unflushed.
    return st.floats(lo, hi, width=32, allow_subnormal=False)


@functools.partial(jax.jit, static_argnames=("max_steps", "every"))
def affine(x0, scale, shift, tol, max_steps, every):
    return jhw.while_loop(
        lambda x: x > tol,
        lambda x: x * scale + shift,
        x0,
        max_steps=max_steps,
        stream_every="auto" if every == 0 else every,
    )


@settings(max_examples=40, deadline=None)
@given(
    x0=f32(-5, 100),
    scale=f32(0.125, 0.875),
    shift=f32(-1, 0.5),
    tol=f32(-2, 10),
    max_steps=st.sampled_from([1, 3, 17, 64]),
    every=st.sampled_from([0, 1, 4, 16]),
)
@pytest.mark.slow  # compiles several loops: kept out of the quick subset
def test_streamed_rows_equal_device_rows_equal_python(x0, scale, shift, tol, max_steps, every):
    with jhw.Recorder() as rec:
        _, hist = affine(x0, scale, shift, tol, max_steps=max_steps, every=every)
    jax.effects_barrier()
    want = reference(x0, scale, shift, tol, max_steps)
    np.testing.assert_allclose(hist.to_numpy(), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(rec.history(), hist.to_numpy())
    assert rec.runs[-1].status == (
        "max_steps" if len(want) == max_steps + 1 and want[-1] > tol else "converged"
    )


@settings(max_examples=15, deadline=None)
@given(
    x0=st.lists(f32(-5, 100), min_size=1, max_size=5),
    tol=f32(-2, 10),
    max_steps=st.sampled_from([1, 9, 40]),
    every=st.sampled_from([0, 1, 7]),
)
@pytest.mark.slow  # compiles several loops: kept out of the quick subset
def test_vmapped_lanes_stream_exactly_their_python_reference(x0, tol, max_steps, every):
    scale, shift = np.float32(0.5), np.float32(0.25)
    lanes = jnp.asarray(x0, jnp.float32)
    with jhw.Recorder() as rec:
        _, hist = jax.vmap(
            lambda x: affine(x, scale, shift, tol, max_steps=max_steps, every=every)
        )(lanes)
    device, streamed = hist.to_numpy(), rec.history()
    for lane, x in enumerate(x0):
        want = reference(x, scale, shift, tol, max_steps)
        np.testing.assert_allclose(device[lane], want, rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(streamed[lane], device[lane])
        # rows past the lane's length are untouched padding (row 0), whatever the other lanes did
        assert (np.asarray(hist.values)[lane, len(want) :] == np.float32(x)).all()


def mixed_record(c):
    i, x = c
    return {
        "flag": x > 2.0,
        "i8": i.astype(jnp.int8),
        "u16": (i * 1000).astype(jnp.uint16),
        "half": x.astype(jnp.float16),
        "bf16": x.astype(jnp.bfloat16),
        "vec": jnp.stack([x, -x]),
        "i": i,
    }


def test_every_dtype_streams_bit_exact():
    def loop(x0):
        return jhw.while_loop(
            lambda c: c[0] < 7,
            lambda c: (c[0] + 1, c[1] * 1.5),
            (jnp.int32(0), x0),
            max_steps=9,
            record=mixed_record,
            stream_every=3,
        )

    with jhw.Recorder() as rec:
        _, hist = jax.jit(loop)(jnp.float32(1.0))
    device, streamed = hist.to_numpy(), rec.history()
    for key in device:
        assert streamed[key].dtype == device[key].dtype, key
        np.testing.assert_array_equal(streamed[key], device[key], err_msg=key)
    assert device["flag"].tolist() == [False, False, True, True, True, True, True, True]


def test_64_bit_leaves_stream_bit_exact():
    with jax.enable_x64(True):
        x0 = jnp.float64(1.0) + 1e-12  # not representable in float32
        with jhw.Recorder() as rec:
            _, hist = jhw.while_loop(
                lambda c: c[0] < 2**40 + 5,
                lambda c: (c[0] + 1, c[1] * 3.0),
                (jnp.int64(2**40), x0),
                max_steps=9,
            )
        device, streamed = hist.to_numpy(), rec.history()
    assert device[1].dtype == np.float64 and device[0].dtype == np.int64
    assert device[0].tolist() == [2**40 + i for i in range(6)]
    for d, s in zip(device, streamed, strict=True):
        np.testing.assert_array_equal(s, d)


# ------------------------------------------------------------------ no effectful callback
@cpu_only
@pytest.mark.parametrize("lanes", [None, 4])
def test_compiled_loop_holds_no_effectful_callback(lanes):
    # An effectful callback (jax.debug.callback, io_callback) anywhere in a program made XLA's
    # CPU loop ~10% slower per step (benchmarks/overhead.py); the loop uses only pure callbacks
    # whose answers it needs, the last flush ending the run.
    f = lambda x: halve(x, tol=1e-3, max_steps=50)  # noqa: E731
    f, x = (jax.jit(f), 1.0) if lanes is None else (jax.jit(jax.vmap(f)), jnp.ones(lanes))
    calls = [
        line
        for line in f.lower(x).compile().as_text().splitlines()
        if "xla_ffi_python_cpu_callback" in line
    ]
    assert len(calls) == 2  # open the run, flush a chunk
    assert not any("custom_call_has_side_effect=true" in line for line in calls)
    with jhw.Recorder() as rec:
        f(x)
    run = rec.runs[-1]
    assert run.status == "converged" and run.ended is not None and run not in HUB.live_runs()


@cpu_only
@pytest.mark.parametrize("lanes", [None, 4])
def test_each_buffer_window_is_a_host_call_argument_of_its_own(lanes):
    # Joined into one array, XLA fused each window's slice into the join, an index computation
    # per element (0.55 ms a MiB against 0.25 ms for the slices, in a loop of host calls; see
    # streaming.py); flattening a window does the same. So a flush hands the host its small
    # head (header + lane words), then one window per history buffer (here an int32 one and a
    # float32 one), in its own shape: (lanes, rows, columns).
    def loop(x):
        return jhw.while_loop(
            lambda c: c[0] < 30,
            lambda c: (c[0] + 1, c[1] * 0.5),
            (jnp.int32(0), x),
            max_steps=30,
            record=lambda c: {"n": c[0], "x": c[1]},
            stream_every=8,
        )

    b = 1 if lanes is None else lanes
    f = jax.jit(loop) if lanes is None else jax.jit(jax.vmap(loop))
    hlo = f.lower(jnp.ones((5,) if lanes is None else (lanes, 5))).compile().as_text()
    operands = [
        re.findall(r"\w+\[([\d,]+)\]", line.split("operand_layout_constraints=")[1].split("}}")[0])
        for line in hlo.splitlines()
        if "xla_ffi_python_cpu_callback" in line
    ]
    # the loop's last answer (stop, interval, run id), the lane words, then a window per buffer
    lane_words = _wire.LANE_FIELDS * b
    assert ["3", str(lane_words), f"{b},8,1", f"{b},8,5"] in operands, operands  # 8 rows
    with jhw.Recorder() as rec:
        _, hist = f(jnp.ones((5,) if lanes is None else (lanes, 5)))
    np.testing.assert_equal(rec.history(), hist.to_numpy())


@pytest.mark.parametrize("lanes", [None, 3])
def test_a_run_with_no_step_is_closed_by_its_only_flush(count_calls, lanes):
    f = lambda x: halve(x, tol=100.0, max_steps=50)  # noqa: E731 - done before its first step
    f, x = (jax.jit(f), 1.0) if lanes is None else (jax.jit(jax.vmap(f)), jnp.ones(lanes))
    with jhw.Recorder() as rec:
        _, hist = f(x)
    assert count_calls == {"open_run": 1, "receive_chunk": 1}
    run = rec.runs[-1]
    assert run.status == "converged" and run not in HUB.live_runs()
    np.testing.assert_array_equal(rec.history(), hist.to_numpy())  # row 0 arrived


# ------------------------------------------------------------ a loop's pace, remembered
@pytest.mark.parametrize("kind", ["while_loop", "scan"])
@pytest.mark.parametrize("start", ["per lane", "shared"])
def test_a_loop_run_again_with_more_lanes_keeps_every_row(monkeypatch, start, kind):
    # On an accelerator a loop run again starts at the pace its last run ended with (one or
    # two calls for a short loop, not a ramp from one row). A vmapped loop's window shrinks
    # with its lanes while its Layout stays the same: the first interval remembered from a run
    # of 2 lanes (a window of 3001 rows) asked a run of 64 lanes (128 rows a window) for more
    # rows than its window carries, and the host lost them ("rows from 2000, not 0" on a TPU).
    from jaxhist_widget._device.parallel import devices

    monkeypatch.setattr(devices, "accelerated", lambda: True)  # an accelerator's budgets, pace

    def loop(rate):
        # "shared": every lane starts from the same value, only its rate differs (a sweep of
        # step sizes): row 0 is the same in every lane, so the run opens with nothing batched
        # (the first interval was capped at one lane's window: 64 lanes lost rows on a TPU).
        x = rate if start == "per lane" else jnp.float32(1.0)
        if kind == "scan":
            (x, _), hist = jhw.scan(
                lambda c, _: (c * (1.0 - 0.001 * rate), None),
                x,
                length=3000,
                record=lambda c, _: c * jnp.ones(256),  # 1 KiB a row
            )
            return x, hist
        return jhw.while_loop(
            lambda c: c[0] < 3000,
            lambda c: (c[0] + 1, c[1] * (1.0 - 0.001 * rate)),
            (jnp.int32(0), x),
            max_steps=3000,
            record=lambda c: c[1] * jnp.ones(256),  # 1 KiB a row
        )

    few, many = jax.jit(jax.vmap(loop)), jax.jit(jax.vmap(loop))
    with jhw.Recorder() as rec:
        for _ in range(3):  # the pace settles on long intervals, and is remembered
            few(jnp.ones(2))
        _, hist = many(jnp.linspace(0.5, 1.0, 64))
    run = rec.runs[-1]
    assert run.layout.accelerated and run.layout.window(64) == 128
    assert run.status == "converged" and run.counts == [3001] * 64
    np.testing.assert_array_equal(np.stack(rec.history()), np.stack(hist.to_numpy()))
