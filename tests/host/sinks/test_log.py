"""`jhw.log`: a Python loop over a jitted step streams a row per call, as one run per block,
without waiting for the device each step; a stop (a sink, another thread, Ctrl-C) ends the
loop with every row logged so far kept."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import threading
import time
import warnings

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import jaxhist_widget as jhw

from ...helpers.sinks import StopAfter

STEP = jax.jit(lambda w: (w * 0.9, jnp.sum(w**2)))


def train(steps, **extra):
    """A Python loop over a jitted step, logging its loss (and ``extra``) each step."""
    w = jnp.ones(4)
    losses = []
    for _ in range(steps):
        w, loss = STEP(w)
        losses.append(loss)
        jhw.log(loss=loss, **extra)
    return np.asarray(jax.device_get(losses))


def test_a_row_per_call_one_run_per_block_the_same_values():
    with jhw.Recorder() as rec:
        losses = train(300)
    (run,) = rec.runs
    assert run.status == "converged" and run.counts == [300] and run.lanes is None
    np.testing.assert_array_equal(rec.history()["loss"], losses)  # exactly, as float32
    assert rec.history()["loss"].dtype == np.float32
    train(3)  # no sink attached: nothing is kept, nothing fails
    assert len(rec.runs) == 1


def test_values_of_any_dtype_and_shape_arrive_exactly_and_step_is_kept():
    rows = [
        {
            "bf16": jnp.asarray(i / 3, jnp.bfloat16),
            "i8": np.int8(-i),
            "flag": i % 2 == 0,
            "x": jnp.arange(3.0) * i,
            "py": i / 7,
            "empty": np.zeros((0, 2)),
        }
        for i in range(20)
    ]
    with jhw.Recorder() as rec:
        for i, row in enumerate(rows):
            jhw.log(step=100 + 10 * i, **row)
    got = rec.history()
    assert sorted(got) == ["bf16", "empty", "flag", "i8", "py", "step", "x"]
    np.testing.assert_array_equal(got["step"], 100 + 10 * np.arange(20))
    np.testing.assert_array_equal(got["bf16"], np.array(jax.device_get([r["bf16"] for r in rows])))
    assert got["bf16"].dtype == ml_dtypes.bfloat16 and got["i8"].dtype == np.int8
    np.testing.assert_array_equal(got["flag"], [r["flag"] for r in rows])
    np.testing.assert_array_equal(got["x"], np.stack(jax.device_get([r["x"] for r in rows])))
    np.testing.assert_array_equal(got["py"], [r["py"] for r in rows])
    assert got["empty"].shape == (20, 0, 2)
    layout = rec.runs[-1].layout  # the plot leaves `step` out: its step axis counts the rows
    assert layout.step_counters == (layout.names.index("step"),)


def test_the_loop_does_not_wait_for_the_device():
    # An order, not a time: each value is still being computed when its jhw.log call returns
    # (a call that waited for it would return it computed). The step is made long enough here
    # (~0.3 s) that the device cannot finish it meanwhile, on a CPU as on a chip, where a fixed
    # step took 1.5 ms and compared with the loop's own time lost to noise.
    a = jax.random.normal(jax.random.key(0), (512, 512)) / 23

    @jax.jit
    def heavy(x, n):  # pure XLA work: JAX returns before the device has done it
        x = jax.lax.fori_loop(0, n, lambda _, x: jnp.tanh(a @ x), x)
        return x, jnp.sum(x)

    x, n = jnp.ones((512, 64)), 4
    jax.block_until_ready(heavy(x, n))  # compiled
    while True:  # n iterations to ~0.3 s of device time
        t = time.perf_counter()
        jax.block_until_ready(heavy(x, n))
        took = time.perf_counter() - t
        if took >= 0.25:
            break
        n = int(n * min(16.0, 0.3 / took)) + 1
    computed = []
    with jhw.Recorder() as rec:
        for _ in range(3):
            x, total = heavy(x, n)
            jhw.log(total=total)  # not computed yet: kept, not waited for
            computed.append(total.is_ready())
    assert computed == [False] * 3, f"jhw.log waited for the step's value ({n} iterations)"
    assert rec.runs[-1].counts == [3]  # all in once the block ended
    np.testing.assert_array_equal(rec.history()["total"][-1], total)


def test_bad_calls_say_what_to_fix():
    with jhw.Recorder():
        with pytest.raises(TypeError, match="at least one value"):
            jhw.log()
        jhw.log(loss=1.0)
        with pytest.raises(TypeError, match="log the same names every call"):
            jhw.log(acc=1.0)
        with pytest.raises(ValueError, match="log the same shapes every call"):
            jhw.log(loss=np.ones(2))
        with pytest.raises(TypeError, match="inside jit it sees tracers"):
            jax.jit(lambda x: jhw.log(loss=x))(1.0)


def test_each_block_is_a_run_and_an_error_fails_it():
    outer, inner = jhw.Recorder(), jhw.Recorder()
    with outer:
        jhw.log(x=1.0)
        with inner:
            jhw.log(x=2.0)
            jhw.log(x=3.0)
        jhw.log(x=4.0)
    assert [r.history()["x"].tolist() for r in outer.runs] == [[1.0], [2.0, 3.0], [4.0]]
    assert [r.history()["x"].tolist() for r in inner.runs] == [[2.0, 3.0]]
    with pytest.raises(ZeroDivisionError), outer:
        jhw.log(x=5.0)
        1 / 0  # noqa: B018
    assert outer.runs[-1].status == "failed" and outer.runs[-1].counts == [1]


def test_a_stop_from_a_sink_ends_the_loop_with_its_rows_and_the_code_after_the_block_runs():
    rec = StopAfter(rows=50)
    done = 0
    with rec:
        for i in range(100_000):
            jhw.log(i=i)  # numbers: made on the host, so every row is ready at once
            done += 1
    run = rec.runs[-1]
    rows = rec.history()["i"].tolist()
    # the loop learns of the stop a few calls later (the rows go to the host on the worker
    # thread) and ends there; the run holds every row it logged, the ones after the stop too
    assert run.status == "stopped" and 50 <= done < 100_000
    assert len(rows) == done + 1  # the call that raised logged its row first
    assert rows == list(range(len(rows)))
    with rec:  # the same block again: a new run, no stale stop
        jhw.log(i=0)
    assert rec.runs[-1].status == "converged"


def test_a_stop_from_another_thread_keeps_every_row_the_loop_logged():
    # A step of pure XLA work, dispatched faster than the device does it: the loop runs ahead
    # of the device, so rows whose values are still being computed are pending at the stop.
    a = jax.random.normal(jax.random.key(0), (256, 256)) / 16

    @jax.jit
    def heavy(x):
        x = jax.lax.fori_loop(0, 8, lambda _, x: jnp.tanh(a @ x), x)
        return x, x[0, 0]

    x = jnp.ones((256, 32))
    jax.block_until_ready(heavy(x))
    rec = jhw.Recorder()
    threading.Timer(0.3, rec.stop).start()
    logged = []
    with rec:
        for _ in range(10**7):
            x, y = heavy(x)
            logged.append(y)
            jhw.log(y=y)
    assert rec.runs[-1].status == "stopped" and len(logged) > 50
    np.testing.assert_array_equal(rec.history()["y"], np.asarray(jax.device_get(logged)))


def test_a_stopped_loop_inside_run_and_run_async_returns_none():
    assert StopAfter(rows=5).run(train, 1000) is None

    async def main():
        rec = StopAfter(rows=5)
        out = await rec.run_async(train, 1000)
        return out, rec.runs[-1].status

    assert asyncio.run(main()) == (None, "stopped")


def test_ctrl_c_stops_the_loop_and_keeps_its_rows():
    rec = jhw.Recorder()
    done = 0
    with rec:
        for i in range(10**7):
            jhw.log(i=i)
            done += 1
            if i == 100:  # as the notebook's ■ would, from another thread
                threading.Thread(target=os.kill, args=(os.getpid(), signal.SIGINT)).start()
    assert rec.runs[-1].status == "stopped" and 100 < done < 10**7
    assert rec.history()["i"].tolist() == list(range(done + 1))
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_store_and_a_plot_take_the_run_as_any_other(tmp_path):
    live = jhw.LivePlot(store=tmp_path / "runs.db")
    with live:
        losses = train(30)
    assert live.panel.status == "converged" and live.panel.step == 29
    (stored,) = jhw.load_runs(tmp_path / "runs.db")
    assert stored.status == "converged" and stored.layout.max_steps == 0
    np.testing.assert_array_equal(stored.history()["loss"], losses)


@pytest.mark.parametrize("kind", ["store", "tensorboard", "plot"])
def test_a_stop_from_a_store_a_tensorboard_or_a_plot_ends_the_block_as_any_sink(tmp_path, kind):
    """Their ``__exit__`` catches `Stopped` as `Sink`'s does (it let it out: each dropped the
    answer of ``super().__exit__``), so the code after the block, and after ``run``, runs."""
    make = {
        "store": lambda: jhw.Store(tmp_path / "runs.db"),
        "tensorboard": lambda: jhw.TensorBoard(tmp_path / "tb"),
        "plot": jhw.LivePlot,
    }[kind]
    sink = make()
    done = 0
    with sink:
        for i in range(100_000):
            jhw.log(i=i)
            done += 1
            if i == 20:
                sink.stop()
    assert 20 < done < 100_000
    sink = make()
    threading.Timer(0.2, sink.stop).start()
    assert sink.run(train, 10**7) is None


def matrix_for(seconds):
    """A square matrix whose product with itself keeps the calling thread in one C call for
    about ``seconds`` (Python's signal handlers wait until it returns)."""
    m = np.ones((1024, 1024))
    m @ m  # warm (BLAS starts its threads)
    t = time.perf_counter()
    m @ m
    size = int(1024 * (seconds / max(time.perf_counter() - t, 1e-6)) ** (1 / 3))
    return np.ones((size, size))


def test_a_press_the_worker_sees_first_still_keeps_every_row():
    # The main thread sits in C (no Python signal handler runs) while the worker thread
    # delivers a batch: the press is counted there, first. The run must still end with every
    # row logged, not with that batch (the hub ends a run on its stop answer).
    a = jax.random.normal(jax.random.key(0), (512, 512)) / 23

    @jax.jit
    def heavy(x, n):
        x = jax.lax.fori_loop(0, n, lambda _, x: jnp.tanh(a @ x), x)
        return x, jnp.sum(x)

    x = jnp.ones((512, 64))
    jax.block_until_ready(heavy(x, 10))
    t = time.perf_counter()
    jax.block_until_ready(heavy(x, 10))
    n = max(10, int(10 * 0.3 / (time.perf_counter() - t)))  # ~0.3 s of pure XLA work
    big = matrix_for(2.0)
    rec = jhw.Recorder()
    with rec:
        _, slow = heavy(x, n)  # dispatched: not computed yet
        jhw.log(v=slow)  # the worker waits for it
        jhw.log(v=np.float32(1))
        threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGINT)).start()
        big @ big  # no Python runs here until after the worker delivered the batch
        jhw.log(v=np.float32(2))  # sees the stop: raises jhw.Stopped, which `with` catches
        raise AssertionError("jhw.log did not raise Stopped")
    assert rec.runs[-1].status == "stopped"
    assert rec.history()["v"].tolist() == [float(slow), 1.0, 2.0]


