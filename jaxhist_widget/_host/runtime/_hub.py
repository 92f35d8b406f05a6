"""`Hub`: the one owner of the host's state — attached sinks, the run table, the worker and
the interrupt bridge.

The traced program calls the hub (through `jaxhist_widget._wire`) from host callbacks, on
whatever thread XLA runs them: `open_run` once per call of the loop, `receive_chunk` once per
flush. The program never holds a sink, only a run id: the hub maps it to the sinks that were
attached when the run started (plus any that `join` it), so the jit cache cannot keep a stale
sink. The hub meets sinks only through `HubSink` (`_protocol`): it imports no sink class.

A run moves through an explicit state machine (`_hub_runs`), always under the hub's lock::

    OPEN --(every lane ended)--> ENDED
    OPEN --(its program ended first, or nobody waits)--> ABANDONED --(rows came after all)--> OPEN

A run whose program ends without its last flush (a host callback of the user's raised) is given
up as ``failed`` once the host knows that program has ended (`_programs`, `_hub_orphans`).

Each run has one ordered channel, its worker key (its id): every notification of the run (its
start, rows, resume, end, its abandonment, the watch's) runs as a task of that key, on
the worker or in the thread that takes the key's turn (`Worker.holding`: the loop's host call),
and re-checks the run's state there. So they never cross: a run given up as its rows come is
told its end first, and taken up after; a run ends once in each state it reaches, with the
status it reads then.

Three ordering promises hold per run, kept by the hub and only by it (here and in its calls into
sinks, `_hub_sinks`): rows are filed in the order they came; a sink's ``on_end`` follows its
last ``on_rows``; every row is in when the call that ran the loop returns. A chunk whose rows no
sink needs before the loop goes on is filed on the worker (in its run's key: the worker keeps
each key's order, and runs other keys meanwhile), and a chunk that some sink must see first
takes its run's turn after the run's earlier chunks; a sink whose ``on_rows`` proved slow gets
its updates on the worker (keyed by the sink), merged while it is busy, until it has been quick
again for a while (`_hub_sinks`). So a slow sink delays only its own runs. Where a chunk's rows
go in its run is worked out in `_hub_chunks`.

Lock order, the one place it is written (a lock may be taken while holding those before it):

1. the interrupt bridge's lock (a press stops sinks);
2. the hub's lock (its run table, `_hub_runs.RunTable`, and its calls into sinks,
   `_hub_sinks.SinkCalls`, work under it too);
3. a sink's lock (`Sink._lock`);
4. a run's lock (`Run._lock`).

The `jhw.log` run is an entry of the run table like any other (`RunTable.logging`), read and
changed under the hub's lock, by the hub only (`log_run`, `open_log_run`, `stop_log_run`,
`end_log_block`). A run's rows, status and name are written through its `RunWriter`, which the
run table's entry holds (the orphan code ends a run through it too). A `TensorBoard` sink's
notes lock is taken in its hooks with nothing else held; only the worker's lock is taken inside
it (it queues its writes). A `Store`'s state condition and its writer's connection lock, the
worker's lock, `Programs`' lock, a `Pace`'s lock, the error reporter's lock, a `jhw.log` run's
batch lock, a plot's flusher lock and `Ahead` lock, auto mode's cell-plot lock (held while the
plot is made and shown, on the worker: nothing of the runtime's is taken meanwhile; the plot
then `join`s its run) and the plot's reduction helpers' pool lock are leaves: nothing is taken
while one is held. No lock is held while a sink's hooks or user code run, or while waiting for
the worker; a plot's update waits for its reduction helpers (`ui.reduce.each`) holding the
plot's lock, and they take no lock. A run's channel is no lock: a hook may take any lock, and a
thread waits for the channel holding none.

Exceptions never propagate into XLA (that would kill the computation and its device history):
they are reported (`report`) once per sink, run and hook (`_hub_sinks`).
"""

from __future__ import annotations

