"""Watch diffrax solves: `adjoint` records and streams every step of ``diffrax.diffeqsolve``.

Needs diffrax (``pip install "jaxhist_widget[diffrax]"``). Nothing is patched: diffrax runs its
outer loop (one iteration per step, accepted or rejected) with the ``while_loop`` its adjoint
chooses, and this adjoint chooses `jaxhist_widget.while_loop`. The solve is a forward one, as
with ``diffrax.ForwardMode`` (``jax.jvp`` and ``jax.jacfwd`` work through it); reverse mode
(``jax.grad``) raises an error naming what to use instead.

>>> import jax.numpy as jnp, diffrax
>>> import jaxhist_widget as jhw
>>> import jaxhist_widget.diffrax as jhw_diffrax
>>> term = diffrax.ODETerm(lambda t, y, args: -y)
>>> with jhw.Recorder() as rec:
...     sol = diffrax.diffeqsolve(
...         term, diffrax.Tsit5(), 0.0, 1.0, 0.1, jnp.ones(2),
...         stepsize_controller=diffrax.PIDController(rtol=1e-5, atol=1e-5),
...         adjoint=jhw_diffrax.adjoint(),
...     )
>>> rows = rec.history()
>>> sorted(rows), float(rows["t"][-1]), len(rows["t"]) == int(sol.stats["num_steps"]) + 1
(['accepted_steps', 'dt', 'rejected_steps', 't'], 1.0, True)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Literal

try:
    import diffrax
    import equinox as eqx
    import equinox.internal as eqxi
    import jax
    import jax.numpy as jnp
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError(
        f'jaxhist_widget.diffrax needs diffrax ({e}): pip install "jaxhist_widget[diffrax]"'
    ) from e

import jaxhist_widget as jhw

__all__ = ["adjoint", "default_record"]

#: Said when ``jax.grad`` reaches a solve watched by this adjoint.
REVERSE_MODE = (
    "jaxhist_widget.diffrax.adjoint() watches the forward solve only, and cannot be "
    "reverse-mode differentiated (jax.grad, jax.vjp): its loop is a lax.while_loop. For "
    "gradients, solve with diffrax's own adjoint (adjoint=diffrax.RecursiveCheckpointAdjoint(), "
    "the default); forward mode (jax.jvp, jax.jacfwd) works with this one."
)


def default_record(state: Any) -> dict[str, jax.Array]:
    """What a plot of a diffrax solve shows: ``t`` (the time reached), ``dt`` (the next step
    the controller proposes), ``accepted_steps`` and ``rejected_steps`` so far.

    ``state`` is diffrax's loop state (``tprev``, ``tnext``, ``y``, ``num_steps``,
    ``num_accepted_steps``, ``num_rejected_steps``, the save buffers, ...): a ``record`` of your
    own takes the same, e.g. ``lambda s: {"t": s.tprev, "y": s.y}`` (the state also holds
    ``max_steps``-long save buffers: never record all of it).
    """
    return {
        "t": state.tprev,
        "dt": state.tnext - state.tprev,
        "accepted_steps": state.num_accepted_steps,
        "rejected_steps": state.num_rejected_steps,
    }


class _WatchedAdjoint(diffrax.AbstractAdjoint):
    """A forward adjoint (as ``diffrax.ForwardMode``) whose outer loop is
    `jaxhist_widget.while_loop`."""

    record: Callable[[Any], Any] | None = eqx.field(static=True, default=None)
    stream_every: int | Literal["auto"] = eqx.field(static=True, default="auto")
    dtype: Any = eqx.field(static=True, default=None)
    warn_bytes: int | float | None = eqx.field(static=True, default=None)

    def loop(
        self, *, solver, init_state, throw, passed_solver_state, passed_controller_state, **kwargs
    ):
        del throw, passed_solver_state, passed_controller_state
        # diffrax resolves a result no step can change at trace time (a Python value); a
        # stop changes it (`_outer_loop`), so it starts as an array, which diffrax then reads
        # at run time (one select of an integer a step).
        other = diffrax.RESULTS.event_occurred  # any other value: `where` keeps its operand
        result = diffrax.RESULTS.where(jnp.bool_(True), init_state.result, other)
        init_state = eqx.tree_at(lambda s: s.result, init_state, result)
        # As diffrax.ForwardMode: the stages' inner loops are lax loops, and a Runge-Kutta
        # solver's stages a lax scan, so that forward-mode autodiff goes through.
        if (
            isinstance(solver, (diffrax.AbstractRungeKutta, diffrax.AbstractSRK))
            and solver.scan_kind is None
        ):
            solver = eqx.tree_at(lambda s: s.scan_kind, solver, "lax", is_leaf=lambda x: x is None)
        out = self._loop(
            solver=solver,
            init_state=init_state,
            inner_while_loop=functools.partial(eqxi.while_loop, kind="lax"),
            outer_while_loop=functools.partial(_outer_loop, self),
            **kwargs,
        )
        return eqxi.nondifferentiable_backward(out, msg=REVERSE_MODE, symbolic=True)


def _outer_loop(adjoint: _WatchedAdjoint, cond_fun, body_fun, init_val, *, max_steps, buffers):
    """diffrax's outer loop as a `jaxhist_widget.while_loop`.

    ``buffers`` (the save buffers, which equinox's loops write in place) are left to XLA: the
    body writes them with ``.at[].set``, which plain arrays support. A loop stopped from the host
    ends with ``result`` set to diffrax's "event occurred": diffrax then returns the solution
    up to the time reached (``sol.ts``), and ``throw=True`` raises nothing.
    """
    del buffers
    if max_steps is None:
        raise TypeError(
            "jaxhist_widget.diffrax.adjoint() needs a bound on the steps (it sizes the "
            "history): pass max_steps=N to diffeqsolve (diffrax's default is 4096)."
        )
    record = default_record if adjoint.record is None else adjoint.record
    final, hist = jhw.while_loop(
        cond_fun,
        body_fun,
        init_val,
        max_steps=max_steps,
        record=record,
        stream_every=adjoint.stream_every,
        dtype=adjoint.dtype,
        warn_bytes=adjoint.warn_bytes,
    )
    stopped = cond_fun(final) & (hist.length <= max_steps)
    result = diffrax.RESULTS.where(stopped, diffrax.RESULTS.event_occurred, final.result)
    return eqx.tree_at(lambda s: s.result, final, result)


def adjoint(
    record: Callable[[Any], Any] | None = None,
    *,
    stream_every: int | Literal["auto"] = "auto",
    dtype: Any = None,
    warn_bytes: int | float | None = None,
) -> diffrax.AbstractAdjoint:
    """A diffrax adjoint that records and streams every step of the solve it is given to.

    Pass it as ``diffeqsolve(..., adjoint=...)``: each solve is one run on the sinks attached
    when it starts, one row per step of diffrax's outer loop (accepted or rejected: ``t`` stays
    put on a rejected one), one lane per ``jax.vmap`` lane. The solution is diffrax's own.

    Parameters
    ----------
    record
        ``state -> pytree of arrays``: what to keep each step (default: `default_record`).
    stream_every, dtype, warn_bytes
        As in `jaxhist_widget.while_loop`.

    Notes
    -----
    The solve needs an integer ``max_steps`` (diffrax's default, 4096, is one): it sizes the
    history. Forward-mode autodiff works through the solve; reverse mode raises an error
    (`REVERSE_MODE`) that names diffrax's adjoint to use for it. A stop (a sink's ``stop()``,
    the Stop button, ■) ends the solve after its current step: ``sol.result`` reads "event
    occurred" (so ``throw=True`` raises nothing), ``sol.ts`` ends at the time reached, and the
    run reads ``stopped``.
    """
    return _WatchedAdjoint(
        record=record, stream_every=stream_every, dtype=dtype, warn_bytes=warn_bytes
    )
