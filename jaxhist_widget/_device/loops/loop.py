"""`while_loop`: ``lax.while_loop`` that also records every step.

Layer 1 (pure JAX). `while_loop` checks its arguments (`checks`), traces the user's functions
once (`carry`), plans what a row holds (`rows`) and its size (`sizes`), and runs one of the two
loops built from the same steps (`steps`): plain, or streamed in chunks (`chunks`). An eager
call runs a cached ``jax.jit`` of itself (`eager`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypeVar

from jax import lax

from ..parallel import lanes
from ..record import History, checks, rows, sizes
from . import chunks, eager
from .carry import prepare
from .steps import BLOCK, Loop

__all__ = ["while_loop"]

Carry = TypeVar("Carry")


def while_loop(
    cond_fun: Callable[[Carry], Any],
    body_fun: Callable[[Carry], Carry],
    init_val: Carry,
    *,
    max_steps: int,
    record: Callable[[Carry], Any] | None = None,
    stream: bool = True,
    stream_every: int | Literal["auto"] = "auto",
    dtype: Any = None,
    warn_bytes: int | float | None = None,
) -> tuple[Carry, History]:
    """Run ``body_fun`` while ``cond_fun`` holds, at most ``max_steps`` times, recording each step.

    A drop-in for ``jax.lax.while_loop`` that returns ``(final_carry, history)``. Works eagerly,
    under ``jax.jit`` and under ``jax.vmap``.

    Parameters
    ----------
    cond_fun
        ``carry -> bool scalar``; the loop continues while it is True.
    body_fun
        ``carry -> carry`` (same structure, shapes and dtypes).
    init_val
        The initial carry.
    max_steps
        Python int > 0, the static cap on steps; it sizes the device history
        (``max_steps + 1`` rows). Under ``jax.jit`` mark it static (``static_argnames``).
    record
        ``carry -> pytree of arrays``: what to keep each step (default: the whole carry).
        A typed PRNG key (``jax.random.key``) is kept as its key data (uint32,
        ``jax.random.wrap_key_data`` turns it back); every other real dtype JAX has, float8,
        float4 and int4 included, is kept and streamed as is.
    stream
        Send rows to the host sinks attached at call time (`Recorder`, `LivePlot`). With False
        the loop makes no host calls at all (and cannot be stopped from the host); so does a
        loop whose ``record`` returns no leaf (an empty carry ``()``): nothing to stream.
    stream_every
        ``"auto"``: adapt the flush interval so rows reach the host every ~50 ms at negligible
        cost; an int: flush every that many rows.
    dtype
        Storage dtype for floating leaves (e.g. ``jnp.bfloat16`` halves the memory of float32);
        a floating dtype (an integer one would truncate them; convert in ``record`` instead).
    warn_bytes
        Warn (`HistorySizeWarning`) at trace time if the device history, all vmap lanes
        together, exceeds this many bytes (default 1 GiB).

    Returns
    -------
    final, history
        The final carry, and a `History` whose ``values`` has ``record``'s structure with a
        leading axis of ``max_steps + 1`` rows, of which ``history.length`` are valid.

    Notes
    -----
    As in ``lax.while_loop``: ``init_val`` leaves may be Python scalars (a weakly typed leaf
    takes the dtype ``body_fun`` gives it), ``cond_fun`` runs once per step (plus once on
    ``init_val``), and forward-mode autodiff (``jax.jvp``, ``jax.jacfwd``) works, the History
    included; the streamed rows carry no tangents. Eager calls compile once per
    (``cond_fun``, ``body_fun``, ``record``, static options) and are cached on the identity of
    the functions, so a function that reads a global changed since is not retraced (the same
    holds for ``lax.while_loop``). ``cond_fun`` and ``body_fun`` are traced once per call.

    Under ``jax.vmap`` a leaf that ``body_fun`` returns unchanged is not carried (it stays
    unbatched, never copied per lane), and the others are batched as lax batches them. A Ref
    written in ``body_fun`` is written only for the lanes that take the step; an
    ``io_callback`` or a ``checkify`` check is refused at trace time when ``cond_fun`` differs
    per lane (as by lax); a Ref written in ``cond_fun`` is refused always (write it in
    ``body_fun``).

    Examples
    --------
    >>> import jax
    >>> import jaxhist_widget as jhw
    >>> solve = jax.jit(
    ...     lambda x: jhw.while_loop(lambda x: x > 1.0, lambda x: x / 2, x, max_steps=5)
    ... )
    >>> with jhw.Recorder() as rec:
    ...     x, hist = solve(10.0)
    >>> hist.to_numpy().tolist(), rec.history().tolist()
    ([10.0, 5.0, 2.5, 1.25, 0.625], [10.0, 5.0, 2.5, 1.25, 0.625])
    """
    checks.check_functions(cond_fun, body_fun)
    max_steps = checks.check_max_steps(max_steps)
    every = checks.check_every(stream_every)
    stream = checks.check_stream(stream)
    warn_bytes = checks.check_warn_bytes(warn_bytes)
    checks.check_record(record)
    options = dict(
        max_steps=max_steps,
        record=record,
        stream=stream,
        stream_every=stream_every,
        dtype=dtype,
        warn_bytes=warn_bytes,
    )
    cached = eager.cached(while_loop, (cond_fun, body_fun), options)
    if cached is not None:
        return cached(init_val)

    carry = prepare(cond_fun, body_fun, init_val)
    init = carry.init()
    user_record = (lambda c: c) if record is None else record
    # (the default record rebuilds the carry from leaves: its order is body_fun's, as written)
    order = carry.order if record is None else None
    plan = rows.plan(
        lambda m: user_record(carry.full(m)), dtype, init, carry.counting, carry.is_fixed, order
    )
    consts = (carry.body.consts, carry.cond_jaxpr.consts)
    loop = Loop(cond_fun, carry, plan, max_steps + 1, lanes.lane_count(init, consts))
    bufs = loop.rows.buffers(loop.max_rows)
    lane_bytes = sizes.warn_if_large(bufs, warn_bytes)
    cont = loop.cond(init)
    # A record with no leaf (an empty carry ``()``, as lax accepts) has no row to stream: the
    # loop runs as with ``stream=False`` and the History holds only its ``length``.
    if stream and loop.rows.first:
        block = 1 if loop.carry.counted is None else BLOCK
        layout = rows.layout(loop.rows, max_steps, every, block)
        out = chunks.run_streaming(loop, layout, init, bufs, cont)
    else:
        out = chunks.run_plain(loop, init, bufs, cont)
    if lane_bytes is not None:
        sizes.warn_lanes(lane_bytes, warn_bytes, lax.stop_gradient((out.n, out.bufs)))
    return carry.full(out.carry), loop.rows.history(out.bufs, out.n, loop.max_rows)
