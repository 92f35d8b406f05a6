"""The eager cache of the loops: an un-traced call runs a ``jax.jit`` of the loop, compiled
once per (functions, static options), as ``lax.while_loop`` and ``lax.scan`` cache theirs.

`while_loop` and `scan` both go through `cached`; inside a trace nothing is cached.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax

__all__ = ["cached"]


def cached(loop: Callable, funs: tuple[Callable, ...], options: dict[str, Any]) -> Callable | None:
    """A cached ``jax.jit`` of ``functools.partial(loop, *funs, **options)`` for an eager
    (un-traced) call, or None inside a trace.

    Keyed on the identity of the callables and the static options, like ``lax.while_loop``'s
    own cache: a function that reads a global changed since its first call is not retraced.
    Streaming still reaches the sinks attached at each call, since the run id is asked for
    at run time. Inside jit/vmap/grad nothing is cached: the enclosing trace owns the caching,
    and the callables may close over its tracers.
    """
    # jax < 0.12 declares no __getattr__ for its flags (Config sets them at run time).
    if not _trace_state_clean() or jax.config.jax_disable_jit:  # type: ignore[attr-defined]
        return None
    key = (loop, funs, *sorted(options.items()))
    try:
        hash(key)
    except TypeError:  # an unhashable callable or option: run uncached
        return None
    return _jitted(key)


@functools.lru_cache(maxsize=64)
def _jitted(key: tuple) -> Callable[..., Any]:
    """The loop compiled once per (functions, static options), like jit (thread-safe)."""
    loop, funs, *options = key
    return jax.jit(functools.partial(loop, *funs, **dict(options)))


def _trace_state_clean() -> bool:
    """True outside every JAX transformation (jit, vmap, grad, ...)."""
    try:
        from jax._src.core import trace_state_clean
    except ImportError:  # pragma: no cover - private API moved: stay correct, just uncached
        return False
    return trace_state_clean()
