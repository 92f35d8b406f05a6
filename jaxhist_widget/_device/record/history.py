"""`History`: the fixed-shape, on-device record of a loop, and its in-jit helpers.

Layer 1 (pure JAX): imports nothing from the host or widget layers.

Every leaf of ``History.values`` has a leading row axis of static size ``max_steps + 1``;
``History.length`` counts the valid rows. Traced code cannot slice by a traced size, so every
helper here works with a mask (``arange(rows) < length``) instead; they are jit-, vmap- and
grad-friendly. Only `History.to_numpy` trims, and only on concrete (host) values.

The rows are kept packed: one buffer per dtype (`_wire.Packing`), which a loop writes once a
step whatever the number of leaves; ``values`` reads the leaves out of them, and the helpers
compute once per buffer.

Rows past ``length`` repeat row 0 (see `History`), never NaN: a value ``record`` itself
produced, so ``f(values)`` stays finite on them for any ``f`` that is finite on the real rows,
and a gradient through a masked reduction (zero cotangent on those rows) stays finite too.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
from jax import lax

from ..._wire import Packing
from ..parallel import as_bits, devices, from_bits

__all__ = ["SHARED_MOST", "History", "Shape", "buffer_keys", "pack"]

PyTree = Any


class Shape(NamedTuple):
    """A `History`'s static part: the record's structure and where each leaf lies in its
    buffers (`_wire.Packing`). Its pytree aux data, so that ``jit``, ``vmap`` and ``lax.cond``
    see only the buffers and the length."""

    treedef: Any  #: the structure of ``record``'s result
    packing: Packing
    rows: int  #: ``max_steps + 1``: a zero-size leaf's rows (it has no buffer to tell them)


@jax.tree_util.register_pytree_with_keys_class
class History:
    """The recorded rows of one `jaxhist_widget.while_loop` run.

    ``History(values, length)`` makes one from a pytree of rows and their count (a leaf of
    ``values`` with a leading row axis; under vmap a lane axis first, as ``length`` has).

    Attributes
    ----------
    values
        A pytree with the structure of ``record(carry)``. Every leaf has a leading row axis of
        static size ``max_steps + 1``: row 0 is ``record(init_val)``, row ``i`` is the record
        after step ``i``. From `while_loop`, rows at or past ``length`` repeat row 0 (not NaN,
        which would make ``grad`` of ``History(f(values), length).mean()`` NaN: NaN times the
        zero cotangent of a masked row is NaN). Use `mask`, the masked helpers or `to_numpy` rather
        than reducing ``values`` directly.
        Under ``jax.vmap`` every leaf gains a leading lane axis: ``(lanes, max_steps + 1, ...)``.
    length
        int32 scalar (``(lanes,)`` when batched): the number of valid rows, i.e. steps + 1.
    buffers
        Where ``values`` is kept: one array ``(..., max_steps + 1, width)`` per dtype, a leaf's
        elements a run of its columns (a loop keeps the leaves its body never changes in one of
        their own). These and ``length`` are the History's pytree children: what
        ``jax.tree.map`` over a History maps (``values`` reads its leaves out of them).

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> import jaxhist_widget as jhw
    >>> @jax.jit
    ... def halve(x):
    ...     return jhw.while_loop(lambda x: x > 1.0, lambda x: x / 2, x, max_steps=5)
    >>> x, hist = halve(10.0)
    >>> int(hist.length), hist.to_numpy().tolist()
    (5, [10.0, 5.0, 2.5, 1.25, 0.625])
    >>> float(hist.min()), float(hist.last())
    (0.625, 0.625)

    Its pytree children are the buffers, one per dtype, and the length:

    >>> h = jhw.History({"loss": jnp.zeros(4), "x": jnp.ones((4, 2)), "i": jnp.arange(4)}, 3)
    >>> jax.tree.map(jnp.shape, h.values)
    {'i': (4,), 'loss': (4,), 'x': (4, 2)}
    >>> [b.shape for b in h.buffers]
    [(4, 1), (4, 3)]
    """

    __slots__ = ("_shape", "buffers", "length")
    buffers: tuple[Any, ...]
    length: Any
    _shape: Shape

    def __init__(self, values: PyTree, length: Any) -> None:
        leaves, treedef = jax.tree_util.tree_flatten(values)
        length = jnp.asarray(length)
        lead = np.ndim(length)
        leaves = [jnp.asarray(x) for x in leaves]
        for x in leaves:
            if x.ndim <= lead:
                raise ValueError(
                    f"History values need a row axis after the {lead} lane axes of length: "
                    f"got a leaf of shape {x.shape}."
                )
        rows = leaves[0].shape[lead] if leaves else 0
        packing = Packing.by_dtype(
            [x.shape[lead + 1 :] for x in leaves],
            [jnp.dtype(x.dtype).name for x in leaves],
            buffer_keys(leaves, lead + 1),
        )
        buffers = pack(packing, [x.reshape(*x.shape[: lead + 1], -1) for x in leaves])
        self._set(tuple(buffers), length, Shape(treedef, packing, rows))

    def _set(self, buffers: tuple, length: Any, shape: Shape) -> None:
        object.__setattr__(self, "buffers", buffers)
        object.__setattr__(self, "length", length)
        object.__setattr__(self, "_shape", shape)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("a History is immutable")

    @classmethod
    def packed(cls, buffers: Sequence[Any], length: Any, shape: Shape) -> History:
        """A History of ``buffers`` as they are (the loops' own: nothing is copied)."""
        out = object.__new__(cls)
        out._set(tuple(buffers), length, shape)
        return out

    def __reduce__(self) -> tuple[Any, ...]:
        # pickle and copy make it anew from its parts (it takes no attribute set on it)
        return (History.packed, (self.buffers, self.length, self._shape))

    def tree_flatten(self) -> tuple[tuple[Any, ...], Shape]:
        return (self.buffers, self.length), self._shape

    def tree_flatten_with_keys(self) -> tuple[tuple[Any, ...], Shape]:
        # paths read .buffers[i] and .length, as the attributes are named
        keys = (jax.tree_util.GetAttrKey("buffers"), jax.tree_util.GetAttrKey("length"))
        return tuple(zip(keys, (self.buffers, self.length), strict=True)), self._shape

    @classmethod
    def tree_unflatten(cls, shape: Shape, children: Sequence[Any]) -> History:
        # Any objects (tracers, shape structs, None, axis specs): nothing is computed here.
        buffers, length = children
        return cls.packed(buffers, length, shape)

    def __repr__(self) -> str:
        try:
            values = self.values
        except Exception:  # children that are no arrays (a tree_map to other objects)
            return f"History(buffers={self.buffers!r}, length={self.length!r})"
        return f"History(values={values!r}, length={self.length!r})"

    @property
    def values(self) -> PyTree:
        """Each recorded leaf, ``(..., max_steps + 1, *shape)``: its columns of `buffers`."""
        return self._each_buffer(lambda rows: rows, self._lead_rows())

    def _lead_rows(self) -> tuple[int, ...]:
        return (*np.shape(self.length), self.max_rows)

    def _each_buffer(
        self, fn: Callable[[jax.Array], jax.Array], lead: tuple[int, ...], moves: bool = True
    ) -> PyTree:
        """The record of ``fn`` of each buffer (results ``(*lead, width)``): one computation
        per buffer, not per leaf. A zero-size leaf, which has no buffer, gets zeros of what
        ``fn`` would give its values.

        ``fn`` takes any trailing axes (a buffer's width, a leaf's shape), the rows at axis
        `batch_ndim`. Where it only ``moves`` elements it gets narrow floats as bits, and its
        results are sliced as bits in any case (see `lanes.as_bits`)."""
        packing = self._shape.packing
        if moves:
            out = [fn(as_bits(b)) for b in self.buffers]
            dtypes = [b.dtype for b in self.buffers]
        else:
            out = [fn(b) for b in self.buffers]
            dtypes = [x.dtype for x in out]

        def zeros(shape: tuple[int, ...], dtype: Any) -> jax.Array:
            values = jax.ShapeDtypeStruct((*self._lead_rows(), *shape[len(lead) :]), dtype)
            made = jax.eval_shape(fn, values)
            return jnp.zeros(made.shape, made.dtype)

        leaves = packing.unpack([as_bits(x) for x in out], lead, zeros)
        leaves = [
            x if g < 0 else from_bits(x, dtypes[g])
            for x, g in zip(leaves, packing.groups, strict=True)
        ]
        return self._shape.treedef.unflatten(leaves)

    # ----------------------------------------------------------------- shape facts (static)
    @property
    def batch_ndim(self) -> int:
        """Number of leading lane axes (0 for a plain run, 1 under one ``jax.vmap``)."""
        return int(np.ndim(self.length))

    @property
    def max_rows(self) -> int:
        """The static row capacity, ``max_steps + 1``."""
        if self.buffers:
            return int(np.shape(self.buffers[0])[self.batch_ndim])
        return self._shape.rows

    # ------------------------------------------------------------------ in-jit helpers
    @property
    def mask(self) -> jax.Array:
        """Boolean ``(..., max_rows)``: True on the valid rows."""
        rows = jnp.arange(self.max_rows)
        return rows < jnp.expand_dims(self.length, -1)

    @property
    def steps(self) -> jax.Array:
        """Steps taken: ``length - 1``."""
        return self.length - 1

    def last(self) -> PyTree:
        """The last valid row (the record of the final carry), without slicing by a traced size."""
        idx = self.length - 1
        b = self.batch_ndim

        def take(rows: jax.Array) -> jax.Array:
            index = jnp.reshape(idx, idx.shape + (1,) * (rows.ndim - b))
            return jnp.take_along_axis(rows, index, axis=b).squeeze(b)

        return self._each_buffer(take, tuple(np.shape(self.length)))

    def tail(self, k: int) -> tuple[PyTree, jax.Array]:
        """The last ``k`` rows (``k`` static) and a mask of which of them are valid.

        Returns ``(rows, valid)``: leaves of shape ``(..., k, ...)`` ending at the last valid row,
        and ``valid`` of shape ``(..., k)``; when fewer than ``k`` rows exist the window starts
        at row 0 and the missing ones are marked invalid.

        Examples
        --------
        >>> import jax.numpy as jnp
        >>> from jaxhist_widget import History
        >>> h = History(jnp.array([4.0, 2.0, 1.0, jnp.nan]), jnp.int32(3))
        >>> rows, valid = h.tail(2)
        >>> rows.tolist(), valid.tolist()
        ([2.0, 1.0], [True, True])
        """
        try:
            if isinstance(k, (bool, jax.core.Tracer)):
                raise TypeError
            k = operator.index(k)  # 2.7 must not become a window of 2
        except TypeError:
            raise TypeError(
                f"tail(k) needs a static Python int k (a window size), got {k!r}."
            ) from None
        if not 0 < k <= self.max_rows:
            raise ValueError(f"tail(k) needs 0 < k <= max_rows={self.max_rows}, got k={k}.")
        if self.batch_ndim:
            return jax.vmap(lambda h: h.tail(k))(self)
        start = jnp.maximum(self.length - k, 0)

        def window(rows: jax.Array) -> jax.Array:
            return lax.dynamic_slice_in_dim(rows, start, k)

        rows = self._each_buffer(window, (k,))
        return rows, start + jnp.arange(k) < self.length

    def _reduce(self, fn: Callable[[jax.Array, jax.Array, int], jax.Array]) -> PyTree:
        """``fn(values, mask, row_axis)`` of every leaf, computed once per buffer."""
        b = self.batch_ndim
        mask = self.mask

        def one(rows: jax.Array) -> jax.Array:
            return fn(rows, mask.reshape(mask.shape + (1,) * (rows.ndim - b - 1)), b)

        return self._each_buffer(one, tuple(np.shape(self.length)), moves=False)

    def sum(self) -> PyTree:
        """Sum over the valid rows of every leaf (differentiable)."""
        return self._reduce(lambda x, m, ax: jnp.where(m, x, 0).sum(axis=ax))

    def mean(self) -> PyTree:
        """Mean over the valid rows of every leaf (differentiable)."""

        def mean(x: jax.Array, m: jax.Array, ax: int) -> jax.Array:
            n = m.sum(axis=ax)
            return jnp.where(m, x, 0).sum(axis=ax) / n

        return self._reduce(mean)

    def var(self) -> PyTree:
        """Population variance over the valid rows of every leaf (differentiable)."""

        def var(x: jax.Array, m: jax.Array, ax: int) -> jax.Array:
            n = m.sum(axis=ax)
            # Zero the fill rows *before* any arithmetic: a NaN that only a later `where` hides
            # still poisons the gradient (0 * NaN), the classic double-where pitfall.
            x = jnp.where(m, x, 0)
            mu = x.sum(axis=ax, keepdims=True) / jnp.expand_dims(n, ax)
            return jnp.where(m, (x - mu) ** 2, 0).sum(axis=ax) / n

        return self._reduce(var)

    def min(self) -> PyTree:
        """Minimum over the valid rows of every leaf (NaN/fill rows ignored)."""
        return self._reduce(lambda x, m, ax: jnp.where(m, x, _high(x.dtype)).min(axis=ax))

    def max(self) -> PyTree:
        """Maximum over the valid rows of every leaf (NaN/fill rows ignored)."""
        return self._reduce(lambda x, m, ax: jnp.where(m, x, _low(x.dtype)).max(axis=ax))

    def argmin(self) -> PyTree:
        """Row index of the minimum over the valid rows, per leaf (int32)."""
        return self._reduce(lambda x, m, ax: jnp.where(m, x, _high(x.dtype)).argmin(axis=ax))

    def argmax(self) -> PyTree:
        """Row index of the maximum over the valid rows, per leaf (int32)."""
        return self._reduce(lambda x, m, ax: jnp.where(m, x, _low(x.dtype)).argmax(axis=ax))

    # ---------------------------------------------------------------------- host side
    def to_numpy(self) -> PyTree | list[PyTree]:
        """The valid rows as numpy arrays, trimmed to exactly ``length`` rows.

        A batched (vmapped) History gives a list with one trimmed pytree per lane.

        Raises
        ------
        TypeError
            Inside ``jit``/``vmap`` (on tracers): trimming needs a concrete length; use
            `mask`, `last`, `tail` or the masked reductions there instead.
        """
        if isinstance(self.length, jax.core.Tracer):
            raise TypeError(
                "History.to_numpy() needs concrete values, but was called on tracers inside "
                "jit/vmap. Return the History from the jitted function and call to_numpy() "
                "outside, or use hist.mask / hist.last() / hist.tail(k) / hist.mean() inside."
            )
        length = np.asarray(self.length)
        # Read out of the buffers on the host (numpy views), not one device slice per leaf.
        buffers = [np.asarray(b) for b in self.buffers]
        leaves = self._shape.packing.unpack(buffers, self._lead_rows(), np.zeros)
        values = self._shape.treedef.unflatten(leaves)
        if length.ndim == 0:
            n = int(length)
            return jax.tree_util.tree_map(lambda v: _c_order(v[:n]), values)
        if length.ndim != 1:
            raise ValueError(
                f"to_numpy() supports one lane axis, got length of shape {length.shape}"
            )
        return [
            jax.tree_util.tree_map(lambda v, i=i, n=int(n): _c_order(v[i, :n]), values)
            for i, n in enumerate(length)
        ]

    def __getitem__(self, lane: int) -> History:
        """Lane ``lane`` of a batched (vmapped) History, as an unbatched History.

        Indexes like a list: negative lanes count from the end, and an out-of-range lane
        raises `IndexError` (so ``for lane in hist`` and ``list(hist)`` end).
        """
        if self.batch_ndim == 0:
            raise TypeError("This History is not batched; index a vmapped History by lane.")
        if isinstance(lane, bool):
            raise TypeError(f"History lanes are indexed by int, got {lane!r}.")
        try:
            i = operator.index(lane)
        except TypeError:
            raise TypeError(f"History lanes are indexed by int, got {lane!r}.") from None
        lanes = len(self)
        if not -lanes <= i < lanes:
            raise IndexError(f"lane {i} out of range for a History of {lanes} lanes.")
        i %= lanes  # JAX would clamp an out-of-range index silently; we checked it above
        return jax.tree_util.tree_map(lambda v: v[i], self)

    def __iter__(self) -> Iterator[History]:
        """The lanes of a batched History, in order."""
        if self.batch_ndim == 0:
            raise TypeError(
                "This History is not batched, so it has no lanes to iterate; for its rows use "
                "hist.to_numpy() (host) or hist.mask / hist.tail(k) (inside jit)."
            )
        return (self[i] for i in range(len(self)))

    def __len__(self) -> int:
        """Number of lanes of a batched History."""
        if self.batch_ndim == 0:
            raise TypeError("len() of an unbatched History is undefined; use int(hist.length).")
        return int(np.shape(self.length)[0])


#: Most elements of a leaf's row that shares a buffer with others; a larger leaf has its own.
#: Per buffer XLA compiles a fill, a row write and a window for the host, which is what many
#: small leaves (a metrics dict, a tree of scalars) cost. A large leaf is rarely one of many,
#: and is the kind a sharded computation shards: alone, its history stays sharded as the leaf
#: is, written in place on each device, with nothing gathered per step.
SHARED_MOST = 128


def buffer_keys(
    leaves: Sequence[Any], lead: int = 0, fixed: Callable[[Any], bool] | None = None
) -> list:
    """Which of ``leaves`` (a row each, after ``lead`` axes) may share a buffer, as
    `Packing.by_dtype` takes it: small ones of one dtype do (``fixed`` ones only among
    themselves); a large one, or one whose type says it is sharded (where a concatenation
    would be refused), has one of its own."""
    keys: list[Any] = []
    for i, x in enumerate(leaves):
        if math.prod(np.shape(x)[lead:]) > SHARED_MOST or devices.sharded(x):
            keys.append(("alone", i))
        else:
            keys.append("fixed" if fixed is not None and fixed(x) else None)
    return keys


def pack(packing: Packing, leaves: Sequence[jax.Array]) -> list[jax.Array]:
    """``leaves`` (each ``(*lead, size)``: a leaf's elements flattened) joined into their
    buffers' rows ``(*lead, width)``, as `packing` places them (zero-size leaves left out).

    Joined as bits (see `lanes.as_bits`): a float8 NaN keeps its payload. A buffer of one leaf
    is that leaf itself, with no join to compile.
    """
    out = []
    for g, dtype in enumerate(packing.buffer_dtypes):
        parts = [as_bits(leaves[i]) for i in packing.members(g)]
        # lax's own op: jnp's checks and promotions, per leaf, were most of a trace's time
        joined = parts[0] if len(parts) == 1 else lax.concatenate(parts, parts[0].ndim - 1)
        out.append(from_bits(joined, jnp.dtype(dtype)))
    return out


def _high(dtype: Any) -> jax.Array:
    """A value no valid row exceeds, typed (a bare Python int overflows for uint32): +inf, or
    the largest finite value where the dtype has no inf (float8_e4m3fn, float4_e2m1fn, ...:
    inf would become NaN there and poison `min`)."""
    if jnp.issubdtype(dtype, jnp.inexact):
        value = jnp.inf if _has_inf(dtype) else jnp.finfo(dtype).max
    else:
        value = ml_dtypes.iinfo(dtype).max if dtype != jnp.bool_ else True  # int4 too
    return jnp.asarray(value, dtype)


def _low(dtype: Any) -> jax.Array:
    if jnp.issubdtype(dtype, jnp.inexact):
        value = -jnp.inf if _has_inf(dtype) else jnp.finfo(dtype).min
    else:
        value = ml_dtypes.iinfo(dtype).min if dtype != jnp.bool_ else False
    return jnp.asarray(value, dtype)


def _has_inf(dtype: Any) -> bool:
    with np.errstate(all="ignore"):
        return bool(np.isinf(np.float32(np.array(np.inf).astype(jnp.dtype(dtype)))))


def _c_order(rows: np.ndarray) -> np.ndarray:
    """``rows`` C-contiguous, as numpy makes arrays: a TPU hands out an ``(n, 1)`` or a
    16-bit history in its own layout (columns first), whose ``view`` to bytes then fails."""
    return np.ascontiguousarray(rows)
