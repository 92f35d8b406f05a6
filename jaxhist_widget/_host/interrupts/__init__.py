"""Ctrl-C and the notebook's ■ while sinks are armed: what a press means, and how it is seen
even while the main thread is inside one long XLA call.

- ``_sigint``: `InterruptBridge`, a press become a stop request or an exception;
- ``_sigint_wakeup``: SIGINT's Python handler and CPython's wakeup fd, taken and given back;
- ``_agreement``: one outcome per press across the processes of a ``jax.distributed`` job.

It knows nothing of the hub or of sinks: the hub builds a bridge, hands it the worker (a
`Scheduler`) and what a press stops, and imports it, never the other way round.
"""

from __future__ import annotations

from ._sigint import InterruptBridge, Scheduler

__all__ = ["InterruptBridge", "Scheduler"]
