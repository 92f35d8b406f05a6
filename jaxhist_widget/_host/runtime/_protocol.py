"""`HubSink`: what the hub asks of a sink, as a `typing.Protocol`.

The hub (`_hub`), run naming (`_naming`) and the interrupt bridge (`_sigint`) talk to sinks only
through this: they import no sink class, not even for types, so the host runtime has no import
cycle and a `Hub` can be built on its own (a test's) with any object that has these members.
`Sink` (`_sink`) is the one implementation; it imports the hub, never the other way round. The
hub calls each member as a typed method, under one guard (`_hub_sinks.SinkCalls`).

A sink's companions (`HubSink._companions`: a plot's ``store=`` and ``tensorboard=`` copies)
are sinks of every run it gets, joined by the hub: each gets every hook, in the hub's order and
under its policy, as an attached sink does; they name no run and are never armed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ._run import Run

__all__ = ["HubSink"]


class HubSink(Protocol):
    """The members of a sink that the host runtime calls (see `Sink` for what each does)."""

    def _start(self, run: Run) -> None: ...

    def _end(self, run: Run) -> None: ...

    def _resume(self, run: Run) -> None: ...

    def on_rows(self, run: Run, lanes: list[int]) -> None: ...

    def _should_stop(self, run: Run) -> bool: ...

    def _rows_can_wait(self, accelerated: bool) -> bool: ...

    @property
    def _companions(self) -> tuple[HubSink, ...]: ...

    def _run_names(self) -> tuple[str | None, str | None, str | None]: ...

    @property
    def running(self) -> bool: ...

    @property
    def stop_requested(self) -> bool: ...

    @property
    def attached(self) -> bool: ...

    def stop(self) -> None: ...

    # The hub's worker queues a sink's work under the sink itself (a protocol declares it: the
    # checker does not take `object`'s for a protocol type).
    def __hash__(self) -> int: ...
