"""Device side of streaming: pack chunks of rows and hand them to the host registry.

Layer 1 (pure JAX) calling into layer 2 only through the three registry functions below, each
given the static `Layout` by `functools.partial` (static facts of the trace, never a sink).

Cost model (see ``shared/notes/jax-callbacks.md``): a host callback costs ~100 µs, mostly per
argument, so one call carries a whole chunk for every vmap lane, packed into a single uint32
array: ``[header | per-lane words | leaf 0 | leaf 1 | ...]`` (see `_words`).

Under ``jax.vmap`` a plain callback runs once per lane. `flush` and `close` are therefore
``custom_vmap`` functions whose batched rule makes one host call with all lanes; lanes that were
already done (a vmapped loop still runs its body for them, on frozen values that it then
discards) send nothing.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.custom_batching import custom_vmap

from . import registry
from .runs import Layout

_I32 = jax.ShapeDtypeStruct((2,), jnp.int32)


def open_run(layout: Layout) -> tuple[jax.Array, jax.Array]:
    """Ask the host for a run id and the first flush interval (int32 scalars)."""
    # No argument is batched, so under vmap this runs once for all lanes.
    out = jax.pure_callback(functools.partial(registry.open_run, layout), _I32)
    return out[0], out[1]


def _words(x: jax.Array) -> jax.Array:
    """Any array as flat uint32 words, bit-exact (decoded by ``registry.decode``).

    32-bit words, not bytes: XLA's bitcast to uint8 widens every element into a new minor axis
    and measured 5x slower to pack than a same-size bitcast. Narrow types are zero-extended to
    a word each; 64-bit types become two words.
    """
    if x.dtype == jnp.bool_:
        x = x.astype(jnp.uint8)
    size = x.dtype.itemsize
    if size < 4:
        narrow = {1: jnp.uint8, 2: jnp.uint16}[size]
        return lax.bitcast_convert_type(x, narrow).astype(jnp.uint32).reshape(-1)
    # 4 bytes: one word per element; 8 bytes: a trailing axis of two words per element
    return lax.bitcast_convert_type(x, jnp.uint32).reshape(-1)


def _pack(
    layout: Layout,
    run_id: jax.Array,
    batched: bool,
    bufs: list[jax.Array],
    first: jax.Array,
    count: jax.Array,
    status: jax.Array,
) -> jax.Array:
    """Pack rows ``first[b] .. first[b]+count[b]`` of each lane into one uint32 array.

    ``bufs`` leaves are ``(B, max_rows, ...)``; ``first``/``count``/``status`` are ``(B,)``.
    """
    lanes = first.shape[0]
    max_rows = bufs[0].shape[1]
    k = layout.chunk
    # dynamic_slice clamps the start so the window fits; the host undoes it with `start`.
    start = jnp.clip(first, 0, max_rows - k)

    def window(buf: jax.Array) -> jax.Array:
        if lanes == 1:  # a plain slice; the vmapped form below is a gather, slower on CPU
            return lax.dynamic_slice_in_dim(buf, start[0], k, axis=1)
        return jax.vmap(lambda b, s: lax.dynamic_slice_in_dim(b, s, k, axis=0))(buf, start)

    header = jnp.array([0, lanes if batched else 0, 0], jnp.int32).at[0].set(run_id)
    words = jnp.stack([first, count, start, status], axis=1).astype(jnp.int32)
    # The barrier materialises each window with a plain slice copy first; fused into the
    # concatenate, the slice becomes a per-element index computation (measured 2.7x slower).
    windows = lax.optimization_barrier([window(b) for b in bufs])
    parts = [_words(header), _words(words)] + [_words(w) for w in windows]
    return lax.stop_gradient(jnp.concatenate(parts))


def _flush_batched(layout, batched, run_id, bufs, n, flushed, every, active):
    """Send rows ``flushed[b] .. n[b]`` of every active lane in one host call.

    Arrays are ``(B, ...)``. Returns ``(flushed, every, stop)``: ``flushed`` per lane, the
    next interval and the stop request as scalars. Skips the call when nobody listens.
    """
    count = jnp.where(active, n - flushed, 0)
    # Packed outside the cond, so the cond's operand is a chunk, never the history buffers
    # (XLA copies a conditional's operands; inside the loop that would copy the history).
    payload = _pack(layout, run_id, batched, bufs, flushed, count, jnp.zeros_like(n))

    def send(payload):
        out = jax.pure_callback(
            functools.partial(registry.receive_chunk, layout),
            _I32,
            payload,
            vmap_method="sequential",
        )
        return jnp.where(active, n, flushed), out[1], out[0] > 0

    def skip(payload):
        return flushed, every, jnp.bool_(False)

    listening = every < registry.NEVER
    return lax.cond(listening & jnp.any(count > 0), send, skip, payload)


def _broadcast(axis_size, in_batched, args):
    """Give every unbatched argument (a pytree; flags per leaf) a lane axis."""

    def one(x, b):
        return x if b else jnp.broadcast_to(x, (axis_size, *jnp.shape(x)))

    return [jax.tree_util.tree_map(one, a, b) for a, b in zip(args, in_batched, strict=True)]


@custom_vmap
def _one_vmap_level(x: jax.Array) -> jax.Array:
    """Identity; raises if batched again, i.e. when a vmap wraps the vmap of a streaming loop.

    A vmap rule's body is batched like any code by an enclosing vmap, which would turn the
    chunk flush's ``cond`` into a ``select`` that runs the host call every time.
    """
    return x


@_one_vmap_level.def_vmap
def _nested_vmap(axis_size, in_batched, x):
    raise NotImplementedError(
        "jaxhist_widget.while_loop supports one level of jax.vmap while streaming. Flatten the "
        "lanes into one axis (x.reshape(-1, ...)) and vmap once, or pass stream=False."
    )


def make_flush(layout: Layout):
    """Build ``flush(run_id, bufs, n, flushed, every, active) -> (flushed, every, stop)``.

    Called once per chunk, between the loop's inner runs of ``every`` steps.
    """

    @custom_vmap
    def flush(run_id, bufs, n, flushed, every, active):
        lane = lambda x: jnp.expand_dims(x, 0)  # noqa: E731 - a lane axis of one
        f, e, s = _flush_batched(
            layout,
            False,
            run_id,
            [lane(b) for b in bufs],
            lane(n),
            lane(flushed),
            every,
            lane(active),
        )
        return f[0], e, s

    @flush.def_vmap
    def flush_rule(axis_size, in_batched, run_id, bufs, n, flushed, every, active):
        if in_batched[4]:  # identical in every lane; a batched carry just copies it
            every = jnp.min(every)
        bufs, n, flushed, active = _broadcast(
            axis_size, [*in_batched[1:4], in_batched[5]], [bufs, n, flushed, active]
        )
        n = _one_vmap_level(n)
        f, e, s = _flush_batched(layout, True, run_id, bufs, n, flushed, every, active)
        return (f, e, s), (True, False, False)

    return flush


def make_close(layout: Layout):
    """Build ``close(run_id, bufs, n, flushed, every, status)``: the final host call.

    It always runs (``jax.debug.callback`` is never dead-code eliminated, unlike a pure callback
    whose result nobody uses): it delivers any rows not yet sent and each lane's end status.
    """

    def emit(run_id, batched, bufs, n, flushed, every, status):
        count = jnp.where(every < registry.NEVER, n - flushed, 0)
        payload = _pack(layout, run_id, batched, bufs, flushed, count, status)
        jax.debug.callback(functools.partial(registry.close_run, layout), payload)

    @custom_vmap
    def close(run_id, bufs, n, flushed, every, status):
        lane = lambda x: jnp.expand_dims(x, 0)  # noqa: E731
        emit(run_id, False, [lane(b) for b in bufs], lane(n), lane(flushed), every, lane(status))
        return n

    @close.def_vmap
    def close_rule(axis_size, in_batched, run_id, bufs, n, flushed, every, status):
        if in_batched[4]:
            every = jnp.min(every)
        bufs, n, flushed, status = _broadcast(
            axis_size, [*in_batched[1:4], *in_batched[5:]], [bufs, n, flushed, status]
        )
        n = _one_vmap_level(n)
        emit(run_id, True, bufs, n, flushed, every, status)
        return n, True

    return close
