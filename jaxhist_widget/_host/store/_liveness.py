"""Whether the writer of a stored ``running`` run is still at it: a `Store` file's liveness.

Host runtime, stdlib only. A writer killed mid-run (``kill -9``, an out-of-memory kill) never
ends its runs, so the file alone cannot tell them from live ones. Each run records its writer's
``host``, ``pid``, ``writer`` (the process's identity on its host: boot id and start time, so a
reused pid is not taken for the writer) and ``heartbeat`` (UTC time of its last commit); a
reader judges by them (`writer_gone`) and reports such a run as ``interrupted``. The file keeps
``running``: a reader never writes.

A line whose pid is the reader's own is judged by what this process knows, not by the line: the
`Store` filings of this process note the runs they are filing (`note_filing`), and such a run
is live exactly when one of them is still at it (`filing_here`). So a killed writer whose pid
the reader now has (a restarted container, a pid reused) is never taken for the reader, even
where no writer identity could be recorded (no ``/proc``).
"""

from __future__ import annotations

import datetime
import os
import socket
import weakref
from typing import Protocol

__all__ = ["STALE_S", "file_ident", "filing_here", "note_filing", "writer_gone", "writer_token"]

#: A running run written on another host whose writer committed nothing for this long reads
#: as interrupted (its process cannot be looked up from here). With ``stream_every="auto"``
#: chunks come every fraction of a second, so only a run whose chunk of rows takes longer than
#: this to compute is misread.
STALE_S = 600.0


def writer_token(pid: int) -> str | None:
    """The identity of process ``pid`` on this host: boot id and start time (clock ticks since
    boot), which no later process with the same pid shares; None where ``/proc`` is missing
    (not Linux) or has no such process."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            boot = f.read().strip()
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    # fields[0] is field 3 of proc(5) (the state), so the start time (field 22) is fields[19].
    return None if fields[0] in ("Z", "X") else f"{boot}:{fields[19]}"


class _Filing(Protocol):
    """What `note_filing` keeps (weakly) of a store's filing of a run."""

    @property
    def filing(self) -> bool:
        """Whether the store is still filing the run (its end not filed, not given up)."""


#: (file's device, inode, run id) -> the filing of this process at it (a weak reference: a
#: store that is gone files nothing). No lock: one dict operation at a time is atomic, and the
#: writer notes a run while it holds its connection's lock, a leaf (see `_hub`'s lock order).
_FILINGS: dict[tuple[int, int, int], weakref.ref[_Filing]] = {}
#: Notes kept at most before the ones whose filing is gone are dropped.
_MAX_FILINGS = 4096


def file_ident(path: str | os.PathLike[str]) -> tuple[int, int] | None:
    """The (device, inode) of the file at ``path``, which names it however it is reached."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def note_filing(ident: tuple[int, int], run_id: int, filing: _Filing) -> None:
    """This process files run ``run_id`` of the file ``ident`` (while ``filing.filing``)."""
    if len(_FILINGS) >= _MAX_FILINGS:
        for key, ref in list(_FILINGS.items()):  # a copy: other threads may note meanwhile
            if ref() is None:
                _FILINGS.pop(key, None)
    _FILINGS[(*ident, run_id)] = weakref.ref(filing)


def filing_here(ident: tuple[int, int] | None, run_id: int) -> bool:
    """Whether a `Store` of this process is filing run ``run_id`` of the file ``ident``."""
    ref = _FILINGS.get((*ident, run_id)) if ident is not None else None
    filing = ref() if ref is not None else None
    return filing is not None and filing.filing


def writer_gone(
    host: str | None,
    pid: int | None,
    token: str | None,
    heartbeat: str | None,
    ident: tuple[int, int] | None = None,
    run_id: int | None = None,
) -> bool:
    """Whether the process that wrote a ``running`` run is certainly gone (killed mid-run).

    On this host, with the reader's own pid: unless this process is filing it (`filing_here`
    of the file ``ident`` and its ``run_id``), the writer was another process that had this
    pid, now gone (a restarted container hands the new process the pid its predecessor had).
    On this host otherwise: its pid is not alive (or a zombie), or is now another process (its
    `writer_token` differs). On another host: its last commit (``heartbeat``) is older than
    `STALE_S`. A run of a version 0 file from another host (no heartbeat) is never judged gone.
    """
    if host == socket.gethostname() and pid is not None:
        if pid == os.getpid():
            return run_id is None or not filing_here(ident, run_id)
        if not _alive(pid):
            return True
        if token is None:
            return False
        now = writer_token(pid)
        return now is None or now != token
    if heartbeat is None:
        return False
    try:
        beat = datetime.datetime.fromisoformat(heartbeat)
    except ValueError:
        return False
    age = datetime.datetime.now(datetime.UTC) - beat
    return age.total_seconds() > STALE_S


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    except OSError:
        return False
    try:  # a zombie (dead, not yet reaped by its parent) answers kill(0) too
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return True  # no /proc (not Linux): kill(0) said alive
