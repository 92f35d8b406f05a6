"""What the loop records each step: the leaves kept, their buffers, the `Layout` and `History`.

Layer 1 (pure JAX). Worked out once at trace time from ``record(init_val)`` (`plan`): the leaves
packed into one buffer per dtype (`_wire.Packing`); each step then writes `Rows.take` of its
carry, one row per buffer, into them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from ..._wire import Layout, Packing, element_words, window_rows
from ..parallel import devices
from . import checks
from .checks import store_dtype
from .history import History, Shape, buffer_keys, pack
from .written import written_order

__all__ = ["Rows", "layout", "plan", "unique_names"]


class Rows(NamedTuple):
    """What one row holds, fixed at trace time (`plan`)."""

    record: Callable[[Any], Any]  #: ``carry -> pytree of arrays``
    dtype: Any  #: the storage dtype of floating leaves (None: as recorded)
    first: list[jax.Array]  #: row 0 as stored, every leaf (zero-size ones too)
    treedef: Any  #: the structure of ``record``'s result
    names: tuple[str, ...]  #: one per leaf (see `_leaf_names`)
    #: Where each leaf lies in the history's buffers: one per dtype, the leaves a step never
    #: changes (fixed carry leaves recorded as they are) in one of their own (`written`).
    packing: Packing
    #: The buffers a step writes; the others hold the fixed leaves, row 0 in every row
    #: already: never written, so never copied into every vmap lane either.
    written: tuple[int, ...]
    #: The leaves that count the steps: a carry leaf ``body_fun`` adds one to, recorded as is
    #: (see `Layout.step_counters`).
    step_counters: tuple[int, ...] = ()
    #: The leaves in the order the record was written (`Layout.order`; JAX sorts dict keys).
    order: tuple[int, ...] = ()

    @property
    def kept(self) -> bool:
        """Whether any leaf has a buffer (a record of only zero-size leaves has none)."""
        return bool(self.packing.widths)

    def take(self, carry: Any) -> list[jax.Array]:
        """The rows of the `written` buffers for ``carry``: what a step writes."""
        return self._rows(self._leaves(carry), self.written)

    def _leaves(self, carry: Any) -> list[jax.Array]:
        return _store(self.record(carry), self.dtype)

    def _rows(self, leaves: list[jax.Array], buffers: Sequence[int]) -> list[jax.Array]:
        # lax's reshape: jnp's, with its checks, per leaf, was a large part of a trace's time
        flat = [x if x.ndim == 1 else lax.reshape(x, (x.size,)) for x in leaves]
        rows = pack(self.packing, flat)
        return [rows[g] for g in buffers]

    def first_rows(self) -> list[jax.Array]:
        """Row 0 of every buffer."""
        return self._rows(self.first, range(len(self.packing.widths)))

    def buffers(self, max_rows: int) -> list[jax.Array]:
        """The history buffers: ``(max_rows, width)`` each.

        Every row starts as row 0, so rows past `length` hold a value `record` produced (finite
        wherever the real rows are), never NaN: see `History` on why NaN there breaks gradients.
        """
        return [jnp.broadcast_to(x, (max_rows, *x.shape)) for x in self.first_rows()]

    def history(self, bufs: list[jax.Array], n: jax.Array, max_rows: int) -> History:
        """The `History` of the loop's final buffers."""
        return History.packed(bufs, n, Shape(self.treedef, self.packing, max_rows))