# ------------------------------------------------------------------ what a call keeps (#48)
def donating_steps():
    """The Flax/optax idiom: a jitted step that donates its parameters; one that returns before
    the device has computed (pure XLA work), one so small it is done when it returns."""
    a = jax.random.normal(jax.random.key(0), (256, 256)) / 16

    def slow(w):
        x = jax.lax.fori_loop(0, 8, lambda _, x: jnp.tanh(a @ x), jnp.ones((256, 64)))
        return w * 0.5 + 0 * x[0, :3], jnp.sum(w)

    return {
        "slow": jax.jit(slow, donate_argnums=0),
        "quick": jax.jit(lambda w: (w * 0.5, jnp.sum(w)), donate_argnums=0),
    }


@pytest.mark.parametrize(("kind", "size"), [("slow", 3), ("quick", 3), ("quick", 20_000)])
def test_a_value_the_next_step_donates_is_logged_as_it_was(kind, size):
    # slow: not computed when logged (a device copy); quick: computed (copied in the call,
    # or, past HOST_COPY_BYTES, by a device copy too)
    step = donating_steps()[kind]
    w = jnp.ones(size)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with jhw.Recorder() as rec:
            for _ in range(20):
                jhw.log(w=w)
                w, _ = step(w)  # deletes the w just logged
    assert not [str(c.message) for c in caught if "jaxhist_widget" in str(c.message)]
    (run,) = rec.runs
    assert run.status == "converged" and run.counts == [20]
    expected = 0.5 ** np.arange(20)[:, None] * np.ones(w.shape)
    np.testing.assert_array_equal(rec.history()["w"], expected)


