"""The hub's run table: each run's entry (its rows, its sinks, its state, its flush clock) by
run id, and the state machine a run moves through::

    OPEN --(every lane ended)--> ENDED
    OPEN --(its program ended first, or nobody waits)--> ABANDONED --(rows came after all)--> OPEN

`RunTable.move` is the one place a run changes state. The table has no lock of its own: the hub
calls it with the hub's lock held (the lock order is in `_hub`).
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
from typing import Any

from ._pace import Pace
from ._programs import Program
from ._protocol import HubSink
from ._run import Run

__all__ = ["ABANDONED", "ENDED", "OPEN", "Entry", "RunTable"]

#: Abandoned runs remembered (to take them up again should rows come); the oldest are dropped.
MAX_ABANDONED = 256

OPEN, ABANDONED, ENDED = "open", "abandoned", "ended"
_MOVES = {(OPEN, ENDED), (OPEN, ABANDONED), (ABANDONED, OPEN), (ABANDONED, ENDED)}


@dataclasses.dataclass(eq=False)
class Entry:
    """One run in the table: its rows, its sinks, its state and its flush clock."""

    run: Run
    sinks: tuple[HubSink, ...]  # those it streams to (`Hub.join` adds one)
    opened_for: tuple[HubSink, ...] = ()  # those attached when it started
    state: str = OPEN
    pace: Pace = dataclasses.field(default_factory=Pace)
    #: A sink had asked it to stop when it was abandoned: should it send rows after all, it
    #: stops (its sinks forgot the request when it ended for them).
    stop: bool = False
    #: The rows its loop's first flush takes (the pace of the loop run before, at most a chunk).
    first_interval: int = 1
    #: Where the host makes its rows (`jhw.log`): that loop's state; None for a device loop.
    host: Any = None
    #: A device loop's program, as its first host call saw it (`Programs.opened`).
    program: Program | None = None
    #: The flushes received so far (a run that sends none for a while is looked at).
    chunks: int = 0


class RunTable:
    """The runs that started and have not ended, and the abandoned ones remembered; every
    method is called with the hub's lock held."""

    def __init__(self) -> None:
        self._runs: dict[int, Entry] = {}
        self._abandoned: collections.OrderedDict[int, None] = collections.OrderedDict()
        self._ids = itertools.count(1)
        #: The run `jhw.log` streams to now (`Hub.open_log_run`), and the sinks of the block
        #: whose `jhw.log` run was stopped (its further calls raise `Stopped` until it ends).
        self.logging: Entry | None = None
        self.log_stopped: tuple[HubSink, ...] | None = None

    def new_id(self) -> int:
        """A fresh run id (a positive int32)."""
        return next(self._ids) & 0x7FFFFFFF

    def add(self, entry: Entry) -> None:
        self._runs[entry.run.id] = entry

    def get(self, run_id: int) -> Entry | None:
        return self._runs.get(run_id)

    def entries(self) -> list[Entry]:
        return list(self._runs.values())

    def move(self, entry: Entry, state: str) -> None:
        """Move ``entry`` to ``state``: an ended run leaves the table, an abandoned one stays
        (the oldest beyond `MAX_ABANDONED` are dropped)."""
        if (entry.state, state) not in _MOVES:
            raise RuntimeError(f"run {entry.run.id}: no move from {entry.state} to {state}")
        entry.state = state
        if state == ABANDONED:
            self._abandoned[entry.run.id] = None
            while len(self._abandoned) > MAX_ABANDONED:  # the oldest will not come back
                self._runs.pop(self._abandoned.popitem(last=False)[0], None)
        else:
            self._abandoned.pop(entry.run.id, None)
        if state == ENDED:
            self._runs.pop(entry.run.id, None)