import atexit
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from ... import _wire
from ..._wire import NEVER, Chunk, Layout, answer
from .._floats import ieee
from ..interrupts import InterruptBridge
from ._hub_chunks import chunk_end, lane_groups
from ._hub_orphans import Orphans
from ._hub_runs import ABANDONED, ENDED, OPEN, Entry, LogTurn, RunTable
from ._hub_sinks import SinkCalls
from ._naming import run_name
from ._pace import paced_clock
from ._programs import Programs
from ._protocol import HubSink
from ._report import report
from ._run import STATUSES, Run, RunWriter, lane_index
from ._worker import Worker

__all__ = ["EXIT_DRAIN_S", "HUB", "Hub"]

#: As Python exits, how long the rows filed on the worker and the sinks' own work are waited
#: for, all together (the loops still running on the device are waited for until they end).
EXIT_DRAIN_S = 10.0

_STOPPED = STATUSES.index("stopped")


class Hub:
    """Attached sinks, the run table, deferred work and interrupts: see the module docstring.

    The package has one (`HUB`), which the traced program reaches; a test may build its own and
    drive it with `open_run` / `receive_chunk` as the program does.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._attached: list[HubSink] = []
        self._runs = RunTable()
        self.worker = Worker()
        #: What the host knows of the programs that run loops (a block's wait for the device).
        self.programs = Programs()
        self._calls = SinkCalls(self._lock, self.worker)
        self._orphans = Orphans(self._lock, self._runs, self.worker, self._calls, self.programs)
        self.interrupts: InterruptBridge[HubSink] = InterruptBridge(self._press, self.worker)
        self._ever_attached: weakref.WeakSet[HubSink] = weakref.WeakSet()  # (for the exit)
        self._exit_steps: list[Callable[[], None]] = []

    # ------------------------------------------------------------------------ attaching
    def attach(self, sink: HubSink) -> None:
        with self._lock:
            self._ever_attached.add(sink)
            if sink not in self._attached:
                self._attached.append(sink)

    def detach(self, sink: HubSink) -> None:
        with self._lock:
            if sink in self._attached:
                self._attached.remove(sink)

    def attached(self) -> tuple[HubSink, ...]:
        """The sinks a run starting now would stream to."""
        with self._lock:
            return tuple(self._attached)

    def live_runs(self) -> list[Run]:
        """Runs that started and have not ended (abandoned ones have ended as ``failed``)."""
        with self._lock:
            return [e.run for e in self._runs.entries() if e.state == OPEN]

    def join(self, run: Run, sink: HubSink) -> None:
        """Make ``sink`` (and its companions) a sink of ``run`` from now on, as if attached
        when it started.

        Each starts the run, gets its rows so far, and every update after; if the run has
        ended meanwhile it ends for them too. Call it on the run's own worker key (as auto
        mode does, `Worker.submit` with ``run.id``), so that no chunk of the run is filed while
        they join.
        """
        with self._lock:
            entry = self._runs.get(run.id)
            had = entry.sinks if entry is not None and entry.run is run else ()
        joining = [s for s in self._calls.streams((sink,)) if s not in had]
        for s in joining:
            self._calls.start(s, run)
        with self._lock:
            entry = self._runs.get(run.id)
            live = entry is not None and entry.run is run and entry.state != ENDED
            if live and entry is not None:  # (entry: live says so)
                entry.sinks = (*entry.sinks, *(s for s in joining if s not in entry.sinks))
        lanes = [i for i, n in enumerate(run.counts) if n]
        for s in joining:
            if lanes:
                self._calls.rows(s, run, lanes)
            if not live:
                self._calls.end(s, run)

    # ------------------------------------------------------------ called from the device
    def open_run(self, layout: Layout, token: Any = None) -> np.ndarray:
        """Start a run: int32 ``[run_id, first_interval]`` (`NEVER`: no sinks)."""
        with self.interrupts.host_call(), ieee():
            return self._open_run(layout)

    def _open_run(self, layout: Layout) -> np.ndarray:
        try:
            with self._lock:
                sinks = tuple(self._attached)
                if not sinks:
                    return np.array([self._runs.new_id(), NEVER], np.int32)
            streams = self._calls.streams(sinks)  # (asked of the sinks with no lock held)
            with self._lock:
                entry = self._register(layout, sinks, streams)
                entry.program = self.programs.opened()  # (this host call's thread)
            self._start(entry)
            self._orphans.watch(entry)
            # Send the first row(s) at once so a watcher sees the run start (a loop run before
            # starts at the pace it ended with); adapt from there.
            return np.array([entry.run.id, entry.first_interval], np.int32)
        except Exception as e:  # never raise into XLA
            report(e, "open_run")
            return np.array([0, NEVER], np.int32)

    def _register(
        self, layout: Layout, sinks: tuple[HubSink, ...], streams: tuple[HubSink, ...]
    ) -> Entry:
        """A new run of ``sinks`` (streaming to ``streams``: them and their companions) in
        the table, its channel taken by this thread until `_start` has told its sinks (caller
        holds the hub's lock): whatever else of the run comes meanwhile (an abandon, its rows
        from another thread) waits behind its start. Its writer stays in the table."""
        entry = Entry(RunWriter(Run(self._runs.new_id(), layout)), streams, opened_for=sinks)
        entry.first_interval = min(entry.pace.first(layout), layout.chunk)
        self.worker.hold(entry.run.id)  # a fresh key: taken at once (the worker's is a leaf)
        self._runs.add(entry)
        return entry

    def _start(self, entry: Entry) -> None:
        """Tell a run's sinks that it started, in its channel (held since `_register`)."""
        run = entry.run
        try:
            # Named by the sinks attached (a plot's store copy names no run), before any sink
            # sees it.
            entry.rows.named(*run_name(entry.opened_for))
            for sink in entry.sinks:
                self._calls.start(sink, run)
            if self.interrupts.aborting:  # a press is on its way to the main thread: let it
                self._press(True)
        finally:
            self.worker.release(run.id)

    # --------------------------------------------------------- the `jhw.log` run
    # `jhw.log` (`sinks._log`) keeps its run's state on the host (``state``); the table holds
    # which run is the one open, read and changed here only, under the hub's lock.
    def log_run(self, sinks: tuple[HubSink, ...]) -> LogTurn:
        """What a `jhw.log` call of ``sinks`` finds (`RunTable.log_turn`): whether their
        block's run was stopped, the state of their run open now, and another block's run,
        taken out of the table for the caller to end."""
        with self._lock:
            return self._runs.log_turn(sinks)

    def open_log_run(
        self, layout: Layout, sinks: tuple[HubSink, ...], state: Callable[[int, int], Any]
    ) -> Any:
        """The state of the run `jhw.log` streams to for ``sinks``: the one open (another
        thread's call opened it), or one opened now, ``state(run_id, first_interval)``; None
        while the open one is of other sinks (the caller ends it first)."""
        streams = self._calls.streams(sinks)
        with self._lock:
            entry = self._runs.logging
            if entry is not None:
                return entry.host if entry.opened_for == sinks else None
            entry = self._register(layout, sinks, streams)
            entry.host = state(entry.run.id, entry.first_interval)
            self._runs.set_log(entry)
        self._start(entry)
        return entry.host

    def stop_log_run(self, state: Any, sinks: tuple[HubSink, ...]) -> None:
        """The `jhw.log` run whose state is ``state`` was stopped: no call joins it, and the
        calls of ``sinks``' block find it stopped (`log_run`) until the block ends."""
        with self._lock:
            self._runs.stop_log(state, sinks)

    def end_log_block(self, sink: HubSink) -> Any:
        """A block of ``sink`` ends: the state of the `jhw.log` run it opened, taken out of
        the table for the caller to end (None if there is none)."""
        with self._lock:
            return self._runs.end_log_block(sink)

    # ------------------------------------------------------------ called from the device

    def receive_chunk(self, layout: Layout, head: np.ndarray, *windows: np.ndarray) -> np.ndarray:
        """Deliver one flush (ending the run if no lane runs on); returns `_wire.answer`.

        The device ends each lane exactly as decided here: a lane it reports running (status
        0) is stopped if any sink asks, else it runs on; the others keep the status they carry.
        Everything here works on whole arrays of lanes: its cost follows the chunk's bytes, not
        the number of lanes.
        """
        with self.interrupts.host_call(), ieee():
            return self._receive_chunk(layout, head, windows)

    def _receive_chunk(self, layout: Layout, head: np.ndarray, windows: tuple) -> np.ndarray:
        arrived = time.perf_counter()
        began = paced_clock()
        entry = None
        try:
            self.interrupts.poll()  # a press becomes a stop request here, mid-run
            chunk = _wire.decode(layout, head, windows)
            with self._lock:
                entry = self._runs.get(chunk.run_id)
            if entry is None:
                return answer(False, NEVER)
            entry.chunks += 1
            interval = entry.pace.interval(layout, chunk.rows, arrived)
            # When its rows came: now, in this call (not when the worker files them later).
            entry.rows.arrived(chunk_end(chunk), arrived)
            # In its run's channel already (`jhw.log`'s batches are sent from the worker): filed
            # at once, or it would be filed after whatever of the run waits behind this task.
            here = self.worker.holds(entry.run.id)
            if not here and self._rows_can_wait(entry, chunk, layout.accelerated):
                self.worker.submit(entry.run.id, self._file_later, entry, chunk)
                return answer(False, interval)
            with self.worker.holding(entry.run.id):  # after its earlier chunks: rows in order
                self._file(entry, chunk)
                # After the rows: a sink may ask for a stop when it sees them.
                stop = self._stop_asked(entry)
                ends_now = stop and not layout.ends_itself
                codes = np.where(chunk.status != 0, chunk.status, _STOPPED if ends_now else 0)
                if codes.all():  # every lane has ended (also a vmap over no lanes)
                    self._end(entry, codes.tolist())
            return answer(stop, interval)
        except Exception as e:
            report(e, "receive_chunk")
            return answer(False, layout.chunk)
        finally:
            if entry is not None:
                entry.pace.host_work(paced_clock() - began)
                entry.pace.call_ended()

    def _rows_can_wait(self, entry: Entry, chunk: Chunk, accelerated: bool) -> bool:
        """Whether the device may have its answer (run on) before this chunk's rows are filed:
        some lane runs on, no stop is asked, and no sink needs to see the rows first (on an
        accelerator, ``accelerated``, or not: a sink may decide by it)."""
        running = bool((chunk.status == 0).any())
        can_wait = self._calls.rows_can_wait(entry.sinks, accelerated)
        return running and can_wait and not self._stop_asked(entry)

    def _stop_asked(self, entry: Entry) -> bool:
        """Whether the run is to stop: a sink asks now, or one had asked when it was
        abandoned."""
        return entry.stop or self._calls.stop_asked(entry.sinks, entry.run)

    def _file_later(self, entry: Entry, chunk: Chunk) -> None:
        """`_file` on the worker: its time counts as the host's cost of the run's chunks."""
        t0 = paced_clock()
        try:
            self._file(entry, chunk)
        finally:
            entry.pace.host_work(paced_clock() - t0)

    def _file(self, entry: Entry, chunk: Chunk) -> None:
        """Append a chunk's rows to its run and tell the sinks (in the run's channel)."""
        run = entry.run
        with self._lock:
            resumed = entry.state == ABANDONED
            if resumed:  # it was given up for dead, and is alive after all
                self._runs.move(entry, OPEN)
                entry.rows.reopen()
        for sink in entry.sinks if resumed else ():
            self._calls.resume(sink, run)
        if resumed:
            if self.programs.ended(entry.program):  # it was not: the host cannot tell
                self.programs.mistaken(entry.program)
            self._orphans.watch(entry)
        entry.rows.lanes(chunk.lanes)
        touched, groups = lane_groups(chunk, run.id)
        for (start, n, at), group in groups:
            pick = lane_index(group)
            leaves = [x[pick, at : at + n] for x in chunk.leaves]
            entry.rows.append_lanes(group, int(start), leaves)
        if touched:
            for sink in entry.sinks:
                self._calls.rows(sink, run, touched)

    def _end(self, entry: Entry, codes: list[int]) -> None:
        """End the run with each lane's status code, and tell its sinks (once; in the run's
        channel)."""
        with self._lock:
            if entry.state == ENDED:
                return
            self._runs.move(entry, ENDED)
            entry.rows.finish(codes)
        self.programs.release(entry.program)
        for sink in entry.sinks:
            self._calls.end(sink, entry.run)

    # ---------------------------------------------------------------- called by sinks
    def abandon_runs(self, sink: HubSink) -> None:
        """End, as ``failed``, the open runs of ``sink`` whose program has ended, and those
        nobody attached waits for whose program cannot be known.

        Called when the last block that attached ``sink`` ends, once the device has passed the
        block's loops and their rows are in: a run still open then is one whose computation
        raised (no close will ever come), unless another thread's call still runs it (it
        streams on to its end). Its sinks learn that it ended and the rows received so far stay
        readable. A run some other attached sink streams to is left alone unless its program is
        known to have ended; should an abandoned run send rows after all, it is taken up again
        (`_file`) and ends with its real status (`_hub_orphans`).

        It may well be alive: a ``KeyboardInterrupt`` can leave the block while the loop still
        runs (JAX's waits for a result, ``block_until_ready`` or a multi-process array's value,
        run signal handlers meanwhile). A stop asked of it then (the press that raised stopped
        it) holds when it comes back, though its sinks, told it ended, forgot the request:
        otherwise it would run on to ``max_steps`` with nobody waiting, and a process exiting
        meanwhile waits for it (or, in a ``jax.distributed`` job, leaves the others hanging).
        """
        self.drain(sink)
        with self._lock:
            chosen = [e for e in self._runs.entries() if e.state == OPEN and sink in e.sinks]
        for e in chosen:
            with self.worker.holding(e.run.id):  # after its chunks so far, before any later
                self._orphans.settle(e)

    def take_exit(self, sink: HubSink) -> BaseException | None:
        """A `BaseException` (``SystemExit``, ``KeyboardInterrupt``) one of the hooks of
        ``sink`` or its companions raised inside a callback, to be raised again where the
        sink's block or call ends."""
        raised = [self._calls.take_exit(s) for s in self._calls.streams((sink,))]
        return next((e for e in reversed(raised) if e is not None), None)

    def drain(self, sink: HubSink) -> None:
        """Wait until the rows of ``sink``'s runs are filed and it and its companions were
        given every update (their own timed work on the worker included)."""
        with self._lock:
            ids = [e.run.id for e in self._runs.entries() if sink in e.sinks]
        for rid in ids:
            self.worker.drain(rid)
        for s in self._calls.streams((sink,)):
            self.worker.drain(s)

    # ------------------------------------------------------------------- process exit
    def at_exit(self, step: Callable[[], None]) -> None:
        """Run ``step`` as Python exits, once the rows on their way are in (`finish`)."""
        self._exit_steps.append(step)

    def finish(self) -> None:
        """As Python exits: wait for the loops still running on the device (a result dropped
        unread, a run given up at its block's end), so that their rows come in, and for their
        filing and the sinks' own work (`EXIT_DRAIN_S` at most), then run the exit steps (a
        store files what it received).

        It runs before JAX's own exit, which would end such a program midway. A loop that never
        ends keeps Python from exiting: Ctrl-C ends the wait (the exit steps still run).
        """
        try:
            if len(self._ever_attached):
                self.programs.wait()
                with self._lock:
                    keys: list[Any] = [e.run.id for e in self._runs.entries()]
                keys += list(self._calls.streams(tuple(self._ever_attached)))
                deadline = time.monotonic() + EXIT_DRAIN_S
                for key in keys:
                    if not self.worker.drain(key, max(0.0, deadline - time.monotonic())):
                        break
        except KeyboardInterrupt:
            pass
        except Exception as e:  # the exit steps run whatever happened
            report(e, "Python's exit")
        finally:
            for step in self._exit_steps:
                step()

    # ---------------------------------------------------------------------- interrupts
    def _press(self, abort: bool) -> bool:
        """A press while sinks are armed: stop the runs in flight of armed sinks (all of them
        when ``abort``); False if there was none to stop."""
        calls = self._calls
        targets = [
            s
            for s in self.interrupts.armed()
            if calls.running(s) and (abort or not calls.stop_requested(s))
        ]
        for sink in targets:
            sink.stop()
        return bool(targets)


#: The process's hub.
HUB = Hub()
# After JAX's own exit handlers are registered (`_wire` imports JAX): this one runs first.
atexit.register(HUB.finish)
