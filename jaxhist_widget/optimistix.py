"""Watch optimistix solves: `adjoint` records and streams every step of ``optx.minimise``,
``least_squares``, ``root_find`` and ``fixed_point``.

Needs optimistix (``pip install "jaxhist_widget[optimistix]"``). Nothing is patched: optimistix
runs its solver loop with the ``while_loop`` its adjoint hands it, and this adjoint hands it
`jaxhist_widget.while_loop`. It is optimistix's `ImplicitAdjoint` otherwise, so gradients
through the solve are those of the default adjoint (the implicit function theorem: the loop
itself is not differentiated, and only its forward run streams).

>>> import jax.numpy as jnp, optimistix as optx
>>> import jaxhist_widget as jhw
>>> import jaxhist_widget.optimistix as jhw_optx
>>> loss = lambda y, args: jnp.sum((y - 1.0) ** 2) + jnp.sum(y**4)
>>> with jhw.Recorder() as rec:
...     sol = optx.minimise(loss, optx.BFGS(1e-6, 1e-6), jnp.zeros(2), adjoint=jhw_optx.adjoint())
>>> rows = rec.history()
>>> sorted(rows), len(rows["loss"]) == int(sol.stats["num_steps"]) + 1
(['accepted_steps', 'grad_norm', 'loss', 'step_size'], True)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Literal, NamedTuple

try:
    import equinox as eqx
    import jax
    import jax.numpy as jnp
    import optimistix as optx
    from optimistix.internal import implicit_jvp
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError(
        f"jaxhist_widget.optimistix needs optimistix ({e}): pip install "
        '"jaxhist_widget[optimistix]"'
    ) from e

import jaxhist_widget as jhw

__all__ = ["Step", "adjoint", "default_record"]


class Step(NamedTuple):
    """What ``record`` is given each step (and for row 0, before the first).

    ``state`` is the solver's state as optimistix carries it through its loop: its arrays (the
    fields that are not arrays are None). ``num_steps`` counts the steps taken.
    """

    y: Any
    num_steps: jax.Array
    state: Any
    aux: Any


def default_record(step: Step) -> dict[str, jax.Array]:
    """The scalars a plot of an optimistix solve shows, read from the solver's state.

    - ``loss`` (a minimiser's ``f``), ``residual_norm`` (the 2-norm of a least-squares or
      root-finding residual), ``grad_norm``: at the current iterate ``y``;
    - ``step_size`` (a line search's or trust region's), ``accepted_steps``;
    - ``relative_error`` (fixed-point iteration), ``bracket`` (bisection's ``upper - lower``),
      ``scaled_step`` (Newton's and chord's last step, relative to the tolerances),
      ``best_loss`` (``BestSoFar*``).

    Whichever of them the solver's state has; for another solver, ``y_norm``. Before the first
    step (row 0) the solver state holds placeholders, not values: those rows are NaN, which a
    plot leaves out, never zeros.
    """
    out: dict[str, jax.Array] = {}
    state = step.state
    best = getattr(state, "best_loss", None)
    if best is not None:  # BestSoFar*: the wrapped solver's state, and the best loss so far
        out["best_loss"] = best
        state = state.state
    if isinstance(state, tuple) and state and isinstance(state[0], eqx.Module):
        state = state[0]  # a solver used through another's interface (root_find by LM)
    before = _before_first_step(state)
    f_info = getattr(state, "f_info", None)
    if f_info is not None:
        if getattr(f_info, "f", None) is not None:
            out["loss"] = f_info.f
        if getattr(f_info, "residual", None) is not None:
            out["residual_norm"] = optx.two_norm(f_info.residual)
        if getattr(f_info, "grad", None) is not None:
            out["grad_norm"] = optx.two_norm(f_info.grad)
    elif getattr(state, "opt_state", None) is not None and hasattr(state, "f"):  # optax
        out["loss"] = state.f
    elif hasattr(state, "simplex"):  # Nelder-Mead: the best vertex's value
        out["loss"] = state.best[0]
    elif hasattr(state, "diffsize"):  # Newton, chord
        if state.f is not None:
            out["residual_norm"] = optx.two_norm(state.f)
        out["scaled_step"] = state.diffsize
    if getattr(getattr(state, "search_state", None), "step_size", None) is not None:
        out["step_size"] = state.search_state.step_size
    if hasattr(state, "relative_error"):
        out["relative_error"] = state.relative_error
    if hasattr(state, "lower") and hasattr(state, "upper"):
        out["bracket"] = state.upper - state.lower
    if before is not None:
        out = {k: jnp.where(before, jnp.nan, v) for k, v in out.items()}
    if getattr(state, "num_accepted_steps", None) is not None:
        out["accepted_steps"] = state.num_accepted_steps
    if not out:
        out["y_norm"] = optx.two_norm(step.y)
    return out


def _before_first_step(state: Any) -> jax.Array | None:
    """True while the state holds placeholders (no step taken yet), where the solver says so."""
    for name in ("first_step", "first_pass"):  # quasi-Newton, gradient, Gauss-Newton; NM
        flag = getattr(state, name, None)
        if flag is not None:
            return flag
    if getattr(state, "opt_state", None) is not None and hasattr(state, "step"):
        return state.step == 0  # optax: f is the dtype's largest value until then
    return None


class _WatchedAdjoint(optx.ImplicitAdjoint):
    """`optx.ImplicitAdjoint` whose solver loop is a `jaxhist_widget.while_loop`."""

    record: Callable[[Step], Any] | None = eqx.field(static=True, default=None)
    stream_every: int | Literal["auto"] = eqx.field(static=True, default="auto")
    dtype: Any = eqx.field(static=True, default=None)
    warn_bytes: int | float | None = eqx.field(static=True, default=None)

    def apply(self, primal_fn, rewrite_fn, inputs, tags):
        # As `optx.ImplicitAdjoint.apply`, which hands the solver `eqxi.while_loop(kind="lax")`
        # the same way: the loop is the last of the solve's inputs.
        loop = functools.partial(_loop, self)
        return implicit_jvp(primal_fn, rewrite_fn, (*inputs, loop), tags, self.linear_solver)


def _loop(adjoint: _WatchedAdjoint, cond_fun, body_fun, init_val, max_steps):
    """optimistix's solver loop as a `jaxhist_widget.while_loop`.

    The carry is ``(y, num_steps, state, aux, terminate, result)``. A loop stopped from the
    host ends with ``result`` set to ``nonlinear_max_steps_reached``, what a solve cut short by
    ``max_steps`` returns: the iterate so far, which did not meet the tolerances.
    """
    if max_steps is None:
        raise TypeError(
            "jaxhist_widget.optimistix.adjoint() needs a bound on the steps (it sizes the "
            "history): pass max_steps=N to the solve (optimistix's default is 256)."
        )
    record = default_record if adjoint.record is None else adjoint.record
    final, hist = jhw.while_loop(
        cond_fun,
        body_fun,
        init_val,
        max_steps=max_steps,
        record=lambda c: record(Step(y=c[0], num_steps=c[1], state=c[2], aux=c[3])),
        stream_every=adjoint.stream_every,
        dtype=adjoint.dtype,
        warn_bytes=adjoint.warn_bytes,
    )
    # A lane the loop left still running that the cap did not end was stopped from the host.
    # Set here, not left to optimistix (which reads a loop that did not terminate as capped),
    # so that no later reading of ``terminate`` can turn a stop into a success.
    stopped = cond_fun(final) & (hist.length <= max_steps)
    y, num_steps, state, aux, terminate, result = final
    result = optx.RESULTS.where(stopped, optx.RESULTS.nonlinear_max_steps_reached, result)
    return y, num_steps, state, aux, terminate, result


def adjoint(
    record: Callable[[Step], Any] | None = None,
    *,
    stream_every: int | Literal["auto"] = "auto",
    dtype: Any = None,
    warn_bytes: int | float | None = None,
    linear_solver: Any = None,
) -> optx.ImplicitAdjoint:
    """An optimistix adjoint that records and streams every step of the solve it is given to.

    Pass it as ``adjoint=`` to ``optx.minimise``, ``least_squares``, ``root_find`` or
    ``fixed_point``: each solve is one run on the sinks attached when it starts (a
    ``Recorder``, a ``LivePlot``, a ``%%jaxhist`` cell), one lane per ``jax.vmap`` lane, with
    ``num_steps + 1`` rows. The solution is the one the default adjoint gives, and
    ``jax.grad`` through the solve works as with it (it is `optx.ImplicitAdjoint`).

    Parameters
    ----------
    record
        ``Step -> pytree of arrays``: what to keep each step (default: `default_record`, the
        scalars of the solver's family). ``Step`` has ``y``, ``num_steps``, ``state``,
        ``aux``; keep it small (a solver state can hold a d×d matrix).
    stream_every, dtype, warn_bytes
        As in `jaxhist_widget.while_loop`.
    linear_solver
        `optx.ImplicitAdjoint`'s (the linear solve of the backward pass).

    Notes
    -----
    The solve needs an integer ``max_steps`` (optimistix's default, 256, is one): it sizes the
    history. A stop (a sink's ``stop()``, the Stop button, ■) ends the solve after its
    current step; the run reads ``stopped``. The solve did not converge, so it reads as one
    cut short by ``max_steps``: ``sol.result`` is ``RESULTS.nonlinear_max_steps_reached``,
    never ``successful``, and under ``throw=True`` (optimistix's default) the solve raises as
    a capped one does (optimistix's message names ``max_steps``). Pass ``throw=False`` to get
    the iterate so far, ``sol.value``, with ``sol.stats["num_steps"]`` the steps done.
    """
    fields: dict[str, Any] = dict(
        record=record, stream_every=stream_every, dtype=dtype, warn_bytes=warn_bytes
    )
    if linear_solver is not None:
        fields["linear_solver"] = linear_solver
    return _WatchedAdjoint(**fields)
