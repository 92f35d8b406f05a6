"""`while_loop`: ``lax.while_loop`` that also records every step.

Layer 1 (pure JAX). The history lives in the loop carry as fixed-shape buffers (one row per step,
``max_steps + 1`` rows). Two loops are built from the same parts:

- `_run_plain` (``stream=False``): `_run_until` the cap, the inner loop over steps (`_step`);
- `_run_streaming`: an outer loop over chunks (`_chunk`), each running the inner loop for up to
  ``every`` steps and then flushing its rows to the host (`streaming`).

Argument checks are in `checks`, what a row holds in `rows`, size warnings in `sizes`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Literal, NamedTuple, TypeVar

import jax
import jax.numpy as jnp
from jax import lax

from .._wire import NEVER, Layout
from . import checks, devices, lanes, rows, sizes, streaming
from .carry import Carry as _Carry
from .carry import prepare
from .history import History

__all__ = ["while_loop"]

Carry = TypeVar("Carry")

# End status codes sent to the host (an index into the host runtime's `STATUSES`; the host
# itself decides "stopped", 3).
_CONVERGED, _MAX_STEPS = 1, 2
# The answer of a loop that makes no host call: nobody listens (see `streaming.STOP`).
_NOBODY = tuple(NEVER if i == streaming.EVERY else 0 for i in range(3))


class _Loop(NamedTuple):
    """The static parts of one loop: the user's functions and what a step records.

    The loop carries only the leaves ``body_fun`` changes (`carry.Carry`); ``cond_fun`` and
    ``record`` see the whole carry (`_Loop.cond`, ``rows.record``).
    """

    cond_fun: Callable[[Any], Any]
    carry: _Carry
    rows: rows.Rows
    max_rows: int  #: ``max_steps + 1``
    #: Whether the loop runs under ``jax.vmap`` (as tracing can tell: `lanes.batched`).
    batched: bool = False

    def cond(self, moving: list[jax.Array]) -> jax.Array:
        return self.carry.cond(moving)


class _State(NamedTuple):
    """The loop carry: the user's carry, the history buffers and the bookkeeping."""

    carry: Any
    bufs: list[jax.Array]
    n: jax.Array  # valid rows (steps + 1)
    live: jax.Array  # cleared at the end of the chunk in which a lane ended
    status: jax.Array
    flushed: jax.Array  # rows already sent to the host
    # The host's last answer (`streaming.STOP`, `EVERY`: rows per chunk, host-adapted; NEVER
    # when nobody listens, and `RUN`), as the host call gives it.
    answer: jax.Array
    cont: jax.Array  # cond_fun(carry): computed once, right after the body made the carry
    # Some lane runs on: the chunk loop's predicate, never batched. Carried as is (not its
    # negation), so that the predicate and the flag it is made of need no kernel of their own.
    more: jax.Array


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
    cached = _eager_loop(
        cond_fun,
        body_fun,
        max_steps=max_steps,
        record=record,
        stream=stream,
        stream_every=stream_every,
        dtype=dtype,
        warn_bytes=warn_bytes,
    )
    if cached is not None:
        return cached(init_val)

    carry = prepare(cond_fun, body_fun, init_val)
    init = carry.init()
    user_record = _identity if record is None else record
    plan = rows.plan(lambda m: user_record(carry.full(m)), dtype, init, carry.counting)
    consts = (carry.body.consts, carry.cond_jaxpr.consts)
    loop = _Loop(cond_fun, carry, plan, max_steps + 1, lanes.batched(init, consts))
    bufs = loop.rows.buffers(loop.max_rows)
    lane_bytes = sizes.warn_if_large(bufs, warn_bytes)
    cont = loop.cond(init)
    # A record with no leaf (an empty carry ``()``, as lax accepts) has no row to stream: the
    # loop runs as with ``stream=False`` and the History holds only its ``length``.
    if stream and loop.rows.first:
        block = 1 if loop.carry.counted is None else BLOCK
        layout = rows.layout(loop.rows, max_steps, every, block)
        out = _run_streaming(loop, layout, init, bufs, cont)
    else:
        out = _run_plain(loop, init, bufs, cont)
    if lane_bytes is not None:
        sizes.warn_lanes(lane_bytes, warn_bytes, lax.stop_gradient((out.n, out.bufs)))
    return carry.full(out.carry), loop.rows.history(out.bufs, out.n, loop.max_rows)


