"""Waiting for the device: what a sink's block does as it starts and as it ends.

Host runtime. Where dispatch is asynchronous (a TPU, a GPU, a program over several CPU
devices), a jitted call returns before its loop has run. The hub routes a run to the sinks
attached when the loop's first host call reaches it, so a block must not end before the
loops it started have made that call (they would stream to nobody, or to a later block's
sinks), nor take in the loops started before it.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any

__all__ = ["ready", "wait_for", "wait_for_device"]


def wait_for_device(poll: float = 0.01) -> None:
    """Wait until the device work dispatched so far has finished, its host calls included.

    Where dispatch is asynchronous (a TPU, a GPU, a program over several CPU devices), a jitted
    call returns before its loop has run: a block that ended then would detach its sinks
    before the loop's first host call, and the run would stream to nobody (or to the sinks of
    a later block). JAX's ``effects_barrier`` does not wait for such a program (its runtime
    token is ready at dispatch: checked on 4 CPU devices and a TPU), and raises, again at
    every call, the error of a program that failed (a host call that raised): every block
    after it would fail. So the wait is on what the programs make: every live array not yet
    computed, and, where each device runs its programs in the order they were dispatched
    (accelerators, not the CPU), a tiny program queued behind them on every device, which also
    waits for a program whose results were dropped unread. A program that failed counts as
    done: its error is raised where its result is used (`Sink.run` waits for its own).

    The calling thread waits on an event (`wait_for`), not in C++: it wakes the moment the
    device is done, and runs Python meanwhile, so a press reaches the interrupt bridge's
    handler at once.
    """
    import jax

    pending = [x for x in jax.live_arrays() if not ready(x)]
    if jax.default_backend() != "cpu":
        pending += _queue_marks()
    wait_for(pending, poll)


def wait_for(arrays: list[Any], poll: float = 0.01) -> None:
    """Wait until every one of ``arrays`` is computed (or failed, or deleted).

    A helper thread blocks on them and sets an event; this thread waits on the event ``poll``
    seconds at a time. A sleep-and-look loop woke up to ``poll`` late (10 ms on a 22 ms loop on
    a TPU), and a wait in C++ runs no Python signal handler until it returns.
    """
    arrays = [x for x in arrays if not ready(x)]
    if not arrays:
        return
    done = threading.Event()

    def block() -> None:
        for x in arrays:
            # failed or deleted: as done as it gets (an error is raised where it is used)
            with contextlib.suppress(Exception):
                x.block_until_ready()
        done.set()

    threading.Thread(target=block, name="jaxhist_widget-wait", daemon=True).start()
    while not done.wait(poll):
        pass


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
