"""Interrupts (Ctrl-C, the notebook's ■) that stop a running loop instead of killing it.

Layer 2 (host). Python runs a SIGINT handler only in the main thread, between bytecodes. A jitted
loop whose step is pure XLA work keeps the main thread inside one C++ call for the whole run (its
host callbacks run on XLA's worker threads), so a Python handler alone would run only after the
loop had finished. CPython's C-level handler, though, writes the signal number at once to the
file descriptor given to `signal.set_wakeup_fd`, from whatever thread took the signal. While a
sink is armed this module owns that descriptor (one end of a socket pair) and the chunk callback
reads the other end (`poll`): a press becomes a stop request within one chunk (~50 ms with
``stream_every="auto"``), while the main thread is still inside XLA.

Every press is seen twice: once as a byte (by `poll`, on a callback thread, usually first) and
once by the Python handler (on the main thread, whenever it gets control, often only after the
run returned). Presses are numbered in both streams, so whichever side sees press ``k`` first
decides what it means and the other side agrees:

- a run of an armed sink is in flight and not yet asked to stop: the press stops it, and the
  handler later returns quietly (no ``KeyboardInterrupt``, the partial result is kept);
- a stop is already pending (the user insists) or nothing of ours is running: the handler
  behaves exactly as the handler that was installed before (``KeyboardInterrupt`` by default).

Arming is reference counted (nested ``with`` blocks), main thread only, and everything (the
Python handler and the wakeup fd another library may have set, e.g. asyncio's) is restored
when the last sink disarms. Bytes for other signals, and for presses we did not consume, are
forwarded to that previous wakeup fd.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .sink import Sink

__all__ = ["arm", "disarm", "poll"]

_lock = threading.RLock()
_sinks: list[Sink] = []  # armed sinks, one entry per arm() (nested blocks repeat a sink)
_saved: dict[str, Any] = {}  # handler, wakeup fd and sockets while armed
_presses = 0  # SIGINT presses the Python handler has seen (since the last install)
_bytes = 0  # SIGINT bytes the poller has read
_stopped_by: set[int] = set()  # presses that were turned into a stop request
_deferred: set[int] = set()  # presses handed to the previous handler before their byte came


def arm(sink: Sink) -> bool:
    """Make interrupts stop ``sink``'s runs; returns False where that cannot work.

    Only the main thread of the main interpreter can install signal handlers; elsewhere (a
    worker thread) interrupts are left alone and ``sink.stop()`` is the way to stop a run.
    """
    if threading.current_thread() is not threading.main_thread():
        return False
    with _lock:
        if not _saved and not _install():
            return False
        _sinks.append(sink)
        return True


def disarm(sink: Sink) -> None:
    """Undo one `arm` of ``sink``; the last one restores the handler and the wakeup fd."""
    with _lock:
        if sink in _sinks:
            _sinks.remove(sink)
        if _sinks or not _saved:
            return
    _uninstall()


def poll() -> None:
    """Turn SIGINT bytes that arrived since the last call into stop requests (any thread).

    Cheap when nothing arrived: one non-blocking ``recv`` on a socket.
    """
    with _lock:
        sock = _saved.get("read")
        if sock is not None:
            _forward(_take(_drain(sock), may_stop=True), _saved["fd"])


# ------------------------------------------------------------------------------ internals
def _take(data: bytes, may_stop: bool) -> bytes:
    """Account for wakeup bytes; return those that belong to the previous wakeup fd's owner."""
    global _bytes
    forward = bytearray()
    for signum in data:
        if signum != signal.SIGINT:
            forward.append(signum)
            continue
        _bytes += 1
        if _bytes <= _presses:  # the handler already decided about this press
            if _bytes in _deferred:
                _deferred.discard(_bytes)
                forward.append(signum)
        elif may_stop and _stop_running():
            _stopped_by.add(_bytes)
        else:  # the handler will pass it on when it runs
            forward.append(signum)
    return bytes(forward)


def _stop_running() -> bool:
    """Ask every armed sink with a run in flight to stop; False if none had one to stop."""
    targets = [s for s in dict.fromkeys(_sinks) if s.running and not s.stop_requested]
    for sink in targets:
        sink.stop()
    return bool(targets)


def _on_sigint(signum: int, frame: Any) -> None:
    """The Python-level SIGINT handler while armed (main thread)."""
    global _presses
    with _lock:
        _presses += 1
        press = _presses
        if press in _stopped_by:  # already a stop (seen first as a byte): nothing more to do
            _stopped_by.discard(press)
            return
        if _stop_running():
            return
        previous = _saved.get("handler")
        if press > _bytes:  # its byte is still to come: forward it then
            _deferred.add(press)
    # Nothing of ours to stop, or a stop is pending and the user insists: behave as before.
    if previous is signal.SIG_IGN:
        return
    if callable(previous) and previous is not _on_sigint:
        previous(signum, frame)
        return
    raise KeyboardInterrupt


def _install() -> bool:
    global _presses, _bytes
    try:
        previous = signal.getsignal(signal.SIGINT)
        read, write = socket.socketpair()
        read.setblocking(False)
        write.setblocking(False)
        old_fd = signal.set_wakeup_fd(write.fileno(), warn_on_full_buffer=False)
    except (ValueError, OSError):  # not the main interpreter, or no sockets
        return False
    try:
        # A Python-level handler must be installed for the C handler to write the byte.
        signal.signal(signal.SIGINT, _on_sigint)
    except ValueError:
        signal.set_wakeup_fd(old_fd)
        read.close()
        write.close()
        return False
    _saved.update(handler=previous, fd=old_fd, read=read, write=write)
    _presses = _bytes = 0
    _stopped_by.clear()
    _deferred.clear()
    return True


def _uninstall() -> None:
    # A press whose byte arrived but whose handler has not run yet would otherwise reach the
    # restored handler: give the interpreter a chance to run ours first (pending signal
    # handlers run at the next Python function call in the main thread).
    with _lock:
        _forward(_take(_drain(_saved["read"]), may_stop=False), _saved["fd"])
        pending = _bytes > _presses
    if pending:
        _let_pending_handlers_run()
    with _lock:
        saved = dict(_saved)
        _saved.clear()
        leftover = _take(_drain(saved["read"]), may_stop=False)
        _stopped_by.clear()
        _deferred.clear()
    with contextlib.suppress(ValueError, OSError):
        signal.set_wakeup_fd(saved["fd"])
    with contextlib.suppress(ValueError, TypeError):
        if signal.getsignal(signal.SIGINT) is _on_sigint:
            signal.signal(signal.SIGINT, saved["handler"])
    _forward(leftover, saved["fd"])
    saved["read"].close()
    saved["write"].close()


def _let_pending_handlers_run() -> None:
    for _ in range(3):
        _noop()


def _noop() -> None:
    pass


def _drain(sock: socket.socket) -> bytes:
    chunks = []
    while True:
        try:
            data = sock.recv(4096)
        except OSError:  # BlockingIOError: nothing (more) to read
            break
        if not data:
            break
        chunks.append(data)
    return b"".join(chunks)


def _forward(data: bytes, fd: int) -> None:
    """Pass wakeup bytes on to the fd that was set before ours (e.g. asyncio's), if any."""
    if data and fd >= 0:
        with contextlib.suppress(OSError):
            os.write(fd, data)
