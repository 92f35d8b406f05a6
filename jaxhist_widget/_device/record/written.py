"""The order a record's leaves were written in: JAX flattens a dict by its sorted keys, so
``{"loss": l, "accuracy": a}`` flattens as ``accuracy, loss``; a plot draws the charts in the
order the user wrote (the headline metric first), which only the dict itself still holds.

Layer 1 (pure Python on the record's value at trace time: its leaves may be tracers, never
read). The host is told it as `Layout.order`.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax

__all__ = ["written_order"]


def written_order(tree: Any) -> tuple[int, ...]:
    """The leaf indices of ``tree`` (in flatten order) in the order they were written: a
    dict's keys in insertion order at every level, everything else (sequences, named
    tuples, dataclasses, custom pytrees) in flatten order, which is their own.

    >>> written_order({"loss": 1.0, "accuracy": 2.0, "grad": {"w": 3.0, "b": 4.0}})
    (3, 0, 2, 1)
    >>> written_order([{"b": 1, "a": 2}, 3])
    (1, 0, 2)
    """
    paths = [path for path, _ in jax.tree_util.tree_flatten_with_path(tree)[0]]
    keys = [_position(tree, path) for path in paths]
    # A stable sort: leaves whose written places tie (below a container it cannot read)
    # keep their flatten order.
    return tuple(sorted(range(len(paths)), key=lambda k: keys[k]))


def _position(tree: Any, path: tuple[Any, ...]) -> tuple[int, ...]:
    """Where the leaf at ``path`` was written: per level, its key's place among its dict's
    keys as inserted, or its place in a sequence; it stops at a container it cannot read
    (the rest tie and keep their flatten order)."""
    node, out = tree, []
    for key in path:
        if isinstance(key, jax.tree_util.DictKey) and isinstance(node, dict):
            out.append(list(node).index(key.key))
            node = node[key.key]
        elif isinstance(key, jax.tree_util.SequenceKey) and isinstance(node, (list, tuple)):
            out.append(key.idx)
            node = node[key.idx]
        elif isinstance(key, jax.tree_util.GetAttrKey) and _fields(node):
            out.append(_fields(node).index(key.name))
            node = getattr(node, key.name)
        else:
            break
    return tuple(out)


def _fields(node: Any) -> list[str]:
    """The declared fields of a named tuple or a dataclass, in order; [] for anything else."""
    if isinstance(node, tuple) and hasattr(node, "_fields"):
        return list(node._fields)
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        return [f.name for f in dataclasses.fields(node)]
    return []
