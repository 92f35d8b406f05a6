"""Vmap lanes inside the recording loop, without JAX's default batched-loop cost.

Layer 1 (pure JAX). Under ``jax.vmap``, a ``while_loop`` whose predicate differs per lane makes
JAX select between the old and new value of *every* carry element on every step, the whole
history buffer included: O(max_steps) work per step. The loop avoids that by keeping its
predicate a scalar (`any_lane`) and masking its own updates: a lane that is done keeps its carry
(`keep_done`) and writes no row (`write_rows`).

Each helper is a ``custom_vmap`` function that does the plain thing when not batched (inside the
loop body every unbatched run is active, so no select is needed at all) and the masked thing in
its vmap rule, so the common unbatched loop pays nothing for vmap support.

`keep_done` and `write_rows` are also ``custom_jvp`` functions whose tangent is the same masked
update applied to the tangents: JAX's generic JVP of a ``custom_vmap`` function calls the rule
with lane flags that do not match the arrays under ``jax.jacfwd`` (a vmap of a jvp).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.custom_batching import custom_vmap

from ..._wire import itemsize_bits

__all__ = [
    "any_lane",
    "as_bits",
    "from_bits",
    "keep_done",
    "lane_count",
    "max_lane",
    "min_lane",
    "same_in_every_lane",
    "write_rows",
]


def _narrow_float(dtype) -> bool:
    # 8- and 16-bit floats only. float4_e2m1fn, the one narrower float, has no NaN or inf: each
    # of its 16 patterns is a finite value, which a conversion through float16 keeps exactly.
    # And bitcasting it to uint4 right after it was computed (as a written row is) crashes
    # XLA's CPU compiler (jaxlib 0.12: "Invalid bitcast i8 to i4").
    return jnp.issubdtype(dtype, jnp.floating) and 8 <= itemsize_bits(dtype) < 32


def as_bits(x: jax.Array) -> jax.Array:
    """``x`` as the unsigned integers of its width when it is an 8- or 16-bit float; any other
    array unchanged. Undone by `from_bits`.

    Rows are moved (written, sliced, selected, gathered) as these integers, never as floats:
    XLA's CPU backend has no native slicing or selecting of float8 values and brackets such ops
    with a conversion to float16 and back (jaxlib 0.12 does). That is a value conversion, not
    a copy of the bits: it quiets signalling NaNs and may canonicalise every NaN (payload and
    sign lost), so a recorded pattern would not arrive as it was computed. A same-width
    bitcast costs nothing.

    >>> x = jax.lax.bitcast_convert_type(jnp.uint8(0xFE), jnp.float8_e5m2)  # a negative NaN
    >>> as_bits(x).dtype, int(as_bits(x)), as_bits(jnp.float32(1)).dtype
    (dtype('uint8'), 254, dtype('float32'))
    """
    if not _narrow_float(x.dtype):
        return x
    return lax.bitcast_convert_type(x, {8: jnp.uint8, 16: jnp.uint16}[itemsize_bits(x.dtype)])


def from_bits(u: jax.Array, dtype) -> jax.Array:
    """The values of ``dtype`` whose bits `as_bits` gave as ``u``."""
    return lax.bitcast_convert_type(u, dtype) if u.dtype != dtype else u


def _lanes(axis_size: int, x: jax.Array, batched: bool) -> jax.Array:
    return x if batched else jnp.broadcast_to(x, (axis_size, *jnp.shape(x)))


def _differentiable(x: jax.Array) -> bool:
    return jnp.issubdtype(jnp.result_type(x), jnp.inexact)


def _zero_tangent(x: jax.Array) -> np.ndarray:
    """The tangent of an integer or bool value (JAX's ``float0``)."""
    return np.zeros(jnp.shape(x), jax.dtypes.float0)


def lane_count(*trees: object) -> int | None:
    """How many vmap lanes the arrays of ``trees`` have, as far as tracing can tell now; None
    where they are not batched.

    Decided at trace time, by a ``custom_vmap`` identity whose batching rule only runs when some
    input is batched (and is told the axis size). A loop's inputs (its initial carry, and the
    values its functions close over) are batched exactly when the loop is. Under ``jax.vmap``
    of a ``jax.jit`` the jitted function is traced before it is batched, so this says None
    there: use the answer only to choose between two correct programs. Called once per value:
    the probe consumes a PRNG key as any use does (JAX's key reuse checker).

    >>> import jax, jax.numpy as jnp
    >>> lane_count(jnp.ones(3)), jax.vmap(lambda x: jnp.float32(lane_count(x)))(jnp.ones(5))[0]
    (None, Array(5., dtype=float32))
    """
    leaves = [x for x in jax.tree_util.tree_leaves(trees) if isinstance(x, jax.Array)]
    seen: list[int] = []

    @custom_vmap
    def probe(xs):
        return xs

    @probe.def_vmap
    def rule(axis_size, in_batched, xs):
        seen.append(axis_size)
        return xs, in_batched[0]

    if leaves:
        # Values only: custom_vmap takes no tangents (under jax.grad the probe would fail).
        probe(lax.stop_gradient(leaves))
    return seen[0] if seen else None


@custom_vmap
def any_lane(pred: jax.Array) -> jax.Array:
    """``pred`` itself; under vmap, ``any`` over the lanes as an *unbatched* scalar.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> any_lane(jnp.bool_(False)).tolist()
    False
    >>> jax.vmap(any_lane)(jnp.array([False, True])).tolist()  # one value for all lanes
    [True, True]
    """
    return pred


@any_lane.def_vmap
def _any_lane_rule(axis_size, in_batched, pred):
    return (jnp.any(pred) if in_batched[0] else pred), False


@custom_vmap
def min_lane(x: jax.Array) -> jax.Array:
    """``x`` itself; under vmap, its minimum over the lanes as an *unbatched* scalar.

    >>> import jax, jax.numpy as jnp
    >>> jax.vmap(min_lane)(jnp.array([3, 1, 2])).tolist()
    [1, 1, 1]
    """
    return x


@min_lane.def_vmap
def _min_lane_rule(axis_size, in_batched, x):
    return (jnp.min(x) if in_batched[0] else x), False


@custom_vmap
def max_lane(x: jax.Array) -> jax.Array:
    """``x`` itself; under vmap, its maximum over the lanes as an *unbatched* scalar (over
    no lane, the lowest integer of its dtype).

    >>> import jax, jax.numpy as jnp
    >>> jax.vmap(max_lane)(jnp.array([3, 1, 2])).tolist()
    [3, 3, 3]
    """
    return x


@max_lane.def_vmap
def _max_lane_rule(axis_size, in_batched, x):
    return (jnp.max(x, initial=jnp.iinfo(x.dtype).min) if in_batched[0] else x), False


def same_in_every_lane(pred: jax.Array, effects: tuple[str, ...]) -> jax.Array:
    """``pred``; under vmap, a trace-time error if it differs per lane (is batched).

    A vmapped loop runs its step for every lane while any lane runs on, and then keeps a
    finished lane's carry. A side effect in that step (``effects``: an IO callback, a
    checkify check) would still happen for the finished lanes, so, like
    ``lax.while_loop`` with IO effects, the loop takes them only when ``cond_fun`` is the
    same in every lane (then every lane steps together and none runs past its end).
    """

    @custom_vmap
    def probe(pred):
        return pred

    @probe.def_vmap
    def rule(axis_size, in_batched, pred):
        if in_batched[0]:
            raise NotImplementedError(
                "jaxhist_widget.while_loop under jax.vmap: body_fun or cond_fun has side "
                f"effects ({', '.join(effects)}) and cond_fun differs per lane. A vmapped loop "
                "runs its step for every lane until the last one ends, so those effects would "
                "also happen for lanes that already finished (lax.while_loop refuses IO "
                "callbacks and checkify checks there too). Carry the value through the loop "
                "or write it to a jax.new_ref Ref in body_fun (both are kept per lane), use "
                "jax.debug.callback for host output, or loop over the lanes (lax.map)."
            )
        return pred, False

    return probe(pred)


@custom_vmap
def _keep_done(active: jax.Array, new, old):
    del active, old  # unbatched, the loop body only runs while active
    return new


def keep_done(active: jax.Array, new, old):
    """``new`` (an active lane's update); under vmap, ``old`` for the lanes that are not active.

    Differentiable (``jax.jvp``, ``jax.jacfwd``): tangents go through the same masked select.
    A typed PRNG key is selected as its key data: ``old``'s key was consumed by the step that
    made ``new``, and ``jax_debug_key_reuse`` counts any use of a key by an operation it does
    not know as consuming it, where unwrapping it is not a use.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> jax.vmap(keep_done)(jnp.array([True, False]), jnp.ones(2), jnp.zeros(2)).tolist()
    [1.0, 0.0]
    """
    leaves, treedef = jax.tree_util.tree_flatten(new)
    keys = [_key_impl(x) for x in leaves]
    if not any(k is not None for k in keys):
        return _keep_done_jvp(active, new, old)
    unwrap = lambda xs: [  # noqa: E731
        x if k is None else jax.random.key_data(x) for x, k in zip(xs, keys, strict=True)
    ]
    out = _keep_done_jvp(active, unwrap(leaves), unwrap(jax.tree_util.tree_leaves(old)))
    out = [
        x if k is None else jax.random.wrap_key_data(x, impl=k)
        for x, k in zip(out, keys, strict=True)
    ]
    return jax.tree_util.tree_unflatten(treedef, out)


def _key_impl(x):
    """The PRNG implementation of a typed key array, else None."""
    if jnp.issubdtype(jnp.result_type(x), jax.dtypes.prng_key):
        return jax.random.key_impl(x)
    return None


@jax.custom_jvp
def _keep_done_jvp(active: jax.Array, new, old):
    return _keep_done(active, new, old)


@_keep_done_jvp.defjvp
def _keep_done_jvp_rule(primals, tangents):
    active, new, old = primals
    _, d_new, d_old = tangents
    # Through the custom_jvp again, primal and tangent alike: a second jvp (jax.jacfwd of
    # jax.jacfwd, jax.hessian) then takes this rule too, never JAX's generic JVP of the bare
    # custom_vmap (see the module docstring).
    out = _keep_done_jvp(active, new, old)
    # Only inexact leaves carry tangents; integer and bool leaves get float0 zeros. Splitting
    # by leaf keeps the tangent select the same masked select as the primal one.
    leaves, treedef = jax.tree_util.tree_flatten(out)
    inexact = [_differentiable(x) for x in leaves]
    pick = lambda t: [x for x, keep in zip(t, inexact, strict=True) if keep]  # noqa: E731
    moved = iter(
        _keep_done_jvp(
            active,
            pick(jax.tree_util.tree_leaves(d_new)),
            pick(jax.tree_util.tree_leaves(d_old)),
        )
    )
    d_out = [
        next(moved) if keep else _zero_tangent(x) for x, keep in zip(leaves, inexact, strict=True)
    ]
    return out, treedef.unflatten(d_out)


@_keep_done.def_vmap
def _keep_done_rule(axis_size, in_batched, active, new, old):
    a_b, new_b, old_b = in_batched

    # A leaf that is unbatched in ``new`` and ``old`` stays unbatched when ``active`` is: the
    # loop's fixpoint over which carry leaves are batched (as ``lax.while_loop``'s batching
    # rule does it) can then keep it so. (``active`` unbatched is not always True here: under
    # a vmap of a vmap, as jax.jacfwd of a vmapped loop makes, it differs along the other axis.)
    def pick(n, o, nb, ob):
        if not (a_b or nb or ob):
            return jnp.where(active, n, o)
        n, o = _lanes(axis_size, n, nb), _lanes(axis_size, o, ob)
        mask = _lanes(axis_size, active, a_b).reshape((axis_size,) + (1,) * (n.ndim - 1))
        return jnp.where(mask, n, o)

    out = jax.tree_util.tree_map(pick, new, old, new_b, old_b)
    batched = jax.tree_util.tree_map(lambda nb, ob: a_b or nb or ob, new_b, old_b)
    return out, batched


def _row_bits(x, dtype) -> jax.Array:
    """`as_bits` of a row written into a buffer of ``dtype``. A narrow float buffer takes the
    row in its own type first (``dynamic_update_slice`` would cast a Python scalar too)."""
    x = jnp.asarray(x)
    return as_bits(x.astype(dtype)) if _narrow_float(dtype) and x.dtype != dtype else as_bits(x)


def _write_one(buf: jax.Array, row: jax.Array, x: jax.Array) -> jax.Array:
    # as bits, so that narrow floats (NaN payloads included) are stored exactly (see `as_bits`)
    out = lax.dynamic_update_index_in_dim(as_bits(buf), _row_bits(x, buf.dtype), row, 0)
    return from_bits(out, buf.dtype)


@custom_vmap
def _write_rows(
    bufs: list[jax.Array], row: jax.Array, xs: list[jax.Array], active: jax.Array
) -> list[jax.Array]:
    del active
    return [_write_one(b, row, x) for b, x in zip(bufs, xs, strict=True)]


@jax.custom_jvp
def write_rows(
    bufs: list[jax.Array], row: jax.Array, xs: list[jax.Array], active: jax.Array
) -> list[jax.Array]:
    """Each of ``bufs`` with ``buf[row] = x`` (in place); under vmap, only in the lanes that
    are active.

    One call for every recorded leaf: a ``custom_jvp`` and a ``custom_vmap`` are each traced
    once a step, not once a leaf (a step recording 400 leaves traced for ~2 s one leaf at a
    time). Differentiable (``jax.jvp``, ``jax.jacfwd``): the tangent rows are written the same
    way.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> [b.tolist() for b in write_rows([jnp.zeros(3), jnp.zeros(2, int)], 1, [5.0, 7], True)]
    [[0.0, 5.0, 0.0], [0, 7]]
    >>> f = lambda x: write_rows([jnp.zeros(3)], 1, [x], True)[0]
    >>> jax.jvp(f, (5.0,), (1.0,))[1].tolist()
    [0.0, 1.0, 0.0]
    """
    return _write_rows(bufs, row, xs, active)


@write_rows.defjvp
def _write_rows_jvp(primals, tangents):
    bufs, row, xs, active = primals
    d_bufs, _, d_xs, _ = tangents
    # Through the custom_jvp again (as `_keep_done_jvp_rule`): a second jvp takes this rule.
    out = write_rows(bufs, row, xs, active)
    # Only inexact buffers carry tangents (integer and bool ones get float0 zeros): their
    # tangent rows are written by the same masked write, in one call too.
    inexact = [i for i, b in enumerate(out) if _differentiable(b)]
    moved = iter(write_rows([d_bufs[i] for i in inexact], row, [d_xs[i] for i in inexact], active))
    keep = set(inexact)
    return out, [next(moved) if i in keep else _zero_tangent(b) for i, b in enumerate(out)]


@_write_rows.def_vmap
def _write_rows_rule(axis_size, in_batched, bufs, row, xs, active):
    bufs_b, row_b, xs_b, active_b = in_batched
    row, active = _lanes(axis_size, row, row_b), _lanes(axis_size, active, active_b)
    # The running lanes step in lockstep: every lane starts at row 1 and each step advances
    # exactly the active ones, which stop together at the chunk's limit (`steps.run_until`), so
    # they all write the same row, the highest of any lane. That makes each write one
    # dynamic_update_slice across lanes, in place, cheaper than the scatter a row per lane
    # needs (see docs/performance.md). A lane that is not active rewrites what its
    # buffer holds there (a row past its length: row 0's value), so keeps it.
    at = jnp.max(jnp.where(active, row, 0), initial=0)
    out = []
    for buf, b_b, x, x_b in zip(bufs, bufs_b, xs, xs_b, strict=True):
        buf, x = _lanes(axis_size, buf, b_b), _lanes(axis_size, x, x_b)
        dtype = buf.dtype
        buf, x = as_bits(buf), _row_bits(x, dtype)  # moved as bits: see `as_bits`
        old = lax.dynamic_index_in_dim(buf, at, axis=1, keepdims=False)
        mask = active.reshape((axis_size,) + (1,) * (x.ndim - 1))
        new = lax.dynamic_update_index_in_dim(buf, jnp.where(mask, x, old), at, axis=1)
        out.append(from_bits(new, dtype))
    return out, [True] * len(out)
