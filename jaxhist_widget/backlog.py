"""One worker thread that files a chunk's rows while its loop runs on.

Layer 2 (host). A chunk's host call holds the loop until it returns, but only its answer (stop or
not, rows until the next flush) must come first; filing the rows (appending them to their `Run`,
telling the sinks) can wait. When no sink of a run needs to see rows before the answer (see
`Sink._rows_can_wait`), the registry answers at once and leaves the filing here: one thread, so
chunks are filed in the order they came. The chunk that ends a run waits for all of it
(`drain`) and is filed in the call itself, so when the loop's call returns every row is in, as
without the backlog.

Measured on 2 cores (``benchmarks/overhead.py`` problem (c), 64 vmap lanes, 52 MB of rows; runs
interleaved in one process): the run with a `Recorder` took 1.15x the bare loop, against 1.21x
filing in the call. Problem (a) (one lane, 4 MB) did not change: its filing is small.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any

from . import delivery

__all__ = ["drain", "submit"]

#: Chunks waiting at most; past that the next chunk waits for them (memory stays bounded when
#: the host files more slowly than the device makes rows).
MAX_PENDING = 16

_queue: queue.Queue[tuple[Callable[..., Any], tuple[Any, ...]]] = queue.Queue()
_lock = threading.Lock()
_worker: threading.Thread | None = None


def submit(fn: Callable[..., Any], *args: Any) -> None:
    """Call ``fn(*args)`` on the worker thread, after everything submitted before."""
    if _queue.qsize() >= MAX_PENDING:
        drain()
    _queue.put((fn, args))
    _ensure_worker()


def drain() -> None:
    """Wait until everything submitted so far has been done (at once if nothing waits)."""
    if not _queue.unfinished_tasks or threading.current_thread() is _worker:
        return  # (the worker waiting for itself would never end)
    _ensure_worker()
    _queue.join()


def _ensure_worker() -> None:
    global _worker
    if _worker is not None and _worker.is_alive():  # the common case, without the lock
        return
    with _lock:
        # Started on first use, and again in a forked child (threads do not survive a fork).
        if _worker is None or not _worker.is_alive():
            _worker = threading.Thread(target=_work, name="jaxhist-backlog", daemon=True)
            _worker.start()


def _work() -> None:
    while True:
        fn, args = _queue.get()
        try:
            fn(*args)
        except BaseException as e:  # never let one chunk stop the filing of the next
            delivery.report(e, "backlog")
        finally:
            _queue.task_done()
