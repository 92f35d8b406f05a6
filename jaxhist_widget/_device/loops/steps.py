"""The inner loop of `while_loop`: its steps, one by one or in blocks, until a row limit.

Layer 1 (pure JAX). `Loop` holds a loop's static parts, `State` its carry: the user's carry, the
history buffers (one row per step) and the bookkeeping. `run_until` takes steps (`_step`) while
some lane runs on and fewer than a limit of rows exist; the plain loop runs it once up to the
cap, the streamed one once per chunk (`chunks`). Under vmap each step masks its own updates
(`lanes`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar

import jax
import jax.numpy as jnp
from jax import lax

from ..parallel import devices, lanes
from ..record import rows
from ..stream import streaming
from .carry import Carry as _Carry

__all__ = ["BLOCK", "Loop", "State", "initial_state", "run_until", "stage_rows"]

Carry = TypeVar("Carry")


class Loop(NamedTuple):
    """The static parts of one loop: the user's functions and what a step records.

    The loop carries only the leaves ``body_fun`` changes (`carry.Carry`); ``cond_fun`` and
    ``record`` see the whole carry (`Loop.cond`, ``rows.record``).
    """

    cond_fun: Callable[[Any], Any]
    carry: _Carry
    rows: rows.Rows
    max_rows: int  #: ``max_steps + 1``
    #: How many ``jax.vmap`` lanes the loop runs over, as tracing can tell (`lanes.lane_count`);
    #: None unbatched.
    lanes: int | None = None

    @property
    def batched(self) -> bool:
        """Whether the loop runs under ``jax.vmap`` (as tracing can tell)."""
        return self.lanes is not None

    def cond(self, moving: list[jax.Array]) -> jax.Array:
        return self.carry.cond(moving)


class State(NamedTuple):
    """The loop carry: the user's carry, the history buffers and the bookkeeping."""

    carry: Any
    bufs: list[jax.Array]
    n: jax.Array  # valid rows (steps + 1)
    live: jax.Array  # cleared at the end of the chunk in which a lane ended
    status: jax.Array
    flushed: jax.Array  # rows already sent to the host
    # The host's last answer (`streaming.STOP`, `EVERY`: rows per chunk, host-adapted; NEVER
    # when nobody listens, and `RUN`), as the host call gives it.
    answer: jax.Array
    cont: jax.Array  # cond_fun(carry): computed once, right after the body made the carry
    # Some lane runs on: the chunk loop's predicate, never batched. Carried as is (not its
    # negation), so that the predicate and the flag it is made of need no kernel of their own.
    more: jax.Array


def initial_state(carry: Any, bufs: list[jax.Array], cont: jax.Array, answer: jax.Array) -> State:
    """The state before the first step: row 0 written, ``cont`` = ``cond_fun(init_val)``."""
    zero = jnp.int32(0)
    init = State(
        carry=carry,
        bufs=bufs,
        n=jnp.int32(1),
        live=cont,
        status=jnp.where(cont, zero, streaming.CONVERGED),
        flushed=zero,
        answer=answer,
        cont=cont,
        more=jnp.bool_(True),
    )
    # Under shard_map the bookkeeping varies per device as the carry does (`answer` and
    # `more`, the same on every device, never do).
    same = ("carry", "answer", "more")
    rest = {k: v for k, v in init._asdict().items() if k not in same}
    rest, carry = devices.vary(rest, carry, (carry, bufs))
    return init._replace(carry=carry, **rest)


def _running(s: State, limit: jax.Array) -> jax.Array:
    """Whether a lane takes another step: the user's condition, the cap, no stop."""
    return s.live & s.cont & (s.n < limit)


