"""`while_loop`: ``lax.while_loop`` that also records every step.

Layer 1 (pure JAX). The history lives in the loop carry as fixed-shape buffers (one row per step,
``max_steps + 1`` rows); streaming to the host is a chunk flush per ``every`` rows, built in
`jaxhist_widget.streaming`.
"""

from __future__ import annotations

import collections
import functools
import numbers
import operator
import threading
import warnings
from collections.abc import Callable
from typing import Any, Literal, NamedTuple, TypeVar

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.custom_batching import custom_vmap

from . import lanes, streaming
from .history import History
from .runs import Layout, window_rows

__all__ = ["DEFAULT_WARN_BYTES", "HistorySizeWarning", "while_loop"]

Carry = TypeVar("Carry")

#: A trace-time warning is issued when the device history would be larger than this.
DEFAULT_WARN_BYTES = 1 << 30


class HistorySizeWarning(UserWarning):
    """The device history of a `while_loop` is larger than ``warn_bytes``.

    A `UserWarning`, not a `ResourceWarning`: Python hides those by default, and this one is
    meant to be seen before the allocation fails.
    """


# End status codes sent to the host (index into runs.STATUSES).
_CONVERGED, _MAX_STEPS, _STOPPED = 1, 2, 3


class _State(NamedTuple):
    carry: Any
    bufs: list[jax.Array]
    n: jax.Array  # valid rows (steps + 1)
    done: jax.Array  # set at the end of the chunk in which a lane ended
    status: jax.Array
    flushed: jax.Array  # rows already sent to the host
    every: jax.Array  # rows per chunk (host-adapted; NEVER when nobody listens)
    cont: jax.Array  # cond_fun(carry): computed once, right after the body made the carry
    over: jax.Array  # no lane runs on (streaming: the chunk loop's predicate, never batched)