def _run_plain(loop: _Loop, carry: Any, bufs: list[jax.Array], cont: jax.Array) -> _State:
    """The loop without streaming: steps until no lane runs on; no host call at all."""
    init = _initial_state(carry, bufs, cont, answer=jnp.array(_NOBODY, jnp.int32))
    return _run_until(loop, init, jnp.int32(loop.max_rows))


def _run_streaming(
    loop: _Loop, layout: Layout, carry: Any, bufs: list[jax.Array], cont: jax.Array
) -> _State:
    """The loop as chunks of steps, each ending in a flush, until no lane runs on."""
    answer = streaming.open_run(layout, loop.rows.first)
    flush = streaming.make_flush(layout)
    init = _initial_state(carry, bufs, cont, answer=answer)
    # At least one chunk, even when no lane takes a step: its flush ends the run on the host.
    return lax.while_loop(lambda s: s.more, functools.partial(_chunk, loop, flush), init)


def _initial_state(carry: Any, bufs: list[jax.Array], cont: jax.Array, answer: jax.Array) -> _State:
    """The state before the first step: row 0 written, ``cont`` = ``cond_fun(init_val)``."""
    zero = jnp.int32(0)
    init = _State(
        carry=carry,
        bufs=bufs,
        n=jnp.int32(1),
        live=cont,
        status=jnp.where(cont, zero, _CONVERGED),
        flushed=zero,
        answer=answer,
        cont=cont,
        more=jnp.bool_(True),
    )
    # Under shard_map the bookkeeping varies per device as the carry does (`answer` and
    # `more`, the same on every device, never do).
    rest, carry = devices.vary(
        init._replace(carry=None, answer=None, more=None), carry, (carry, bufs)
    )
    return rest._replace(carry=carry, answer=answer, more=init.more)


def _running(s: _State, limit: jax.Array) -> jax.Array:
    """Whether a lane takes another step: the user's condition, the cap, no stop."""
    return s.live & s.cont & (s.n < limit)


def _step(loop: _Loop, limit: jax.Array, s: _State) -> _State:
    """One step: the body, ``cond_fun`` on its result, the row written.

    Under vmap each step masks its own updates (see `jaxhist_widget._device.lanes`); unbatched,
    the mask is unused and compiled away.
    """
    active = _running(s, limit)  # only read under vmap
    if loop.carry.body_writes:
        carry = _body_masked(loop.carry.step, s.carry, active)
    elif loop.carry.body_effects or loop.batched:
        # JAX batches no conditional holding IO or state effects, even on an unbatched
        # predicate; the step runs inline, as on other platforms. Under vmap too: a step over
        # many lanes is no cheap step, and a conditional would keep XLA from fusing it with
        # the loop's own updates (its operands copied in and out every step).
        carry = loop.carry.step(s.carry)
    else:
        carry = _body_alone(loop.carry.step, s.carry, lanes.any_lane(active))
    cont = loop.cond(carry)
    if loop.carry.lane_effects:
        cont = lanes.same_in_every_lane(cont, loop.carry.lane_effects)
    # A recorded leaf that is a fixed carry leaf itself (the default record keeps the whole
    # carry) has row 0 in every row already: it is never written, so its buffer is never
    # copied into every vmap lane either.
    bufs = [
        b if loop.carry.is_fixed(x) else lanes.write_row(b, s.n, x, active)
        for b, x in zip(s.bufs, loop.rows.take(carry), strict=True)
    ]
    carry, n, cont = lanes.keep_done(active, (carry, s.n + 1, cont), (s.carry, s.n, s.cont))
    return s._replace(carry=carry, bufs=bufs, n=n, cont=cont)