def _step(loop: Loop, limit: jax.Array, s: State, base: jax.Array | None = None) -> State:
    """One step: the body, ``cond_fun`` on its result, the row written.

    Under vmap each step masks its own updates (see `parallel.lanes`); unbatched,
    the mask is unused and compiled away. ``base``: the written buffers hold the rows from
    ``base`` on (a stage, `_staged`), not from row 0.
    """
    active = _running(s, limit)  # only read under vmap
    if loop.carry.body_writes:
        carry = _body_masked(loop.carry.step, s.carry, active)
    elif loop.carry.body_effects or loop.batched:
        # JAX batches no conditional holding IO or state effects, even on an unbatched
        # predicate; the step runs inline, as on other platforms. Under vmap too: a step over
        # many lanes is no cheap step, and a conditional would keep XLA from fusing it with
        # the loop's own updates (its operands copied in and out every step).
        carry = loop.carry.step(s.carry)
    else:
        carry = _body_alone(loop.carry.step, s.carry, lanes.any_lane(active))
    cont = loop.cond(carry)
    if loop.carry.lane_effects:
        cont = lanes.same_in_every_lane(cont, loop.carry.lane_effects)
    carry, n, cont = lanes.keep_done(active, (carry, s.n + 1, cont), (s.carry, s.n, s.cont))
    # The row is taken from the carry the lanes keep, not from the body's result: it is the
    # same row wherever it is written (the active lanes), and under vmap reading the body's
    # result after the kept carry has replaced it in place made XLA copy the carry every step
    # (the row write recomputed the body's last operations from the old carry), which cost
    # more than the row write itself (docs/performance.md). One row per buffer (a buffer per
    # dtype): the buffer of the fixed carry leaves recorded as they are (the default record
    # keeps the whole carry) has row 0 in every row already and is never written.
    written = loop.rows.written
    bufs = list(s.bufs)
    at = s.n if base is None else s.n - base
    new = lanes.write_rows([bufs[g] for g in written], at, loop.rows.take(carry), active)
    for g, b in zip(written, new, strict=True):
        bufs[g] = b
    return s._replace(carry=carry, bufs=bufs, n=n, cont=cont)


def run_until(loop: Loop, s: State, limit: jax.Array, streamed: bool = False) -> State:
    """`_step` while running and fewer than ``limit`` rows exist (``streamed``: a chunk of the
    streamed loop, `chunks`).

    The loop predicate reads the condition `_step` stored (``cond_fun`` runs once a step, so
    its side effects happen once per step, as in ``lax.while_loop``). Under vmap the predicate
    stays a scalar: any lane running.

    A loop reads its predicate at every step; on a GPU that is a copy to the host (a sync of
    ~10 µs, more than a small step itself costs), on a TPU a few hundred ns of its scalar unit
    (a scalar step's loop: 53 ms step by step, 15 ms in blocks, 10^5 steps on a v5e). So where
    the steps left are known before they are taken (a counting condition, `carry.Counted`), the
    steps go in blocks of `BLOCK` with no predicate between them (`_blocks`) and only the rest
    one by one. Every step of a block is one the step-by-step loop would take, in the same
    order, so nothing changes but the predicates. On CPU, where a predicate costs nothing, the
    loop stays step by step; so does a TPU's streamed loop with a large carry: there the
    blocks, nested in its chunks, made a third loop level, and XLA then kept the carry in the
    chip's main memory instead of its fast memory, fetching it and writing it back every step
    (an MLP step with 16 MB of weights: +25% on a v5e). A TPU's streamed loop with a small
    carry writes its rows to stages (`stage_rows`), its steps one by one inside each: blocks
    there saved nothing on the chip (10^5 scalar steps 17.4 / 17.3 ms, least squares 31.1 /
    31.0 ms, with and without) and cost a new ``jit`` ~190 ms more to compile.
    """
    if streamed:
        size = stage_rows(loop, s)
        if size:
            return _staged(loop, s, limit, size)
    return _steps(loop, s, limit, tpu_blocks=not streamed)


def _steps(
    loop: Loop, s: State, limit: jax.Array, tpu_blocks: bool = True, base: jax.Array | None = None
) -> State:
    """`run_until`'s steps: in blocks where they count (not on a TPU unless ``tpu_blocks``),
    then one by one. ``base``: as `_step`'s."""
    step = functools.partial(_step, loop, limit, base=base)

    def one_by_one(s: State) -> State:
        return lax.while_loop(lambda s: lanes.any_lane(_running(s, limit)), step, s)

    counted = loop.carry.counted
    # JAX puts no IO or state effect in a conditional under vmap (the platform choice is one).
    # Where no accelerator compiles the loop, no blocks are traced either: they only save
    # predicates, and tracing them traced the whole step once more (a third of a trace).
    if counted is None or loop.carry.body_effects or not (_CPU_BLOCKS or devices.accelerated()):
        return one_by_one(s)

    def blocks(s: State) -> State:
        return _blocks(loop, counted, step, s, limit)

    # Only the branch of the platform compiled for is lowered: CPU's program holds no blocks,
    # nor does a TPU's streamed one. Each branch is traced (where an accelerator may compile
    # the loop): a TPU's own only where it differs (``body_fun`` would be traced once more).
    tpu = {} if tpu_blocks else {"tpu": _identity}
    s = lax.platform_dependent(s, cpu=blocks if _CPU_BLOCKS else _identity, default=blocks, **tpu)
    return one_by_one(s)


