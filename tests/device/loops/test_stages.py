"""A streamed loop's rows written to a stage first: a TPU's path, run here on CPU.

Where a host call reads a loop's history a TPU keeps the buffers in its main memory, and each
row written there costs a transfer; a TPU's streamed loop with a small carry writes its rows to
a stage of a few hundred rows and copies the stage to the buffers in one piece
(`steps.stage_rows`, `steps._staged`). CPU stages nothing (one memory): these tests turn the
stages on for CPU (`steps._CPU_STAGES`), with stages of 8 rows so that runs of a few dozen
steps cross many, and check that every result is the unstaged loop's and lax's.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import jaxhist_widget as jhw
from jaxhist_widget._device.loops import steps

from ...helpers.loops import counting_rows, counting_step

# Compiles many loops under jit, vmap and jvp: out of the quick subset.
pytestmark = pytest.mark.slow

STAGE = 8


@pytest.fixture(autouse=True)
def stages_on_cpu(monkeypatch):
    monkeypatch.setattr(steps, "_CPU_STAGES", True)
    monkeypatch.setattr(steps, "STAGE_ROWS", STAGE)


def run(n, max_steps=200, counted=True, **kw):
    # not counted: the same steps, ended by a condition no block can count ahead
    cond = (lambda c: c[0] < n) if counted else (lambda c: (c[0] < n) & (c[1] < 1e9))
    return jhw.while_loop(cond, counting_step, (0, 1.0), max_steps=max_steps, **kw)


def whiles(fn, *args) -> int:
    return jax.jit(fn).lower(*args).as_text().count("stablehlo.while")


def test_a_small_carry_s_streamed_loop_is_staged_and_a_large_one_s_is_not(monkeypatch):
    monkeypatch.setattr(steps, "_CPU_BLOCKS", False)  # loops of their own (as on a TPU)
    # the chunks, the stages in each, the steps in each stage
    assert whiles(lambda: run(50)) == 3
    big = jnp.zeros(steps.STAGE_CARRY_BYTES // 4 + 1)
    assert (
        whiles(
            lambda x: jhw.while_loop(
                lambda c: c[0] < 5,
                lambda c: (c[0] + 1, c[1] * 2),
                (0, x),
                max_steps=9,
                record=lambda c: c[0],
            ),
            big,
        )
        == 2
    )


def test_rows_wider_than_a_stage_s_bytes_are_not_staged(monkeypatch):
    monkeypatch.setattr(steps, "_CPU_BLOCKS", False)
    wide = jnp.zeros(steps.STAGE_BYTES // 4 // steps.STAGE_LEAST + 1)
    assert (
        whiles(
            lambda x: jhw.while_loop(
                lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 2), (0, x), max_steps=9
            ),
            wide,
        )
        == 2
    )


def test_a_stage_counts_every_lane_s_rows(monkeypatch):
    monkeypatch.setattr(steps, "_CPU_BLOCKS", False)
    least = steps.STAGE_BYTES // steps.STAGE_LEAST  # a row of every lane, at most

    def loop(x):
        return jhw.while_loop(
            lambda c: c[0] < 5,
            lambda c: (c[0] + 1, c[1] * 2),
            (0, x),
            max_steps=9,
            record=lambda c: c[1],
        )

    few, many = jnp.ones(least // 4), jnp.ones(least // 4 + 1)  # one float32 a lane
    assert whiles(jax.vmap(loop), few) == 3
    assert whiles(jax.vmap(loop), many) == 2


# n past max_steps: the last stage is moved back to end within the buffers (201 rows)
@pytest.mark.parametrize("n", [0, 1, STAGE - 1, STAGE, STAGE + 1, 3 * STAGE + 5, 199, 200, 250])
@pytest.mark.parametrize("every", [None, 3, STAGE, 40])
@pytest.mark.parametrize("counted", [True, False])
def test_every_row_is_the_unstaged_loop_s(n, every, counted):
    kw = {} if every is None else {"stream_every": every}
    with jhw.Recorder() as rec:
        (i, _x), hist = jax.jit(lambda: run(n, counted=counted, **kw))()
    want = counting_rows(n)
    assert int(i) == len(want) - 1 and int(hist.length) == len(want)
    np.testing.assert_allclose(hist.to_numpy()[1], want, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(rec.history()[1], hist.to_numpy()[1])
    assert rec.runs[-1].status == ("max_steps" if n > 200 else "converged")
    # rows past the length hold row 0, as the unstaged loop's do
    np.testing.assert_array_equal(np.asarray(hist.values[1])[len(want) :], np.float32(1.0))


@pytest.mark.parametrize("every", [None, 5, 40])
def test_lanes_ending_apart(every):
    ns = jnp.array([3, 40, 100, 64, 0, 17, 250])
    kw = {} if every is None else {"stream_every": every}
    with jhw.Recorder() as rec:
        (i, _x), hist = jax.jit(jax.vmap(lambda n: run(n, **kw)))(ns)
    rows = hist.to_numpy()
    for lane, n in enumerate(ns.tolist()):
        want = counting_rows(n)
        assert int(i[lane]) == len(want) - 1
        np.testing.assert_allclose(rows[lane][1], want, rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(rec.history()[lane][1], rows[lane][1])


def test_narrow_floats_keep_their_bits():
    # a bfloat16 buffer moves through the stage as its bits
    def step(c):
        return c[0] + 1, (c[1] * 1.5).astype(jnp.bfloat16)

    def loop(x):
        return jhw.while_loop(lambda c: c[0] < 30, step, (0, x), max_steps=40)

    _, hist = jax.jit(loop)(jnp.bfloat16(1.0))
    steps._CPU_STAGES = False  # the monkeypatch puts it back
    _, plain = jax.jit(loop)(jnp.bfloat16(1.0))
    got, want = np.asarray(hist.values[1]), np.asarray(plain.values[1])
    assert got.dtype == jnp.bfloat16
    np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))


def test_forward_mode_through_the_stages():
    def final(x0):
        (_, x), h = jhw.while_loop(
            lambda c: c[0] < 70, lambda c: (c[0] + 1, jnp.tanh(c[1]) * 1.01), (0, x0), max_steps=99
        )
        return x, h.values[1]

    def lax_final(x0):
        return lax.while_loop(
            lambda c: c[0] < 70, lambda c: (c[0] + 1, jnp.tanh(c[1]) * 1.01), (0, x0)
        )[1]

    x0 = jnp.linspace(-1.0, 1.0, 5)
    np.testing.assert_allclose(
        jax.jacfwd(lambda x: final(x)[0])(x0), jax.jacfwd(lax_final)(x0), rtol=1e-5
    )
    # the recorded rows' tangents too: row 70 is the final value's
    rows_t = jax.jacfwd(lambda x: final(x)[1])(x0)
    np.testing.assert_allclose(rows_t[70], jax.jacfwd(lax_final)(x0), rtol=1e-5)


def test_a_stop_mid_run_keeps_the_device_s_rows():
    class StopAt(jhw.Recorder):
        def on_rows(self, run, lanes):
            if run.counts[0] > 3 * STAGE:
                self.stop()

    rec = StopAt()
    with rec:
        _, hist = jax.jit(lambda: run(10_000, max_steps=20_000, stream_every=STAGE + 3))()
    assert rec.runs[-1].status == "stopped"
    assert 3 * STAGE < int(hist.length) < 20_000
    np.testing.assert_array_equal(rec.history()[1], hist.to_numpy()[1])