def while_loop(
    cond_fun: Callable[[Carry], Any],
    body_fun: Callable[[Carry], Carry],
    init_val: Carry,
    *,
    max_steps: int,
    record: Callable[[Carry], Any] | None = None,
    stream: bool = True,
    stream_every: int | Literal["auto"] = "auto",
    dtype: Any = None,
    warn_bytes: int | None = None,
) -> tuple[Carry, History]:
    """Run ``body_fun`` while ``cond_fun`` holds, at most ``max_steps`` times, recording each step.

    A drop-in for ``jax.lax.while_loop`` that returns ``(final_carry, history)``. Works eagerly,
    under ``jax.jit`` and under ``jax.vmap``.

    Parameters
    ----------
    cond_fun
        ``carry -> bool scalar``; the loop continues while it is True.
    body_fun
        ``carry -> carry`` (same structure, shapes and dtypes).
    init_val
        The initial carry.
    max_steps
        Python int > 0, the static cap on steps; it sizes the device history
        (``max_steps + 1`` rows). Under ``jax.jit`` mark it static (``static_argnames``).
    record
        ``carry -> pytree of arrays``: what to keep each step (default: the whole carry).
        A typed PRNG key (``jax.random.key``) is kept as its key data (uint32,
        ``jax.random.wrap_key_data`` turns it back); every other real dtype JAX has, float8,
        float4 and int4 included, is kept and streamed as is.
    stream
        Send rows to the host sinks attached at call time (`Recorder`, `LivePlot`). With False
        the loop makes no host calls at all (and cannot be stopped from the host).
    stream_every
        ``"auto"``: adapt the flush interval so rows reach the host every ~50 ms at negligible
        cost; an int: flush every that many rows.
    dtype
        Storage dtype for floating leaves (e.g. ``jnp.bfloat16`` halves the memory of float32);
        a floating dtype (an integer one would truncate them; convert in ``record`` instead).
    warn_bytes
        Warn (`HistorySizeWarning`) at trace time if the device history, all vmap lanes
        together, exceeds this many bytes (default 1 GiB).

    Returns
    -------
    final, history
        The final carry, and a `History` whose ``values`` has ``record``'s structure with a
        leading axis of ``max_steps + 1`` rows, of which ``history.length`` are valid.

    Notes
    -----
    As in ``lax.while_loop``: ``init_val`` leaves may be Python scalars (a weakly typed leaf
    takes the dtype ``body_fun`` gives it), ``cond_fun`` runs once per step (plus once on
    ``init_val``), and forward-mode autodiff (``jax.jvp``, ``jax.jacfwd``) works, the History
    included; the streamed rows carry no tangents. Eager calls compile once per
    (``cond_fun``, ``body_fun``, ``record``, static options) and are cached on the identity of
    the functions, so a function that reads a global changed since is not retraced (the same
    holds for ``lax.while_loop``).

    Examples
    --------
    >>> import jax
    >>> import jaxhist_widget as jhw
    >>> solve = jax.jit(
    ...     lambda x: jhw.while_loop(lambda x: x > 1.0, lambda x: x / 2, x, max_steps=5)
    ... )
    >>> with jhw.Recorder() as rec:
    ...     x, hist = solve(10.0)
    >>> hist.to_numpy().tolist(), rec.history().tolist()
    ([10.0, 5.0, 2.5, 1.25, 0.625], [10.0, 5.0, 2.5, 1.25, 0.625])
    """
    if not callable(cond_fun) or not callable(body_fun):
        raise TypeError(
            "cond_fun and body_fun must be callables (carry -> bool scalar, carry -> carry), "
            f"got {cond_fun!r} and {body_fun!r}."
        )
    max_steps = _check_max_steps(max_steps)
    every = _check_every(stream_every)
    stream = _check_stream(stream)
    warn_bytes = _check_warn_bytes(warn_bytes)
    if record is not None and not callable(record):
        raise TypeError(f"record must be a callable carry -> pytree of arrays, got {record!r}.")
    cached = _eager_loop(
        cond_fun,
        body_fun,
        max_steps=max_steps,
        record=record,
        stream=stream,
        stream_every=stream_every,
        dtype=dtype,
        warn_bytes=warn_bytes,
    )
    if cached is not None:
        return cached(init_val)

    if record is None:
        record = _identity
    max_rows = max_steps + 1
    init_val = _as_carry(body_fun, init_val)

    def store(row: Any) -> list[jax.Array]:
        return [_store_dtype(jnp.asarray(x), dtype) for x in jax.tree_util.tree_leaves(row)]

    row0 = record(init_val)
    treedef = jax.tree_util.tree_structure(row0)
    first = store(row0)
    if not first:
        raise ValueError("record(carry) returned no arrays; return at least one leaf to record.")
    # Zero-size leaves get no buffer, no writes and no words on the wire; the History gets them
    # back as zeros of the right shape. XLA folds a zero-size (max_rows, 0, ...) value into a
    # constant whose compile-time cost grows with max_rows (seconds at 10^8 rows), so none may
    # live in the loop. (Returned from jit, the History leaf still is one: XLA's cost.)
    kept = [i for i, x in enumerate(first) if x.size]

    def take(carry: Any) -> list[jax.Array]:
        row = store(record(carry))
        return [row[i] for i in kept]

    # Every row starts as row 0, so rows past `length` hold a value `record` produced (finite
    # wherever the real rows are), never NaN: see `History` on why NaN there breaks gradients.
    bufs = [jnp.broadcast_to(x, (max_rows, *x.shape)) for x in first if x.size]
    lane_bytes = _warn_if_large(bufs, warn_bytes)

    cont0 = _check_cond(cond_fun(init_val))
    layout = Layout(
        names=_leaf_names(row0),
        shapes=tuple(tuple(x.shape) for x in first),
        # dtype names ("float32", "bfloat16", "float8_e4m3fn", "int4"), not `np.dtype.str`,
        # which is "|V1" for every ml_dtypes type; runs.np_dtype turns them back.
        dtypes=tuple(jnp.dtype(x.dtype).name for x in first),
        treedef=treedef,
        max_steps=max_steps,
        chunk=_chunk_rows(first, max_rows, every),
        every=every,
    )

    if stream:
        run_id, every0 = streaming.open_run(layout, first)
        flush = streaming.make_flush(layout)
    else:
        run_id, every0 = jnp.int32(0), jnp.int32(np.iinfo(np.int32).max)

    zero = jnp.int32(0)
    init = _State(
        carry=init_val,
        bufs=bufs,
        n=jnp.int32(1),
        done=~cont0,
        status=jnp.where(cont0, zero, _CONVERGED),
        flushed=zero,
        every=every0,
        cont=cont0,
        over=jnp.bool_(False),
    )
    # Under shard_map the bookkeeping varies per device as the carry does (`every` and `over`,
    # the same on every device, never do).
    rest, carry = streaming.vary(
        init._replace(carry=None, every=None, over=None), init_val, (init_val, bufs)
    )
    init = rest._replace(carry=carry, every=every0, over=init.over)

    def running(s: _State, limit: jax.Array) -> jax.Array:
        """Whether a lane takes another step: the user's condition, the cap, no stop."""
        return ~s.done & s.cont & (s.n < limit)

    def run_until(s: _State, limit: jax.Array) -> _State:
        """Step while running and fewer than ``limit`` rows exist.

        The step runs the body, ``cond_fun`` on its result (once: the loop predicate reads the
        stored condition, so side effects in ``cond_fun`` happen once per step, as in
        ``lax.while_loop``) and writes the row. Under vmap the predicate stays a scalar and
        each step masks its own updates (see `jaxhist_widget.lanes`); unbatched, the mask is
        unused and compiled away.
        """

        def step(s: _State) -> _State:
            active = running(s, limit)  # only read under vmap
            carry = _body_alone(body_fun, s.carry, lanes.any_lane(active))
            cont = _check_cond(cond_fun(carry))
            bufs = [
                lanes.write_row(b, s.n, x, active) for b, x in zip(s.bufs, take(carry), strict=True)
            ]
            carry, n, cont = lanes.keep_done(active, (carry, s.n + 1, cont), (s.carry, s.n, s.cont))
            return s._replace(carry=carry, bufs=bufs, n=n, cont=cont)

        return lax.while_loop(lambda s: lanes.any_lane(running(s, limit)), step, s)

    def chunk(s: _State) -> _State:
        # Run up to `every` steps, then flush them in one host call. Flushing between two inner
        # loops (not inside a `cond` in the step) keeps the history buffers out of any
        # conditional, so XLA updates them in place instead of copying them every step.
        active = ~s.done  # False for vmap lanes that finished before this chunk
        limit = jnp.minimum(s.flushed + jnp.minimum(s.every, max_rows), max_rows)
        s = run_until(s, limit)
        # The host gets values, not tangents: without stop_gradient, jvp/jacfwd would push
        # tangents into the custom_vmap flush, whose batching rule cannot take them.
        sent = lax.stop_gradient(s.bufs)
        # Why a lane ended is decided once per chunk, not per step. The host learns it with the
        # rows (0: running on, unless the host answers stop) and ends the run with the flush
        # after which no lane runs, so no closing call is needed.
        cont = s.cont
        capped = s.n >= max_rows
        known = jnp.select([~cont, capped], [_CONVERGED, _MAX_STEPS], zero)
        flushed, every, stop = flush(
            run_id, sent, s.n, s.flushed, s.every, jnp.where(active, known, s.status)
        )
        stopped = stop & cont & ~capped
        status = jnp.where(stopped, _STOPPED, known)
        done = s.done | (active & (~cont | capped | stopped))
        return s._replace(
            flushed=flushed,
            every=every,
            done=done,
            status=jnp.where(active, status, s.status),
            # every device runs chunks until all are done: a flush under shard_map holds
            # collectives. The host's answer decides this, so XLA keeps every flush.
            over=~streaming.any_device(lanes.any_lane(~done)),
        )

    if stream:
        # At least one chunk, even when no lane takes a step: its flush ends the run on the host.
        out = lax.while_loop(lambda s: ~s.over, chunk, init)
    else:
        out = run_until(init, jnp.int32(max_rows))
    if lane_bytes is not None:
        _warn_lanes(lane_bytes, warn_bytes, out.n)
    kept_bufs = iter(out.bufs)
    values = [
        next(kept_bufs) if x.size else jnp.zeros((max_rows, *x.shape), x.dtype) for x in first
    ]
    return out.carry, History(treedef.unflatten(values), out.n)


