"""`PressAgreement`: one outcome per press across the processes of a `jax.distributed` job.

A terminal's Ctrl-C reaches every process of the job's process group. The host calls of an
SPMD program run on process 0 only, so only process 0 knows whether a press met a run in
flight (the press stops it: every process's call returns the same partial result, since the
stop flag is broadcast) or not (the press interrupts). Left to themselves, the other
processes see no run and raise, while process 0 returns: the programs part ways.

So process 0 decides, and publishes what each press became in the coordination service's
key-value store (the one `jax.distributed.initialize` started); every other process, counting
the same presses from the same wakeup bytes, waits briefly for the decision of the press with
its number and follows it. A press that reached one process only (``kill -INT`` of one pid)
finds no decision and is decided where it landed, after `WAIT_S`.

Outside a distributed job (or with a JAX whose coordination client moved) nothing is shared
and every press is decided locally.
"""

from __future__ import annotations

import contextlib
import itertools
from typing import Any

_jobs: Any  # JAX's private State, or None: read with getattr only, as its API may move
try:
    from jax._src.distributed import global_state as _jobs
except ImportError:  # pragma: no cover - private API moved: decide every press locally
    _jobs = None

__all__ = ["WAIT_S", "PressAgreement"]

#: How long a process other than 0 waits for process 0's decision on a press (seconds).
WAIT_S = 2.0
_STOP, _RAISE = "stop", "raise"


class PressAgreement:
    """Shares each press's outcome across processes; see the module docstring."""

    def __init__(self) -> None:
        self._blocks = itertools.count()
        self._block = 0

    def begin_block(self) -> None:
        """A new span of armed sinks (press numbers start again): every process of an SPMD
        program enters its blocks in the same order, so the n-th block is the same one."""
        self._block = next(self._blocks)

    def follow(self, press: int) -> bool | None:
        """Process 0's outcome of press number ``press`` (True: a stop), for the other
        processes; None where this process decides (process 0, or no distributed job) or no
        decision came in time."""
        found = _client()
        if found is None or found[1] == 0:
            return None
        client, _ = found
        try:
            value = client.blocking_key_value_get(self._key(press), int(WAIT_S * 1000))
        except Exception:  # timed out, or the service is gone: decide here
            return None
        return value == _STOP

    def publish(self, press: int, stop: bool) -> None:
        """Process 0 says what press number ``press`` became (elsewhere: nothing)."""
        found = _client()
        if found is None or found[1] != 0:
            return
        client, _ = found
        with contextlib.suppress(Exception):  # a gone service must not break a press
            client.key_value_set(self._key(press), _STOP if stop else _RAISE, True)

    def _key(self, press: int) -> str:
        return f"jaxhist_widget/press/{self._block}/{press}"


def _client() -> tuple[Any, int] | None:
    """The coordination client and this process's index in a job of several, else None."""
    client = getattr(_jobs, "client", None)
    if client is None or getattr(_jobs, "num_processes", 1) <= 1:
        return None
    return client, int(getattr(_jobs, "process_id", 0))
