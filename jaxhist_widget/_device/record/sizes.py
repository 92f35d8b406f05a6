"""How large the device history may grow before `while_loop` warns (`HistorySizeWarning`).

Layer 1 (pure JAX). The loop sees one lane's buffers at trace time (`warn_if_large`); how many
vmap lanes share them shows only in a batching rule (`warn_lanes`).
"""

from __future__ import annotations

import warnings
from typing import Any

import jax
from jax.custom_batching import custom_vmap

__all__ = ["DEFAULT_WARN_BYTES", "HistorySizeWarning", "warn_if_large", "warn_lanes"]

#: A trace-time warning is issued when the device history would be larger than this.
DEFAULT_WARN_BYTES = 1 << 30


class HistorySizeWarning(UserWarning):
    """The device history of a `while_loop` is larger than ``warn_bytes``.

    A `UserWarning`, not a `ResourceWarning`: Python hides those by default, and this one is
    meant to be seen before the allocation fails.
    """


def warn_if_large(bufs: list[jax.Array], warn_bytes: int | float | None) -> int | None:
    """Warn if ``bufs`` exceed the threshold; else return their bytes (for `warn_lanes`)."""
    nbytes = sum(b.size * b.dtype.itemsize for b in bufs)
    if _size_warning(nbytes, warn_bytes, lanes=1, stacklevel=4):
        return None
    return nbytes


def _size_warning(nbytes: int, warn_bytes: int | float | None, lanes: int, stacklevel: int) -> bool:
    """Warn if ``lanes`` lanes of ``nbytes`` each exceed the threshold; True if it warned."""
    limit = DEFAULT_WARN_BYTES if warn_bytes is None else warn_bytes
    total = nbytes * lanes
    if total <= limit:
        return False
    where = f": {lanes:,} vmap lanes of {nbytes:,} bytes" if lanes > 1 else ""
    warnings.warn(
        f"jaxhist_widget.while_loop: the device history takes {total:,} bytes "
        f"({total / 2**30:.2f} GiB{where}), over the {limit:,}-byte threshold. Record less "
        "with record=lambda c: {...}, store floats in a smaller dtype (dtype=jnp.bfloat16), "
        "lower max_steps or use fewer lanes; raise warn_bytes to silence this.",
        HistorySizeWarning,
        stacklevel=stacklevel,
    )
    return True


def warn_lanes(nbytes: int, warn_bytes: int | float | None, probe: Any, lanes: int = 1) -> None:
    """Warn once the vmap lanes are known, if all lanes together exceed the threshold.

    At trace time the loop only sees one lane's shapes; the batching rule of this identity
    on ``probe`` (the row count and the buffers: one is batched whenever the loop is) is where
    ``axis_size`` shows.
    Nested vmaps multiply: the rule's own call is batched again by the enclosing vmap. The
    identity's output is unused, so it leaves no trace in the compiled program.
    """

    @custom_vmap
    def lanes_probe(x: jax.Array) -> jax.Array:
        return x

    @lanes_probe.def_vmap
    def rule(axis_size, in_batched, x):
        total = lanes * axis_size
        if not _size_warning(nbytes, warn_bytes, lanes=total, stacklevel=2):
            warn_lanes(nbytes, warn_bytes, x, total)
        return x, in_batched[0]

    lanes_probe(probe)
