"""`jhw.scan` and `jhw.fori_loop`: what lax returns, a History of every step, the same rows on
the host; eager, jit, vmap, grad and jvp as through lax; a stop or an interrupt ends them with
the steps done."""

from __future__ import annotations

import functools
import signal
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import jaxhist_widget as jhw

from ...helpers.sinks import InterruptAfter, StopAfter


def sgd_step(w, x):
    """A training-like step: a gradient step on (w - x)^2, returning the loss before it."""
    loss, grad = jax.value_and_grad(lambda w: jnp.sum((w - x) ** 2))(w)
    return w - 0.1 * grad, loss


XS = jnp.linspace(0.0, 1.0, 40)[:, None] * jnp.ones((40, 3))
W0 = jnp.zeros(3)


def assert_same(a, b):
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b), strict=True):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


# ------------------------------------------------------------------------------ scan
@pytest.mark.parametrize("jit", [False, True])
def test_scan_returns_what_lax_returns_and_streams_every_step(jit):
    run = jax.jit(jhw.scan, static_argnums=0) if jit else jhw.scan
    with jhw.Recorder() as rec:
        (w, losses), hist = run(sgd_step, W0, XS)
    assert_same((w, losses), lax.scan(sgd_step, W0, XS))
    # The default record is y: row i is step i's loss, row 0 a NaN placeholder (no step yet).
    rows = hist.to_numpy()
    assert int(hist.length) == 41 and np.isnan(rows[0])
    np.testing.assert_array_equal(rows[1:], np.asarray(losses))
    np.testing.assert_array_equal(rec.history(), rows)  # the host has the device's rows
    assert [r.status for r in rec.runs] == ["converged"]


def test_scan_records_what_record_asks_in_the_order_the_steps_ran():
    record = lambda w, loss: {"w0": w[0], "loss": loss}  # noqa: E731
    with jhw.Recorder() as rec:
        (w, losses), hist = jhw.scan(sgd_step, W0, XS, reverse=True, record=record, unroll=2)
    ref_w, ref_losses = lax.scan(sgd_step, W0, XS, reverse=True)
    assert_same((w, losses), (ref_w, ref_losses))
    rows = hist.to_numpy()
    assert rows["w0"][0] == 0.0  # the carry's row 0 is real
    # with reverse=True the first step is over xs[-1]: its loss is ys[-1]
    np.testing.assert_array_equal(rows["loss"][1:], np.asarray(ref_losses)[::-1])
    assert rows["w0"][-1] == w[0]
    np.testing.assert_array_equal(rec.history()["loss"], rows["loss"])


def test_scan_without_xs_or_y_records_the_carry_and_types_as_lax_does():
    f = lambda c, _: ((c[0] + 1, c[1] * 0.5), None)  # noqa: E731
    init = (0, 8.0)  # Python scalars: weakly typed, as lax.scan takes them
    (carry, ys), hist = jhw.scan(f, init, None, length=3)
    assert ys is None
    assert_same(carry, lax.scan(f, init, None, length=3)[0])
    assert hist.to_numpy()[1].tolist() == [8.0, 4.0, 2.0, 1.0]
    # weak types as lax's: a weak carry leaf f makes strong, a y of Python scalars
    g = lambda c, x: (c + x, (1.0, 2))  # noqa: E731
    types = [jax.typeof(v) for v in jax.tree_util.tree_leaves(jhw.scan(g, 0.0, XS[:, 0])[0])]
    assert types == [jax.typeof(v) for v in jax.tree_util.tree_leaves(lax.scan(g, 0.0, XS[:, 0]))]


def test_the_host_is_told_which_leaves_of_row_0_are_stand_ins_for_y():
    """Row 0 of what is recorded from y holds no value (no step made a y yet): the host is
    told which leaves, whatever their dtype, so that a plot leaves that row out."""

    def f(c, x):
        return c + x, {"loss": c * 2.0, "n": (c > 1).astype(jnp.int32), "ok": c > 0}

    record = lambda c, y: {"c": c, "k": 3, "n": y["n"], "pos": y["loss"] > 0}  # noqa: E731
    with jhw.Recorder() as rec:
        jax.jit(lambda xs: jhw.scan(f, 0.0, xs)[0][0])(XS[:, 0])  # y: every leaf
        jax.vmap(lambda c: jhw.scan(f, c, XS[:, 0], record=record))(jnp.zeros(2))
        jhw.scan(lambda c, x: (c + x, None), 0.0, XS[:, 0])  # the carry: a real row 0
    assert [r.layout.names for r in rec.runs[:2]] == [("loss", "n", "ok"), ("c", "k", "n", "pos")]
    assert [r.layout.stand_ins for r in rec.runs] == [(0, 1, 2), (2, 3), ()]


