"""Vmap lanes inside the recording loop, without JAX's default batched-loop cost.

Layer 1 (pure JAX). Under ``jax.vmap``, a ``while_loop`` whose predicate differs per lane makes
JAX select between the old and new value of *every* carry element on every step, the whole
history buffer included: O(max_steps) work per step. The loop avoids that by keeping its
predicate a scalar (`any_lane`) and masking its own updates: a lane that is done keeps its carry
(`keep_done`) and writes no row (`write_row`).

Each helper is a ``custom_vmap`` function that does the plain thing when not batched (inside the
loop body every unbatched run is active, so no select is needed at all) and the masked thing in
its vmap rule, so the common unbatched loop pays nothing for vmap support.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax
from jax.custom_batching import custom_vmap

__all__ = ["any_lane", "keep_done", "write_row"]


def _lanes(axis_size: int, x: jax.Array, batched: bool) -> jax.Array:
    return x if batched else jnp.broadcast_to(x, (axis_size, *jnp.shape(x)))


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
def keep_done(active: jax.Array, new, old):
    """``new`` (an active lane's update); under vmap, ``old`` for the lanes that are not active."""
    del active, old  # unbatched, the loop body only runs while active
    return new


@keep_done.def_vmap
def _keep_done_rule(axis_size, in_batched, active, new, old):
    a_b, new_b, old_b = in_batched
    active = _lanes(axis_size, active, a_b)

    def pick(n, o, nb, ob):
        n, o = _lanes(axis_size, n, nb), _lanes(axis_size, o, ob)
        return jnp.where(active.reshape((axis_size,) + (1,) * (n.ndim - 1)), n, o)

    out = jax.tree_util.tree_map(pick, new, old, new_b, old_b)
    return out, jax.tree_util.tree_map(lambda _: True, out)


@custom_vmap
def write_row(buf: jax.Array, row: jax.Array, x: jax.Array, active: jax.Array) -> jax.Array:
    """``buf`` with ``buf[row] = x`` (in place); under vmap, only in the lanes that are active."""
    del active
    return lax.dynamic_update_index_in_dim(buf, x, row, 0)


@write_row.def_vmap
def _write_row_rule(axis_size, in_batched, buf, row, x, active):
    buf, row, x, active = (
        _lanes(axis_size, v, b) for v, b in zip((buf, row, x, active), in_batched, strict=True)
    )
    # An inactive lane's index is pushed out of range and its write dropped: one scatter,
    # still in place, instead of a select over the lane's whole buffer.
    rows = jnp.where(active, row, buf.shape[1])
    return buf.at[jnp.arange(axis_size), rows].set(x, mode="drop"), True
