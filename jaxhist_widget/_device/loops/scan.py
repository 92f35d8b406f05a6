"""`scan`: ``lax.scan`` that also records every step.

Layer 1 (pure JAX). The recording scan is a ``lax.scan`` itself, not a while loop: its trip
count is static, so reverse-mode autodiff (``jax.grad``) goes through it as through lax's, and
the host calls, which depend only on primal values, run in the forward pass only. Each step:

- runs ``f`` inside a ``cond`` on the host's last answer (a stopped scan skips the rest);
- writes ``record(carry, y)`` into the history buffers, one row per step (as `while_loop`);
- flushes the new rows when the host's interval has passed, and at the last step (whose flush
  carries the end status and ends the run), in a ``cond`` of its own.

The flush reads the history buffers inside that ``cond`` (only when it is due); measured here,
XLA does not copy them for it, and each of the two conditionals costs well under a microsecond
a step on CPU (``benchmarks/loops.py`` compares the whole scan with lax's).

A ``fori_loop`` with static bounds is this scan (`fori`). An eager call runs a cached
``jax.jit`` of the scan (`eager`).
"""

from __future__ import annotations

import dataclasses
import functools
import operator
from collections.abc import Callable
from typing import Any, Literal, NamedTuple, TypeVar

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ..parallel import lanes
from ..record import History, checks, rows, sizes, stand_ins, written
from ..stream import streaming
from . import eager

__all__ = ["scan"]

Carry = TypeVar("Carry")
X = TypeVar("X")
Y = TypeVar("Y")


class _State(NamedTuple):
    """The scan carry: the user's carry, the history buffers and the bookkeeping."""

    carry: Any
    bufs: list[jax.Array]
    n: jax.Array  # valid rows (steps done + 1)
    flushed: jax.Array  # rows already sent to the host
    # The host's last answer (`streaming.STOP`, `EVERY`, `RUN`); `NEVER` rows when nobody
    # listens or the loop does not stream.
    answer: jax.Array


