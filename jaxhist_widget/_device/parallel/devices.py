"""Several devices: where one loop runs on many, and the host calls that must still work there.

Layer 1 (pure JAX), used by the loop and by `streaming`:

- Sharded ``jax.jit`` (GSPMD): the partitioner runs each host call on device 0 after gathering
  its operands there, and broadcasts the answer; the rows arrive once, in one run.
- ``shard_map`` / ``pmap`` (manual axes): every device runs the loop on its own lanes. The run is
  opened on the first device and its id broadcast (`on_first_device`); each flush gathers every
  device's lanes (device order) so that the first device makes one host call for all of them;
  the chunk loop ends when every device is done (`any_device`), as collectives need every
  device to take part, and the loop's bookkeeping varies per device as the carry does (`vary`).
- Any multi-device CPU computation: host-call arguments are cut into pieces (`host_args`).
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.custom_batching import custom_vmap

from ..._wire import Layout

__all__ = [
    "accelerated",
    "any_device",
    "check_mesh",
    "host_args",
    "joined",
    "manual_axes",
    "manual_devices",
    "min_device",
    "on_first_device",
    "on_tpu",
    "sharded",
    "unsharded",
    "vary",
]

#: Largest host-call argument, in uint32 words (96 KiB); see `_pieces`.
_PIECE_WORDS = 24 * 1024


def any_device(pred: jax.Array, axes: tuple | None = None) -> jax.Array:
    """``pred``, or'ed over every device of ``axes`` (default: the enclosing ``shard_map`` /
    ``pmap``'s, if any).

    The chunk loop's predicate: each chunk's flush holds collectives, so every device keeps
    running chunks (with nothing left to do) until all devices are done.
    """
    axes = manual_axes() if axes is None else axes
    return lax.psum(pred.astype(jnp.int32), axes) > 0 if axes else pred


def min_device(x: jax.Array, axes: tuple | None = None) -> jax.Array:
    """``x``, its minimum over every device of ``axes`` (default: as `any_device`)."""
    axes = manual_axes() if axes is None else axes
    return lax.pmin(x, axes) if axes else x


def vary(state: Any, carry: Any, like: Any) -> tuple[Any, Any]:
    """Under ``shard_map``: ``state`` (and, under vmap, ``carry``) varying like ``like``.

    A loop carry must keep its type, the device-varying axes included. The loop's bookkeeping
    (row counts, end flags, history buffers) follows the user's carry and condition, which may
    vary per device, so its initial values are made varying over every manual axis that any
    leaf of ``like`` varies over. Under vmap the loop also masks the user's carry with a
    per-lane (so possibly varying) flag, so the carry is promoted too; unbatched it is left
    as is, as ``lax.while_loop`` would. Outside ``shard_map``/``pmap`` nothing changes.
    """
    axes = manual_axes()
    if not axes:
        return state, carry
    leaves = jax.tree_util.tree_leaves(like)
    have = set().union(*(_varying(x) for x in leaves))
    want = tuple(a for a in axes if a in have)
    if not want:
        return state, carry
    promote = functools.partial(jax.tree_util.tree_map, lambda x: _vary(x, want))
    return promote(state), promote(carry) if any(map(_batched, leaves)) else carry


def _varying(x: Any) -> frozenset:
    manual = getattr(jax.typeof(x), "manual_axis_type", None)
    return frozenset(getattr(manual, "varying", ()))


def _vary(x: jax.Array, axes: tuple) -> jax.Array:
    missing = tuple(a for a in axes if a not in _varying(x))
    return lax.pcast(x, missing, to="varying") if missing else x


def _batched(x: Any) -> bool:
    """Whether ``x`` is batched by an enclosing vmap (seen at trace time, leaves no op)."""
    seen = []

    @custom_vmap
    def probe(x):
        return x

    @probe.def_vmap
    def rule(axis_size, in_batched, x):
        seen.append(in_batched[0])
        return x, in_batched[0]

    probe(x)
    return any(seen)


def accelerated() -> bool:
    """Whether the code being traced is for an accelerator (a TPU, a GPU): JAX's default
    backend, the one a ``jax.jit`` with no device given compiles for."""
    return jax.default_backend() != "cpu"


def on_tpu() -> bool:
    """Whether the code being traced is for a TPU (JAX's default backend, as `accelerated`)."""
    return jax.default_backend() == "tpu"


def manual_devices() -> int:
    """How many devices run the code being traced side by side (shard_map, pmap); else 1."""
    mesh = jax.sharding.get_abstract_mesh()
    return int(np.prod([mesh.shape[a] for a in mesh.manual_axes], dtype=np.int64))


def unsharded(x: jax.Array) -> jax.Array:
    """``x`` replicated if it is sharded over explicit mesh axes (``jax.make_mesh``'s default).

    Explicit sharding is part of the type, and JAX refuses to reshape or slice a sharded axis
    that the result does not divide; a host call needs the whole array anyway. Under automatic
    (GSPMD) or manual sharding the type has no such axes and nothing changes.
    """
    if not sharded(x):
        return x
    return jax.sharding.reshard(x, jax.sharding.PartitionSpec())


def sharded(x: jax.Array) -> bool:
    """Whether ``x``'s type says it is sharded over explicit mesh axes (under automatic
    sharding, XLA decides later: the type does not say)."""
    return any(p is not None for p in getattr(jax.typeof(x).sharding, "spec", ()))


def check_mesh() -> None:
    """Refuse, at trace time, the one layout of devices where JAX allows no host callback."""
    mesh = jax.sharding.get_abstract_mesh()
    manual = set(mesh.manual_axes)
    auto = [a for a in mesh.axis_names if a not in manual and mesh.shape[a] > 1]
    if manual and auto:
        raise NotImplementedError(
            "jaxhist_widget.while_loop cannot stream inside a shard_map that leaves mesh axes "
            f"{auto} automatic (axis_names={sorted(manual)}): JAX supports host callbacks only "
            "when every mesh axis is manual. Pass stream=False (the History is still recorded "
            "on the device), or make every axis manual (omit axis_names)."
        )


def manual_axes() -> tuple:
    """The mesh axes the code being traced runs per device on (shard_map, pmap); () if none."""
    return tuple(jax.sharding.get_abstract_mesh().manual_axes)


def on_first_device(pred, fun, otherwise, *operands, axes: tuple):
    """``cond(pred, fun, otherwise, *operands)``, run only by the first device of ``axes``.

    Under ``shard_map`` / ``pmap`` every device would make the host call; here only the first
    does, and its answer (int32 ``[2]``) is broadcast to all with a ``psum`` placed *outside*
    the conditional, so every device reaches that collective whatever the predicate.
    """
    if not axes:
        if _explicit_mesh():
            # Under a mesh with explicit axes (jax.set_mesh), XLA's verifier rejects a `cond`
            # with a host call in one branch (its result is on device 0, the other branch's
            # replicated), so the call is made every time and its answer ignored if not needed.
            # This costs one host call per run when nobody listens (one flush); otherwise
            # flushes only happen with rows to send.
            return jnp.where(pred, fun(*operands), otherwise(*operands))
        return lax.cond(pred, fun, otherwise, *operands)
    first = lax.axis_index(axes) == 0
    out = lax.cond(pred & first, fun, otherwise, *operands)
    return lax.psum(jnp.where(first, out, 0), axes)


def _explicit_mesh() -> bool:
    """Whether the code being traced runs under a mesh with explicit axes (``jax.set_mesh``)."""
    mesh = jax.sharding.get_abstract_mesh()
    return any(t == jax.sharding.AxisType.Explicit for t in getattr(mesh, "axis_types", ()))


def _pieces(part: jax.Array) -> list[jax.Array]:
    """``part`` (one host-call argument) cut into arguments of at most `_PIECE_WORDS` words.

    JAX hands a host callback its arguments as arrays copied onto a CPU device. The CPU client
    copies an argument of 100 KiB or more asynchronously, on the thread pool that also runs the
    devices of a multi-device CPU computation. When those devices wait in a collective for the
    device that runs the callback (GSPMD broadcasts the callback's result; shard_map waits in
    the next psum), the copy never runs: a deadlock that XLA ends by aborting the process after
    40 s. Smaller arguments are copied inline. One device (or GPUs) needs no cutting.
    """
    # in elements: a 64-bit leaf's window travels as it is, two words an element
    most = max(1, _PIECE_WORDS * 4 // part.dtype.itemsize)
    if part.size <= most or not _several_cpu_devices():
        return [part]
    flat = part.reshape(-1)  # a window comes as (lanes, rows, ...); `joined` gives it flat
    return [flat[i : i + most] for i in range(0, flat.size, most)]


def _several_cpu_devices() -> bool:
    try:
        return len(jax.devices("cpu")) > 1
    except RuntimeError:  # no CPU backend
        return False


def host_args(parts: list[jax.Array]) -> tuple[tuple[int, ...], list[jax.Array]]:
    """The host-call arguments for ``parts``, and how many pieces each part was cut into."""
    cut = [_pieces(p) for p in parts]
    return tuple(map(len, cut)), [piece for pieces in cut for piece in pieces]


def joined(fun, layout: Layout, counts: tuple[int, ...], *pieces):
    """Host side of `host_args`: ``fun(layout, *parts)`` with each part's pieces joined again."""
    if len(pieces) == len(counts):
        return fun(layout, *pieces)
    parts, at = [], 0
    for n in counts:
        group = pieces[at : at + n]
        parts.append(group[0] if n == 1 else np.concatenate([np.asarray(p) for p in group]))
        at += n
    return fun(layout, *parts)
