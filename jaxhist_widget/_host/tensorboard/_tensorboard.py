"""`TensorBoard`: a sink that writes every run it receives as TensorBoard event files, chunk by
chunk (`_export.write_runs` writes runs already made alike).

Host runtime. The files are this package's own writing (`_tfevents`): no TensorFlow, no
protobuf package, nothing to install. What a run becomes (directories, tags, what each dtype
reads back as) is `_files`'s docstring.
"""

from __future__ import annotations

import collections
import os
import threading
import time
from pathlib import Path

import numpy as np

from ..runtime import HUB, Run, Timer, report
from ..sinks import Sink
from ._files import RunFiles, WallClock

__all__ = ["TensorBoard"]

#: Runs whose files the sink still appends to should more rows come (each a few numbers).
_MAX_ENTRIES = 1024
#: After a write, the sink waits this many times as long as it took before the next (so the
#: writer takes at most about a third of a core), but never longer than `_MAX_PAUSE` seconds.
_PAUSE = 2.0
_MAX_PAUSE = 0.5
#: Rows one write takes at most, so that the worker's other tasks (the loop's next chunks)
#: get their turn in between (a fraction of a second of work, enough rows a lane that the
#: per-lane cost of a write stays small next to the rows'); the rest follow in the next one.
_MAX_ROWS = 1 << 20


class _Note:
    """What a sink's hooks noted of one run since its worker last wrote: the run, whether it
    ended, and when rows came (seconds since the epoch, rows per lane then)."""

    __slots__ = ("arrivals", "ended", "run")

    def __init__(self, run: Run) -> None:
        self.run = run
        self.ended = False
        self.arrivals: list[tuple[float, list[int]]] = []


