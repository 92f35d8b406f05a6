"""`while_loop`: ``lax.while_loop`` that also records every step.

Layer 1 (pure JAX). The history lives in the loop carry as fixed-shape buffers (one row per step,
``max_steps + 1`` rows); streaming to the host is a chunk flush per ``every`` rows, built in
`jaxhist_widget.streaming`.
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Callable
from typing import Any, Literal, NamedTuple, TypeVar

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from . import lanes, streaming
from .history import History, fill_value
from .runs import Layout

__all__ = ["DEFAULT_WARN_BYTES", "while_loop"]

Carry = TypeVar("Carry")

#: A trace-time warning is issued when the device history would be larger than this.
DEFAULT_WARN_BYTES = 1 << 30

# End status codes sent to the host (index into runs.STATUSES).
_CONVERGED, _MAX_STEPS, _STOPPED = 1, 2, 3

# Auto chunking: one host call carries at most this many bytes per lane, within these rows.
_CHUNK_BYTES = 1 << 18
_CHUNK_ROWS = (16, 1024)


class _State(NamedTuple):
    carry: Any
    bufs: list[jax.Array]
    n: jax.Array  # valid rows (steps + 1)
    done: jax.Array  # set at the end of the chunk in which a lane ended
    status: jax.Array
    flushed: jax.Array  # rows already sent to the host
    every: jax.Array  # rows per chunk (host-adapted; NEVER when nobody listens)


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
    warn_bytes: int | None = None,
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
    stream
        Send rows to the host sinks attached at call time (`Recorder`, `LivePlot`). With False
        the loop makes no host calls at all (and cannot be stopped from the host).
    stream_every
        ``"auto"``: adapt the flush interval so rows reach the host every ~50 ms at negligible
        cost; an int: flush every that many rows.
    dtype
        Storage dtype for floating leaves (e.g. ``jnp.bfloat16`` halves the memory of float32).
    warn_bytes
        Warn at trace time if the device history exceeds this many bytes (default 1 GiB).

    Returns
    -------
    final, history
        The final carry, and a `History` whose ``values`` has ``record``'s structure with a
        leading axis of ``max_steps + 1`` rows, of which ``history.length`` are valid.

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
    max_steps = _check_max_steps(max_steps)
    every = _check_every(stream_every)
    if record is None:
        record = _identity
    elif not callable(record):
        raise TypeError(f"record must be a callable carry -> pytree of arrays, got {record!r}.")
    max_rows = max_steps + 1

    def take(carry: Any) -> list[jax.Array]:
        leaves = jax.tree_util.tree_leaves(record(carry))
        return [_store_dtype(jnp.asarray(x), dtype) for x in leaves]

    row0 = record(init_val)
    treedef = jax.tree_util.tree_structure(row0)
    first = take(init_val)
    if not first:
        raise ValueError("record(carry) returned no arrays; return at least one leaf to record.")
    bufs = [
        jnp.full((max_rows, *x.shape), fill_value(x.dtype), x.dtype).at[0].set(x) for x in first
    ]
    _warn_if_large(bufs, warn_bytes)

    cont0 = _check_cond(cond_fun(init_val))
    layout = Layout(
        names=_leaf_names(row0),
        shapes=tuple(tuple(x.shape) for x in first),
        dtypes=tuple(
            np.dtype(x.dtype).str if x.dtype != jnp.bfloat16 else "bfloat16" for x in first
        ),
        treedef=treedef,
        max_steps=max_steps,
        chunk=_chunk_rows(first, max_rows, every),
        every=every,
    )

    if stream:
        run_id, every0 = streaming.open_run(layout)
        flush = streaming.make_flush(layout)
    else:
        run_id, every0 = jnp.int32(0), jnp.int32(np.iinfo(np.int32).max)

    zero = jnp.int32(0)
    init = _State(
        carry=init_val,
        bufs=bufs,
        n=jnp.int32(1),
        done=~cont0,
        status=jnp.where(cont0, zero, _CONVERGED),
        flushed=zero,
        every=every0,
    )

    def running(s: _State, limit: jax.Array) -> jax.Array:
        """Whether a lane takes another step: the user's condition, the cap, no stop."""
        return ~s.done & (s.n < limit) & _check_cond(cond_fun(s.carry))

    def run_until(s: _State, limit: jax.Array) -> _State:
        """Step while running and fewer than ``limit`` rows exist.

        Like ``lax.while_loop`` itself, the step only runs the body and writes its row; the
        condition lives in the loop predicate. Under vmap the predicate stays a scalar and each
        step masks its own updates (see `jaxhist_widget.lanes`); unbatched, the mask is unused
        and compiled away.
        """

        def step(s: _State) -> _State:
            active = running(s, limit)  # only read under vmap
            carry = body_fun(s.carry)
            bufs = [
                lanes.write_row(b, s.n, x, active) for b, x in zip(s.bufs, take(carry), strict=True)
            ]
            carry, n = lanes.keep_done(active, (carry, s.n + 1), (s.carry, s.n))
            return s._replace(carry=carry, bufs=bufs, n=n)

        return lax.while_loop(lambda s: lanes.any_lane(running(s, limit)), step, s)

    def chunk(s: _State) -> _State:
        # Run up to `every` steps, then flush them in one host call. Flushing between two inner
        # loops (not inside a `cond` in the step) keeps the history buffers out of any
        # conditional, so XLA updates them in place instead of copying them every step.
        active = ~s.done  # False for vmap lanes that finished before this chunk
        limit = jnp.minimum(s.flushed + jnp.minimum(s.every, max_rows), max_rows)
        s = run_until(s, limit)
        flushed, every, stop = flush(run_id, s.bufs, s.n, s.flushed, s.every, active)
        # Why a lane ended is decided once per chunk, not per step.
        cont = _check_cond(cond_fun(s.carry))
        capped = s.n >= max_rows
        stopped = stop & cont & ~capped
        status = jnp.select([~cont, capped, stopped], [_CONVERGED, _MAX_STEPS, _STOPPED], zero)
        return s._replace(
            flushed=flushed,
            every=every,
            done=s.done | (active & (~cont | capped | stopped)),
            status=jnp.where(active, status, s.status),
        )

    if stream:
        out = lax.while_loop(lambda s: lanes.any_lane(~s.done), chunk, init)
        streaming.make_close(layout)(run_id, out.bufs, out.n, out.flushed, out.every, out.status)
    else:
        out = run_until(init, jnp.int32(max_rows))
    return out.carry, History(treedef.unflatten(out.bufs), out.n)


