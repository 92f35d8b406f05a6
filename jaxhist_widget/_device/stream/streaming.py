"""Device side of streaming: pack chunks of rows and hand them to the host registry.

Layer 1 (pure JAX) calling into layer 2 only through the three registry functions below, each
given the static `Layout` by `functools.partial` (static facts of the trace, never a sink).

Cost model: a host call (`hostcall.call`) has a fixed cost plus a smaller one per argument, and
XLA copies every argument once into a numpy array for the host. So one call carries a whole
chunk for every vmap lane: the loop's last answer (`STOP`, `EVERY`, `RUN`: the run id), the
per-lane words (`_wire.lane_words`) and one window of rows per leaf. The windows travel as
arguments of their own: joined into one array, XLA fused the window slices into the join, an
index computation per element, much slower than slicing them (docs/performance.md
has the numbers).

Compile cost: on CPU, XLA compiles each kernel (fusion) of a program to machine code of its
own, and those make most of the time a new ``jit`` of a loop takes. So the device packs
nothing it need not: 32- and 64-bit windows go as the buffers hold them (`_on_wire`), the
header's static words are added on the host (`_receive`), and
the host's answer stays one array, kept as is by a skipped flush.

Under ``jax.vmap`` a plain callback runs once per lane. `flush` is therefore a
``custom_vmap`` function whose batched rule makes one host call with all lanes; lanes that were
already done (a vmapped loop still runs its body for them, on frozen values that it then
discards) send nothing.

Every call is a pure host call (`hostcall.call`) whose answer the loop needs (the run id,
the next interval, the stop flag), so XLA keeps it; there is no closing
``jax.debug.callback``: an effectful callback anywhere in the program makes XLA's CPU loop
slower on every step. The last flush, which carries each lane's end status, ends the run on
the host.

Several devices (see `devices`): one host call per flush for all of them, made by the first
device (under ``shard_map`` / ``pmap``) or by device 0 (sharded ``jax.jit``).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.custom_batching import custom_vmap

from ... import _wire
from ..._wire import Layout
from ..parallel import as_bits, devices
from . import hostcall

#: What the loop keeps of the host's last answer, int32 words: `STOP` (the host asks the
#: running lanes to stop), `EVERY` (rows until the next flush, `_wire.NEVER` when nobody
#: listens) and `RUN` (the run id). One array, as the host call returns it: the loop reads its
#: words where it needs them, and a skipped flush keeps it as it is, with no kernel to compile.
STOP, EVERY, RUN = 0, 1, 2
_ANSWER = jax.ShapeDtypeStruct((3,), jnp.int32)
#: The answer of a loop that makes no host call: run on, nobody listens.
NOBODY = tuple(_wire.NEVER if i == EVERY else 0 for i in range(3))
#: The end status codes a flush carries (`_wire.STATUSES`; 0: running). A scan that ran all its
#: steps ends as converged, which a plot shows as "finished".
CONVERGED, MAX_STEPS = (_wire.STATUSES.index(s) for s in ("converged", "max_steps"))


class FlushArgs(NamedTuple):
    """What the loop hands `make_flush`'s ``flush`` once per chunk.

    Under vmap every field but ``answer`` may carry a lane axis; `_flush_lanes` gets them all
    with one (``bufs`` leaves ``(B, max_rows, ...)``, ``n``/``flushed``/``status`` ``(B,)``),
    but ``answer`` unbatched.
    """

    answer: jax.Array  #: the host's last answer (`STOP`, `EVERY`, `RUN`; the same in every lane)
    bufs: list[jax.Array]  #: the history buffers (values only: the host gets no tangents)
    n: jax.Array  #: valid rows
    flushed: jax.Array  #: rows already sent to the host
    status: jax.Array  #: end status as far as the device knows (0: running; the host may stop)


#: The `FlushArgs` fields that hold one value per vmap lane.
_PER_LANE = ("bufs", "n", "flushed", "status")


def open_run(layout: Layout, init: list[jax.Array]) -> jax.Array:
    """Ask the host for a run id and the first flush interval: the loop's first answer
    (int32 words `STOP` = 0, `EVERY`, `RUN`).

    ``init`` (row 0 of the history's buffers) only gives the host call a data dependence on
    the loop's input. A callback with no operand that varies is loop-invariant to XLA, which hoists
    it out of an enclosing ``scan`` / ``fori_loop`` / ``while_loop`` and runs it once for all of
    that loop's iterations: every inner run would then share one id (jax-ml/jax#16637).
    """

    def call(token):
        return hostcall.call(functools.partial(_open_run, layout), _ANSWER, *token)

    devices.check_mesh()
    token = _lanes_token(_token(init))
    return devices.on_first_device(
        jnp.bool_(True), call, lambda _: jnp.zeros(3, jnp.int32), token, axes=devices.manual_axes()
    )


def _open_run(layout: Layout, *token) -> np.ndarray:
    """Host side of `open_run`: the run id and the first interval, which may be more rows
    than a window of this loop carries (the host does not know the lanes: its pace of an
    earlier run of the same loop with fewer vmap lanes, `_pace.Pace.first`); `interval` caps
    it on the device. The token is only there to be depended on."""
    run_id, every = _wire.open_run(layout, token).tolist()
    return _answer(stop=0, every=every, run_id=run_id)


def _answer(stop: int, every: int, run_id: int) -> np.ndarray:
    out = np.zeros(3, np.int32)
    out[[STOP, EVERY, RUN]] = stop, every, run_id
    return out


#: A leaf of at most this many 32-bit elements joins the token whole (no slice to compile).
_WHOLE_TOKEN = 16


def _token(leaves: list[jax.Array]) -> list[jax.Array]:
    """A few arrays that depend on every element of ``leaves`` (row 0 of each history
    buffer), cheap whatever the sizes.

    A small 32-bit buffer row is taken whole, as it is (a host-call argument needs no kernel);
    any other, summed as words: a buffer holds many leaves, and a part of it (its first
    element) would depend on one leaf only, which may be a constant.
    """

    def part(x: jax.Array) -> jax.Array:
        x = devices.unsharded(lax.stop_gradient(x))
        if x.size <= _WHOLE_TOKEN and x.dtype != jnp.bool_ and _wire.itemsize_bits(x.dtype) == 32:
            return x.reshape(-1)
        return jnp.sum(_wire.words(x.reshape(-1)), dtype=jnp.uint32, keepdims=True)

    parts = [part(x) for x in leaves if x.size]
    return parts or [jnp.zeros(1, jnp.uint32)]


@custom_vmap
def _lanes_token(token: list[jax.Array]) -> list[jax.Array]:
    """The token, one for all lanes under vmap (one run, one host call)."""
    return token


@_lanes_token.def_vmap
def _lanes_token_rule(axis_size, in_batched, token):
    # Declared unbatched, so of the unbatched shape; a sum over the lanes still depends on
    # every lane's input (all the token is for). A sum, not a bitwise or: lanes sharded over
    # devices make it a cross-device reduction, and XLA has none for bitwise or.
    (batched,) = in_batched
    out = [
        jnp.sum(t, axis=0, dtype=t.dtype) if b else t for t, b in zip(token, batched, strict=True)
    ]
    return out, [False] * len(out)


def interval(layout: Layout, answer: jax.Array, lane_state) -> jax.Array:
    """Rows until the next flush: the host's `EVERY`, never more than one flush's window
    carries (`NEVER`, nobody listening, as it is).

    ``lane_state``: the per-lane values the flush is given (its buffers, counters, statuses).
    Under vmap they are batched exactly when the flush is, and then the lanes share the
    window, which only a vmap rule can know: the run's opening call may not (when every lane
    starts alike, nothing it is given is batched), so the first interval the host remembers
    from an earlier run with fewer lanes was sent in full, and the host lost those rows.
    """

    @custom_vmap
    def capped(every, lane_state):
        return _cap(every, _window(layout, False, 1))

    @capped.def_vmap
    def rule(axis_size, in_batched, every, lane_state):
        if in_batched[0]:
            every = jnp.min(every, axis=0)  # the same in every lane
        return _cap(every, _window(layout, True, axis_size)), False

    # values only: a custom_vmap function takes no tangents (see `make_flush`)
    return capped(answer[EVERY], lax.stop_gradient(lane_state))


def _cap(every: jax.Array, window: int) -> jax.Array:
    return jnp.where(every >= _wire.NEVER, every, jnp.minimum(every, window))


def _pack(
    layout: Layout, batched: bool, args: FlushArgs, count: jax.Array, axes: tuple = ()
) -> tuple[int | None, int, list[jax.Array]]:
    """Rows ``flushed[b] .. flushed[b]+count[b]`` of each lane as flat host-call arguments.

    Returns ``(lanes, window, [answer, per-lane words, window of leaf 0, window of leaf 1, ...])``:
    each window holds ``window`` rows of every lane; ``lanes`` is None unbatched. The static
    words of the header are added on the host (`_receive`), so that the device builds no
    header. ``args`` has a lane axis (see `_flush_lanes`); ``count`` is ``(B,)``. With manual
    ``axes`` (shard_map, pmap) the lanes of every device are gathered, in device order, into
    one batch of ``devices * B`` lanes.
    """
    first, status = args.flushed, args.status
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
        # Sliced (and gathered across devices) as bits: XLA's CPU backend slices float8 by way
        # of float16, which loses NaN payloads (see `lanes.as_bits`); `words` keeps the bits.
        return lax.dynamic_slice_in_dim(as_bits(buf), start, k, axis=1)

    starts = jnp.broadcast_to(start, first.shape)
    per_lane = _wire.lane_words(first, count, starts, status)
    windows = [window(b) for b in args.bufs]
    if axes:
        # Only the windows travel between devices, never the history buffers.
        per_lane = lax.all_gather(per_lane, axes, axis=0, tiled=True)
        windows = [lax.all_gather(w, axes, axis=0, tiled=True) for w in windows]
        lanes, batched = per_lane.shape[0], True
    # Unbatched is told apart from a vmap over zero lanes, so that the latter still decodes.
    # The window's rows travel too: decode must not guess the lanes' share of the budget.
    parts = [args.answer, per_lane.reshape(-1)] + [_on_wire(devices.unsharded(w)) for w in windows]
    return (lanes if batched else None), k, lax.stop_gradient(parts)


def _receive(
    lanes: int | None, window: int, layout: Layout, answer, per_lane, *windows
) -> np.ndarray:
    """Host side of a flush: the chunk as `_wire.decode` reads it, handed to the registry.

    Returns the loop's next answer (`STOP`, `EVERY`, `RUN`); the loop caps its interval at
    the window (`interval`).
    """
    run_id = int(np.asarray(answer)[RUN])
    head = _wire.pack_head(run_id, lanes, window, per_lane)
    stop, every = _wire.receive_chunk(layout, head, *windows).tolist()
    return _answer(stop=int(bool(stop)), every=every, run_id=run_id)


def _on_wire(window: jax.Array) -> jax.Array:
    """A window as a host-call argument: 32- and 64-bit leaves as they are.

    `_wire.decode` reads those by their bytes whatever the argument's dtype and shape, so they
    need no bitcast: a window that is the whole buffer then reaches the host call with no
    kernel of its own to compile (and no copy). Nor are they flattened: XLA fuses a reshape
    into the window's slice, which then computes an index per element instead of copying each
    lane's rows, several times slower (docs/performance.md). Narrower leaves travel as
    `_wire.words`.
    """
    if window.dtype != jnp.bool_ and _wire.itemsize_bits(window.dtype) >= 32:
        return window
    return _wire.words(window)


def _window(layout: Layout, batched: bool, lanes: int) -> int:
    """Rows per lane in one host call: the lanes of all devices share the byte budget."""
    return layout.window(lanes * devices.manual_devices() if batched else None)


def _flush_lanes(layout: Layout, batched: bool, args: FlushArgs, axes: tuple = ()):
    """Send rows ``flushed[b] .. n[b]`` of every lane, and its status, in one host call.

    ``args`` has a lane axis (see `FlushArgs`). Returns the next answer (`_receive`). Skips
    the call when nobody listens, or when there is no row to send and some lane runs on (the
    host would learn nothing); the call after which no lane runs always goes, as it ends the
    run. A skipped call keeps the last answer as it is: its `STOP` is 0 (after a stop no lane
    runs on, so no flush follows), and its `EVERY` still holds (only `NEVER` can exceed the
    window, and then the one chunk takes every lane to its end, so none follows either).
    """
    n, flushed, status, answer = args.n, args.flushed, args.status, args.answer
    every = answer[EVERY]
    # Unsent rows: new ones of running lanes, and row 0 of a lane that ended before its first
    # step. A lane that ended earlier has sent all of its rows (its `n` stays frozen).
    count = n - flushed
    # Packed outside the cond, so the cond's operands are a chunk, never the history buffers
    # (XLA copies a conditional's operands; inside the loop that would copy the history).
    lanes, k, parts = _pack(layout, batched, args, count, axes)
    counts, host_args = devices.host_args(parts)
    receive = functools.partial(
        devices.joined, functools.partial(_receive, lanes, k), layout, counts
    )

    def send(host_args, answer):
        return hostcall.call(receive, _ANSWER, *host_args)

    def skip(host_args, answer):
        return answer

    if n.shape[0] == 0 and not axes:
        # A vmap over no lanes returns only empty arrays, so XLA would drop every call whose
        # answer nothing needs: an effectful one (always kept) tells the host the run ended.
        def end(*host_args):
            receive(*host_args)

        jax.debug.callback(end, *host_args)
        return answer

    # The same on every device (see `on_first_device`): `every` is, and rows are any device's.
    # `ending`: today a chunk in which a lane ends always has rows to send (its last step's, or
    # row 0), so `count` decides; it is kept so that closing the run never rests on that.
    ending = ~devices.any_device(jnp.any(status == 0), axes)
    sent = (every < _wire.NEVER) & (devices.any_device(jnp.any(count > 0), axes) | ending)
    return devices.on_first_device(sent, send, skip, host_args, answer, axes=axes)


def _one_lane(args: FlushArgs) -> FlushArgs:
    """An unbatched flush's ``args`` with a lane axis of one on each per-lane field."""
    lane = lambda x: jnp.expand_dims(x, 0)  # noqa: E731
    return args._replace(**{f: jax.tree_util.tree_map(lane, getattr(args, f)) for f in _PER_LANE})


