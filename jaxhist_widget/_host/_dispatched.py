"""Waiting for the device: what a sink's block does as it starts and as it ends.

Host runtime. Where dispatch is asynchronous (a TPU, a GPU, a program over several CPU
devices), a jitted call returns before its loop has run. The hub routes a run to the sinks
attached when the loop's first host call reaches it, so a block must not end before the
loops it started have made that call (they would stream to nobody, or to a later block's
sinks), nor take in the loops started before it.
"""

from __future__ import annotations

import time
from typing import Any

__all__ = ["ready", "wait_for_device"]


def wait_for_device(poll: float = 0.01) -> None:
    """Wait until the device work dispatched so far has finished, its host calls included.

    Where dispatch is asynchronous (a TPU, a GPU, a program over several CPU devices), a jitted
    call returns before its loop has run: a block that ended then would detach its sinks
    before the loop's first host call, and the run would stream to nobody (or to the sinks of
    a later block). JAX's ``effects_barrier`` does not wait for such a program (its runtime
    token is ready at dispatch: checked on 4 CPU devices and a TPU), so the wait is on what
    the programs make: every live array not yet computed, and, where each device runs its
    programs in the order they were dispatched (accelerators, not the CPU), a tiny program
    queued behind them on every device, which also waits for a program whose results were
    dropped unread.

    Polls instead of blocking in C++, at first often (a short loop ends a short block soon),
    then every ``poll`` seconds: the main thread keeps running Python, so a press reaches the
    interrupt bridge's handler at once.
    """
    import jax

    pending = [x for x in jax.live_arrays() if not ready(x)]
    if jax.default_backend() != "cpu":
        pending += _queue_marks()
    wait = poll / 32
    while pending:
        time.sleep(wait)
        wait = min(poll, 2 * wait)
        pending = [x for x in pending if not ready(x)]
    jax.effects_barrier()


def _queue_marks() -> list[Any]:
    """One tiny program per local device, queued behind the programs dispatched so far."""
    global _mark
    import jax
    import numpy as np

    if _mark is None:
        zeros = {d: jax.device_put(np.int32(0), d) for d in jax.local_devices()}
        _mark = (jax.jit(lambda x: x + 1), zeros)
    add, zeros = _mark
    return [add(zeros[d]) for d in jax.local_devices() if d in zeros]


_mark: Any = None


def ready(x: Any) -> bool:
    """Whether an array's value is computed; True for one deleted meanwhile (donated, freed)."""
    try:
        return x.is_deleted() or x.is_ready()
    except RuntimeError:  # deleted between the two calls
        return True