def _body_alone(body_fun: Callable[[Carry], Carry], carry: Carry, go: jax.Array) -> Carry:
    """``body_fun(carry)``; on CPU inside a conditional of its own (``go`` is always True).

    XLA's CPU runtime runs each computation (a loop body, a branch) with a small executor: in
    order on the calling thread when it has at most 8 operations or they form a chain, else as
    a dependency graph (task queues, atomics: about 1 µs a run here, measured). A cheap step of
    8 operations that ``lax.while_loop`` runs in order would cross that line once the loop's
    row writes and counters join it, and every step would pay ~10%. In a branch of its own the
    step keeps the executor it has under ``lax.while_loop``, and the loop's own work forms a
    second small one; a conditional costs ~0.1 µs. ``go`` is the loop's predicate, unknown to
    the compiler, so the branch is not inlined again. Other platforms (a GPU predicate would
    cost a device-to-host copy every step) call ``body_fun`` inline.
    """

    def step(carry: Carry) -> Carry:
        return _check_carry(carry, body_fun(carry))

    def alone(carry: Carry, go: jax.Array) -> Carry:
        return lax.cond(go, step, _identity, carry)

    return lax.platform_dependent(carry, go, cpu=alone, default=lambda carry, go: step(carry))


# ------------------------------------------------------------------------------ checks
def _identity(x: Any) -> Any:
    return x