def _all_lanes(axis_size: int, batched: FlushArgs, args: FlushArgs) -> FlushArgs:
    """A batched flush's ``args`` with a lane axis on each per-lane field.

    ``batched`` is the vmap rule's flags, a `FlushArgs` of bools (a list of them for ``bufs``):
    an unbatched per-lane field is broadcast to every lane.
    """
    # identical in every lane; a batched carry just copies it
    answer = jnp.min(args.answer, axis=0) if batched.answer else args.answer

    def lanes(x, b):
        return x if b else jnp.broadcast_to(x, (axis_size, *jnp.shape(x)))

    per_lane = {
        f: jax.tree_util.tree_map(lanes, getattr(args, f), getattr(batched, f)) for f in _PER_LANE
    }
    per_lane["n"] = _one_vmap_level(per_lane["n"])
    return args._replace(answer=answer, **per_lane)


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
    """Build ``flush(args: FlushArgs) -> answer`` (see `_flush_lanes`).

    Called once per chunk, between the loop's inner runs of ``every`` steps. Under vmap its
    rule makes one host call for all lanes (`_all_lanes`).
    """
    axes = devices.manual_axes()

    @custom_vmap
    def flush(args: FlushArgs):
        return _flush_lanes(layout, False, _one_lane(args), axes)

    @flush.def_vmap
    def flush_rule(axis_size, in_batched, args):
        (batched,) = in_batched
        answer = _flush_lanes(layout, True, _all_lanes(axis_size, batched, args), axes)
        return answer, False

    return flush
