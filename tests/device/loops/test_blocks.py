"""A counting loop's blocks of steps: an accelerator's path, run here on CPU.

On a GPU a ``while`` loop copies its predicate to the host every step; where the steps left are
known (``cond_fun`` is ``i < n`` on a step counter), the loop takes them in blocks with no
predicate between (`steps._blocks`). CPU compiles no blocks (a predicate costs nothing there):
these tests turn them on for CPU (`steps._CPU_BLOCKS`) and check that every result is the one
the step-by-step loop, and lax, give.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import jaxhist_widget as jhw
from jaxhist_widget._device.loops import steps
from jaxhist_widget._device.loops.carry import prepare

from ...helpers.loops import counting_rows, counting_step

# Compiles many loops under jit, vmap and jvp: out of the quick subset.
pytestmark = pytest.mark.slow

BLOCK = steps.BLOCK


@pytest.fixture(autouse=True)
def blocks_on_cpu(monkeypatch):
    monkeypatch.setattr(steps, "_CPU_BLOCKS", True)


def run(n, lib=jhw, max_steps=200, **kw):
    cond = lambda c: c[0] < n  # noqa: E731
    if lib is lax:
        out = lax.while_loop(cond, counting_step, (0, 1.0))
        return out, None
    return jhw.while_loop(cond, counting_step, (0, 1.0), max_steps=max_steps, **kw)


@pytest.mark.parametrize("n", [0, 1, BLOCK - 1, BLOCK, BLOCK + 1, 3 * BLOCK + 5, 199, 200, 250])
@pytest.mark.parametrize("stream", [True, False])
def test_every_row_is_the_step_by_step_loop_s(n, stream):
    with jhw.Recorder() as rec:
        (i, _x), hist = jax.jit(lambda: run(n, stream=stream))()
    want = counting_rows(n)
    assert int(i) == len(want) - 1 and int(hist.length) == len(want)
    np.testing.assert_allclose(hist.to_numpy()[1], want, rtol=1e-5, atol=1e-6)
    if stream:
        np.testing.assert_array_equal(rec.history()[1], hist.to_numpy()[1])
        assert rec.runs[-1].status == ("max_steps" if n > 200 else "converged")


@pytest.mark.parametrize("every", [None, 7, BLOCK, 40])
def test_lanes_with_bounds_of_their_own(every):
    ns = jnp.array([3, 40, 100, 64, 0, 17])
    kw = {} if every is None else {"stream_every": every}
    with jhw.Recorder() as rec:
        (i, x), hist = jax.jit(jax.vmap(lambda n: run(n, **kw)))(ns)
    (want_i, want_x), _ = jax.vmap(lambda n: run(n, lax))(ns)
    np.testing.assert_array_equal(i, want_i)
    np.testing.assert_allclose(x, want_x, rtol=1e-5, atol=1e-6)
    rows = hist.to_numpy()
    for lane, n in enumerate(ns.tolist()):
        np.testing.assert_allclose(rows[lane][1], counting_rows(n), rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(rec.history()[lane][1], rows[lane][1])


def test_forward_mode_through_the_blocks():
    def final(x0):
        (_, x), _ = jhw.while_loop(
            lambda c: c[0] < 70, lambda c: (c[0] + 1, jnp.tanh(c[1]) * 1.01), (0, x0), max_steps=99
        )
        return x

    def lax_final(x0):
        return lax.while_loop(
            lambda c: c[0] < 70, lambda c: (c[0] + 1, jnp.tanh(c[1]) * 1.01), (0, x0)
        )[1]

    x0 = jnp.linspace(-1.0, 1.0, 5)
    np.testing.assert_allclose(jax.jacfwd(final)(x0), jax.jacfwd(lax_final)(x0), rtol=1e-5)


def test_a_stop_mid_run_keeps_the_device_s_rows():
    class StopAt(jhw.Recorder):
        def on_rows(self, run, lanes):
            if run.counts[0] > 3 * BLOCK:
                self.stop()

    rec = StopAt()
    with rec:
        _, hist = jax.jit(lambda: run(10_000, max_steps=20_000, stream_every=BLOCK))()
    assert rec.runs[-1].status == "stopped"
    assert 3 * BLOCK < int(hist.length) < 20_000
    np.testing.assert_array_equal(rec.history()[1], hist.to_numpy()[1])


@pytest.mark.parametrize(
    ("cond", "counted"),
    [
        (lambda c: c[0] < 10, True),
        (lambda c: c[0] <= 10, True),
        (lambda c: 10 > c[0], True),  # noqa: SIM300 (traced as c[0] < 10)
        (lambda c: c[0] < c[2], True),  # a leaf body_fun returns unchanged
        (lambda c: c[1] < 10.0, False),  # not a counter
        (lambda c: (c[0] < 10) & (c[1] > 0), False),  # more than the count
        (lambda c: c[0] < c[1].astype(jnp.int32), False),  # a bound that moves
    ],
)
def test_which_conditions_count(cond, counted):
    c = prepare(cond, lambda c: (c[0] + 1, c[1] * 2, c[2]), (0, 1.0, 7))
    assert (c.counted is not None) == counted


def test_the_steps_left_of_a_counting_condition():
    c = prepare(lambda c: c[0] <= c[2], lambda c: (c[0] + 1, c[1], c[2]), (3, 1.0, 7))
    left = c.steps_left(c.init(), c.counted, cap=100)
    assert int(left) == 5  # i = 3, 4, 5, 6, 7 take a step