def scan(
    f: Callable[[Carry, X], tuple[Carry, Y]],
    init: Carry,
    xs: X | None = None,
    length: int | None = None,
    *,
    reverse: bool = False,
    unroll: int | bool = 1,
    record: Callable[[Carry, Y], Any] | None = None,
    stream: bool = True,
    stream_every: int | Literal["auto"] = "auto",
    dtype: Any = None,
    warn_bytes: int | float | None = None,
) -> tuple[tuple[Carry, Y], History]:
    """``lax.scan`` that records every step and streams the rows to the attached sinks.

    Returns ``((carry, ys), history)``: what ``lax.scan(f, init, xs, length)`` returns, and a
    `History` of ``length + 1`` rows. Works eagerly, under ``jax.jit``, ``jax.vmap``, and
    ``jax.grad`` / ``jax.jvp`` as ``lax.scan`` does.

    Parameters
    ----------
    f, init, xs, length, reverse, unroll
        As in ``lax.scan``: ``f(carry, x) -> (carry, y)``; ``length`` is needed only when
        ``xs`` is None (it must be static, as for lax).
    record
        ``(carry, y) -> pytree of arrays``: what to keep each step, given the carry ``f``
        returned and its ``y``. Default: ``y`` (what a training step returns: its loss,
        metrics), or the whole carry when ``f`` returns no ``y`` (``None``). Row 0 is
        ``record(init, y0)`` where ``y0`` is a placeholder of ``y``'s shapes: NaN for
        floating leaves, 0 for the others (no step has made a ``y`` yet). A plot leaves row 0
        of every leaf computed from ``y`` out, whatever its dtype; the `History` and the rows
        on the host (``to_pandas``, a ``Store``) keep it as recorded. A record of the carry
        alone has a real row 0.
    stream, stream_every, dtype, warn_bytes
        As in `while_loop`.

    Returns
    -------
    (carry, ys), history
        ``history.values`` has ``record``'s structure with ``length + 1`` rows: row ``i`` is
        the record after step ``i`` (in the order the steps ran: with ``reverse=True``, row 1
        is the step over ``xs``'s last element).

    Notes
    -----
    Stopping (a sink's ``stop()``, its Stop button, an interrupt): the scan skips its remaining
    steps, so the call returns the carry of the last step done, ``history.length - 1`` steps;
    ``ys`` holds those steps' rows and zeros past them (``ys[:int(history.steps)]`` are the
    steps done; with ``reverse=True``, ``ys[length - steps:]``). The run reads ``stopped``.

    Differentiation: the rows are sent from the forward pass only (one run per call); the
    backward pass sends nothing. Under ``jax.checkpoint`` JAX may run the forward pass again
    in the backward pass, which then streams a second run. The `History` is differentiable
    (its rows carry tangents), as is `while_loop`'s under ``jax.jvp``.

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> import jaxhist_widget as jhw
    >>> def step(w, x):  # one step of gradient descent on (w - x)^2, returning the loss
    ...     return w - 0.5 * (w - x), (w - x) ** 2
    >>> with jhw.Recorder() as rec:
    ...     (w, losses), hist = jhw.scan(step, 0.0, jnp.ones(3))
    >>> losses.tolist(), hist.to_numpy().tolist()[1:], rec.history().tolist()[1:]
    ([1.0, 0.25, 0.0625], [1.0, 0.25, 0.0625], [1.0, 0.25, 0.0625])
    """
    if not callable(f):
        raise TypeError(f"scan's f must be a callable (carry, x) -> (carry, y), got {f!r}.")
    checks.check_record(record)
    length = _length(xs, length)
    every = checks.check_every(stream_every)
    stream = checks.check_stream(stream)
    warn_bytes = checks.check_warn_bytes(warn_bytes)
    options = dict(
        length=length,
        reverse=bool(reverse),
        unroll=unroll,
        record=record,
        stream=stream,
        stream_every=stream_every,
        dtype=dtype,
        warn_bytes=warn_bytes,
    )
    cached = eager.cached(scan, (f,), options)
    if cached is not None:
        return cached(init, xs)

    init, y_shape, y_order = _prepare(f, init, xs)
    y_fill = jax.tree_util.tree_map(_placeholder, y_shape)
    user_record = record if record is not None else _default_record(y_shape)
    # (the default record rebuilds y, or the carry, from leaves: its written order is f's)
    order = None if record is not None else y_order
    plan = rows.plan(lambda s: user_record(*s), dtype, (init, y_fill), (), order=order)
    max_rows = length + 1
    bufs = plan.buffers(max_rows)
    lane_bytes = sizes.warn_if_large(bufs, warn_bytes)
    # A scan of no step has nothing to watch, and a record of no leaf no row: no run.
    streaming_on = stream and bool(plan.kept) and length > 0
    if streaming_on:
        layout = rows.layout(plan, length, every)
        if jax.tree_util.tree_leaves(y_fill):
            # Row 0 of what is recorded from y is a stand-in: told to the host, so that a plot
            # leaves it out (NaN does so by itself, an int or bool 0 would read as a value).
            layout = dataclasses.replace(
                layout, stand_ins=stand_ins.from_y(user_record, init, y_fill)
            )
        answer = streaming.open_run(layout, plan.first_rows())
        flush = streaming.make_flush(layout)
    else:
        answer, flush, layout = jnp.array(streaming.NOBODY, jnp.int32), None, None
    state = _State(init, bufs, jnp.int32(1), jnp.int32(0), answer)
    zeros = jax.tree_util.tree_map(_zeros, y_shape)
    body = functools.partial(_step, f, plan, max_rows, layout, flush, zeros)
    out, ys = lax.scan(body, state, xs, length=length, reverse=reverse, unroll=unroll)
    if streaming_on and _last_step_unrolled(length, unroll):
        _keep(out.answer)
    if lane_bytes is not None:
        sizes.warn_lanes(lane_bytes, warn_bytes, lax.stop_gradient((out.n, out.bufs)))
    return (out.carry, ys), plan.history(out.bufs, out.n, max_rows)


