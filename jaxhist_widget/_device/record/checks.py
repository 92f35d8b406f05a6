"""Argument checks of `while_loop`: each raises what ``lax.while_loop`` would, or says how to fix
the call, at trace time.

Layer 1 (pure JAX). `check_cond` and `check_carry` also run inside the loop's step, on what the
user's functions return; `store_dtype` turns a recorded leaf into what the history stores.
"""

from __future__ import annotations

import numbers
import operator
from typing import Any, cast

import jax
import jax.numpy as jnp
import numpy as np

from .sizes import DEFAULT_WARN_BYTES

__all__ = [
    "check_carry",
    "check_cond",
    "check_every",
    "check_functions",
    "check_max_steps",
    "check_record",
    "check_stream",
    "check_warn_bytes",
    "store_dtype",
]


def check_functions(cond_fun: Any, body_fun: Any) -> None:
    if not callable(cond_fun) or not callable(body_fun):
        raise TypeError(
            "cond_fun and body_fun must be callables (carry -> bool scalar, carry -> carry), "
            f"got {cond_fun!r} and {body_fun!r}."
        )


def check_record(record: Any) -> None:
    if record is not None and not callable(record):
        raise TypeError(f"record must be a callable carry -> pytree of arrays, got {record!r}.")


def check_max_steps(max_steps: Any) -> int:
    if isinstance(max_steps, jax.core.Tracer):
        raise TypeError(
            "max_steps must be a static Python int, but got a traced value. It sizes the history "
            "buffer, so under jax.jit mark it static, e.g. "
            "jax.jit(f, static_argnames=('max_steps',))."
        )
    if isinstance(max_steps, (bool, np.bool_)):
        raise TypeError(f"max_steps must be a Python int > 0, got {max_steps!r}.")
    try:
        steps = operator.index(max_steps)
    except TypeError:
        raise TypeError(f"max_steps must be a Python int, got {max_steps!r}.") from None
    if steps <= 0:
        raise ValueError(f"max_steps must be > 0, got {steps}.")
    return steps


def check_every(stream_every: Any) -> int | None:
    if isinstance(stream_every, (bool, np.bool_)):
        raise TypeError(f"stream_every must be 'auto' or an int >= 1, got {stream_every!r}.")
    if isinstance(stream_every, str):
        if stream_every != "auto":
            raise ValueError(f"stream_every must be 'auto' or an int >= 1, got {stream_every!r}.")
        return None
    try:
        every = operator.index(stream_every)
    except TypeError:
        raise TypeError(
            f"stream_every must be 'auto' or an int >= 1, got {stream_every!r}."
        ) from None
    if every < 1:
        raise ValueError(f"stream_every must be 'auto' or an int >= 1, got {every}.")
    return every


def check_stream(stream: Any) -> bool:
    if not isinstance(stream, (bool, np.bool_)):
        raise TypeError(
            f"stream must be True or False (a static Python bool), got {stream!r}; "
            "stream=False records on the device only and makes no host calls."
        )
    return bool(stream)


def check_warn_bytes(warn_bytes: Any) -> int | float | None:
    if warn_bytes is None:
        return None
    if isinstance(warn_bytes, (bool, np.bool_)) or not isinstance(warn_bytes, numbers.Real):
        raise TypeError(
            f"warn_bytes must be a number of bytes (e.g. 2 << 30, or math.inf to never warn) "
            f"or None for the default {DEFAULT_WARN_BYTES:,}, got {warn_bytes!r}."
        )
    if warn_bytes < 0:
        raise ValueError(f"warn_bytes must be >= 0, got {warn_bytes!r}.")
    # A numbers.Real (int, float, a NumPy scalar), only compared and formatted: as a float is.
    return cast(float, warn_bytes)


def check_cond(pred: Any) -> jax.Array:
    if pred is None:
        raise TypeError(
            "cond_fun must return a boolean scalar, but it returned None (is a `return` missing?)."
        )
    tree = jax.tree_util.tree_structure(pred)
    if not jax.tree_util.treedef_is_leaf(tree):
        # As lax.while_loop says it: a tuple or list is a pytree, not an array to reduce.
        raise TypeError(f"cond_fun must return a boolean scalar, but got pytree {tree}.")
    pred = jnp.asarray(pred)
    if pred.shape != ():
        raise TypeError(
            f"cond_fun must return a boolean scalar, got shape {pred.shape}; reduce it, "
            "e.g. with jnp.all(...) or jnp.any(...)."
        )
    if pred.dtype != jnp.bool_:
        # As in lax.while_loop: a float condition has no safe truth value (NaN would run to
        # max_steps), so it is an error rather than a silent cast.
        raise TypeError(
            f"cond_fun must return a boolean scalar, got {pred.dtype}; compare explicitly, "
            "e.g. `x > tol` or `n != 0`."
        )
    return pred


