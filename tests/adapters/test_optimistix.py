"""`jaxhist_widget.optimistix.adjoint()`: each solve one run of its steps, the solution and the
gradient the default adjoint gives, vmap lanes, presets that never draw a placeholder as 0,
and a stop or an interrupt that ends the solve with the iterate so far, never read as converged."""

from __future__ import annotations

import contextlib
import functools
import signal

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxhist_widget as jhw

optx = pytest.importorskip("optimistix")
jhw_optx = pytest.importorskip("jaxhist_widget.optimistix")

from ..helpers.backends import callback_errors_raise  # noqa: E402
from ..helpers.sinks import InterruptAfter, StopAfter  # noqa: E402


def loss(y, a):
    return jnp.sum((y - a) ** 2) + jnp.sum(y**4)


def minimise(a, adjoint, solver=None, **kw):
    solver = optx.BFGS(rtol=1e-6, atol=1e-6) if solver is None else solver
    return optx.minimise(loss, solver, jnp.zeros(2), a, adjoint=adjoint, **kw)


def assert_same(a, b):
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b), strict=True):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def test_a_minimise_is_one_run_of_its_steps_with_the_default_adjoints_solution():
    ref = minimise(1.0, optx.ImplicitAdjoint())
    with jhw.Recorder() as rec:
        sol = jax.jit(lambda a: minimise(a, jhw_optx.adjoint()))(1.0)
    assert_same(sol.value, ref.value)
    assert int(sol.stats["num_steps"]) == int(ref.stats["num_steps"])
    (run,) = rec.runs
    rows = rec.history()
    assert run.status == "converged" and run.counts == [int(sol.stats["num_steps"]) + 1]
    assert sorted(rows) == ["accepted_steps", "grad_norm", "loss", "step_size"]
    # row 0 holds the solver's placeholders (f = 0 before a step): NaN, never drawn as 0
    assert np.isnan(rows["loss"][0]) and np.isnan(rows["grad_norm"][0])
    np.testing.assert_allclose(rows["loss"][-1], loss(sol.value, 1.0), rtol=1e-6)
    assert rows["accepted_steps"][0] == 0 and np.all(np.diff(rows["accepted_steps"]) >= 0)


def test_vmap_lanes_and_grad_through_the_solve_as_with_the_default_adjoint():
    def solution(a, adjoint):
        return minimise(a, adjoint).value.sum()

    a = jnp.array([0.5, 1.0, 2.0])
    grad = jax.jit(jax.vmap(jax.grad(solution), (0, None)), static_argnums=1)
    with jhw.Recorder() as rec:
        got = grad(a, jhw_optx.adjoint())
    np.testing.assert_allclose(got, grad(a, optx.ImplicitAdjoint()), rtol=1e-6)
    (run,) = rec.runs  # the forward solve of every lane, one run
    assert run.lanes == 3 and run.statuses == ["converged"] * 3


@pytest.mark.parametrize(
    ("solve", "fields"),
    [
        (
            lambda ad: optx.least_squares(
                lambda y, a: jnp.stack([y[0] - 1, 10 * (y[1] - y[0] ** 2)]),
                optx.LevenbergMarquardt(1e-6, 1e-6),
                jnp.zeros(2),
                adjoint=ad,
            ),
            ["accepted_steps", "residual_norm", "step_size"],
        ),
        (
            lambda ad: optx.root_find(
                lambda y, a: y**3 - 2.0, optx.Newton(1e-6, 1e-6), jnp.ones(2), adjoint=ad
            ),
            ["residual_norm", "scaled_step"],
        ),
        (
            lambda ad: optx.fixed_point(
                lambda y, a: jnp.cos(y),
                optx.FixedPointIteration(1e-6, 1e-6),
                jnp.ones(2),
                adjoint=ad,
            ),
            ["relative_error"],
        ),
    ],
    ids=["least_squares", "root_find", "fixed_point"],
)
def test_each_kind_of_solve_streams_its_familys_scalars(solve, fields):
    ref = solve(optx.ImplicitAdjoint())
    with jhw.Recorder() as rec:
        sol = solve(jhw_optx.adjoint())
    assert_same(sol.value, ref.value)
    assert sorted(rec.history()) == fields
    assert rec.runs[-1].counts == [int(sol.stats["num_steps"]) + 1]


