"""How host code reports an error it must not raise into a running computation.

An exception raised inside a host callback would kill the JAX computation and its device
history, so the host catches it and reports it here: a `RuntimeWarning` that says the loop is
unaffected, plus the traceback in the ``jaxhist_widget`` log. A failure that repeats (a sink
whose ``on_rows`` fails at every chunk) is reported once per place it comes from.
"""

from __future__ import annotations

import collections
import logging
import threading
import warnings
from collections.abc import Hashable

__all__ = ["log", "report"]

log = logging.getLogger("jaxhist_widget")

_seen: collections.OrderedDict[Hashable, None] = collections.OrderedDict()
_seen_lock = threading.Lock()  # a leaf lock: nothing else is taken while it is held
_MAX_SEEN = 1024


def report(error: BaseException, where: str, once: Hashable | None = None) -> None:
    """Warn about ``error`` raised in ``where``; with ``once`` (e.g. ``(sink, run_id)``), only
    the first error reported under that key is shown."""
    if once is not None:
        with _seen_lock:
            if once in _seen:
                return
            _seen[once] = None
            while len(_seen) > _MAX_SEEN:  # the oldest keys' runs are long over
                _seen.popitem(last=False)
    log.error("jaxhist_widget: %s failed", where, exc_info=error)
    warnings.warn(
        f"jaxhist_widget: {where} raised {type(error).__name__}: {error}. "
        "The loop and its device history are unaffected.",
        RuntimeWarning,
        stacklevel=3,
    )
