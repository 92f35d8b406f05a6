"""What the host can tell of the programs that run its loops: whether the device has passed the
ones dispatched so far (a block's wait), and whether a run's own program has ended.

A run ends with its loop's last flush. A program that fails first (a host callback of the
user's raised, the device failed) makes no more host calls, so the hub learns that it ended
from what the host sees of the program, in one of two ways:

- A *synchronous* program (on a CPU, a program on one device: the thread that calls it waits
  inside the call, and the loop's first host call comes on that thread) has ended once that
  thread has left the call. The run's first host call notes where the call was made: the
  frame outside JAX and the package that made it, and the instruction it stopped at
  (`Program.frame`, `.at`). The program runs while that frame is on its thread's stack still
  stopped there, and until the same place makes a call again (a loop calling the jitted
  function: that call opens a run of its own from there).
- An *asynchronous* one (on an accelerator, a program over several CPU devices: the call
  returns at once, and the host calls come on the runtime's own threads) has ended once tiny
  programs queued behind it (*marks*) have run: each accelerator device runs its programs in
  the order they were dispatched, and XLA's CPU client launches its programs over several
  devices one at a time, each once the one before has ended (checked with jax 0.10 on 4 and 8
  CPU devices: a mark waited for a program over a subset of the devices, another thread's, one
  whose result was dropped, one that failed). So once marks have run, every run opened before
  they were queued has had its last flush, or never will (`Programs.passed`).

A run opened otherwise (a test driving the hub, or a CPU program whose first host call came on
one of XLA's threads) is not known: the hub falls back on it going quiet (`_hub_orphans`).

`Programs.wait` is a block's wait for the device: every live array not yet computed, then
marks, which also waits for programs whose results were dropped unread. ``jax.effects_barrier``
does not wait for these programs (its runtime token is ready at dispatch: checked on 4 CPU
devices and a TPU) and raises, again at every call, the error of a program that failed. A
program that failed counts as done: its error is raised where its result is used.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys
import threading
from types import FrameType
from typing import Any

__all__ = ["Program", "Programs", "ready", "wait_for"]

#: The modules a host call's thread runs between the call that runs the program and the hub:
#: JAX's dispatch and its callback, the device layer and the wire, the hub itself.
_INSIDE_THE_CALL = (
    "jax.",
    "jaxlib.",
    "jaxhist_widget._device.",
    "jaxhist_widget._wire",
    "jaxhist_widget._host.runtime.",
    "jaxhist_widget._host.interrupts.",
)


@dataclasses.dataclass(eq=False)
class Program:
    """A run's program as its first host call saw it (`Programs.opened`)."""

    #: Runs opened so far, this one included (marks queued after it pass it).
    seq: int
    #: Synchronous: the frame that made the call that runs it, the instruction it stopped at,
    #: and its thread.
    frame: FrameType | None = None
    at: int = -1
    thread: int | None = None
    #: Asynchronous: its host calls come on the runtime's own threads.
    queued: bool = False
    #: Known to have ended.
    ended: bool = False


