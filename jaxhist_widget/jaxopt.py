"""Watch jaxopt solves: `run` is ``solver.run`` that records and streams every iteration.

Needs jaxopt (``pip install "jaxhist_widget[jaxopt]"``). Nothing is patched: `run` runs the
solver's own ``init_state`` and ``update`` in the loop ``IterativeSolver.run`` builds, with
`jaxhist_widget.while_loop` as that loop, so one solve is one run (the line searches inside
``update`` keep their own loops and stream nothing), and ``jax.grad`` goes through jaxopt's
implicit differentiation as with ``solver.run``.

>>> import jax.numpy as jnp, jaxopt
>>> import jaxhist_widget as jhw
>>> import jaxhist_widget.jaxopt as jhw_jaxopt
>>> solver = jaxopt.LBFGS(fun=lambda w: jnp.sum((w - 1.0) ** 2) + jnp.sum(w**4))
>>> with jhw.Recorder() as rec:
...     params, state = jhw_jaxopt.run(solver, jnp.zeros(2))
>>> sorted(rec.history()), len(rec.runs), int(state.iter_num) == len(rec.history()["loss"])
(['error', 'loss', 'step_size'], 1, True)
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any, Literal

try:
    import jax
    from jaxopt import implicit_diff
    from jaxopt._src.base import IterativeSolver, OptStep
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError(
        f'jaxhist_widget.jaxopt needs jaxopt ({e}): pip install "jaxhist_widget[jaxopt]"'
    ) from e

import jaxhist_widget as jhw

__all__ = ["default_record", "run"]

# jaxopt's names for what a plot shows, as the preset calls them.
_FIELDS = {"value": "loss", "error": "error", "stepsize": "step_size", "damping_factor": "damping"}


def default_record(step: OptStep) -> dict[str, jax.Array]:
    """The scalars a plot of a jaxopt solve shows, read from its state: ``loss`` (``value``),
    ``error`` (the optimality error compared with ``tol``: the gradient's norm for most
    solvers), ``step_size`` (``stepsize``) and ``damping`` (Levenberg-Marquardt's
    ``damping_factor``), whichever the solver's state has.

    ``step`` is jaxopt's ``OptStep(params, state)``; a ``record`` of your own takes the same,
    e.g. ``lambda s: {"error": s.state.error, "w0": s.params[0]}``.
    """
    state = step.state
    out = {}
    for name, field in _FIELDS.items():
        value = getattr(state, name, None)
        if isinstance(value, jax.Array) and value.ndim == 0:
            out[field] = value
    return out


def run(
    solver: Any,
    init_params: Any,
    *args: Any,
    record: Callable[[OptStep], Any] | None = None,
    stream_every: int | Literal["auto"] = "auto",
    dtype: Any = None,
    warn_bytes: int | float | None = None,
    **kwargs: Any,
) -> OptStep:
    """``solver.run(init_params, *args, **kwargs)``, recording and streaming every iteration.

    The solve is one run on the sinks attached when it starts (one lane per ``jax.vmap``
    lane), and returns what ``solver.run`` returns, the same values.

    Parameters
    ----------
    solver
        A jaxopt iterative solver (``jaxopt.LBFGS(...)``, ``GradientDescent``,
        ``GaussNewton``, ``LevenbergMarquardt``, ``OptaxSolver``, ...).
    init_params, args, kwargs
        As for ``solver.run``.
    record
        ``OptStep -> pytree of arrays``: what to keep each iteration (default:
        `default_record`); ``OptStep`` has ``params`` and ``state``.
    stream_every, dtype, warn_bytes
        As in `jaxhist_widget.while_loop`.

    Notes
    -----
    jaxopt runs its first iteration before its loop, so row 0 is the state after iteration 1
    and row ``k`` after iteration ``k + 1`` (``state.iter_num``); there are at most
    ``maxiter`` rows. ``jax.grad`` goes through jaxopt's implicit differentiation (the
    default, ``implicit_diff=True``); with ``implicit_diff=False`` use ``solver.run``, whose
    unrolled loop can be reverse-differentiated. A stop (a sink's ``stop()``, the Stop
    button, ■) ends the solve after its current iteration and returns it as jaxopt returns a
    solve that reached ``maxiter``; the run reads ``stopped``.

    A solver built with ``jit=False`` runs as with ``jit=True``: jaxopt would run its loops
    (its line searches too) in Python, on concrete values, which the one compiled loop that
    records the solve cannot hold. The iterations are the same; ``fun`` runs traced (as
    jaxopt traces it with ``jit=False`` too), so use ``jax.debug.print`` in it, not ``print``.
    """
    if not isinstance(solver, IterativeSolver):
        raise TypeError(
            "jaxhist_widget.jaxopt.run takes a jaxopt iterative solver (jaxopt.LBFGS(...), "
            f"jaxopt.GradientDescent(...), ...), got {type(solver).__name__}."
        )
    if not getattr(solver, "jit", True):
        solver = _with_jit(solver)
    options = dict(record=record, stream_every=stream_every, dtype=dtype, warn_bytes=warn_bytes)

    def solve(init_params, *args, **kwargs):
        return _run(solver, options, init_params, *args, **kwargs)

    if getattr(solver, "implicit_diff", True):
        # As `IterativeSolver.run` does: the solve's gradient by the implicit function theorem.
        solve = implicit_diff.custom_root(
            solver.optimality_fun,
            has_aux=True,
            solve=solver.implicit_diff_solve,
            reference_signature=getattr(solver, "reference_signature", None),
        )(solve)
    return solve(init_params, *args, **kwargs)


def _with_jit(solver: Any) -> Any:
    """``solver`` built with ``jit=True``: what the recording loop can run.

    With ``jit=False`` jaxopt runs its own loops, the line searches inside ``update`` too, as
    Python loops on concrete values, and the recording loop traces ``update``. Its ``jit``
    changes only how jaxopt runs the same iterations (a compiled loop, a jitted ``update``).
    """
    try:
        return dataclasses.replace(solver, jit=True)
    except TypeError:  # not a dataclass: a solver of one's own
        name = type(solver).__name__
        raise ValueError(
            f"jaxhist_widget.jaxopt.run needs a solver whose loops can be traced, got {name} "
            "with jit=False (jaxopt then runs its loops in Python): build it with jit=True."
        ) from None


def _run(solver: Any, options: dict[str, Any], init_params: Any, *args: Any, **kwargs: Any):
    """`IterativeSolver._run` with `jaxhist_widget.while_loop` for its loop."""
    options = dict(options)
    record = options.pop("record") or default_record
    state = solver.init_state(init_params, *args, **kwargs)
    zero_step = solver._make_zero_step(init_params, state)
    opt_step = solver.update(init_params, state, *args, **kwargs)
    # At most maxiter - 1 iterations in the loop, as jaxopt's own (the first ran above).
    steps = solver.maxiter - 1
    cond = solver._cond_fun if steps > 0 else (lambda inputs: False)
    (many_step, _), _ = jhw.while_loop(
        cond,
        solver._body_fun,
        (opt_step, (args, kwargs)),
        max_steps=max(steps, 1),
        record=lambda inputs: record(inputs[0]),
        **options,
    )
    return jax.tree_util.tree_map(
        functools.partial(_where, solver.maxiter == 0),
        zero_step,
        many_step,
        is_leaf=lambda x: x is None,  # state attributes can be None
    )


def _where(cond: Any, x: Any, y: Any) -> Any:
    """jaxopt's merge of the zero step and the loop's (None-tolerant ``jnp.where``)."""
    if x is None:
        return y
    if y is None:
        return x
    return jax.numpy.where(cond, x, y)