def test_scan_errors_say_what_to_fix():
    with pytest.raises(ValueError, match="no xs to scan over and no length"):
        jhw.scan(sgd_step, W0, None)
    with pytest.raises(ValueError, match="different leading sizes"):
        jhw.scan(sgd_step, W0, XS, length=3)
    with pytest.raises(TypeError, match="scan's f must return a carry with the same shapes"):
        jhw.scan(lambda c, x: (c[:1], x), W0, XS)
    with pytest.raises(TypeError, match=r"must return a pair \(carry, y\)"):
        jhw.scan(lambda c, x: c, W0, XS)


def test_scan_under_vmap_is_one_run_with_a_lane_each():
    inits = jnp.stack([W0, W0 + 1.0, W0 - 1.0])
    with jhw.Recorder() as rec:
        (w, losses), hist = jax.vmap(lambda w: jhw.scan(sgd_step, w, XS))(inits)
    assert_same((w, losses), jax.vmap(lambda w: lax.scan(sgd_step, w, XS))(inits))
    (run,) = rec.runs
    assert run.lanes == 3 and run.counts == [41] * 3 and run.statuses == ["converged"] * 3
    for lane, rows in enumerate(rec.history()):
        np.testing.assert_array_equal(rows, hist.to_numpy()[lane])


def unrolled_loss(p, scan):
    """A loss through a scan whose step closes over the parameter being differentiated."""

    def step(w, x):
        return w - p * (w - x), jnp.sum((w - x) ** 2)

    (w, losses), *_ = scan(step, W0, XS)
    return losses.sum() + jnp.sum(w**2)


def jhw_scan(f, init, xs):
    return jhw.scan(f, init, xs)


def lax_scan(f, init, xs):
    return (lax.scan(f, init, xs),)


def test_grad_and_jvp_go_through_scan_as_through_lax_and_stream_the_forward_pass_once():
    ref = jax.grad(unrolled_loss)(0.3, lax_scan)
    with jhw.Recorder() as rec:
        g = jax.grad(unrolled_loss)(0.3, jhw_scan)
        g_jit = jax.jit(jax.grad(unrolled_loss), static_argnums=1)(0.3, jhw_scan)
    np.testing.assert_allclose(g, ref, rtol=1e-6)
    np.testing.assert_allclose(g_jit, ref, rtol=1e-6)
    # the backward pass streams nothing: one run per call, of the forward pass's rows
    assert [r.counts for r in rec.runs] == [[41], [41]]
    primal, tangent = jax.jvp(lambda p: unrolled_loss(p, jhw_scan), (0.3,), (1.0,))
    ref_primal, ref_tangent = jax.jvp(lambda p: unrolled_loss(p, lax_scan), (0.3,), (1.0,))
    np.testing.assert_allclose((primal, tangent), (ref_primal, ref_tangent), rtol=1e-6)


def test_the_history_is_differentiable():
    def last_loss(p):
        def step(w, x):
            return w - p * (w - x), jnp.sum((w - x) ** 2)

        return jhw.scan(step, W0, XS)[1].last()

    def ref(p):
        def step(w, x):
            return w - p * (w - x), jnp.sum((w - x) ** 2)

        return lax.scan(step, W0, XS)[1][-1]

    np.testing.assert_allclose(jax.grad(last_loss)(0.3), jax.grad(ref)(0.3), rtol=1e-6)


# ------------------------------------------------------------------------------ straight line
def count_up(c, x):
    return c + x, c * 2.0


@pytest.mark.parametrize(
    "length, unroll",
    # one step; a remainder after the loop; one trip (lax unrolls it all); every step
    # unrolled; and for contrast a loop of two trips that holds the last step
    [(1, 1), (5, 2), (3, 3), (4, True), (6, 3)],
)
def test_a_scan_lowered_as_straight_line_code_sends_every_row_and_ends_converged(length, unroll):
    """The last flush of an unrolled last step feeds only state the scan drops: it must still
    reach the sink, under jit (whichever output is used), vmap and a jitted gradient."""
    xs = jnp.arange(1.0, length + 1.0)
    scan = functools.partial(jhw.scan, count_up, unroll=unroll)
    _, hist = scan(0.0, xs, stream=False)
    rows = hist.to_numpy()
    runs = {
        "carry only": lambda: jax.jit(lambda xs: scan(0.0, xs)[0][0])(xs),
        "ys only": lambda: jax.jit(lambda xs: scan(0.0, xs)[0][1])(xs),
        "gradient": lambda: jax.jit(jax.grad(lambda c: scan(c, xs)[0][1].sum()))(0.0),
        "vmap": lambda: jax.jit(jax.vmap(lambda c: scan(c, xs)[0][0]))(jnp.zeros(3)),
    }
    for name, run in runs.items():
        with jhw.Recorder() as rec:
            jax.block_until_ready(run())
        (got,) = rec.runs
        assert set(got.statuses) == {"converged"}, name
        for lane_rows in np.reshape(rec.history(), (-1, length + 1)):
            np.testing.assert_array_equal(lane_rows, rows, err_msg=name)