def _check_max_steps(max_steps: Any) -> int:
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


def _check_every(stream_every: Any) -> int | None:
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


def _check_stream(stream: Any) -> bool:
    if not isinstance(stream, (bool, np.bool_)):
        raise TypeError(
            f"stream must be True or False (a static Python bool), got {stream!r}; "
            "stream=False records on the device only and makes no host calls."
        )
    return bool(stream)


def _check_warn_bytes(warn_bytes: Any) -> int | float | None:
    if warn_bytes is None:
        return None
    if isinstance(warn_bytes, (bool, np.bool_)) or not isinstance(warn_bytes, numbers.Real):
        raise TypeError(
            f"warn_bytes must be a number of bytes (e.g. 2 << 30, or math.inf to never warn) "
            f"or None for the default {DEFAULT_WARN_BYTES:,}, got {warn_bytes!r}."
        )
    if warn_bytes < 0:
        raise ValueError(f"warn_bytes must be >= 0, got {warn_bytes!r}.")
    return warn_bytes


def _check_cond(pred: Any) -> jax.Array:
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


def _as_carry(body_fun: Callable[[Any], Any], init_val: Any) -> Any:
    """``init_val`` as ``lax.while_loop`` sees it: leaves as arrays, weak types promoted.

    A weakly typed leaf (a Python scalar) takes the dtype ``body_fun`` returns for it, so an
    int ``0`` that the body turns into a float carries a float, as in ``lax.while_loop``.
    """
    leaves, tree = jax.tree_util.tree_flatten(init_val)
    leaves = [x if isinstance(x, jax.Array) else jnp.asarray(x) for x in leaves]
    init_val = tree.unflatten(leaves)
    if not any(jax.typeof(x).weak_type for x in leaves):
        return init_val
    # Only here is the body traced once more (for its output types), like lax.while_loop.
    out = jax.eval_shape(body_fun, init_val)
    out_leaves, out_tree = jax.tree_util.tree_flatten(out)
    if out_tree != tree:
        _check_carry(init_val, out)  # raises, naming the difference
    promoted = [
        lax.convert_element_type(x, jnp.result_type(x, o.dtype))
        if jax.typeof(x).weak_type and x.dtype != o.dtype
        else x
        for x, o in zip(leaves, out_leaves, strict=True)
    ]
    return tree.unflatten(promoted)


def _check_carry(init: Any, out: Any) -> Any:
    """``out`` (leaves as arrays) if it has ``init``'s structure, shapes and dtypes; else a
    TypeError naming each leaf that differs (a weak type difference is not one)."""
    in_leaves, in_tree = jax.tree_util.tree_flatten_with_path(init)
    out_leaves, out_tree = jax.tree_util.tree_flatten(out)
    if out_tree != in_tree:
        raise TypeError(
            "body_fun must return a carry with the structure of init_val, but init_val is "
            f"{in_tree} and body_fun returned {out_tree}."
        )
    out_leaves = [jnp.asarray(x) for x in out_leaves]
    diffs = [
        f"init_val{jax.tree_util.keystr(path)} is {_aval(a)} but body_fun returned {_aval(b)}"
        for (path, a), b in zip(in_leaves, out_leaves, strict=True)
        if jnp.shape(a) != b.shape or jnp.result_type(a) != b.dtype
    ]
    if diffs:
        raise TypeError(
            "body_fun must return a carry with the same shapes and dtypes as init_val: "
            + "; ".join(diffs)
            + ". Make them match, e.g. with .astype(...) in body_fun or a matching init_val."
        )
    return out_tree.unflatten(out_leaves)