def test_an_array_updated_in_place_is_logged_at_its_value_then():
    acc = np.zeros(2)
    with jhw.Recorder() as rec:
        for _ in range(10):
            acc += 1  # the same array each call
            jhw.log(acc=acc)
    np.testing.assert_array_equal(rec.history()["acc"], np.arange(1, 11)[:, None] * np.ones(2))


def test_a_value_whose_dtype_would_lose_it_is_refused_at_the_call():
    with jhw.Recorder() as rec:
        total = 0
        jhw.log(total=total)
        with pytest.raises(TypeError, match=r"total was int64 .* float64 now .*total=0\.0"):
            jhw.log(total=total + 0.5)
    with jhw.Recorder(), pytest.raises(TypeError, match=r"flag was bool .* float64 now"):
        jhw.log(flag=True)
        jhw.log(flag=2.5)
    with jhw.Recorder(), pytest.raises(TypeError, match=r"n was int32 .* float32 now"):
        jhw.log(n=jnp.int32(1))
        jhw.log(n=jnp.float32(1.5))
    assert rec.history()["total"].tolist() == [0]
    # a value its run's dtype holds as it is (or rounds, as the device would) is taken
    with jhw.Recorder() as rec:
        jhw.log(x=jnp.float32(0.5), i=np.int64(1))
        jhw.log(x=0.25, i=2)
        jhw.log(x=np.float64(1 / 3), i=np.int32(3))
        jhw.log(x=True, i=np.uint8(4))
    got = rec.history()
    assert got["x"].dtype == np.float32 and got["i"].dtype == np.int64
    np.testing.assert_array_equal(got["x"], np.float32([0.5, 0.25, 1 / 3, 1.0]))
    assert got["i"].tolist() == [1, 2, 3, 4]


