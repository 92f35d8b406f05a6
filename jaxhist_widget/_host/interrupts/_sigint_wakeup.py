"""`WakeupFd`: SIGINT's Python handler and CPython's wakeup fd, taken while the interrupt
bridge is armed and given back after, and what the handler before would do with a press.

CPython's C handler writes one byte per signal at once to the file descriptor given to
`signal.set_wakeup_fd`, even while the main thread is inside one long C++ call. While installed
that descriptor is our socket pair: `WakeupFd.read` takes the bytes that came, and
`WakeupFd.forward` hands on those the descriptor set before should have (another signal's, say).
What the bytes mean, and when they are read, is the bridge's (`_sigint`).
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
from collections.abc import Callable
from typing import Any

__all__ = ["WakeupFd", "behave_as", "let_pending_handlers_run"]


class WakeupFd:
    """SIGINT's handler and the wakeup fd, while installed; the caller serializes the calls."""

    def __init__(self) -> None:
        self._saved: dict[str, Any] = {}  # handler, wakeup fd and sockets while installed

    @property
    def installed(self) -> bool:
        return bool(self._saved)

    @property
    def previous(self) -> Any:
        """The SIGINT handler installed before (while installed)."""
        return self._saved["handler"]

    def install(self, handler: Callable[[int, Any], None]) -> bool:
        """Make ``handler`` SIGINT's handler and our socket the wakeup fd; False where that
        cannot be or must not be (SIGINT ignored, not the main interpreter, no socket)."""
        if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
            return False  # ignored in this process: presses stay ignored, as without us
        # Our handler first, then the wakeup fd: a press in between reaches our handler, which
        # only counts it while arming; the other order could leave our fd set behind a raise.
        try:
            read, write = socket.socketpair()
        except OSError:
            return False
        read.setblocking(False)
        write.setblocking(False)
        try:
            previous = signal.signal(signal.SIGINT, handler)
        except ValueError:  # not the main interpreter
            read.close()
            write.close()
            return False
        try:
            # With a Python-level handler installed, the C handler writes the byte.
            old_fd = signal.set_wakeup_fd(write.fileno(), warn_on_full_buffer=False)
        except (ValueError, OSError):
            signal.signal(signal.SIGINT, previous)
            read.close()
            write.close()
            return False
        self._saved.update(handler=previous, fd=old_fd, read=read, write=write)
        return True

    def uninstall(self, handler: Callable[[int, Any], None]) -> None:
        """Restore the wakeup fd and, if ``handler`` is still SIGINT's, the handler before."""
        saved = dict(self._saved)
        self._saved.clear()
        with contextlib.suppress(ValueError, OSError):
            signal.set_wakeup_fd(saved["fd"])
        with contextlib.suppress(ValueError, TypeError):
            if signal.getsignal(signal.SIGINT) == handler:
                signal.signal(signal.SIGINT, saved["handler"])
        # Bytes that came after the last read belong to the restored fd's owner now.
        leftover = _drain(saved["read"])
        if leftover and saved["fd"] >= 0:
            with contextlib.suppress(OSError):
                os.write(saved["fd"], leftover)
        saved["read"].close()
        saved["write"].close()

    def read(self) -> bytes:
        """The bytes (signal numbers) that came since the last read (while installed)."""
        return _drain(self._saved["read"])

    def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for a byte to read (while installed); whether one
        came."""
        ready, _, _ = select.select([self._saved["read"]], [], [], timeout)
        return bool(ready)

    def forward(self, data: bytes) -> None:
        """Hand ``data`` on to the wakeup fd set before ours, if there was one."""
        if data and self._saved["fd"] >= 0:
            with contextlib.suppress(OSError):
                os.write(self._saved["fd"], data)


def behave_as(previous: Any, signum: int, frame: Any) -> None:
    """Do what the handler ``previous`` would have done with this press."""
    if previous is signal.SIG_IGN:
        return
    if previous is signal.SIG_DFL or previous is None:
        # The default action: end the process, as without the package.
        signal.signal(signum, signal.SIG_DFL)
        signal.raise_signal(signum)
        return
    if callable(previous):
        previous(signum, frame)
        return
    raise KeyboardInterrupt


def let_pending_handlers_run() -> None:
    # Pending Python signal handlers run at the next check of the main thread's eval loop,
    # which a Python function call makes.
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