class TensorBoard(Sink):
    """Write every run started while attached as TensorBoard event files under ``logdir``.

    A run becomes a directory named after it (``adam``, or ``adam (2)`` when taken), and under
    vmap a directory per lane (``adam/lane 3``): TensorBoard's run selector lists them by those
    names. A name longer than a file name may be (255 bytes: a config string) is cut to fit,
    with a digest of the whole after ``~`` (runs of different names never share a directory);
    the text summary keeps the whole name, as a `Store` does.
    Each row is an event at its step: a scalar tag per scalar leaf and per component of
    a leaf of up to 10 components (``x[0]``), a histogram for a larger leaf; float32 values are
    written bit for bit, others rounded to float32 (details: `to_tensorboard`). A text summary
    (the Text dashboard, tag ``jaxhist/run``) names the run, its fields, and its status when it
    ends. Open them with ``tensorboard --logdir LOGDIR``.

    The loop never waits for the files: the sink's hooks only note what came and hand the
    writing to the package's worker thread, which appends each chunk (every lane's rows at once)
    and writes it straight to the file, so a file is readable while the run goes on and a
    ``kill -9`` keeps every chunk written before it, as a `Store` keeps its commits. Leaving the
    ``with`` block waits until every row is in the files. A write that fails (disk full) is
    reported once as a warning and never stops the run; its rows go with the next chunk.

    Parameters
    ----------
    logdir
        The directory to write in, made if missing (what ``tensorboard --logdir`` is given).
    name
        The name given to the runs this sink writes, unless a named block or a runner's
        ``name=`` names them (`Sink.name`).

    Examples
    --------
    >>> import tempfile, jaxhist_widget as jhw
    >>> logdir = tempfile.mkdtemp()
    >>> with jhw.TensorBoard(logdir, name="halving") as tb:
    ...     _ = jhw.while_loop(lambda x: x > 1.0, lambda x: x / 2, 10.0, max_steps=9)
    >>> [p.name for p in tb.run_dirs]
    ['halving']
    >>> from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    >>> events = EventAccumulator(str(tb.run_dirs[0])).Reload()
    >>> [(e.step, e.value) for e in events.Scalars("value")]
    [(0, 10.0), (1, 5.0), (2, 2.5), (3, 1.25), (4, 0.625)]
    """

    # The sink asks for no stop from what it sees: its rows may wait for the worker.
    rows_can_wait = True

    def __init__(self, logdir: str | os.PathLike[str], *, name: str | None = None) -> None:
        super().__init__()
        self.logdir = Path(logdir)
        #: The name given to runs that start from now on, unless a named block names them.
        self.name = name
        # Guards the notes, `_queued` and the timer; taken in the hooks with nothing else held,
        # and only the worker's condition (a leaf) is taken inside it.
        self._notes_lock = threading.Lock()
        self._notes: dict[int, _Note] = {}
        self._queued = False  # a write is queued on the worker (it takes the notes it finds)
        self._timer: Timer | None = None  # a write waiting for the pause to end
        self._not_before = 0.0  # the pause after the last write ends then (time.monotonic)
        # in-process run id -> its files (touched on the worker only)
        self._files: collections.OrderedDict[int, RunFiles] = collections.OrderedDict()
        self._dirs: list[Path] = []

    @property
    def run_dirs(self) -> list[Path]:
        """The directory of every run this sink has written, oldest first (a batched run's
        holds a directory per lane). Complete once the block that ran them has ended."""
        with self._notes_lock:
            return list(self._dirs)

    def flush(self) -> None:
        """Write every row received so far now, and return once it is in the files (leaving
        the block does this for its runs; this is for reading the files mid-run)."""
        with self._notes_lock:
            queue = not self._queued and bool(self._notes)
            self._queued |= queue
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
        if queue:
            HUB.worker.submit(self, self._write_notes)
        HUB.worker.drain(self)

    def __exit__(self, *exc: object) -> bool:
        # Leaving waits for the files too: the runs that ended, and those given up for dead
        # when the block ended (their computation raised), with their status.
        try:
            return super().__exit__(*exc)  # True: a stopped `jhw.log` loop (`Stopped`) ended
        finally:
            self.flush()

    # ----------------------------------------------------------------- sink hooks
    # Each hook only notes what came and queues one write on the worker (if none is queued):
    # the loop's host call does no file work, and a worker behind the loop writes several
    # chunks in one go.
    def on_start(self, run: Run) -> None:
        self._note(run)

    def on_rows(self, run: Run, lanes: list[int]) -> None:
        self._note(run, arrived=(time.time(), run.counts))

    def on_end(self, run: Run) -> None:
        self._note(run, ended=True)

    def _note(
        self, run: Run, arrived: tuple[float, list[int]] | None = None, ended: bool = False
    ) -> None:
        with self._notes_lock:
            note = self._notes.get(run.id)
            if note is None:
                note = self._notes[run.id] = _Note(run)
            if arrived is not None:
                note.arrivals.append(arrived)
            note.ended |= ended
            if self._queued:
                return
            # A write that took long (thousands of lanes) is followed by a pause, so that the
            # writer takes at most about a third of a core and writes more chunks at a time;
            # the end of a run is written at once.
            wait = self._not_before - time.monotonic()
            if wait > 0 and not ended:
                if self._timer is None:
                    self._timer = HUB.worker.later(wait, self._pause_over)
                return
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            self._queued = True
        # Keyed by the sink: leaving its block (`Hub.drain`) waits for these writes.
        HUB.worker.submit(self, self._write_notes)

    def _pause_over(self) -> None:
        with self._notes_lock:
            self._timer = None
            queue = not self._queued and bool(self._notes)
            self._queued |= queue
        if queue:
            HUB.worker.submit(self, self._write_notes)

    # ------------------------------------------------------------------- writing
    def _write_notes(self) -> None:
        """On the worker: write what the hooks noted, run by run."""
        began = time.monotonic()
        with self._notes_lock:
            notes, self._notes, self._queued = self._notes, {}, False
        left = []
        for note in notes.values():
            try:
                if self._write(note):
                    left.append(note)
            except Exception as e:  # reported once per run; its rows go with the next chunk
                report(e, "TensorBoard.write", once=(id(self), note.run.id, "write"))
        ended = time.monotonic()
        with self._notes_lock:
            self._not_before = ended + min(_PAUSE * (ended - began), _MAX_PAUSE)
            for note in left:  # the rest of a long backlog: after what was queued meanwhile
                later = self._notes.get(note.run.id)
                if later is not None:
                    note.arrivals += later.arrivals
                    note.ended |= later.ended
                self._notes[note.run.id] = note
            queue = bool(left) and not self._queued
            self._queued |= queue
        if queue:
            HUB.worker.submit(self, self._write_notes)

    def _write(self, note: _Note) -> bool:
        """Write a run's noted rows (at most `_MAX_ROWS`) and its end; True if rows are left."""
        run = note.run
        files = self._files.get(run.id)
        if files is None:
            files = RunFiles(self.logdir, self._run_name(run), run)
            self._files[run.id] = files
            while len(self._files) > _MAX_ENTRIES:  # the oldest runs are long over
                self._files.popitem(last=False)
            with self._notes_lock:
                self._dirs.append(files.dir)
        files.write(run, _arrival_clock(note.arrivals, time.time()), limit=_MAX_ROWS)
        if files.behind(run):
            return True
        if note.ended:
            files.end(run, time.time())
        # The entry stays: a run given up for dead may send rows after all, and end again.
        return False

    def _run_name(self, run: Run) -> str | None:
        # As `Store`: the name the user gave, else this sink's, else one made up (a call, a
        # cell), else none (`claim` numbers it).
        return run.name if run.name_given else (self.name or run.name)

    def __repr__(self) -> str:
        return f"TensorBoard({str(self.logdir)!r}, name={self.name!r})"


def _arrival_clock(arrivals: list[tuple[float, list[int]]], now: float) -> WallClock:
    """Each row's wall time: when the chunk that brought it came (``now`` for rows no noted
    chunk covers)."""

    def wall(lanes: np.ndarray, start: np.ndarray, stop: np.ndarray, steps: np.ndarray):
        # Per lane, the rows each arrival brought: its rows count then, within the new rows.
        # One step for every lane and arrival at once (there may be thousands of each).
        bounds = [start]
        for _, counts in arrivals:
            bounds.append(np.clip(np.asarray(counts, np.int64)[lanes], start, stop))
        bounds.append(stop)
        per = np.diff(np.maximum.accumulate(np.stack(bounds), axis=0), axis=0)  # (K + 1, lanes)
        times = np.array([when for when, _ in arrivals] + [now])
        return np.repeat(np.broadcast_to(times[:, None], per.shape).T.ravel(), per.T.ravel())

    return wall
