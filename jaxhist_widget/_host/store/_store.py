"""`Store`: a sink that files every run it receives into an SQLite file, as the rows arrive.

Host runtime. The hooks, which run in the loop's host calls, only note what a run has new and
hand the filing to the package's worker (`HUB.worker`, under a key of the store's own); the
worker commits it (`_writer`). So the loop never waits on the file, whatever holds it up
(another program's lock, a slow disk); the rows wait meanwhile in the run, which the host keeps
in memory anyway. The format is `_schema`'s.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
import warnings
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ..runtime import HUB, Run, log, report
from ..sinks import Sink
from . import _file as files
from . import _open_stores
from ._stored import StoredRun, load_runs
from ._writer import Filing, Locked, Writer, utc_now

__all__ = ["Store"]

T = TypeVar("T")

#: Another program holding the file's lock this long (seconds) is worth a warning.
LOCK_WARN_S = 5.0
#: While the file is locked, filing is tried again this often (seconds; each try waits up to
#: `_file.BUSY_S` for the lock), from the worker's timer: no thread waits in between.
LOCK_RETRY_S = 0.1


class Store(Sink):
    """Append every run started while attached to the SQLite file ``path``, as its rows arrive.

    Each batch of rows is one committed transaction, so killing the process mid-run keeps
    every row filed before the kill, readable by `load_runs` or any SQLite reader; what a
    ``kill -9`` loses is only the rows not yet committed: those the loop had not handed to the
    host yet (at most one chunk per lane, some 50 ms of rows with ``stream_every="auto"``) and
    those the worker had not filed yet (normally a few ms of them). A commit is on disk for any
    later reader once made (WAL with ``synchronous=NORMAL``: only a power cut may lose the last
    ones). A run whose writer died reads back with status ``"interrupted"`` (`StoredRun`).
    Several processes may write one file at once. Rows are exact: every dtype, vmap lanes and
    vector leaves read back bit for bit; the file is plain SQLite (see `_schema` for its
    tables, and the ``history`` view with every value as SQL), e.g.
    ``pandas.read_sql("SELECT * FROM history", sqlite3.connect(path))``.

    The loop never waits on the file: the store's hooks only note what is new, and the
    package's worker thread files it. When the file is locked by another program (an
    ``sqlite3`` shell inside ``BEGIN``, a database browser), the rows wait in memory (in their
    runs, which the host keeps anyway) and are filed when it is let go, every one; the store
    says so once (when the block ends, or after `LOCK_WARN_S` seconds of lock).

    Leaving the ``with`` block (or a `run`) waits until every row the store received is filed,
    unless another program holds the file's lock: then it does not wait at all. A slow file
    is waited for at most `exit_wait` seconds; past that it warns. Either way the rows go on
    being filed in the background: `flush` waits for them, and so does the end of the Python
    process (for `exit_wait` again). Ctrl-C during the wait ends the wait, not the filing.

    Where a run cannot be filed (the disk is full, the file was deleted or turned read-only)
    the store warns once, naming the file and the cause, stops filing that run, and marks it
    in the file (`StoredRun.incomplete`, status ``"interrupted"``) where it still can; the
    computation and its device `History` go on untouched, and the next run is filed afresh.

    Parameters
    ----------
    path
        The store's file: created at the first run if missing, in an existing directory.
    name
        The name given to the runs this store writes (`name` may be changed between runs).

    Raises
    ------
    FileNotFoundError, IsADirectoryError, PermissionError, ValueError
        At once, naming the path and what to do, if ``path`` cannot be a store: its directory
        is missing, it is a directory, it is not an SQLite file or a truncated one, it is
        another application's database or a store of a newer format, or it cannot be written.
        Nothing is written to such a file.

    Examples
    --------
    >>> import tempfile, os, jaxhist_widget as jhw
    >>> path = os.path.join(tempfile.mkdtemp(), "runs.db")
    >>> with jhw.Store(path, name="halving"):
    ...     _ = jhw.while_loop(lambda x: x > 1.0, lambda x: x / 2, 10.0, max_steps=9)
    >>> [run] = jhw.load_runs(path)
    >>> run.name, run.status, run.history().tolist()
    ('halving', 'converged', [10.0, 5.0, 2.5, 1.25, 0.625])
    """

    # The store never asks for a stop from what it sees: its rows may wait.
    rows_can_wait = True
    #: Seconds leaving a ``with`` block (or `run`) waits for the rows still to be filed.
    exit_wait: float = 10.0

    def __init__(self, path: str | os.PathLike[str], *, name: str | None = None) -> None:
        self.path = Path(os.fsdecode(path))
        files.inspect(self.path, writing=True)  # refuse what cannot be a store, untouched
        super().__init__()
        #: The name given to runs that start from now on, unless a named block names them
        #: (`Sink.name`; None: the run's own name, else ``run <id>``).
        self.name = name
        self._key = ("jaxhist_widget.Store", id(self))  # the worker's tasks of this store
        self._state = threading.Condition(threading.Lock())  # a leaf lock: nothing inside
        self._reset_state()
        _open_stores.add(self)  # a read in this process waits for it; so does the exit

    def _reset_state(self) -> None:
        self._pid = os.getpid()
        self._writer = Writer(self.path)
        self._filings: dict[Run, Filing] = {}  # runs not filed whole yet
        self._filed: weakref.WeakKeyDictionary[Run, Filing] = weakref.WeakKeyDictionary()
        self._dirty: dict[Filing, None] = {}  # runs with something to file, in order
        self._queued = False  # a task of this store is queued or running on the worker
        self._noted = self._done = 0  # notes made; notes all filed up to
        self._locked = False  # the last pass met another program's lock (state lock)
        self._locked_since: float | None = None
        self._warned: set[str] = set()  # (state lock)

    # ------------------------------------------------------------------- reading
    def runs(self) -> list[StoredRun]:
        """Every run in the store, oldest first (see `load_runs`); [] before the first. Rows
        still to be filed are waited for (at most `exit_wait`), unless the file is locked."""
        self._wait(self.exit_wait, give_way=True)
        return load_runs(self.path) if self.path.exists() else []

    def flush(
        self, timeout: float | None = None, *, warn: bool = False, unless_locked: bool = False
    ) -> bool:
        """Wait until every row this store received so far is filed (or given up on), at most
        ``timeout`` seconds (None: as long as it takes); True if it is. Ctrl-C ends the wait.
        With ``warn``, a wait that times out says how many rows are still to be filed. With
        ``unless_locked`` (what the end of a block does), no wait while another program holds
        the file's lock: False at once, and with ``warn`` the store says (once) that the rows
        wait in memory until the lock goes."""
        if self._wait(timeout, give_way=unless_locked):
            return True
        with self._state:
            locked = self._locked
        if warn and unless_locked and locked:
            self._warn_locked()
        elif warn:
            rows = self._rows_waiting()
            why = "another program holds its lock" if locked else "a slow disk?"
            self._warn(
                f"{rows:,} rows are not filed into {str(self.path)!r} after {timeout:g} s "
                f"({why}); they are filed in the background as the file allows. "
                "store.flush() waits for them; the end of Python waits "
                f"{self.exit_wait:g} s more."
            )
        return False

    def _wait(self, timeout: float | None, give_way: bool = False) -> bool:
        """Wait until every note made so far is filed, at most ``timeout`` seconds; with
        ``give_way``, not while another program holds the file's lock. True if filed."""
        self._check_fork()
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._state:
            target = self._noted
            while self._done < target and (self._dirty or self._queued):
                if give_way and self._locked:
                    return False
                left = 0.1 if deadline is None else min(0.1, deadline - time.monotonic())
                if left <= 0:
                    return False
                self._state.wait(left)  # in slices: a signal's handler runs between them
            return True

    def close(self) -> None:
        """Close the file (it is opened again when something is to be filed)."""
        self._writer.close()

    # ----------------------------------------------------------------- sink hooks
    # Called in the loop's host calls: they note, the worker files. No SQLite here.
    def on_start(self, run: Run) -> None:
        self._check_fork()
        name = run.name if run.name_given else (self.name or run.name)
        with self._state:
            if run in self._filings or run in self._filed:  # handed twice (a plot's store=
                return  # that is also attached): one line in the file
            filing = self._filings[run] = Filing(run, name, utc_now())
            queue = self._note(filing)
        self._queue(queue)

    def on_rows(self, run: Run, lanes: list[int]) -> None:
        with self._state:
            filing = self._open(run)
            queue = filing is not None and self._note(filing)
        self._queue(queue)

    def on_end(self, run: Run) -> None:
        end = (run.status, list(run.statuses), run.elapsed, utc_now())
        with self._state:
            filing = self._filings.get(run)
            if filing is not None:
                filing.end, filing.ended = end, True
            queue = filing is not None and self._note(filing)
        self._queue(queue)

    def _resume(self, run: Run) -> None:
        super()._resume(run)
        with self._state:
            filing = self._open(run)
            queue = filing is not None and self._note(filing)
        self._queue(queue)

    def _open(self, run: Run) -> Filing | None:
        """The filing of ``run`` (caller holds the state lock); a run filed whole and ended
        that sends rows after all (given up for dead when its block ended) is reopened."""
        filing = self._filings.get(run)
        if filing is None and run in self._filed:
            filing = self._filings[run] = self._filed.pop(run)
            filing.ended, filing.end = False, None
        return filing

    def _note(self, filing: Filing) -> bool:
        """Mark ``filing`` as having something to file (caller holds the state lock); True if
        a task must be queued for it."""
        self._dirty[filing] = None
        self._noted += 1
        if self._queued:
            return False
        self._queued = True
        return True

    def _queue(self, queue: bool) -> None:
        if queue:
            HUB.worker.submit(self._key, self._work)

    def _check_fork(self) -> None:
        if self._pid != os.getpid():  # a forked child: the parent files the parent's runs
            with self._state:
                self._reset_state()

    # --------------------------------------------------------------- on the worker
    def _work(self) -> None:
        """File what is noted, one pass; queue another pass if more came meanwhile (a task
        per pass, so other work on the worker gets its turn between them)."""
        if self._pid != os.getpid():
            return
        try:
            self._pass()
        except BaseException as e:  # a bug: report it, and never leave the queue stuck
            report(e, "Store (filing)")
            with self._state:
                again = bool(self._dirty)
                self._queued = again
                self._state.notify_all()
            self._queue(again)

    def _pass(self) -> None:
        with self._state:
            batch, gen = list(self._dirty), self._noted
            self._dirty.clear()
        waiting: list[Filing] = []
        for k, filing in enumerate(batch):
            try:
                self._writer.file(filing)
            except Locked:
                waiting = batch[k:]  # the others would wait for the same lock
                break
            except Exception as e:  # a bug: never leave the store's queue stuck
                filing.gave_up = f"{type(e).__name__}: {e}"
                report(e, "Store (filing)")
            if filing.gave_up is not None:
                self._tell_gave_up(filing)
        self._lock_watch(bool(waiting))
        with self._state:
            for filing in batch:
                if filing.done and self._filings.get(filing.run) is filing:
                    del self._filings[filing.run]
                    if filing.gave_up is None:
                        self._filed[filing.run] = filing
            self._dirty = {**dict.fromkeys(waiting), **self._dirty}
            self._locked = bool(waiting)
            if not waiting:
                self._done = max(self._done, gen)
            again = bool(self._dirty)
            if not again:
                self._queued = False
            self._state.notify_all()
        if again and waiting:  # locked: try again in a while, no thread waiting meanwhile
            HUB.worker.later(LOCK_RETRY_S, self._work, key=self._key)
        else:
            self._queue(again)

    def _lock_watch(self, locked: bool) -> None:
        """Warn once another program has held the file's lock for `LOCK_WARN_S`."""
        now = time.monotonic()
        if not locked:
            if self._locked_since is not None:
                log.info("jaxhist_widget: %s is writable again; filing resumed", self.path)
            self._locked_since = None
            with self._state:
                self._warned.discard("locked")
            return
        if self._locked_since is None:
            self._locked_since = now
        elif now - self._locked_since > LOCK_WARN_S:
            self._warn_locked()

    def _rows_waiting(self) -> int:
        """Rows received and not filed yet (the runs' counts read with the state lock let go:
        it is a leaf lock, and a run's lock is not)."""
        with self._state:
            filings = list(self._filings.values())
        return sum(sum(f.run.counts) - f.rows_filed() for f in filings)

    def _warn_locked(self) -> None:
        """Say, once per time the file is locked, that its rows wait in memory."""
        with self._state:
            if "locked" in self._warned:
                return
            self._warned.add("locked")
        waiting = self._rows_waiting()
        self._warn(
            f"another program holds the write lock of {str(self.path)!r} (an open "
            "transaction: an sqlite3 shell inside BEGIN, a database browser), so "
            f"{waiting:,} rows wait in memory to be filed. Neither the loop nor the end of "
            "its block waits for them; they are filed as soon as it lets go of the file "
            f"(store.flush() waits for that; the end of Python waits up to {self.exit_wait:g} s)."
        )

    def _tell_gave_up(self, filing: Filing) -> None:
        cause = filing.gave_up or ""
        kind = cause.split(" (")[0]
        if kind in self._warned:
            return
        self._warned.add(kind)
        name = filing.name if filing.name is not None else f"run {filing.run.id}"
        self._warn(
            f"could not file run {name!r} into {str(self.path)!r}: {cause}. It stopped "
            f"filing that run after {filing.rows_filed():,} rows"
            + (", marked incomplete in the file" if filing.db_id is not None else "")
            + ". The computation and its History are unaffected (the rows stay in memory "
            "with the run); the next run is filed afresh."
        )

    def _warn(self, text: str) -> None:
        log.warning("jaxhist_widget: Store: %s", text)
        warnings.warn(f"jaxhist_widget: Store: {text}", RuntimeWarning, stacklevel=2)

    # ------------------------------------------------------------------ attaching
    def __exit__(self, *exc: object) -> bool:
        try:
            return super().__exit__(*exc)  # True: a stopped `jhw.log` loop (`Stopped`) ended
        finally:
            self._wait_at_exit()

    async def run_async(
        self, fn: Callable[..., T], *args: Any, name: str | None = None, **kwargs: Any
    ) -> T | None:
        result = await super().run_async(fn, *args, name=name, **kwargs)
        await asyncio.get_running_loop().run_in_executor(None, self._wait_at_exit)
        return result

    run_async.__doc__ = Sink.run_async.__doc__

    def _wait_at_exit(self) -> None:
        self.flush(self.exit_wait, warn=True, unless_locked=True)

    def _file_before_exit(self) -> None:
        """As Python ends: file what this process received (at most `exit_wait`)."""
        if self._pid == os.getpid() and not self.flush(self.exit_wait):
            self._warn(f"Python ends with rows not yet filed into {str(self.path)!r}.")

    def __repr__(self) -> str:
        return f"Store({str(self.path)!r}, name={self.name!r})"