def _run_until(loop: _Loop, s: _State, limit: jax.Array) -> _State:
    """`_step` while running and fewer than ``limit`` rows exist.

    The loop predicate reads the condition `_step` stored (``cond_fun`` runs once a step, so
    its side effects happen once per step, as in ``lax.while_loop``). Under vmap the predicate
    stays a scalar: any lane running.

    On an accelerator a ``while`` loop copies its predicate to the host at every step (a sync
    of ~10 µs on a GPU, more than a small step itself costs), unless XLA knows its trip count.
    So where the steps left are known before they are taken (a counting condition,
    `carry.Counted`), the steps go in blocks of `BLOCK` with no predicate between them
    (`_blocks`) and only the rest one by one. Every step of a block is one the step-by-step
    loop would take, in the same order, so nothing changes but the syncs. On CPU, where a
    predicate costs nothing, the loop stays step by step (the blocks are not compiled there).
    """
    step = functools.partial(_step, loop, limit)

    def one_by_one(s: _State) -> _State:
        return lax.while_loop(lambda s: lanes.any_lane(_running(s, limit)), step, s)

    counted = loop.carry.counted
    # JAX puts no IO or state effect in a conditional under vmap (the platform choice is one).
    if counted is None or loop.carry.body_effects:
        return one_by_one(s)

    def blocks(s: _State) -> _State:
        return _blocks(loop, counted, step, s, limit)

    # Only the branch of the platform compiled for is lowered: CPU's program holds no blocks.
    s = lax.platform_dependent(s, cpu=blocks if _CPU_BLOCKS else _identity, default=blocks)
    return one_by_one(s)


#: Whether CPU runs the blocks too (the tests check the accelerators' path on CPU with it).
_CPU_BLOCKS = False
#: Steps per block of a counting loop on an accelerator (see `_run_until`). The host rounds an
#: adaptive flush interval to a multiple of it (`Layout.block`).
BLOCK = 16


def _blocks(loop: _Loop, counted: Any, step: Callable, s: _State, limit: jax.Array) -> _State:
    """Whole blocks of `BLOCK` steps, while every running lane has that many left.

    Inside a block no predicate is read: each of its steps is known to run for every lane that
    is running (its counter stays under the bound, its rows under ``limit``); lanes already done
    are kept as they are by `_step`'s masks, as in the step-by-step loop.
    """

    def whole(s: _State) -> jax.Array:
        left = jnp.minimum(limit - s.n, loop.carry.steps_left(s.carry, counted, loop.max_rows))
        running = _running(s, limit)
        least = lanes.min_lane(jnp.where(running, left, loop.max_rows))
        return devices.any_device(lanes.any_lane(running)) & (devices.min_device(least) >= BLOCK)

    def block(s: _State) -> _State:
        return lax.fori_loop(0, BLOCK, lambda _, s: step(s), s)

    return lax.while_loop(whole, block, s)


def _chunk(loop: _Loop, flush: Callable, s: _State) -> _State:
    """Up to ``every`` steps, then one flush of their rows (`streaming.make_flush`).

    Flushing between two inner loops (not inside a `cond` in the step) keeps the history
    buffers out of any conditional, so XLA updates them in place instead of copying them every
    step.
    """
    zero = jnp.int32(0)
    active = s.live  # False for vmap lanes that finished before this chunk
    every = s.answer[streaming.EVERY]
    limit = jnp.minimum(s.flushed + jnp.minimum(every, loop.max_rows), loop.max_rows)
    s = _run_until(loop, s, limit)
    # The host gets values, not tangents: without stop_gradient, jvp/jacfwd would push
    # tangents into the custom_vmap flush, whose batching rule cannot take them.
    sent = lax.stop_gradient(s.bufs)
    # Why a lane ended is decided once per chunk, not per step. The host learns it with the
    # rows (0: running on, unless the host answers stop) and ends the run with the flush
    # after which no lane runs, so no closing call is needed.
    cont = s.cont
    capped = s.n >= loop.max_rows
    # nested wheres, not jnp.select: its argmax is a reduction of its own to compile
    known = jnp.where(~cont, _CONVERGED, jnp.where(capped, _MAX_STEPS, zero))
    status = jnp.where(active, known, s.status)
    answer = flush(
        streaming.FlushArgs(
            answer=s.answer,
            bufs=sent,
            n=s.n,
            flushed=s.flushed,
            status=status,
        )
    )
    stopped = (answer[streaming.STOP] > 0) & cont & ~capped
    live = active & cont & ~capped & ~stopped
    return s._replace(
        # Every row is sent: a skipped flush had none to send (or, nobody listening, no chunk
        # follows), so no select on whether it went.
        flushed=s.n,
        answer=answer,
        live=live,
        # A lane the host stops is told so by the host itself (it answered stop), and no flush
        # follows a stop (no lane runs on): `status` keeps what the device knows.
        status=status,
        # every device runs chunks until all are done: a flush under shard_map holds
        # collectives. The host's answer decides this, so XLA keeps every flush.
        more=devices.any_device(lanes.any_lane(live)),
    )


