"""The host runtime: the hub that serves the loop's host calls, and what it runs on.

- ``_hub``: `Hub` (and the process's `HUB`): attached sinks, the device's entry points, the
  lock order, each run's ordered channel; ``_hub_runs`` its run table and a run's states,
  ``_hub_sinks`` its calls into sinks, ``_hub_chunks`` where a chunk's rows go,
  ``_hub_orphans`` the runs whose program ended without a last flush, or nobody waits for;
- ``_programs``: `Programs`, whether the device has passed the programs dispatched so far (a
  block's wait) and whether a run's program has ended;
- ``_run``: `Run`, the rows the host received for one run, shared by its sinks, and its one
  `RunWriter` (the hub's, or the store reader's);
- ``_protocol``: `HubSink`, what the hub asks of a sink (it imports no sink class);
- ``_naming``: the name a run takes where it starts, and the names a runner makes up;
- ``_worker``: the one background `Worker`, keyed work in order per key (a run's channel);
- ``_pace``: `Pace`, how many rows a run takes before its next flush, and `unpaced`, work
  that is no chunk's cost;
- ``_report``: how an error that must not reach XLA is reported.

The sinks (``sinks/``), the store and TensorBoard import it; it imports none of them, and of the
host only the interrupt bridge (``interrupts/``).
"""

from __future__ import annotations

from ._hub import HUB, Hub
from ._hub_runs import Entry
from ._naming import call_name, check_name
from ._pace import unpaced
from ._programs import Program, Programs, wait_for
from ._protocol import HubSink
from ._report import log, report
from ._run import STATUSES, Run, RunWriter
from ._worker import MAX_PENDING, Timer, Worker

__all__ = [
    "HUB",
    "MAX_PENDING",
    "STATUSES",
    "Entry",
    "Hub",
    "HubSink",
    "Program",
    "Programs",
    "Run",
    "RunWriter",
    "Timer",
    "Worker",
    "call_name",
    "check_name",
    "log",
    "report",
    "unpaced",
    "wait_for",
]
