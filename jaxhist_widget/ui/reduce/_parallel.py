"""`each`: one function over a few independent items, on the cores numpy leaves idle.

A sweep's bands are its plot's heaviest host work: every step's values of every lane are sorted
(`row_quantiles`), one series after another. numpy releases the GIL while it sorts, copies and
converts large arrays, so series reduced on threads of their own run side by side. Nothing else
wants the cores meanwhile: a plot's update runs inside the loop's host call (the loop waits for
it; see `LivePlot.rows_can_wait`). Small work stays on the calling thread, where a handover to
another thread would cost more than it saves.

This is a pool of helpers for one call, not a second worker: it holds no queue between calls,
takes no lock of the runtime's, and each item's function touches only that item's state.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

__all__ = ["PARALLEL_MIN_VALUES", "each"]

T = TypeVar("T")
R = TypeVar("R")

#: Below this many values in all, the items are done in order on the calling thread.
PARALLEL_MIN_VALUES = 1 << 18
#: Threads at most, the caller's included (a plot has a few series; more would only wait).
_MOST_THREADS = 8

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def each(fn: Callable[[T], R], items: Iterable[T], values: int) -> list[R]:
    """``[fn(x) for x in items]``, the items side by side when there are several and
    ``values`` (the work in all, in array elements) is at least `PARALLEL_MIN_VALUES`.

    The calling thread does the first item itself. Every item is done before this returns,
    also when one raises (then the first exception, in item order, is raised).

    >>> each(lambda x: x * x, range(4), values=10)
    [0, 1, 4, 9]
    """
    items = list(items)
    pool = _threads() if len(items) > 1 and values >= PARALLEL_MIN_VALUES else None
    if pool is None:
        return [fn(x) for x in items]
    futures: list[Future[R]] = [pool.submit(fn, x) for x in items[1:]]
    try:
        first = fn(items[0])
    finally:
        # Never return (or raise) while a helper still works on an item: the caller goes on
        # to read or change what the items hold.
        for f in futures:
            f.exception()
    return [first, *(f.result() for f in futures)]


def _threads() -> ThreadPoolExecutor | None:
    """The helper threads (made on first use), or None on a machine of one core."""
    global _pool
    helpers = min(_MOST_THREADS, os.cpu_count() or 1) - 1
    if helpers < 1:
        return None
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(helpers, thread_name_prefix="jaxhist-reduce")
        return _pool


def _forget_threads() -> None:
    # A forked child has none of its parent's threads: it makes its own on first use.
    global _pool, _pool_lock
    _pool, _pool_lock = None, threading.Lock()


if hasattr(os, "register_at_fork"):  # pragma: no branch - not on Windows
    os.register_at_fork(after_in_child=_forget_threads)