# ------------------------------------------------------------------------------ fori_loop
def double(i, x):
    return x * 2.0 + i


def test_fori_loop_with_static_bounds_is_a_scan_and_differentiable():
    with jhw.Recorder() as rec:
        x, hist = jhw.fori_loop(1, 5, double, 1.0)
    assert float(x) == float(lax.fori_loop(1, 5, double, 1.0))
    assert hist.to_numpy().tolist() == [1.0, 3.0, 8.0, 19.0, 42.0]
    assert rec.history().tolist() == hist.to_numpy().tolist()
    grad = jax.grad(lambda a: jhw.fori_loop(0, 4, lambda i, x: x * a, 1.0)[0])(3.0)
    assert float(grad) == float(
        jax.grad(lambda a: lax.fori_loop(0, 4, lambda i, x: x * a, 1.0))(3.0)
    )
    with pytest.raises(ValueError, match="runs 4 steps but max_steps=2"):
        jhw.fori_loop(1, 5, double, 1.0, max_steps=2)


def test_fori_loop_with_traced_bounds_needs_max_steps_and_runs_under_jit_and_vmap():
    @jax.jit
    def run(n):
        return jhw.fori_loop(0, n, double, 1.0, max_steps=10)

    with jhw.Recorder() as rec:
        xs, hist = jax.vmap(run)(jnp.array([2, 4]))
    assert np.asarray(hist.length).tolist() == [3, 5]
    assert xs.tolist() == [float(lax.fori_loop(0, n, double, 1.0)) for n in (2, 4)]
    assert [len(rows) for rows in rec.history()] == [3, 5]
    assert rec.runs[-1].statuses == ["converged"] * 2
    with pytest.raises(TypeError, match="traced bounds needs max_steps"):
        jax.jit(lambda n: jhw.fori_loop(0, n, double, 1.0))(3)


@pytest.mark.parametrize("upper, unroll", [(1, None), (5, 2), (4, True)])
def test_a_fori_loop_of_one_step_or_unrolled_sends_every_row(upper, unroll):
    run = jax.jit(lambda: jhw.fori_loop(0, upper, double, 1.0, unroll=unroll)[0])
    with jhw.Recorder() as rec:
        x = run()
    ref, hist = jhw.fori_loop(0, upper, double, 1.0, stream=False)
    assert float(x) == float(ref) and rec.runs[-1].status == "converged"
    np.testing.assert_array_equal(rec.history(), hist.to_numpy())


# ------------------------------------------------------------------------------ stopping
def test_a_stopped_scan_returns_the_steps_done_and_zeros_past_them():
    with StopAfter(rows=5) as rec:
        (w, losses), hist = jhw.scan(sgd_step, W0, XS, stream_every=1)
    run = rec.runs[-1]
    steps = int(hist.steps)
    assert run.status == "stopped" and 4 <= steps < 40
    ref_w, ref_losses = lax.scan(sgd_step, W0, XS[:steps])
    assert_same(w, ref_w)  # the carry of the last step done
    np.testing.assert_array_equal(np.asarray(losses[:steps]), np.asarray(ref_losses))
    assert not np.asarray(losses[steps:]).any()  # zeros past them
    np.testing.assert_array_equal(rec.history(), hist.to_numpy())


def test_a_stop_ends_every_lane_of_a_vmapped_scan_and_a_fori_loop():
    with StopAfter(rows=3) as rec:
        _, hist = jax.vmap(lambda w: jhw.scan(sgd_step, w, XS, stream_every=1))(jnp.ones((2, 3)))
    assert rec.runs[-1].statuses == ["stopped"] * 2 and (np.asarray(hist.length) < 41).all()
    with StopAfter(rows=3) as rec:
        x, hist = jhw.fori_loop(0, 30, lambda i, x: x + 1.0, 0.0, stream_every=1)
    assert rec.runs[-1].status == "stopped" and float(x) == float(hist.steps) < 30


def slow_scan(seconds=0.005, steps=5_000):
    """A scan whose step also takes host time (a stand-in for heavy compute)."""

    def sleep(x):
        time.sleep(seconds)
        return x

    def step(c, _):
        c = jax.pure_callback(sleep, jax.ShapeDtypeStruct((), jnp.float32), c)
        return c + 1.0, c

    return jax.jit(lambda c: jhw.scan(step, c, None, length=steps))


def test_an_interrupt_stops_a_scan_and_returns_the_steps_done():
    solve = slow_scan()
    with StopAfter(rows=1):
        solve(jnp.float32(0))  # compiled first: an interrupt while compiling would raise
    rec = InterruptAfter(rows=10)
    with rec:
        (c, ys), hist = solve(jnp.float32(0))
    steps = int(hist.steps)
    assert rec.sent and rec.runs[-1].status == "stopped" and 10 <= steps < 5_000
    assert float(c) == steps and float(ys[steps - 1]) == steps - 1
    np.testing.assert_array_equal(rec.history(), hist.to_numpy())
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