@pytest.mark.parametrize(
    "first, wider, fits",
    [
        (jnp.int32(7), np.int64(2**40), np.int64(-(2**31))),  # would be 0
        (jnp.int32(7), np.int64(3_000_000_000), np.int64(2**31 - 1)),  # would be -1294967296
        (np.uint8(7), np.int64(-1), np.int64(255)),  # would be 255
        (np.int8([1, 2]), np.array([5, 1000]), np.array([-128, 127])),  # would be -24
        (np.int8(1), jnp.int32(1000), jnp.int32(-5)),  # a jax integer: fetched to be checked
        (np.uint32(1), jnp.int32(-1), jnp.int32(2**31 - 1)),
        (np.int32(1), 2**40, -(2**31)),  # a Python int, refused as before
    ],
)
def test_an_integer_its_leaf_cannot_hold_is_refused_and_one_that_fits_is_taken(first, wider, fits):
    # numpy casts an int64 array into an int32 column by wrapping it: 2**40 became 0 and the
    # run read converged
    with jhw.Recorder() as rec:
        jhw.log(n=first)
        with pytest.raises(ValueError, match=r"n = -?\d+ does not fit .*np\.int64\(n\)"):
            jhw.log(n=wider)
        jhw.log(n=fits)  # a value of the same wider dtype that the leaf holds exactly
        jax.block_until_ready(fits)
    (run,) = rec.runs
    got = rec.history()["n"]
    assert run.status == "converged" and run.counts == [2]
    assert got.dtype == np.asarray(first).dtype
    np.testing.assert_array_equal(got, np.stack([np.asarray(first), np.asarray(fits)]))