#: Whether CPU runs the blocks too (the tests check the accelerators' path on CPU with it).
_CPU_BLOCKS = False
#: Whether CPU stages a streamed loop's rows too (`stage_rows`; the tests check a TPU's path
#: on CPU with it).
_CPU_STAGES = False
#: A stage's rows at most, and its bytes (a row of every written buffer, every lane) at most.
STAGE_ROWS = 256
STAGE_BYTES = 256 * 1024
#: The fewest rows worth a stage: rows wider than ``STAGE_BYTES / STAGE_LEAST`` (a step's
#: rows over thousands of lanes, a large recorded array) come from steps that cost far more
#: than their rows' write.
STAGE_LEAST = 8
#: The largest carry (bytes, every lane) whose streamed loop is staged: the stage's loop is a
#: third loop level, and XLA kept a large carry (an MLP's 16 MB of weights) in a TPU's main
#: memory across three levels (`run_until`).
STAGE_CARRY_BYTES = 1 << 20


def stage_rows(loop: Loop, s: State) -> int:
    """How many rows a streamed loop's steps write to a stage before its buffers (`_staged`);
    0 where they write to the buffers themselves.

    Where a host call reads a loop's history, a TPU keeps the buffers in its main memory and
    each row written there is a transfer of its own: a scalar step (21 ns) took 0.6 µs more a
    step, 85 ms for 10^5 steps in the streamed loop's shape against 21 ms for the same loop
    whose buffer no host call reads (plain JAX, a TPU v5e). Written to a stage of 128 rows that
    the loop then copies to the buffer in one piece, 23 ms; of 16 rows, 30 ms; of 1024, 22 ms.
    The package's scalar step with nothing attached went from 69 to 17 ms (`stream=False`:
    14 ms), least squares from 21.5 to 16.9 ms (docs/performance.md). Only a TPU's streamed
    loop (a CPU keeps every buffer in the same memory; a GPU's is unmeasured), with a small
    carry and rows (`STAGE_CARRY_BYTES`, `STAGE_BYTES`, over every lane tracing can tell of).
    A stage never has more rows than the buffers: under a ``vmap`` of a ``jit``, whose lanes
    tracing cannot tell, it is at most the size of the history itself.
    """
    if not (_CPU_STAGES or devices.on_tpu()):
        return 0
    leaves = jax.tree_util.tree_leaves(s.carry)
    count = loop.lanes or 1
    carry_bytes = count * sum(x.size * x.dtype.itemsize for x in leaves)
    row_bytes = count * sum(
        math.prod(s.bufs[g].shape[1:]) * s.bufs[g].dtype.itemsize for g in loop.rows.written
    )
    if carry_bytes > STAGE_CARRY_BYTES or not row_bytes:
        return 0
    size = min(STAGE_ROWS, STAGE_BYTES // row_bytes, loop.max_rows)
    return size if size >= STAGE_LEAST else 0


def _staged(loop: Loop, s: State, limit: jax.Array, size: int) -> State:
    """`run_until`'s steps, writing their rows to a stage of ``size`` rows (`stage_rows`).

    Each stage holds the buffers' rows from ``base`` on, read from them first (rows the steps
    do not reach go back as they were: at a chunk's limit, or a lane that is done), and goes
    back in one piece when its steps are taken. ``base`` is the next row to write (the running
    lanes write in lockstep, `lanes.write_rows`), moved back so that the stage ends within the
    buffers.
    """
    written = loop.rows.written

    def running(s: State) -> jax.Array:
        # Every device takes as many stages (a device whose steps are done takes empty ones):
        # where blocks run inside a stage (a platform other than a TPU: a CPU with both
        # forced) they agree on their count through collectives (`_blocks`), and a device
        # left out of one waits for good (pmap: XLA aborts the process).
        return devices.any_device(lanes.any_lane(_running(s, limit)))

    def stage(s: State) -> State:
        base = jnp.minimum(lanes.max_lane(s.n), loop.max_rows - size)
        end = jnp.minimum(limit, base + size)
        bufs = list(s.bufs)
        for g in written:
            bufs[g] = _rows_from(bufs[g], base, size)
        t = _steps(loop, s._replace(bufs=bufs), end, tpu_blocks=False, base=base)
        bufs = list(t.bufs)
        for g in written:
            bufs[g] = _rows_into(s.bufs[g], t.bufs[g], base)
        return t._replace(bufs=bufs)

    return lax.while_loop(running, stage, s)


def _rows_from(buf: jax.Array, base: jax.Array, size: int) -> jax.Array:
    """``buf[base:base + size]``, 8- and 16-bit floats moved as bits (`lanes.as_bits`)."""
    rows = lax.dynamic_slice_in_dim(lanes.as_bits(buf), base, size)
    return lanes.from_bits(rows, buf.dtype)


def _rows_into(buf: jax.Array, rows: jax.Array, base: jax.Array) -> jax.Array:
    """``buf`` with ``rows`` from row ``base`` on, in place, moved as `_rows_from` moves them."""
    new = lax.dynamic_update_slice_in_dim(lanes.as_bits(buf), lanes.as_bits(rows), base, 0)
    return lanes.from_bits(new, buf.dtype)


#: Steps per block of a counting loop on an accelerator (see `run_until`). The host rounds an
#: adaptive flush interval to a multiple of it (`Layout.block`).
BLOCK = 16


def _blocks(loop: Loop, counted: Any, step: Callable, s: State, limit: jax.Array) -> State:
    """Whole blocks of `BLOCK` steps, while every running lane has that many left.

    Inside a block no predicate is read: each of its steps is known to run for every lane that
    is running (its counter stays under the bound, its rows under ``limit``); lanes already done
    are kept as they are by `_step`'s masks, as in the step-by-step loop.
    """

    def whole(s: State) -> jax.Array:
        left = jnp.minimum(limit - s.n, loop.carry.steps_left(s.carry, counted, loop.max_rows))
        running = _running(s, limit)
        least = lanes.min_lane(jnp.where(running, left, loop.max_rows))
        return devices.any_device(lanes.any_lane(running)) & (devices.min_device(least) >= BLOCK)

    def block(s: State) -> State:
        return lax.fori_loop(0, BLOCK, lambda _, s: step(s), s)

    return lax.while_loop(whole, block, s)


def _body_alone(step: Callable[[Carry], Carry], carry: Carry, go: jax.Array) -> Carry:
    """``step(carry)``; on CPU inside a conditional of its own (``go`` is always True).

    XLA's CPU runtime runs each computation (a loop body, a branch) with a small executor: in
    order on the calling thread when it has at most 8 operations or they form a chain, else as
    a dependency graph (task queues, atomics), which costs more per run. A cheap step of 8
    operations that ``lax.while_loop`` runs in order would cross that line once the loop's row
    writes and counters join it, and every step would pay for it (docs/performance.md's
    notes have the numbers). In a branch of its own the step keeps the executor it has under
    ``lax.while_loop``, and the loop's own work forms a second small one; a conditional costs
    far less. ``go`` is the loop's predicate, unknown to the compiler, so the branch is not
    inlined again. Other platforms (a GPU predicate would cost a device-to-host copy every
    step) call ``body_fun`` inline.

    The branch also keeps XLA from computing a step's results twice: inline, a cheap result
    (``v * 0.99``) that is both loop state and a packed row's element was fused into the row's
    write once more, a kernel and a copy per recorded leaf (compiled each: 100 scalar leaves,
    216 kernels where the branch leaves 116).
    """

    # Only the predicate depends on the platform, so that ``step`` is traced and lowered once
    # (in the branch), not once per platform. Elsewhere it is ``go | True``: True, which XLA
    # folds and then inlines the conditional; made of ``go`` so that under shard_map it varies
    # per device as ``go`` does (both branches of `platform_dependent` must).
    go = lax.platform_dependent(go, cpu=lambda go: go, default=lambda go: go | True)
    return lax.cond(go, step, _identity, carry)


def _body_masked(step: Callable[[Carry], Carry], carry: Carry, active: jax.Array) -> Carry:
    """``step(carry)`` as a loop of one iteration that runs while ``active``.

    For a step that writes to a Ref: under vmap ``active`` differs per lane, and
    ``lax.while_loop`` then writes the Ref only for the lanes that take the step (it carries
    the Ref's value and keeps it for the others), where this loop's own masking would write it
    for every lane. Unbatched, ``active`` is True whenever the step runs.
    """
    return lax.while_loop(lambda s: s[0], lambda s: (~s[0], step(s[1])), (active, carry))[1]


def _identity(x: Any) -> Any:
    return x
