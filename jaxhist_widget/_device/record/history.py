"""`History`: the fixed-shape, on-device record of a loop, and its in-jit helpers.

Layer 1 (pure JAX): imports nothing from the host or widget layers.

Every leaf of ``History.values`` has a leading row axis of static size ``max_steps + 1``;
``History.length`` counts the valid rows. Traced code cannot slice by a traced size, so every
helper here works with a mask (``arange(rows) < length``) instead; they are jit-, vmap- and
grad-friendly. Only `History.to_numpy` trims, and only on concrete (host) values.

Rows past ``length`` repeat row 0 (see `History`), never NaN: a value ``record`` itself
produced, so ``f(values)`` stays finite on them for any ``f`` that is finite on the real rows,
and a gradient through a masked reduction (zero cotangent on those rows) stays finite too.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable, Iterator
from typing import Any

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np

from ..parallel import as_bits, from_bits

__all__ = ["History"]

PyTree = Any


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class History:
    """The recorded rows of one `jaxhist_widget.while_loop` run.

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
    """

    values: PyTree
    length: jax.Array

    # ----------------------------------------------------------------- shape facts (static)
    @property
    def batch_ndim(self) -> int:
        """Number of leading lane axes (0 for a plain run, 1 under one ``jax.vmap``)."""
        return int(np.ndim(self.length))

    @property
    def max_rows(self) -> int:
        """The static row capacity, ``max_steps + 1``."""
        leaf = jax.tree_util.tree_leaves(self.values)[0]
        return int(leaf.shape[self.batch_ndim])

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

        def take(leaf: jax.Array) -> jax.Array:
            b = self.batch_ndim
            index = jnp.reshape(idx, idx.shape + (1,) * (leaf.ndim - b))
            # taken as bits: a float8 NaN keeps its payload (see `lanes.as_bits`)
            row = jnp.take_along_axis(as_bits(leaf), index, axis=b).squeeze(b)
            return from_bits(row, leaf.dtype)

        return jax.tree_util.tree_map(take, self.values)

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

        def window(leaf: jax.Array) -> jax.Array:
            # sliced as bits: a float8 NaN keeps its payload (see `lanes.as_bits`)
            return from_bits(jax.lax.dynamic_slice_in_dim(as_bits(leaf), start, k), leaf.dtype)

        rows = jax.tree_util.tree_map(window, self.values)
        return rows, start + jnp.arange(k) < self.length

    def _reduce(self, fn: Callable[[jax.Array, jax.Array, int], jax.Array]) -> PyTree:
        b = self.batch_ndim

        def one(leaf: jax.Array) -> jax.Array:
            m = self.mask.reshape(self.mask.shape + (1,) * (leaf.ndim - b - 1))
            return fn(leaf, m, b)

        return jax.tree_util.tree_map(one, self.values)

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
        values = jax.tree_util.tree_map(np.asarray, self.values)
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
