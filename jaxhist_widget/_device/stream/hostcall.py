"""A pure host call that hands the host numpy arrays: `jax.pure_callback` minus one conversion.

Layer 1 (pure JAX). `jax.pure_callback` turns every argument into a `jax.Array` on the CPU device
(``device_put``) before calling the host function. Inside a running loop on CPU that conversion
is most of a call's cost (docs/performance.md has the numbers), and a streaming loop
makes one call per chunk. `call` lowers to the same XLA custom call as `jax.pure_callback` (same
sharding: once, on device 0, under automatic sharding; per device under ``shard_map``), but
hands the host function the numpy arrays XLA gives it. It is built on JAX internals
(``jax._src.callback``); where they are missing or their signatures differ from the ones it was
written for, `call` is `jax.pure_callback`.

Only for the registry's entry points: arguments never batched (the callers' ``custom_vmap``
rules make one call for all lanes) and never differentiated (``stop_gradient``).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import jax
import numpy as np

__all__ = ["call"]


def call(fun: Callable[..., np.ndarray], result: jax.ShapeDtypeStruct, *args: jax.Array):
    """``fun(*numpy_args)`` on the host, as a pure computation returning ``result``'s shape.

    ``fun`` must be hashable (a module function or a `functools.partial` of one): like any
    primitive parameter, it is part of the jit cache key.
    """
    if _host_call_p is None:
        return jax.pure_callback(fun, result, *args, vmap_method="sequential")
    (out,) = _host_call_p.bind(*args, fun=_Fun(fun), result=result)
    return out


class _Fun:
    """``fun`` as a primitive parameter: hashed and compared by ``fun``, results as a tuple."""

    def __init__(self, fun: Callable[..., np.ndarray]) -> None:
        self.fun = fun

    def __call__(self, *args: np.ndarray) -> tuple[np.ndarray]:
        return (self.fun(*args),)

    def __hash__(self) -> int:
        return hash(self.fun)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Fun) and self.fun == other.fun


def _make_primitive() -> Any:
    """The primitive, or None where JAX's internals are not the ones this was written for."""
    try:
        from jax._src import core, dispatch
        from jax._src.callback import _callback_op_sharding, emit_python_callback
        from jax._src.interpreters import batching, mlir
    except ImportError:  # pragma: no cover - another JAX version: the public path
        return None
    # The internals this was written against (jax 0.10): other signatures, the public path.
    expected: dict[Callable[..., Any], list[str]] = {
        emit_python_callback: [
            "ctx", "callback", "token", "operands", "operand_avals", "result_avals",
            "has_side_effect", "returns_token", "partitioned", "sharding",
        ],
        _callback_op_sharding: ["axis_context", "sharding", "avals_out"],
    }  # fmt: skip
    for fn, names in expected.items():
        if list(inspect.signature(fn).parameters) != names:  # pragma: no cover
            return None

    p = core.Primitive("jaxhist_host_call")
    p.multiple_results = True
    p.def_impl(functools.partial(dispatch.apply_primitive, p))

    @p.def_abstract_eval
    def _abstract(*avals, fun, result):
        return [core.ShapedArray(result.shape, result.dtype)]

    def _lower(ctx, *operands, fun, result):
        # As JAX lowers pure_callback, with `fun` called on the operands as XLA gives them.
        sharding = _callback_op_sharding(ctx.module_context.axis_context, None, ctx.avals_out)
        outs, _, _ = emit_python_callback(
            ctx,
            fun,
            None,
            list(operands),
            ctx.avals_in,
            ctx.avals_out,
            has_side_effect=False,
            returns_token=False,
            sharding=sharding,
        )
        return outs

    def _batch(args, dims, *, fun, result):
        # One call per lane, in order (pure_callback's vmap_method="sequential"): only reached
        # under a vmap of a vmap, which the flush then refuses with a clear error.
        size = next(a.shape[d] for a, d in zip(args, dims, strict=True) if d is not None)
        args = [
            jax.numpy.broadcast_to(a, (size, *a.shape))
            if d is None
            else jax.numpy.moveaxis(a, d, 0)
            for a, d in zip(args, dims, strict=True)
        ]
        outs = jax.lax.map(lambda xs: p.bind(*xs, fun=fun, result=result), args)
        return outs, [0]

    batching.primitive_batchers[p] = _batch
    mlir.register_lowering(p, _lower, cacheable=False)
    return p


_host_call_p = _make_primitive()
