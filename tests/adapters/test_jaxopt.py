"""`jaxhist_widget.jaxopt.run`: ``solver.run`` as one run per solve (not one per line search),
with the same result, vmap lanes and the gradient of jaxopt's implicit differentiation; a stop
or an interrupt returns the iterate so far."""

from __future__ import annotations

import functools
import signal

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxhist_widget as jhw

jaxopt = pytest.importorskip("jaxopt")
jhw_jaxopt = pytest.importorskip("jaxhist_widget.jaxopt")

from ..helpers.sinks import InterruptAfter, StopAfter  # noqa: E402


def loss(w, a):
    return jnp.sum((w - a) ** 2) + jnp.sum(w**4)


LBFGS = jaxopt.LBFGS(fun=loss, tol=1e-6)
W0 = jnp.zeros(2)


def assert_same(a, b):
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b), strict=True):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def test_an_lbfgs_solve_with_its_line_searches_is_one_run_with_the_same_result():
    ref = jax.jit(lambda a: LBFGS.run(W0, a))(1.0)
    with jhw.Recorder() as rec:
        out = jax.jit(lambda a: jhw_jaxopt.run(LBFGS, W0, a))(1.0)
    assert_same(out, ref)
    assert len(rec.runs) == 1  # one per solve: the line searches stream nothing
    rows = rec.history()
    assert sorted(rows) == ["error", "loss", "step_size"]
    # row 0 is iteration 1 (jaxopt runs it before its loop): one row per iteration
    assert len(rows["loss"]) == int(out.state.iter_num) and rec.runs[-1].status == "converged"
    assert rows["error"][-1] == out.state.error and np.isfinite(rows["error"]).all()


def test_vmap_lanes_and_grad_through_implicit_differentiation():
    a = jnp.array([0.5, 1.0, 2.0])

    def solution(a, run):
        return run(a).params.sum()

    # gradient descent with its line search: a cheaper compile than L-BFGS's
    gd = jaxopt.GradientDescent(fun=loss, tol=1e-3)
    grads = jax.jit(jax.vmap(jax.grad(solution), (0, None)), static_argnums=1)
    with jhw.Recorder() as rec:
        got = grads(a, lambda a: jhw_jaxopt.run(gd, W0, a))
    ref = grads(a, lambda a: gd.run(W0, a))
    np.testing.assert_allclose(got, ref, rtol=1e-6)
    (run,) = rec.runs
    assert run.lanes == 3 and run.statuses == ["converged"] * 3


def test_other_solvers_records_and_errors():
    gn = jaxopt.GaussNewton(residual_fun=lambda w: jnp.stack([w[0] - 1, 10 * (w[1] - w[0] ** 2)]))
    record = lambda s: {"w": s.params, "error": s.state.error}  # noqa: E731
    with jhw.Recorder() as rec:
        out = jax.jit(lambda w: jhw_jaxopt.run(gn, w, record=record))(W0)
    assert_same(out, jax.jit(gn.run)(W0))
    np.testing.assert_array_equal(rec.history()["w"][-1], out.params)
    one = jaxopt.GradientDescent(fun=loss, maxiter=1)  # jaxopt's loop runs no step: nor ours
    assert_same(jax.jit(lambda w: jhw_jaxopt.run(one, w, 1.0))(W0), jax.jit(one.run)(W0, 1.0))
    with pytest.raises(TypeError, match="a jaxopt iterative solver"):
        jhw_jaxopt.run(loss, W0, 1.0)


def rosenbrock_residual(w, a):
    return jnp.stack([w[0] - a, 10 * (w[1] - w[0] ** 2)])


JIT_FALSE = {  # solvers with a line search in update (Python loops with jit=False), and one without
    "LBFGS": lambda: jaxopt.LBFGS(fun=loss, tol=1e-6, jit=False),
    "GradientDescent": lambda: jaxopt.GradientDescent(fun=loss, tol=1e-3, jit=False),
    "GaussNewton": lambda: jaxopt.GaussNewton(residual_fun=rosenbrock_residual, jit=False),
}


@pytest.mark.parametrize("name", list(JIT_FALSE))
def test_a_solver_built_with_jit_false_is_watched_with_jaxopts_iterations(name):
    """jaxopt runs such a solver's loops in Python, on concrete values, which the recording
    loop cannot trace: it runs the solver as with jit=True, the same iterations."""
    solver = JIT_FALSE[name]()
    ref = solver.run(W0, 1.0)  # jaxopt's own, eager: Python loops
    with jhw.Recorder() as rec:
        out = jhw_jaxopt.run(solver, W0, 1.0)
    np.testing.assert_allclose(out.params, ref.params, rtol=1e-6)
    assert int(out.state.iter_num) == int(ref.state.iter_num)
    (run,) = rec.runs
    assert run.status == "converged" and run.counts == [int(out.state.iter_num)]
    assert solver.jit is False  # the caller's solver is left as it was built


def test_a_jit_false_solver_that_is_not_a_dataclass_is_refused_with_the_fix():
    class Stepper(jaxopt._src.base.IterativeSolver):  # a solver of one's own, no dataclass
        jit = False

    with pytest.raises(ValueError, match=r"got Stepper with jit=False .* build it with jit=True"):
        jhw_jaxopt.run(Stepper(), W0)


@functools.cache
def endless():
    """Gradient descent that would run 10^5 iterations of ~1 ms (tol = 0), compiled once."""
    m = jax.random.normal(jax.random.key(0), (256, 256)) / 16

    def heavy(w):
        z = jax.lax.fori_loop(0, 8, lambda _, z: jnp.tanh(m @ z), w)
        return jnp.sum(z**2) + 1e-3 * jnp.sum(w**2)

    gd = jaxopt.GradientDescent(fun=heavy, stepsize=1e-6, maxiter=100_000, tol=0.0)
    solve = jax.jit(lambda w: jhw_jaxopt.run(gd, w))
    with StopAfter(rows=1):
        solve(jnp.ones((256, 8)))  # compiled first: an interrupt while compiling would raise
    return solve


@pytest.mark.parametrize("how", ["stop", "interrupt"])
def test_a_stop_or_an_interrupt_returns_the_iterate_so_far(how):
    solve = endless()
    sink = StopAfter(rows=10) if how == "stop" else InterruptAfter(rows=10)
    with sink:
        out = solve(jnp.ones((256, 8)))
    run = sink.runs[-1]
    assert run.status == "stopped" and 10 <= int(out.state.iter_num) < 100_000
    assert run.counts == [int(out.state.iter_num)]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