def test_a_jax_integer_still_being_computed_is_checked_too():
    a = jax.random.normal(jax.random.key(0), (256, 256)) / 16

    @jax.jit
    def slow(n):  # returns before the device has computed it
        x = jax.lax.fori_loop(0, 50, lambda _, x: jnp.tanh(a @ x), jnp.ones((256, 64)))
        return n * 10 + (x[0, 0] > 2).astype(jnp.int32)

    n = jax.block_until_ready(slow(jnp.int32(1)))
    with jhw.Recorder() as rec:
        jhw.log(n=np.int8(1))
        jhw.log(n=slow(jnp.int32(12)))  # 120 fits int8
        with pytest.raises(ValueError, match="n = 1200 does not fit int8"):
            jhw.log(n=slow(jnp.int32(120)))
    assert int(n) == 10 and rec.history()["n"].tolist() == [1, 120]


@pytest.mark.parametrize(
    "value, says",
    [({"a": 1.0}, r"jhw.log\(\*\*metrics\)"), (None, "None"), ("fast", "str"), ([1, None], "")],
)
def test_a_value_that_is_not_numbers_is_refused_and_a_store_stays_readable(tmp_path, value, says):
    path = tmp_path / "runs.db"
    with jhw.Store(path):
        jhw.log(loss=1.0)  # a good run first
    refused = pytest.raises(TypeError, match=f"metrics .*{says}.*numbers or arrays of numbers")
    with refused, jhw.Store(path):
        jhw.log(metrics=value)
    with pytest.raises(TypeError, match="numbers or arrays of numbers"), jhw.Store(path):
        jhw.log(loss=1.0)
        jhw.log(loss=value)
    runs = jhw.load_runs(path)
    assert [r.history()["loss"].tolist() for r in runs] == [[1.0], [1.0]]


def test_a_run_an_older_log_filed_as_objects_does_not_hide_the_others(tmp_path):
    # What the jhw.log before the fix above filed for jhw.log(metrics={...}): a leaf of dtype
    # object whose blocks hold pointers (8 bytes a value, as float64's).
    path = tmp_path / "runs.db"
    for v in (1.0, 2.0, 3.0):
        with jhw.Store(path):
            jhw.log(metrics=v)
    with sqlite3.connect(path) as conn:
        conn.execute("""UPDATE runs SET dtypes='["object"]' WHERE id=2""")
    first, second, third = jhw.load_runs(path)
    assert first.history()["metrics"].tolist() == [1.0]
    assert third.history()["metrics"].tolist() == [3.0]
    assert second.status == "interrupted" and second.counts == [0]
    assert "Python objects" in second.incomplete


def test_a_generator_its_consumer_closes_files_its_run_as_finished():
    rec = jhw.Recorder()

    def batches():
        with rec:
            for i in range(100):
                jhw.log(i=i)
                yield i

    for i in batches():
        if i == 5:
            break  # the generator is closed here (GeneratorExit at its yield)
    run = rec.runs[-1]
    assert run.status == "converged" and rec.history()["i"].tolist() == list(range(6))
    gen = batches()
    next(gen)
    gen.close()
    assert rec.runs[-1].status == "converged"