def plan(
    record: Callable[[Any], Any],
    dtype: Any,
    init_val: Sequence[Any],
    counting: tuple[int, ...],
    fixed: Callable[[Any], bool] = lambda x: False,
    order: tuple[int, ...] | None = None,
) -> Rows:
    """The `Rows` of ``record`` (``dtype``: the storage dtype of floating leaves, or None) on
    the carry leaves ``init_val``, of which those at ``counting`` count the steps; ``fixed``
    tells a leaf the loop never changes (the very object, as the loop puts it back).
    ``order``: its leaves' written order (`Rows.order`) when ``record`` rebuilds the user's
    value from leaves (the default record: the carry, a scan's ``y``), whose dicts then have
    their keys sorted; None: read from the record's result, the user's own value."""
    row0 = record(init_val)
    # A recorded leaf that is a counting carry leaf itself (the very object: record returns it
    # as it is) counts the steps too.
    counters = tuple(
        k
        for k, x in enumerate(jax.tree_util.tree_leaves(row0))
        if any(x is init_val[j] for j in counting)
    )
    first = _store(row0, dtype)
    treedef = jax.tree_util.tree_structure(row0)
    names = _leaf_names(row0)
    checks.check_chip_dtypes(first, names)
    # Zero-size leaves get no buffer, no writes and no words on the wire (`Packing`); the
    # History gives them back as zeros of the right shape. XLA folds a zero-size
    # (max_rows, 0, ...) value into a constant whose compile-time cost grows with max_rows
    # (seconds at 10^8 rows), so none may live in the loop.
    packing = Packing.by_dtype(
        [tuple(x.shape) for x in first],
        [jnp.dtype(x.dtype).name for x in first],
        buffer_keys(first, fixed=fixed),
    )
    never = {packing.groups[i] for i, x in enumerate(first) if fixed(x)}
    written = tuple(g for g in range(len(packing.widths)) if g not in never)
    order = written_order(row0) if order is None else order
    return Rows(record, dtype, first, treedef, names, packing, written, counters, order)


def layout(rows: Rows, max_steps: int, every: int | None, block: int = 1) -> Layout:
    """What the host is told of the rows (``every``: the fixed interval, None for auto;
    ``block``: steps the loop takes at a time on an accelerator, see `Layout.block`)."""
    first = rows.first
    return Layout(
        names=rows.names,
        shapes=tuple(tuple(x.shape) for x in first),
        # dtype names ("float32", "bfloat16", "float8_e4m3fn", "int4"), not `np.dtype.str`,
        # which is "|V1" for every ml_dtypes type; `_wire.np_dtype` turns them back.
        dtypes=tuple(jnp.dtype(x.dtype).name for x in first),
        treedef=rows.treedef,
        max_steps=max_steps,
        chunk=_chunk_rows(first, max_steps + 1, every),
        every=every,
        step_counters=rows.step_counters,
        order=rows.order,
        block=block,
        accelerated=devices.accelerated(),
        packing=rows.packing,
    )


def _store(row: Any, dtype: Any) -> list[jax.Array]:
    return [store_dtype(jnp.asarray(x), dtype) for x in jax.tree_util.tree_leaves(row)]


def _chunk_rows(first: list[jax.Array], max_rows: int, every: int | None) -> int:
    if every is not None:
        # The first flush can hold row 0 and row 1 together (there is no flush before the
        # first step), so a chunk holds at least two rows.
        return min(max(every, 2), max_rows)
    # Sized by bytes (runs.CHUNK_BYTES) as packed for the host: narrow types travel as one
    # 32-bit word per element. Under shard_map/pmap one host call carries the windows of
    # every device, so they share the budget like vmap lanes do (see `Layout.window`).
    row_bytes = sum(x.size * 4 * element_words(x.dtype) for x in first)
    return window_rows(row_bytes, max_rows, devices.manual_devices(), devices.accelerated())


def _leaf_names(tree: Any) -> tuple[str, ...]:
    """Leaf names: ``loss``, ``params.w``, ``[0]``, ``state[1]``; ``value`` for a lone leaf.

    Unique: leaves whose paths spell alike (``{"a.b": x, "a": {"b": y}}``, both ``a.b``) are
    told apart by `unique_names`. Every sink takes these names as they are (a plot's fields, a
    store's columns, a table's headers), so the rule lives here, once.
    """
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
    return unique_names(names)


def unique_names(names: list[str]) -> tuple[str, ...]:
    """``names`` with each repeat made unique: the first keeps its name, a later one gets
    `` (2)``, `` (3)``, ... (the first such suffix no other name has), in flatten order.

    >>> unique_names(["a.b", "a.b", "x", "a.b (2)"])
    ('a.b', 'a.b (3)', 'x', 'a.b (2)')
    """
    taken = set(names)
    seen: set[str] = set()
    out = []
    for name in names:
        if name in seen:
            k = 2
            while f"{name} ({k})" in taken:
                k += 1
            name = f"{name} ({k})"
            taken.add(name)
        seen.add(name)
        out.append(name)
    return tuple(out)
