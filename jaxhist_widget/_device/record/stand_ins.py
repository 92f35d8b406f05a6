"""Which leaves of a scan's row 0 are stand-ins: those ``record`` computes from ``y``.

Layer 1 (pure JAX). A scan's row 0 is ``record(init, y0)`` where ``y0`` stands in for a ``y``
no step has made yet: NaN for a floating leaf, which a plot leaves out as it leaves any NaN
out, but 0 for an integer or bool one, which would read as a value. The host is told which
leaves those are (`Layout.stand_ins`), found from what ``record`` computes, not from dtypes:
a leaf computed from ``y`` (``y > 0``, ``jnp.nan_to_num(y)``) holds no value at row 0 either.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from jax.extend.core import Var

__all__ = ["from_y"]


def from_y(record: Callable[[Any, Any], Any], init: Any, y: Any) -> tuple[int, ...]:
    """The leaves of ``record(init, y)`` (in flatten order) whose value depends on ``y``.

    Read from the jaxpr of ``record`` (traced on shapes: ``init`` may be a tracer): an
    equation that reads a value depending on ``y`` makes values that depend on it, and one
    holding a jaxpr of its own (a ``cond``, a ``jit``) counts as a whole.
    """
    shapes = jax.tree_util.tree_map(_shape, (init, y))
    jaxpr = jax.make_jaxpr(lambda i, y: jax.tree_util.tree_leaves(record(i, y)))(*shapes).jaxpr
    depends = set(jaxpr.invars[len(jax.tree_util.tree_leaves(init)) :])
    for eqn in jaxpr.eqns:
        if any(isinstance(v, Var) and v in depends for v in eqn.invars):
            depends.update(eqn.outvars)
    return tuple(k for k, v in enumerate(jaxpr.outvars) if isinstance(v, Var) and v in depends)


def _shape(x: Any) -> jax.ShapeDtypeStruct:
    """``x``'s shape and dtype, weak type kept (it can change what ``record`` promotes)."""
    return jax.ShapeDtypeStruct(jnp.shape(x), jnp.result_type(x), weak_type=jax.typeof(x).weak_type)
