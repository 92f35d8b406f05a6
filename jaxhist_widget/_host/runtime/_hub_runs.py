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
from typing import Any, NamedTuple

from ._pace import Pace
from ._programs import Program
from ._protocol import HubSink
from ._run import Run, RunWriter

__all__ = ["ABANDONED", "ENDED", "OPEN", "Entry", "LogTurn", "RunTable"]

#: Abandoned runs remembered (to take them up again should rows come); the oldest are dropped.
MAX_ABANDONED = 256

OPEN, ABANDONED, ENDED = "open", "abandoned", "ended"
_MOVES = {(OPEN, ENDED), (OPEN, ABANDONED), (ABANDONED, OPEN), (ABANDONED, ENDED)}


@dataclasses.dataclass(eq=False)
class Entry:
    """One run in the table: its rows (the run's one writer), its sinks, its state and its
    flush clock."""

    rows: RunWriter
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

    @property
    def run(self) -> Run:
        """The run its sinks read."""
        return self.rows.run


class LogTurn(NamedTuple):
    """What a `jhw.log` call of some sinks finds in the table (`RunTable.log_turn`)."""

    #: Their block's run was stopped: the call raises `Stopped` until the block ends.
    stopped: bool
    #: The state of their run open now (`Entry.host`), or None: one is to be opened.
    host: Any
    #: The state of another block's run, taken out of the table for the caller to end.
    ended: Any


class RunTable:
    """The runs that started and have not ended, and the abandoned ones remembered; every
    method is called with the hub's lock held."""

    def __init__(self) -> None:
        self._runs: dict[int, Entry] = {}
        self._abandoned: collections.OrderedDict[int, None] = collections.OrderedDict()
        self._ids = itertools.count(1)
        # The run `jhw.log` streams to now (`Hub.open_log_run`), and the sinks of the block
        # whose `jhw.log` run was stopped (its further calls raise `Stopped` until it ends).
        self._logging: Entry | None = None
        self._log_stopped: tuple[HubSink, ...] | None = None

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

    # ------------------------------------------------------------ the `jhw.log` run
    def log_turn(self, sinks: tuple[HubSink, ...]) -> LogTurn:
        """What a `jhw.log` call of ``sinks`` finds: whether their run was stopped, their run
        open now, and another block's run, taken out (a block began or ended since)."""
        if self._log_stopped is not None:
            if self._log_stopped == sinks:
                return LogTurn(True, None, None)
            self._log_stopped = None
        entry = self._logging
        if entry is None or entry.opened_for == sinks:
            return LogTurn(False, entry.host if entry is not None else None, None)
        self._logging = None
        return LogTurn(False, None, entry.host)

    @property
    def logging(self) -> Entry | None:
        """The run `jhw.log` streams to now (`Hub.open_log_run`)."""
        return self._logging

    def set_log(self, entry: Entry) -> None:
        """``entry`` (just registered) is the `jhw.log` run from now on."""
        self._logging = entry

    def stop_log(self, host: Any, sinks: tuple[HubSink, ...]) -> None:
        """The `jhw.log` run whose state is ``host`` was stopped: out of the table, and the
        calls of ``sinks``' block raise `Stopped` until it ends."""
        if self._logging is not None and self._logging.host is host:
            self._logging = None
        self._log_stopped = sinks

    def end_log_block(self, sink: HubSink) -> Any:
        """A block of ``sink`` ends: the state of the `jhw.log` run it opened, taken out of
        the table for the caller to end (None if there is none)."""
        if self._log_stopped is not None and sink in self._log_stopped:
            self._log_stopped = None
        entry = self._logging
        if entry is None or sink not in entry.opened_for:
            return None
        self._logging = None
        return entry.host