def _step(f, plan: rows.Rows, max_rows: int, layout, flush, zeros, s: _State, x):
    """One step of the recording scan: ``f`` unless stopped, its row, a flush when due."""
    go = s.answer[streaming.STOP] == 0
    carry, y = lax.cond(go, f, lambda c, x: (c, zeros), s.carry, x)
    # A skipped step (after a stop) rewrites row `n` with row 0's value, which every row past
    # the History's length holds (see `History`).
    first = plan.first_rows()
    new = [jnp.where(go, r, r0) for r, r0 in zip(plan.take((carry, y)), first, strict=True)]
    bufs = _write_rows(list(s.bufs), s.n, new)
    n = s.n + go.astype(jnp.int32)
    s = s._replace(carry=carry, bufs=bufs, n=n)
    if flush is None:
        return s, y
    # The last step's flush carries the end status (all steps ran: "converged", which a plot
    # shows as "finished"), and ends the run on the host.
    last = n >= max_rows
    every = streaming.interval(layout, s.answer, (s.bufs, s.n, s.flushed))
    due = go & ((n - s.flushed >= every) | last)
    status = jnp.where(last, streaming.CONVERGED, 0).astype(jnp.int32)

    def send(answer, bufs, n, flushed):
        args = streaming.FlushArgs(answer=answer, bufs=bufs, n=n, flushed=flushed, status=status)
        return flush(args), n

    def keep(answer, bufs, n, flushed):
        return answer, flushed

    # Only what the flush reads goes into its conditional (never the user's carry), as values:
    # the host gets no tangents.
    operands = lax.stop_gradient((s.answer, s.bufs, s.n, s.flushed))
    answer, flushed = lax.cond(due, send, keep, *operands)
    return s._replace(answer=answer, flushed=flushed), y


@jax.custom_jvp
def _write_rows(bufs: list[jax.Array], row: jax.Array, xs: list[jax.Array]) -> list[jax.Array]:
    """Each of ``bufs`` with ``buf[row] = x``, in place; moved as bits (see `lanes.as_bits`).

    Every lane of a vmapped scan writes the same row, so this needs none of the per-lane
    masking of `lanes.write_rows`; and its tangent is a plain row write, which (unlike that
    one's) JAX can transpose: ``jax.grad`` of a function of the `History` works. One call for
    all the recorded leaves: a ``custom_jvp`` traced per leaf cost ~2 ms each.
    """
    return [
        lanes.from_bits(
            lax.dynamic_update_index_in_dim(
                lanes.as_bits(b), lanes.as_bits(jnp.asarray(x).astype(b.dtype)), row, 0
            ),
            b.dtype,
        )
        for b, x in zip(bufs, xs, strict=True)
    ]


@_write_rows.defjvp
def _write_rows_jvp(primals, tangents):
    bufs, row, xs = primals
    d_bufs, _, d_xs = tangents
    out = _write_rows(bufs, row, xs)
    d_out = [
        lax.dynamic_update_index_in_dim(d_b, d_x.astype(d_b.dtype), row, 0)
        if jnp.issubdtype(b.dtype, jnp.inexact)
        else np.zeros(b.shape, jax.dtypes.float0)
        for b, d_b, d_x in zip(out, d_bufs, d_xs, strict=True)
    ]
    return out, d_out