def test_a_record_of_your_own_and_the_errors():
    record = lambda s: {"y0": s.y[0], "n": s.num_steps}  # noqa: E731
    with jhw.Recorder() as rec:
        sol = jax.jit(lambda a: minimise(a, jhw_optx.adjoint(record=record)))(1.0)
    rows = rec.history()
    assert rows["y0"][-1] == sol.value[0] and rows["n"].tolist() == list(range(len(rows["n"])))
    with pytest.raises(TypeError, match="pass max_steps=N to the solve"):
        jax.eval_shape(lambda: minimise(1.0, jhw_optx.adjoint(), max_steps=None))


@functools.cache
def endless(throw: bool):
    """Gradient descent that would run 10^5 steps of ~1 ms (rtol = atol = 0), compiled once."""
    m = jax.random.normal(jax.random.key(0), (256, 256)) / 16

    def heavy(y, args):
        z = jax.lax.fori_loop(0, 8, lambda _, z: jnp.tanh(m @ z), y)
        return jnp.sum(z**2) + 1e-3 * jnp.sum(y**2)

    solver = optx.GradientDescent(1e-6, rtol=0.0, atol=0.0)
    solve = jax.jit(
        lambda y0: optx.minimise(
            heavy, solver, y0, adjoint=jhw_optx.adjoint(), max_steps=100_000, throw=throw
        )
    )
    # compiled first: an interrupt while compiling would raise (and under throw=True a stopped
    # solve raises)
    with StopAfter(rows=1), contextlib.suppress(jax.errors.JaxRuntimeError):
        solve(jnp.ones((256, 8)))
    return solve


@pytest.mark.parametrize("how", ["stop", "interrupt"])
def test_a_stop_or_an_interrupt_returns_the_iterate_so_far_as_not_converged(how):
    solve = endless(throw=False)
    sink = StopAfter(rows=10) if how == "stop" else InterruptAfter(rows=10)
    with sink:
        sol = solve(jnp.ones((256, 8)))
    run = sink.runs[-1]
    steps = int(sol.stats["num_steps"])
    assert run.status == "stopped" and 9 <= steps < 100_000
    # A stopped solve did not converge: it reads as one cut short by max_steps.
    assert sol.result == optx.RESULTS.nonlinear_max_steps_reached
    assert run.counts == [steps + 1]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


@callback_errors_raise
def test_a_stopped_solve_under_throw_raises_as_a_capped_one_does():
    with (
        StopAfter(rows=10) as sink,
        pytest.raises(Exception, match="maximum number of steps was reached"),
    ):
        endless(throw=True)(jnp.ones((256, 8)))
    assert sink.runs[-1].status == "stopped"


def test_a_stop_leaves_the_lanes_that_converged_before_it_successful():
    def solve(scale):
        # lr 0.5 on scale * |y - 1|^2: scale 1 lands on the minimum in one step, scale 2
        # swings y between 0 and 2 for ever
        return optx.minimise(
            lambda y, s: s * jnp.sum((y - 1.0) ** 2),
            optx.GradientDescent(0.5, rtol=1e-6, atol=1e-6),
            jnp.zeros(2),
            scale,
            adjoint=jhw_optx.adjoint(stream_every=1),
            max_steps=20_000,
            throw=False,
        )

    with StopAfter(rows=30) as sink:
        sol = jax.jit(jax.vmap(solve))(jnp.array([1.0, 2.0]))
    assert sink.runs[-1].statuses == ["converged", "stopped"]
    results = [
        sol.result == r for r in (optx.RESULTS.successful, optx.RESULTS.nonlinear_max_steps_reached)
    ]
    assert np.asarray(results).tolist() == [[True, False], [False, True]]
