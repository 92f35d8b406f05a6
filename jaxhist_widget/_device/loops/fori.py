"""`fori_loop`: ``lax.fori_loop`` that also records every step.

Layer 1 (pure JAX). With static bounds it is the recording `scan` (reverse-differentiable, as
lax's is); with traced bounds it is `while_loop`, which needs ``max_steps`` (lax's is a while
loop there too).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any, Literal, TypeVar

import jax
import jax.numpy as jnp
from jax import lax

from ..record import History, checks
from .loop import while_loop
from .scan import scan

__all__ = ["fori_loop"]

Carry = TypeVar("Carry")


def fori_loop(
    lower: Any,
    upper: Any,
    body_fun: Callable[[Any, Carry], Carry],
    init_val: Carry,
    *,
    max_steps: int | None = None,
    unroll: int | bool | None = None,
    record: Callable[[Carry], Any] | None = None,
    stream: bool = True,
    stream_every: int | Literal["auto"] = "auto",
    dtype: Any = None,
    warn_bytes: int | float | None = None,
) -> tuple[Carry, History]:
    """``lax.fori_loop`` that records every step and streams the rows to the attached sinks.

    Returns ``(final, history)``: what ``lax.fori_loop(lower, upper, body_fun, init_val)``
    returns, and a `History` whose row 0 is ``record(init_val)`` and row ``i`` the record
    after the ``i``-th call of ``body_fun``. Eager, ``jax.jit``, ``jax.vmap``; with static
    bounds also ``jax.grad`` (it is `scan` then, as lax's is a scan), with traced bounds
    forward mode only (it is `while_loop` then, as lax's is a while loop).

    Parameters
    ----------
    lower, upper, body_fun, init_val, unroll
        As in ``lax.fori_loop``: ``body_fun(i, val) -> val`` for ``i`` in
        ``range(lower, upper)``; ``unroll`` needs static bounds.
    max_steps
        Needed only when a bound is traced: the static cap that sizes the history (the loop
        then ends at ``max_steps`` steps, status ``max steps``, where lax would go on). With
        static bounds the history has ``upper - lower + 1`` rows, and ``max_steps``, if
        given, must allow that many steps.
    record
        ``val -> pytree of arrays`` (default: the whole ``val``).
    stream, stream_every, dtype, warn_bytes
        As in `while_loop`.

    Examples
    --------
    >>> import jaxhist_widget as jhw
    >>> x, hist = jhw.fori_loop(0, 4, lambda i, x: x + i, 0.0)
    >>> float(x), hist.to_numpy().tolist()
    (6.0, [0.0, 0.0, 1.0, 3.0, 6.0])
    """
    if not callable(body_fun):
        raise TypeError(
            f"fori_loop's body_fun must be a callable (i, val) -> val, got {body_fun!r}."
        )
    checks.check_record(record)
    user_record = (lambda v: v) if record is None else record
    options = dict(stream=stream, stream_every=stream_every, dtype=dtype, warn_bytes=warn_bytes)
    bounds = _static_bounds(lower, upper)
    if bounds is None:
        if unroll not in (None, 1, False):
            raise ValueError("fori_loop: unroll needs static bounds (as in lax.fori_loop).")
        if max_steps is None:
            raise TypeError(
                "jhw.fori_loop with traced bounds needs max_steps=N, a static cap on the steps "
                "(it sizes the history): e.g. jhw.fori_loop(0, n, body, x, max_steps=1000). "
                "With static bounds (Python ints) it is not needed."
            )
        i0 = _bound_dtype(lower, upper)
        out, hist = while_loop(
            lambda c: c[0] < upper,
            lambda c: (c[0] + 1, body_fun(c[0], c[1])),
            (lax.convert_element_type(lower, i0), init_val),
            max_steps=max_steps,
            record=lambda c: user_record(c[1]),
            **options,
        )
        return out[1], hist
    lo, hi = bounds
    steps = max(hi - lo, 0)
    if max_steps is not None and checks.check_max_steps(max_steps) < steps:
        raise ValueError(
            f"fori_loop({lo}, {hi}, ...) runs {steps} steps but max_steps={max_steps} caps "
            "them: omit max_steps (static bounds size the history themselves) or raise it."
        )
    i0 = _bound_dtype(lower, upper)

    def step(c, _):
        return (c[0] + 1, body_fun(c[0], c[1])), None

    ((_, final), _), hist = scan(
        step,
        (jnp.asarray(lo, i0), init_val),
        None,
        length=steps,
        unroll=1 if unroll is None else unroll,
        record=lambda c, _: user_record(c[1]),
        **options,
    )
    return final, hist


def _static_bounds(lower: Any, upper: Any) -> tuple[int, int] | None:
    """The bounds as Python ints if both are concrete (as lax.fori_loop decides), else None."""
    try:
        return operator.index(lower), operator.index(upper)
    except TypeError:
        pass
    try:
        return int(lower), int(upper)
    except (TypeError, jax.errors.ConcretizationTypeError):
        return None


def _bound_dtype(lower: Any, upper: Any) -> Any:
    """The dtype of ``i``: lax.fori_loop's (the bounds' common integer dtype)."""
    dtype = jnp.result_type(lower, upper)
    if not jnp.issubdtype(dtype, jnp.integer):
        raise TypeError(
            f"fori_loop's bounds must be integers, got {jnp.result_type(lower)} and "
            f"{jnp.result_type(upper)}."
        )
    return dtype
