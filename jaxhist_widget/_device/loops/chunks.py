"""The two loops `while_loop` builds from its steps (`steps`): plain, or streamed in chunks.

Layer 1 (pure JAX). The history lives in the loop carry as fixed-shape buffers (one row per
step, ``max_steps + 1`` rows):

- `run_plain` (``stream=False``): `steps.run_until` the cap; no host call at all;
- `run_streaming`: an outer loop over chunks (`_chunk`), each running the inner loop for up to
  ``every`` steps and then flushing its rows to the host (`streaming`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from jax import lax

from ..._wire import Layout
from ..parallel import devices, lanes
from ..stream import streaming
from .steps import Loop, State, initial_state, run_until

__all__ = ["run_plain", "run_streaming"]


def run_plain(loop: Loop, carry: Any, bufs: list[jax.Array], cont: jax.Array) -> State:
    """The loop without streaming: steps until no lane runs on; no host call at all."""
    init = initial_state(carry, bufs, cont, answer=jnp.array(streaming.NOBODY, jnp.int32))
    return run_until(loop, init, jnp.int32(loop.max_rows))


def run_streaming(
    loop: Loop, layout: Layout, carry: Any, bufs: list[jax.Array], cont: jax.Array
) -> State:
    """The loop as chunks of steps, each ending in a flush, until no lane runs on."""
    answer = streaming.open_run(layout, loop.rows.first_rows())
    flush = streaming.make_flush(layout)
    init = initial_state(carry, bufs, cont, answer=answer)
    # At least one chunk, even when no lane takes a step: its flush ends the run on the host.
    return lax.while_loop(lambda s: s.more, functools.partial(_chunk, loop, layout, flush), init)


def _chunk(loop: Loop, layout: Layout, flush: Callable, s: State) -> State:
    """Up to ``every`` steps, then one flush of their rows (`streaming.make_flush`).

    Flushing between two inner loops (not inside a `cond` in the step) keeps the history
    buffers out of any conditional, so XLA updates them in place instead of copying them every
    step.
    """
    zero = jnp.int32(0)
    active = s.live  # False for vmap lanes that finished before this chunk
    # what the flush below is given per lane: batched exactly when it is (see `interval`)
    lane_state = (s.bufs, s.n, s.flushed, s.status, s.live, s.cont)
    every = streaming.interval(layout, s.answer, lane_state)
    limit = jnp.minimum(s.flushed + jnp.minimum(every, loop.max_rows), loop.max_rows)
    s = run_until(loop, s, limit, streamed=True)
    # The host gets values, not tangents: without stop_gradient, jvp/jacfwd would push
    # tangents into the custom_vmap flush, whose batching rule cannot take them.
    sent = lax.stop_gradient(s.bufs)
    # Why a lane ended is decided once per chunk, not per step. The host learns it with the
    # rows (0: running on, unless the host answers stop) and ends the run with the flush
    # after which no lane runs, so no closing call is needed.
    cont = s.cont
    capped = s.n >= loop.max_rows
    # nested wheres, not jnp.select: its argmax is a reduction of its own to compile
    known = jnp.where(~cont, streaming.CONVERGED, jnp.where(capped, streaming.MAX_STEPS, zero))
    status = jnp.where(active, known, s.status)
    answer = flush(
        streaming.FlushArgs(
            answer=s.answer,
            bufs=sent,
            n=s.n,
            flushed=s.flushed,
            status=status,
        )
    )
    stopped = (answer[streaming.STOP] > 0) & cont & ~capped
    live = active & cont & ~capped & ~stopped
    return s._replace(
        # Every row is sent: a skipped flush had none to send (or, nobody listening, no chunk
        # follows), so no select on whether it went.
        flushed=s.n,
        answer=answer,
        live=live,
        # A lane the host stops is told so by the host itself (it answered stop), and no flush
        # follows a stop (no lane runs on): `status` keeps what the device knows.
        status=status,
        # every device runs chunks until all are done: a flush under shard_map holds
        # collectives. The host's answer decides this, so XLA keeps every flush.
        more=devices.any_device(lanes.any_lane(live)),
    )