def check_carry(init: Any, out: Any, fun: str = "body_fun", arg: str = "init_val") -> Any:
    """``out`` (leaves as arrays) if it has ``init``'s structure, shapes and dtypes; else a
    TypeError naming each leaf that differs (``fun`` made ``out`` from ``arg``, ``init``).

    A weak type difference is not one, nor is another dtype for a weakly typed ``init`` leaf
    (a Python scalar) that promotes to it: `carry.prepare` gives that leaf the body's dtype.
    """
    in_tree = jax.tree_util.tree_structure(init)
    out_leaves, out_tree = jax.tree_util.tree_flatten(out)
    # Structures are compared as `tree_flatten` gives them: the treedef of
    # `tree_flatten_with_path` holds a custom node's `flatten_with_keys` aux data, which JAX
    # allows to differ from its `flatten` aux data.
    # jaxlib ships no stub for its PyTreeDef, so jax's annotations name an unresolved type.
    if out_tree != in_tree:  # type: ignore[operator]
        raise TypeError(
            f"{fun} must return a carry with the structure of {arg}, but {arg} is "
            f"{in_tree} and {fun} returned {out_tree}."
        )
    out_leaves = [jnp.asarray(x) for x in out_leaves]
    in_leaves = jax.tree_util.tree_leaves(init)
    differ = [
        jnp.shape(a) != b.shape or (jnp.result_type(a) != b.dtype and not _promotes(a, b))
        for a, b in zip(in_leaves, out_leaves, strict=True)
    ]
    if any(differ):
        paths = [p for p, _ in jax.tree_util.tree_flatten_with_path(init)[0]]
        diffs = [
            f"{arg}{jax.tree_util.keystr(path)} is {_aval(a)} but {fun} returned {_aval(b)}"
            for path, a, b, d in zip(paths, in_leaves, out_leaves, differ, strict=True)
            if d
        ]
        raise TypeError(
            f"{fun} must return a carry with the same shapes and dtypes as {arg}: "
            + "; ".join(diffs)
            + f". Make them match, e.g. with .astype(...) in {fun} or a matching {arg}."
        )
    return jax.tree_util.tree_unflatten(out_tree, out_leaves)


def _promotes(a: Any, b: jax.Array) -> bool:
    """Whether a weakly typed ``a`` takes ``b``'s dtype (as ``lax.while_loop`` promotes it)."""
    return jax.typeof(a).weak_type and jnp.result_type(a, b.dtype) == b.dtype


def _aval(x: Any) -> str:
    return f"{jnp.result_type(x)}{list(jnp.shape(x))}"


def store_dtype(x: jax.Array, dtype: Any) -> jax.Array:
    """The array stored for one recorded leaf (``dtype=`` applied to floating leaves)."""
    if dtype is not None:
        _check_storage_dtype(dtype)
    if jnp.issubdtype(x.dtype, jax.dtypes.prng_key):
        # A typed key has no numeric dtype to store or stream: keep its raw key data (uint32),
        # which `jax.random.wrap_key_data` turns back into the same keys.
        x = jax.random.key_data(x)
    if jnp.iscomplexobj(x):
        raise TypeError(
            "complex leaves cannot be recorded; record their real and imaginary parts, "
            "e.g. record=lambda c: (c.real, c.imag)."
        )
    if dtype is not None and jnp.issubdtype(x.dtype, jnp.floating):
        return x.astype(dtype)
    return x


def _check_storage_dtype(dtype: Any) -> None:
    try:
        dt = jnp.dtype(dtype)
    except TypeError:
        dt = None
    if dt is None or not jnp.issubdtype(dt, jnp.floating):
        # A cast to an integer or bool type would silently truncate every float leaf.
        raise TypeError(
            f"dtype= sets the storage dtype of floating leaves and must be a floating dtype "
            f"(e.g. jnp.bfloat16, jnp.float16, jnp.float8_e4m3fn), got {dtype!r}. To store "
            "something else, convert it in record=, e.g. record=lambda c: c.astype(jnp.int8)."
        )


#: Element types a TPU up to v5 cannot move bit-exactly (checked on a v5e): it has no float8 or
#: float4 storage (a row written into the history comes back changed: large values as inf,
#: NaN signs lost) and no arrays of 2-bit integers ("INT2 is not supported for rank 1").
_NOT_ON_OLD_TPUS = ("float8_", "float4_", "int2", "uint2")


def check_chip_dtypes(leaves: list[jax.Array], names: tuple[str, ...]) -> None:
    """Refuse, at trace time, a recorded leaf whose type the chip cannot store exactly, where
    JAX's default backend is a TPU up to v5: a history of it would hold wrong rows."""
    if jax.default_backend() != "tpu" or not _old_tpu():
        return
    for x, name in zip(leaves, names, strict=True):
        dtype = jnp.dtype(x.dtype).name
        if not dtype.startswith(_NOT_ON_OLD_TPUS):
            continue
        if "int" in dtype:
            fix = "Record it as int8 (x.astype(jnp.int8)) in record=."
        else:
            bits = "uint8" if dtype.startswith("float8") else "uint4"
            fix = (
                "Record it wider (x.astype(jnp.bfloat16)) or as its bits "
                f"(jax.lax.bitcast_convert_type(x, jnp.{bits})) in record=, or pass dtype= a "
                "wider float."
            )
        raise TypeError(
            f"recorded leaf {name!r} has dtype {dtype}, which this TPU "
            f"({jax.devices()[0].device_kind}) cannot store exactly: its rows would come back "
            f"changed. {fix}"
        )


def _old_tpu() -> bool:
    kind = jax.devices()[0].device_kind.lower()
    return any(f"v{k}" in kind for k in range(2, 6))