def _aval(x: Any) -> str:
    return f"{jnp.result_type(x)}{list(jnp.shape(x))}"


def _store_dtype(x: jax.Array, dtype: Any) -> jax.Array:
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


def _chunk_rows(first: list[jax.Array], max_rows: int, every: int | None) -> int:
    if every is not None:
        # The first flush can hold row 0 and row 1 together (there is no flush before the
        # first step), so a chunk holds at least two rows.
        return min(max(every, 2), max_rows)
    # Sized by bytes (runs.CHUNK_BYTES) as packed for the host: narrow types travel as one
    # 32-bit word per element. Under shard_map/pmap one host call carries the windows of
    # every device, so they share the budget like vmap lanes do (see `Layout.window`).
    row_bytes = sum(x.size * max(4, x.dtype.itemsize) for x in first)
    return window_rows(row_bytes, max_rows, lanes=streaming.manual_devices())


def _warn_if_large(bufs: list[jax.Array], warn_bytes: int | float | None) -> int | None:
    """Warn if ``bufs`` exceed the threshold; else return their bytes (for `_warn_lanes`)."""
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


def _warn_lanes(
    nbytes: int, warn_bytes: int | float | None, probe: jax.Array, lanes: int = 1
) -> None:
    """Warn once the vmap lanes are known, if all lanes together exceed the threshold.

    At trace time the loop only sees one lane's shapes; the batching rule of this identity
    on ``probe`` (the row count, batched whenever the loop is) is where ``axis_size`` shows.
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
            _warn_lanes(nbytes, warn_bytes, x, total)
        return x, in_batched[0]

    lanes_probe(probe)


# ------------------------------------------------------------------------------ eager cache
#: Eager calls compile the whole loop once per (functions, static options), like jit.
_EAGER_CACHE: collections.OrderedDict[tuple, Callable[[Any], Any]] = collections.OrderedDict()
_EAGER_CACHE_SIZE = 32
_EAGER_LOCK = threading.Lock()  # eager calls may come from several threads


def _eager_loop(cond_fun: Callable, body_fun: Callable, **options: Any) -> Callable | None:
    """A cached ``jax.jit`` of the loop for an eager (un-traced) call, or None inside a trace.

    Keyed on the identity of the callables and the static options, like ``lax.while_loop``'s
    own cache: a function that reads a global changed since its first call is not retraced.
    Streaming still reaches the sinks attached at each call, since the run id is asked for
    at run time. Inside jit/vmap/grad nothing is cached: the enclosing trace owns the caching,
    and the callables may close over its tracers.
    """
    if not _trace_state_clean() or jax.config.jax_disable_jit:
        return None
    key = (cond_fun, body_fun, *sorted(options.items()))
    try:
        hash(key)
    except TypeError:  # an unhashable callable or option: run uncached
        return None
    with _EAGER_LOCK:
        hit = _EAGER_CACHE.get(key)
        if hit is None:
            hit = jax.jit(functools.partial(while_loop, cond_fun, body_fun, **options))
            _EAGER_CACHE[key] = hit
            while len(_EAGER_CACHE) > _EAGER_CACHE_SIZE:
                _EAGER_CACHE.popitem(last=False)
        else:
            _EAGER_CACHE.move_to_end(key)
    return hit


def _trace_state_clean() -> bool:
    """True outside every JAX transformation (jit, vmap, grad, ...)."""
    try:
        from jax._src.core import trace_state_clean
    except ImportError:  # pragma: no cover - private API moved: stay correct, just uncached
        return False
    return trace_state_clean()


def _leaf_names(tree: Any) -> tuple[str, ...]:
    """Leaf names: ``loss``, ``params.w``, ``[0]``, ``state[1]``; ``value`` for a lone leaf."""
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
    return tuple(names)