# ------------------------------------------------------------------------------ checks
def _identity(x: Any) -> Any:
    return x


def _check_max_steps(max_steps: Any) -> int:
    if isinstance(max_steps, jax.core.Tracer):
        raise TypeError(
            "max_steps must be a static Python int, but got a traced value. It sizes the history "
            "buffer, so under jax.jit mark it static, e.g. "
            "jax.jit(f, static_argnames=('max_steps',))."
        )
    try:
        steps = operator.index(max_steps)
    except TypeError:
        raise TypeError(f"max_steps must be a Python int, got {max_steps!r}.") from None
    if steps <= 0:
        raise ValueError(f"max_steps must be > 0, got {steps}.")
    return steps


def _check_every(stream_every: Any) -> int | None:
    if isinstance(stream_every, str):
        if stream_every != "auto":
            raise ValueError(f"stream_every must be 'auto' or an int >= 1, got {stream_every!r}.")
        return None
    try:
        every = operator.index(stream_every)
    except TypeError:
        raise TypeError(
            f"stream_every must be 'auto' or an int >= 1, got {stream_every!r}."
        ) from None
    if every < 1:
        raise ValueError(f"stream_every must be 'auto' or an int >= 1, got {every}.")
    return every


def _check_cond(pred: Any) -> jax.Array:
    pred = jnp.asarray(pred)
    if pred.shape != ():
        raise TypeError(
            f"cond_fun must return a boolean scalar, got shape {pred.shape}; reduce it, "
            "e.g. with jnp.all(...) or jnp.any(...)."
        )
    return pred.astype(jnp.bool_)


def _store_dtype(x: jax.Array, dtype: Any) -> jax.Array:
    if jnp.iscomplexobj(x):
        raise TypeError(
            "complex leaves cannot be recorded; record their real and imaginary parts, "
            "e.g. record=lambda c: (c.real, c.imag)."
        )
    if dtype is not None and jnp.issubdtype(x.dtype, jnp.floating):
        return x.astype(dtype)
    return x


def _chunk_rows(first: list[jax.Array], max_rows: int, every: int | None) -> int:
    if every is not None:
        # The first flush can hold row 0 and row 1 together (there is no flush before the
        # first step), so a chunk holds at least two rows.
        return min(max(every, 2), max_rows)
    row_bytes = max(1, sum(x.size * x.dtype.itemsize for x in first))
    lo, hi = _CHUNK_ROWS
    return int(min(max_rows, max(lo, min(hi, _CHUNK_BYTES // row_bytes))))


def _warn_if_large(bufs: list[jax.Array], warn_bytes: int | None) -> None:
    limit = DEFAULT_WARN_BYTES if warn_bytes is None else warn_bytes
    nbytes = sum(b.size * b.dtype.itemsize for b in bufs)
    if nbytes > limit:
        warnings.warn(
            f"jaxhist_widget.while_loop: the device history takes {nbytes:,} bytes "
            f"({nbytes / 2**30:.2f} GiB, over the {limit:,}-byte threshold). Record less with "
            "record=lambda c: {...}, store floats in a smaller dtype (dtype=jnp.bfloat16), or "
            "lower max_steps; raise warn_bytes to silence this.",
            ResourceWarning,
            stacklevel=3,
        )


def _leaf_names(tree: Any) -> tuple[str, ...]:
    """Leaf names: ``loss``, ``params.w``, ``[0]``, ``state[1]``; ``value`` for a lone leaf."""
    paths = jax.tree_util.tree_flatten_with_path(tree)[0]
    names = []
    for path, _ in paths:
        name = ""
        for key in path:
            if isinstance(key, jax.tree_util.SequenceKey):
                name += f"[{key.idx}]"
            elif isinstance(key, jax.tree_util.DictKey):
                name += f"{'.' if name else ''}{key.key}"
            elif isinstance(key, jax.tree_util.GetAttrKey):
                name += f"{'.' if name else ''}{key.name}"
            else:
                name += str(key)
        names.append(name or "value")
    return tuple(names)