# ------------------------------------------------------------------------------ last flush
def _last_step_unrolled(length: int, unroll: int | bool) -> bool:
    """Whether the scan's last step is lowered as straight-line code, outside any loop.

    ``lax.scan`` runs ``length // unroll`` trips of ``unroll`` steps in a while loop and the
    remainder after it, unrolled (``unroll=True`` or 0: every step); XLA inlines a loop of one
    trip. Only a loop of two trips or more that holds the last step keeps its last flush
    alive: there its answer is loop state, which the loop's body reads.
    """
    k = (length if unroll else 1) if isinstance(unroll, bool) else operator.index(unroll)
    return not (k >= 1 and length % k == 0 and length // k >= 2)


def _keep(answer: jax.Array) -> None:
    """Keep the last flush when the scan's last step is straight-line code.

    That flush is a pure host call whose answer feeds only state the scan drops, so XLA
    removes it there, and with it the last rows and the end of the run (which the host then
    reads as failed). Handing the answer to an effectful callback keeps it under every
    transformation, ``jax.grad`` included (a pure tie into the outputs would not survive a
    gradient that drops the primal outputs). Only here: an effectful callback anywhere in a
    program slows XLA's CPU loops (docs/performance.md), and a last step inside the loop
    needs none.
    """
    jax.debug.callback(_flushed, answer)


def _flushed(answer: Any) -> None:
    """The host side of `_keep`: nothing to do, the flush it depends on has run."""


# ------------------------------------------------------------------------------ helpers
def _length(xs: Any, length: Any) -> int:
    """The static trip count, as ``lax.scan`` works it out (and its errors)."""
    sizes_ = {int(jnp.shape(x)[0]) if jnp.ndim(x) else -1 for x in jax.tree_util.tree_leaves(xs)}
    if -1 in sizes_:
        raise ValueError("scan got an xs leaf with no leading axis to scan over (a scalar).")
    if length is not None:
        if isinstance(length, jax.core.Tracer):
            raise TypeError("scan's length must be a static Python int, got a traced value.")
        try:
            length = operator.index(length)
        except TypeError:
            raise TypeError(f"scan's length must be a Python int, got {length!r}.") from None
        if length < 0:
            raise ValueError(f"scan's length must be >= 0, got {length}.")
        sizes_.add(length)
    if not sizes_:
        raise ValueError("scan got no xs to scan over and no length: pass length=N.")
    if len(sizes_) > 1:
        raise ValueError(
            f"scan got xs leaves and length of different leading sizes {sorted(sizes_)}; "
            "they must all be the same."
        )
    return sizes_.pop()


def _prepare(f: Callable, init: Any, xs: Any) -> tuple[Any, Any, Any]:
    """``init`` with weakly typed leaves promoted as ``lax.scan`` promotes them, the shapes
    of ``y``, and the order ``f`` wrote the leaves of what the default record keeps in (its
    ``y``, else its carry: `..record.written`; the shapes' dicts have their keys sorted);
    raises, naming each leaf, if ``f`` returns another carry."""
    init = jax.tree_util.tree_map(lambda x: x if isinstance(x, jax.Array) else jnp.asarray(x), init)
    x0 = jax.tree_util.tree_map(lambda x: jax.ShapeDtypeStruct(jnp.shape(x)[1:], x.dtype), xs)
    y_order: list[tuple[int, ...]] = [()]

    def traced(init, x):
        out = f(init, x)
        if not (isinstance(out, tuple) and len(out) == 2):
            raise TypeError(
                "scan's f must return a pair (carry, y); return (carry, None) for no y, got "
                f"{jax.tree_util.tree_structure(out)}."
            )
        # (of f's own values, before JAX rebuilds them)
        kept = out[1] if jax.tree_util.tree_leaves(out[1]) else out[0]
        y_order[0] = written.written_order(kept)
        return checks.check_carry(init, out[0], fun="scan's f", arg="init"), out[1]

    carry_out, y = jax.eval_shape(traced, init, x0)
    promoted = jax.tree_util.tree_map(_promote, init, carry_out)
    if any(
        p is not x
        for p, x in zip(
            jax.tree_util.tree_leaves(promoted), jax.tree_util.tree_leaves(init), strict=True
        )
    ):
        # A weakly typed leaf (a Python scalar) takes the dtype f gives it, as in lax.scan.
        init = promoted
        carry_out, y = jax.eval_shape(traced, init, x0)
    return init, y, y_order[0]


def _promote(x: jax.Array, out: Any) -> jax.Array:
    """A weakly typed ``init`` leaf typed as ``f`` returns it (as ``lax.scan`` types it)."""
    if jax.typeof(x).weak_type and (x.dtype != out.dtype or not out.weak_type):
        return lax.convert_element_type(x, jnp.result_type(x, out.dtype))
    return x


def _zeros(s: Any) -> jax.Array:
    """The ``y`` of a skipped step: zeros of ``s``'s shape, dtype and weak type (a ``y`` made
    of Python scalars is weakly typed, as ``lax.scan`` keeps it)."""
    zero = np.zeros((), s.dtype)
    return lax.full(s.shape, zero.item() if s.weak_type else zero)  # a Python scalar: weak


def _placeholder(s: Any) -> jax.Array:
    """Row 0's stand-in for a ``y`` leaf: NaN where the dtype has one, else 0."""
    if jnp.issubdtype(s.dtype, jnp.inexact):
        return jnp.full(s.shape, jnp.nan, s.dtype)
    return jnp.zeros(s.shape, s.dtype)


def _default_record(y_shape: Any) -> Callable[[Any, Any], Any]:
    """``y`` when ``f`` returns one (with leaves), else the carry."""
    if jax.tree_util.tree_leaves(y_shape):
        return lambda carry, y: y
    return lambda carry, y: carry