class Programs:
    """Runs' programs and the marks queued behind them; see the module docstring.

    Its state is guarded by a leaf lock of its own (nothing is taken while it is held).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls: dict[int, list[Program]] = {}  # by thread: the synchronous ones running
        self._opened = 0
        self._passed = 0  # runs opened before marks that have run
        self._marks: tuple[int, list[Any]] | None = None  # queued by `look`, not yet seen run
        self._looking = False  # a `look` runs (one at a time: its dispatch may wait)

    def opened(self) -> Program:
        """The program of a run opening now: call it in the run's first host call."""
        with self._lock:
            self._opened += 1
            program = Program(self._opened)
        frame: FrameType | None = sys._getframe(1)
        through_jax = False
        while frame is not None and frame.f_globals.get("__name__", "").startswith(
            _INSIDE_THE_CALL
        ):
            through_jax = through_jax or frame.f_globals["__name__"].startswith("jax.")
            frame = frame.f_back
        if through_jax and frame is None:  # nothing outside JAX: one of the runtime's threads
            program.queued = True
        elif through_jax and frame is not None:  # this thread waits in the call `frame` makes
            program.frame, program.at = frame, frame.f_lasti
            program.thread = thread = threading.get_ident()
            with self._lock:
                calls = self._calls.setdefault(thread, [])
                for earlier in [p for p in calls if p.frame is frame and p.at == program.at]:
                    self._end(earlier)  # the same place calls again: that call returned
                calls.append(program)
        return program

    def ended(self, program: Program | None) -> bool | None:
        """Whether ``program`` has ended: True, False, or None where the host cannot tell
        (yet: an asynchronous one, until marks queued after it have run)."""
        if program is None or program.ended:
            return None if program is None else True
        if program.frame is not None:
            if _in_call(program.thread, program.frame, program.at):
                return False
            with self._lock:
                self._end(program)
            return True
        with self._lock:
            program.ended = program.queued and program.seq <= self._passed
        return True if program.ended else None

    def release(self, program: Program | None) -> None:
        """``program``'s run has had its last flush: forget it (and the frame it noted)."""
        if program is not None:
            with self._lock:
                self._end(program)

    def mistaken(self, program: Program | None) -> None:
        """``program``'s run sent rows after its program was taken for ended (a program on one
        CPU device whose first host call came on one of XLA's threads is not in the marks'
        order): nothing is known of it from now on."""
        if program is not None:
            with self._lock:
                self._end(program)
                program.ended = program.queued = False

    def _end(self, program: Program) -> None:
        # Caller holds the lock.
        program.ended = True
        if program.frame is not None and program.thread is not None:
            program.frame = None  # (not kept alive past the call)
            calls = self._calls.get(program.thread, [])
            if program in calls:
                calls.remove(program)
            if not calls:
                self._calls.pop(program.thread, None)

    def look(self) -> None:
        """Note the marks queued at the last look if they have run, and queue new ones if none
        are on their way (where the device orders its programs, and this process is the whole
        job). It waits for no program, but queueing a mark can wait for the programs running
        (their host calls with it): call it where no host call waits for the caller (never in
        a run's channel). One look at a time: another returns at once."""
        with self._lock:
            if self._looking:
                return
            self._looking = True
        try:
            self._look()
        finally:
            with self._lock:
                self._looking = False

    def _look(self) -> None:
        with self._lock:
            marks = self._marks
        if marks is not None and all(ready(x) for x in marks[1]):
            self._pass(marks[0])
            marks = None
        if marks is None and _ordered() and _one_process():
            with self._lock:
                opened = self._opened
            queued = _queue_marks()
            with self._lock:
                self._marks = (opened, queued)

    def wait(self, poll: float = 0.01) -> None:
        """Wait until the device work dispatched so far has finished, its host calls included.

        Where dispatch is asynchronous (a TPU, a GPU, a program over several CPU devices), a
        jitted call returns before its loop has run: a block that ended then would detach its
        sinks before the loop's first host call, and the run would stream to nobody (or to the
        sinks of a later block). So the wait is on what the programs make (every live array not
        yet computed) and on marks queued behind them (see the module docstring).

        The calling thread waits on an event (`wait_for`), not in C++: it wakes the moment the
        device is done, and runs Python meanwhile, so a press reaches the interrupt bridge's
        handler at once.
        """
        import jax

        pending = [x for x in jax.live_arrays() if not ready(x)]
        with self._lock:
            opened = self._opened
        marks = _queue_marks() if _ordered() else []
        wait_for(pending + marks, poll)
        if marks:
            self._pass(opened)

    def _pass(self, opened: int) -> None:
        with self._lock:
            self._passed = max(self._passed, opened)


def _in_call(thread: int | None, frame: FrameType, at: int) -> bool:
    """Whether ``frame`` is on the stack of thread ``thread`` now, stopped at instruction
    ``at`` still."""
    here = sys._current_frames().get(thread) if thread is not None else None
    while here is not None:
        if here is frame:
            return frame.f_lasti == at
        here = here.f_back
    return False


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

    threading.Thread(target=block, name="jaxhist-wait", daemon=True).start()
    while not done.wait(poll):
        pass


def _ordered() -> bool:
    """Whether marks wait for the programs dispatched before them (see the module docstring):
    on an accelerator, and on the CPU over several devices."""
    import jax

    return jax.default_backend() != "cpu" or jax.local_device_count() > 1


def _one_process() -> bool:
    """Whether this process is the whole job. In a ``jax.distributed`` job only the process
    that streams looks at its runs: marks queued there and not in the others would have the
    processes launch programs in different orders (a block's wait queues them in every
    process alike)."""
    import jax

    return jax.process_count() == 1


def _queue_marks() -> list[Any]:
    """Marks queued behind the programs dispatched so far: on an accelerator one tiny program
    per local device, on the CPU one over all of them."""
    global _marks
    import jax

    devices = jax.local_devices()
    if _marks is None or _marks[0] != devices:
        groups = [devices] if jax.default_backend() == "cpu" else [[d] for d in devices]
        _marks = (devices, [_mark(group) for group in groups])
    return [add(zeros) for add, zeros in _marks[1]]


def _mark(devices: list[Any]) -> tuple[Any, Any]:
    """A tiny program over ``devices``, compiled, and its input. Compiled under a mesh of its
    own: a block may be inside the user's ``jax.set_mesh`` (a jitted call there refuses
    arrays of other devices, and an explicit mesh arrays of an automatic one)."""
    import jax
    import numpy as np

    mesh = jax.sharding.Mesh(np.array(devices), ("d",))
    spread = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("d"))
    zeros = jax.device_put(np.zeros(len(devices), np.int32), spread)
    with jax.set_mesh(mesh):
        return jax.jit(lambda x: x + 1).lower(zeros).compile(), zeros


_marks: Any = None


def ready(x: Any) -> bool:
    """Whether an array's value is computed; True for one deleted meanwhile (donated, freed)."""
    try:
        return bool(x.is_deleted() or x.is_ready())
    except RuntimeError:  # deleted between the two calls
        return True