def _body_alone(step: Callable[[Carry], Carry], carry: Carry, go: jax.Array) -> Carry:
    """``step(carry)``; on CPU inside a conditional of its own (``go`` is always True).

    XLA's CPU runtime runs each computation (a loop body, a branch) with a small executor: in
    order on the calling thread when it has at most 8 operations or they form a chain, else as
    a dependency graph (task queues, atomics), which costs more per run. A cheap step of 8
    operations that ``lax.while_loop`` runs in order would cross that line once the loop's row
    writes and counters join it, and every step would pay for it (docs/performance.md's
    notes have the numbers). In a branch of its own the step keeps the executor it has under
    ``lax.while_loop``, and the loop's own work forms a second small one; a conditional costs
    far less. ``go`` is the loop's predicate, unknown to the compiler, so the branch is not
    inlined again. Other platforms (a GPU predicate would cost a device-to-host copy every
    step) call ``body_fun`` inline.
    """

    # Only the predicate depends on the platform, so that ``step`` is traced and lowered once
    # (in the branch), not once per platform. Elsewhere it is ``go | True``: True, which XLA
    # folds and then inlines the conditional; made of ``go`` so that under shard_map it varies
    # per device as ``go`` does (both branches of `platform_dependent` must).
    go = lax.platform_dependent(go, cpu=lambda go: go, default=lambda go: go | True)
    return lax.cond(go, step, _identity, carry)


def _body_masked(step: Callable[[Carry], Carry], carry: Carry, active: jax.Array) -> Carry:
    """``step(carry)`` as a loop of one iteration that runs while ``active``.

    For a step that writes to a Ref: under vmap ``active`` differs per lane, and
    ``lax.while_loop`` then writes the Ref only for the lanes that take the step (it carries
    the Ref's value and keeps it for the others), where this loop's own masking would write it
    for every lane. Unbatched, ``active`` is True whenever the step runs.
    """
    return lax.while_loop(lambda s: s[0], lambda s: (~s[0], step(s[1])), (active, carry))[1]


def _identity(x: Any) -> Any:
    return x


# ------------------------------------------------------------------------------ eager cache
def _eager_loop(cond_fun: Callable, body_fun: Callable, **options: Any) -> Callable | None:
    """A cached ``jax.jit`` of the loop for an eager (un-traced) call, or None inside a trace.

    Keyed on the identity of the callables and the static options, like ``lax.while_loop``'s
    own cache: a function that reads a global changed since its first call is not retraced.
    Streaming still reaches the sinks attached at each call, since the run id is asked for
    at run time. Inside jit/vmap/grad nothing is cached: the enclosing trace owns the caching,
    and the callables may close over its tracers.
    """
    if not _trace_state_clean() or jax.config.jax_disable_jit:
        return None
    key = (cond_fun, body_fun, *sorted(options.items()))
    try:
        hash(key)
    except TypeError:  # an unhashable callable or option: run uncached
        return None
    return _jitted_loop(key)


@functools.lru_cache(maxsize=32)
def _jitted_loop(key: tuple) -> Callable[[Any], Any]:
    """The loop compiled once per (functions, static options), like jit (thread-safe)."""
    cond_fun, body_fun, *options = key
    return jax.jit(functools.partial(while_loop, cond_fun, body_fun, **dict(options)))


def _trace_state_clean() -> bool:
    """True outside every JAX transformation (jit, vmap, grad, ...)."""
    try:
        from jax._src.core import trace_state_clean
    except ImportError:  # pragma: no cover - private API moved: stay correct, just uncached
        return False
    return trace_state_clean()
