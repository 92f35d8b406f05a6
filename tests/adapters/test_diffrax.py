"""`jaxhist_widget.diffrax.adjoint()`: each diffeqsolve one run of its steps with diffrax's own
solution, vmap lanes, forward mode through it and a clear error for reverse mode, and a stop
or an interrupt that returns the solution up to the time reached."""

from __future__ import annotations

import functools
import signal

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxhist_widget as jhw

diffrax = pytest.importorskip("diffrax")
jhw_diffrax = pytest.importorskip("jaxhist_widget.diffrax")

from ..helpers.sinks import InterruptAfter, StopAfter  # noqa: E402


def solve(y0, adjoint, k=1.0, **kw):
    term = diffrax.ODETerm(lambda t, y, args: -args * y + jnp.sin(t))
    options = dict(
        saveat=diffrax.SaveAt(ts=jnp.linspace(0.0, 5.0, 11)),
        stepsize_controller=diffrax.PIDController(rtol=1e-6, atol=1e-6),
    )
    return diffrax.diffeqsolve(
        term, diffrax.Tsit5(), 0.0, 5.0, 0.1, y0, args=k, adjoint=adjoint, **{**options, **kw}
    )


Y0 = jnp.ones(3)


@functools.cache
def reference(batched: bool):
    """diffrax's own solution with its default adjoint: from Y0, or from Y0 and 2 * Y0 under
    vmap (XLA may round a batched program's values otherwise, so each is compared with its
    own kind)."""
    own = lambda y: solve(y, diffrax.RecursiveCheckpointAdjoint()).ys  # noqa: E731
    if batched:
        return jax.jit(jax.vmap(own))(jnp.stack([Y0, 2 * Y0]))
    return jax.jit(own)(Y0)


def test_a_solve_is_one_run_of_its_steps_with_diffraxs_own_solution():
    ref = reference(batched=False)
    with jhw.Recorder() as rec:
        sol = jax.jit(lambda y0: solve(y0, jhw_diffrax.adjoint()))(Y0)
    np.testing.assert_array_equal(sol.ys, ref)
    assert sol.result == diffrax.RESULTS.successful
    (run,) = rec.runs
    steps = int(sol.stats["num_steps"])
    assert run.status == "converged" and run.counts == [steps + 1]
    rows = rec.history()
    assert sorted(rows) == ["accepted_steps", "dt", "rejected_steps", "t"]
    assert rows["t"][0] == 0.0 and rows["t"][-1] == 5.0 and rows["dt"][0] == np.float32(0.1)
    assert rows["accepted_steps"][-1] + rows["rejected_steps"][-1] == steps


def test_vmap_lanes_forward_mode_and_a_clear_error_for_reverse_mode():
    y0s = jnp.stack([Y0, 2 * Y0])
    with jhw.Recorder() as rec:
        ys = jax.jit(jax.vmap(lambda y: solve(y, jhw_diffrax.adjoint()).ys))(y0s)
    np.testing.assert_array_equal(ys, reference(batched=True))
    assert [run.lanes for run in rec.runs] == [2]

    def total(k, adjoint):
        return solve(Y0, adjoint, k).ys.sum()

    jvp = jax.jit(lambda adjoint: jax.jvp(lambda k: total(k, adjoint), (1.0,), (1.0,)))
    tangent, ref_tangent = jvp(jhw_diffrax.adjoint()), jvp(diffrax.ForwardMode())
    np.testing.assert_allclose(tangent, ref_tangent, rtol=1e-6)
    with pytest.raises(Exception, match=r"adjoint=diffrax\.RecursiveCheckpointAdjoint\(\)"):
        jax.eval_shape(jax.grad(total), 1.0, jhw_diffrax.adjoint())  # said at trace time


def test_a_record_of_your_own_and_the_errors():
    record = lambda s: {"t": s.tprev, "y": s.y}  # noqa: E731
    with jhw.Recorder() as rec:
        sol = jax.jit(
            lambda y0: solve(y0, jhw_diffrax.adjoint(record), saveat=diffrax.SaveAt(t1=True))
        )(Y0)
    rows = rec.history()
    np.testing.assert_array_equal(rows["y"][-1], sol.ys[-1])
    assert rows["t"][-1] == sol.ts[-1] == 5.0
    with pytest.raises(TypeError, match="pass max_steps=N to diffeqsolve"):
        jax.eval_shape(lambda: solve(Y0, jhw_diffrax.adjoint(), max_steps=None))


@functools.cache
def endless():
    """10^5 fixed steps of 16 matvecs each (seconds unless stopped), compiled once."""
    m = jax.random.normal(jax.random.key(0), (256, 256)) / 16
    term = diffrax.ODETerm(
        lambda t, y, args: jax.lax.fori_loop(0, 16, lambda _, z: jnp.tanh(m @ z), y) - y
    )
    run_solve = jax.jit(
        lambda y0: diffrax.diffeqsolve(
            term,
            diffrax.Euler(),
            0.0,
            1000.0,
            0.01,
            y0,
            max_steps=100_000,
            adjoint=jhw_diffrax.adjoint(),
        )
    )
    with StopAfter(rows=1):
        run_solve(jnp.ones(256))  # compiled first: an interrupt while compiling would raise
    return run_solve


@pytest.mark.parametrize("how", ["stop", "interrupt"])
def test_a_stop_or_an_interrupt_returns_the_solution_up_to_the_time_reached(how):
    run_solve = endless()
    sink = StopAfter(rows=10) if how == "stop" else InterruptAfter(rows=10)
    with sink:
        sol = run_solve(jnp.ones(256))  # throw=True: a stop is no failure
    run = sink.runs[-1]
    steps = int(sol.stats["num_steps"])
    assert run.status == "stopped" and 9 <= steps < 100_000 and run.counts == [steps + 1]
    assert sol.result == diffrax.RESULTS.event_occurred
    np.testing.assert_allclose(sol.ts[-1], 0.01 * steps, rtol=1e-4)  # the time reached
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
