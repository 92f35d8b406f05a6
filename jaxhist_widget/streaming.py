"""Device side of streaming: pack chunks of rows and hand them to the host registry.

Layer 1 (pure JAX) calling into layer 2 only through the three registry functions below, each
given the static `Layout` by `functools.partial` (static facts of the trace, never a sink).

Cost model: a host call (`hostcall.call`) costs ~5 µs plus ~0.5 µs an argument, and XLA copies
every argument once into a numpy array for the host. So one call carries a whole chunk for every
vmap lane, as one small uint32 array (``[header | per-lane words]``) and one window of rows per
leaf (as uint32 words, see `_words`). The windows travel as arguments of their own: joined into
one array, XLA fused the window slices into the join, an index computation per element that
measured 2.2x slower than slicing them (0.55 vs 0.25 ms per MiB).

Under ``jax.vmap`` a plain callback runs once per lane. `flush` is therefore a
``custom_vmap`` function whose batched rule makes one host call with all lanes; lanes that were
already done (a vmapped loop still runs its body for them, on frozen values that it then
discards) send nothing.

Every call is a pure host call (`hostcall.call`) whose answer the loop needs (the run id,
the next interval, the stop flag), so XLA keeps it; there is no closing
``jax.debug.callback``: an effectful callback anywhere in the program makes XLA's CPU loop
~10% slower per step. The last flush, which carries each lane's end status, ends the run on
the host.

Several devices:

- Sharded ``jax.jit`` (GSPMD): the partitioner runs each host call on device 0 after gathering
  its operands there, and broadcasts the answer; the rows arrive once, in one run.
- ``shard_map`` / ``pmap`` (manual axes): every device runs the loop on its own lanes. The run is
  opened on the first device and its id broadcast; each flush gathers every device's lanes
  (device order) so that the first device makes one host call for all of them; the chunk loop
  ends when every device is done, as collectives need every device to take part.
- Any multi-device CPU computation: see `_pieces`.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.custom_batching import custom_vmap

from . import hostcall, registry
from .runs import Layout

_I32 = jax.ShapeDtypeStruct((2,), jnp.int32)


#: Largest host-call argument, in uint32 words (96 KiB); see `_pieces`.
_PIECE_WORDS = 24 * 1024


def open_run(layout: Layout, init: list[jax.Array]) -> tuple[jax.Array, jax.Array]:
    """Ask the host for a run id and the first flush interval (int32 scalars).

    ``init`` (the initial record's leaves) only gives the host call a data dependence on the
    loop's input. A callback with no operand that varies is loop-invariant to XLA, which hoists
    it out of an enclosing ``scan`` / ``fori_loop`` / ``while_loop`` and runs it once for all of
    that loop's iterations: every inner run would then share one id (jax-ml/jax#16637).
    """

    def call(token):
        return hostcall.call(functools.partial(registry.open_run, layout), _I32, token)

    _check_mesh()
    token = _lanes_token(_token(init))
    out = _on_first_device(
        jnp.bool_(True), call, lambda _: jnp.zeros(2, jnp.int32), token, axes=_manual_axes()
    )
    return out[0], out[1]


def _token(leaves: list[jax.Array]) -> jax.Array:
    """A few words that depend on every leaf (its first element), cheap whatever the sizes."""
    words = [_words(_unsharded(lax.stop_gradient(x)).reshape(-1)[:1]) for x in leaves if x.size]
    return jnp.concatenate(words) if words else jnp.zeros(1, jnp.uint32)


@custom_vmap
def _lanes_token(token: jax.Array) -> jax.Array:
    """``token``; under vmap, one unbatched token for all lanes (one run, one host call)."""
    return token


@_lanes_token.def_vmap
def _lanes_token_rule(axis_size, in_batched, token):
    return (token.reshape(-1) if in_batched[0] else token), False


def any_device(pred: jax.Array) -> jax.Array:
    """``pred``, or'ed over every device of the enclosing ``shard_map`` / ``pmap`` (if any).

    The chunk loop's predicate: each chunk's flush holds collectives, so every device keeps
    running chunks (with nothing left to do) until all devices are done.
    """
    return _any_device(pred, _manual_axes())


def _any_device(pred: jax.Array, axes: tuple) -> jax.Array:
    return lax.psum(pred.astype(jnp.int32), axes) > 0 if axes else pred


def vary(state: Any, carry: Any, like: Any) -> tuple[Any, Any]:
    """Under ``shard_map``: ``state`` (and, under vmap, ``carry``) varying like ``like``.

    A loop carry must keep its type, the device-varying axes included. The loop's bookkeeping
    (row counts, end flags, history buffers) follows the user's carry and condition, which may
    vary per device, so its initial values are made varying over every manual axis that any
    leaf of ``like`` varies over. Under vmap the loop also masks the user's carry with a
    per-lane (so possibly varying) flag, so the carry is promoted too; unbatched it is left
    as is, as ``lax.while_loop`` would. Outside ``shard_map``/``pmap`` nothing changes.
    """
    axes = _manual_axes()
    if not axes:
        return state, carry
    leaves = jax.tree_util.tree_leaves(like)
    have = set().union(*(_varying(x) for x in leaves))
    want = tuple(a for a in axes if a in have)
    if not want:
        return state, carry
    promote = functools.partial(jax.tree_util.tree_map, lambda x: _vary(x, want))
    return promote(state), promote(carry) if any(map(_batched, leaves)) else carry


def _varying(x: Any) -> frozenset:
    manual = getattr(jax.typeof(x), "manual_axis_type", None)
    return frozenset(getattr(manual, "varying", ()))


def _vary(x: jax.Array, axes: tuple) -> jax.Array:
    missing = tuple(a for a in axes if a not in _varying(x))
    return lax.pcast(x, missing, to="varying") if missing else x


def _batched(x: Any) -> bool:
    """Whether ``x`` is batched by an enclosing vmap (seen at trace time, leaves no op)."""
    seen = []

    @custom_vmap
    def probe(x):
        return x

    @probe.def_vmap
    def rule(axis_size, in_batched, x):
        seen.append(in_batched[0])
        return x, in_batched[0]

    probe(x)
    return any(seen)


def manual_devices() -> int:
    """How many devices run the code being traced side by side (shard_map, pmap); else 1."""
    mesh = jax.sharding.get_abstract_mesh()
    return int(np.prod([mesh.shape[a] for a in mesh.manual_axes], dtype=np.int64))


def _unsharded(x: jax.Array) -> jax.Array:
    """``x`` replicated if it is sharded over explicit mesh axes (``jax.make_mesh``'s default).

    Explicit sharding is part of the type, and JAX refuses to reshape or slice a sharded axis
    that the result does not divide; a host call needs the whole array anyway. Under automatic
    (GSPMD) or manual sharding the type has no such axes and nothing changes.
    """
    if all(p is None for p in getattr(jax.typeof(x).sharding, "spec", ())):
        return x
    return jax.sharding.reshard(x, jax.sharding.PartitionSpec())


def _check_mesh() -> None:
    """Refuse, at trace time, the one layout of devices where JAX allows no host callback."""
    mesh = jax.sharding.get_abstract_mesh()
    manual = set(mesh.manual_axes)
    auto = [a for a in mesh.axis_names if a not in manual and mesh.shape[a] > 1]
    if manual and auto:
        raise NotImplementedError(
            "jaxhist_widget.while_loop cannot stream inside a shard_map that leaves mesh axes "
            f"{auto} automatic (axis_names={sorted(manual)}): JAX supports host callbacks only "
            "when every mesh axis is manual. Pass stream=False (the History is still recorded "
            "on the device), or make every axis manual (omit axis_names)."
        )


def _manual_axes() -> tuple:
    """The mesh axes the code being traced runs per device on (shard_map, pmap); () if none."""
    return tuple(jax.sharding.get_abstract_mesh().manual_axes)


def _on_first_device(pred, fun, otherwise, *operands, axes: tuple):
    """``cond(pred, fun, otherwise, *operands)``, run only by the first device of ``axes``.

    Under ``shard_map`` / ``pmap`` every device would make the host call; here only the first
    does, and its answer (int32 ``[2]``) is broadcast to all with a ``psum`` placed *outside*
    the conditional, so every device reaches that collective whatever the predicate.
    """
    if not axes:
        if _explicit_mesh():
            # Under a mesh with explicit axes (jax.set_mesh), XLA's verifier rejects a `cond`
            # with a host call in one branch (its result is on device 0, the other branch's
            # replicated), so the call is made every time and its answer ignored if not needed.
            # This costs one host call per run when nobody listens (one flush); otherwise
            # flushes only happen with rows to send.
            return jnp.where(pred, fun(*operands), otherwise(*operands))
        return lax.cond(pred, fun, otherwise, *operands)
    first = lax.axis_index(axes) == 0
    out = lax.cond(pred & first, fun, otherwise, *operands)
    return lax.psum(jnp.where(first, out, 0), axes)


def _explicit_mesh() -> bool:
    """Whether the code being traced runs under a mesh with explicit axes (``jax.set_mesh``)."""
    mesh = jax.sharding.get_abstract_mesh()
    return any(t == jax.sharding.AxisType.Explicit for t in getattr(mesh, "axis_types", ()))


def _pieces(part: jax.Array) -> list[jax.Array]:
    """``part`` (one host-call argument) cut into arguments of at most `_PIECE_WORDS` words.

    JAX hands a host callback its arguments as arrays copied onto a CPU device. The CPU client
    copies an argument of 100 KiB or more asynchronously, on the thread pool that also runs the
    devices of a multi-device CPU computation. When those devices wait in a collective for the
    device that runs the callback (GSPMD broadcasts the callback's result; shard_map waits in
    the next psum), the copy never runs: a deadlock that XLA ends by aborting the process after
    40 s. Smaller arguments are copied inline. One device (or GPUs) needs no cutting.
    """
    size = part.shape[0]
    if size <= _PIECE_WORDS or not _several_cpu_devices():
        return [part]
    return [part[i : i + _PIECE_WORDS] for i in range(0, size, _PIECE_WORDS)]


def _several_cpu_devices() -> bool:
    try:
        return len(jax.devices("cpu")) > 1
    except RuntimeError:  # no CPU backend
        return False


def _host_args(parts: list[jax.Array]) -> tuple[tuple[int, ...], list[jax.Array]]:
    """The host-call arguments for ``parts``, and how many pieces each part was cut into."""
    cut = [_pieces(p) for p in parts]
    return tuple(map(len, cut)), [piece for pieces in cut for piece in pieces]


def _joined(fun, layout: Layout, counts: tuple[int, ...], *pieces):
    """Host side of `_host_args`: ``fun(layout, *parts)`` with each part's pieces joined again."""
    if len(pieces) == len(counts):
        return fun(layout, *pieces)
    parts, at = [], 0
    for n in counts:
        group = pieces[at : at + n]
        parts.append(group[0] if n == 1 else np.concatenate([np.asarray(p) for p in group]))
        at += n
    return fun(layout, *parts)


def _words(x: jax.Array) -> jax.Array:
    """Any array as flat uint32 words, bit-exact (decoded by ``registry.decode``).

    32-bit words, not bytes: XLA's bitcast to uint8 widens every element into a new minor axis
    and measured 5x slower to pack than a same-size bitcast. Narrow types are zero-extended to
    a word each; 64-bit types become two words.
    """
    if x.dtype == jnp.bool_:
        x = x.astype(jnp.uint8)
    bits = jax.dtypes.itemsize_bits(x.dtype)
    if bits < 32:
        # Bitcast to the unsigned type of the same width (elementwise, even for 4- and 2-bit
        # types such as int4 / float4_e2m1fn, where a bitcast to uint8 would pack elements),
        # then zero-extend: bit-exact for every float8/float4/int4 type.
        narrow = {2: jnp.uint2, 4: jnp.uint4, 8: jnp.uint8, 16: jnp.uint16}[bits]
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
    axes: tuple = (),
) -> list[jax.Array]:
    """Rows ``first[b] .. first[b]+count[b]`` of each lane as flat uint32 host-call arguments.

    Returns ``[head, window of leaf 0, window of leaf 1, ...]``: ``head`` is the header and the
    per-lane words; each window holds `_window` rows of every lane. ``bufs`` leaves are
    ``(B, max_rows, ...)``; ``first``/``count``/``status`` are ``(B,)``. With manual ``axes``
    (shard_map, pmap) the lanes of every device are gathered, in device order, into one batch
    of ``devices * B`` lanes.
    """
    lanes = first.shape[0]
    max_rows = layout.max_steps + 1  # not from bufs: a record of only zero-size leaves has none
    k = _window(layout, batched, lanes)
    # Every lane with rows to send starts at the same row: the running lanes step in lockstep
    # (see `lanes.write_row`). So one window start serves all lanes, a plain slice across
    # lanes, where a start per lane would be a gather (slower on CPU). dynamic_slice clamps it
    # so the window fits; the host undoes that with the start it is sent, and checks the rows.
    shared = jnp.max(jnp.where(count > 0, first, 0), initial=0)
    start = jnp.clip(shared, 0, max_rows - k)

    def window(buf: jax.Array) -> jax.Array:
        return lax.dynamic_slice_in_dim(buf, start, k, axis=1)

    # lanes -1 = unbatched, so that a vmap over zero lanes (0) still decodes
    starts = jnp.broadcast_to(start, first.shape)
    words = jnp.stack([first, count, starts, status], axis=1).astype(jnp.int32)
    windows = [window(b) for b in bufs]
    if axes:
        # Only the windows travel between devices, never the history buffers.
        words = lax.all_gather(words, axes, axis=0, tiled=True)
        windows = [lax.all_gather(w, axes, axis=0, tiled=True) for w in windows]
        lanes, batched = words.shape[0], True
    # Built from scalars: an array constant here would be hoisted into a const of the
    # custom_vmap call, which vmap may batch (e.g. a cond turned into a select) and break.
    # The window's rows travel too: decode must not guess the lanes' share of the budget.
    header = jnp.stack([run_id, jnp.int32(lanes if batched else -1), jnp.int32(k)])
    head = jnp.concatenate([_words(header), _words(words)])
    return lax.stop_gradient([head] + [_words(_unsharded(w)) for w in windows])


def _window(layout: Layout, batched: bool, lanes: int) -> int:
    """Rows per lane in one host call: the lanes of all devices share the byte budget."""
    return layout.window(lanes * manual_devices() if batched else None)


def _flush_batched(layout, batched, run_id, bufs, n, flushed, every, status, axes=()):
    """Send rows ``flushed[b] .. n[b]`` of every lane, and its status, in one host call.

    Arrays are ``(B, ...)``; ``status`` is each lane's end status as far as the device knows
    (0: running; the host may stop it). Returns ``(flushed, every, stop)``: ``flushed`` per
    lane, the next interval and the stop request as scalars. Skips the call when nobody
    listens, or when there is no row to send and some lane runs on (the host would learn
    nothing); the call after which no lane runs always goes, as it ends the run.
    """
    # Unsent rows: new ones of running lanes, and row 0 of a lane that ended before its first
    # step. A lane that ended earlier has sent all of its rows (its `n` stays frozen).
    count = n - flushed
    # Packed outside the cond, so the cond's operands are a chunk, never the history buffers
    # (XLA copies a conditional's operands; inside the loop that would copy the history).
    counts, args = _host_args(_pack(layout, run_id, batched, bufs, flushed, count, status, axes))
    receive = functools.partial(_joined, registry.receive_chunk, layout, counts)

    def send(args):
        return hostcall.call(receive, _I32, *args)

    def skip(args):
        return jnp.stack([jnp.int32(0), every])

    if n.shape[0] == 0 and not axes:
        # A vmap over no lanes returns only empty arrays, so XLA would drop every call whose
        # answer nothing needs: an effectful one (always kept) tells the host the run ended.
        def end(*args):
            receive(*args)

        jax.debug.callback(end, *args)
        return flushed, every, jnp.bool_(False)

    # The same on every device (see `_on_first_device`): `every` is, and rows are any device's.
    # `ending`: today a chunk in which a lane ends always has rows to send (its last step's, or
    # row 0), so `count` decides; it is kept so that closing the run never rests on that.
    ending = ~_any_device(jnp.any(status == 0), axes)
    sent = (every < registry.NEVER) & (_any_device(jnp.any(count > 0), axes) | ending)
    out = _on_first_device(sent, send, skip, args, axes=axes)
    # Never ask for more rows than a window carries (vmap lanes share it; the host may not know).
    every = jnp.minimum(out[1], _window(layout, batched, n.shape[0]))
    return jnp.where(sent, n, flushed), every, out[0] > 0


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
    """Build ``flush(run_id, bufs, n, flushed, every, status) -> (flushed, every, stop)``.

    Called once per chunk, between the loop's inner runs of ``every`` steps.
    """
    axes = _manual_axes()

    @custom_vmap
    def flush(run_id, bufs, n, flushed, every, status):
        lane = lambda x: jnp.expand_dims(x, 0)  # noqa: E731 - a lane axis of one
        f, e, s = _flush_batched(
            layout,
            False,
            run_id,
            [lane(b) for b in bufs],
            lane(n),
            lane(flushed),
            every,
            lane(status),
            axes,
        )
        return f[0], e, s

    @flush.def_vmap
    def flush_rule(axis_size, in_batched, run_id, bufs, n, flushed, every, status):
        if in_batched[4]:  # identical in every lane; a batched carry just copies it
            every = jnp.min(every)
        bufs, n, flushed, status = _broadcast(
            axis_size, [*in_batched[1:4], in_batched[5]], [bufs, n, flushed, status]
        )
        n = _one_vmap_level(n)
        f, e, s = _flush_batched(layout, True, run_id, bufs, n, flushed, every, status, axes)
        return (f, e, s), (True, False, False)

    return flush
