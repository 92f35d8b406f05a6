"""The panel's controls served while a cell runs: its control messages stay on the kernel
subshell the page sent them on (`serve_controls_at_once`).

A normal cell (``with live:``, ``%%jaxhist``, auto mode) holds the kernel's main shell until it
ends, and every widget message sent meanwhile waits behind it: a smoothing or log click would
act only after the loop. Kernels with subshells (ipykernel 7, JupyterLab >= 4.4 by default)
run the page's widget messages on a subshell thread of their own instead, concurrently with
the cell. ipykernel 7.4, though, routes a comm's messages back to the shell that last published
on that comm (so that a widget awaited in a subshell gets its replies there), and the panel
publishes from the main shell (its live updates belong to the running cell): the page's clicks
were sent back to the main shell, behind the cell.

For the panel's own control messages only (``{"jhw_control": ...}``, which set its traits under
the plot's lock, whatever thread, see `LivePanel`), the comm's routing answers "the subshell the
page chose". Every other message of the comm (ipywidgets' state updates, anywidget's own) keeps
ipykernel's routing. The hook is ipykernel's private ``BaseComm._reply_subshell_for`` (7.4); a
kernel without it, or without subshells, serves the controls when the cell ends, as before.

A message served on a subshell ends, as every request a kernel handles, with an "idle" status,
and JupyterLab shows the last status it got as the kernel's (jupyterlab#10701): its indicator
read "idle" while the cell went on running (its prompt still [*]). While a cell runs a plot
(`CellStatus`), the kernel says "busy" again for that cell right after such a message.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import Any

from ..._host import HUB

__all__ = ["BUSY_AGAIN_S", "CellStatus", "is_control_message", "serve_controls_at_once"]

#: How long after its view's message was handled the kernel says "busy" again for the running
#: cell: after the "idle" that ends the message (sent as its handler returns, within the first
#: on an idle machine; the second covers a kernel whose threads a loaded machine holds up).
BUSY_AGAIN_S = (0.05, 0.5)

#: The key of a control in the content of a panel's custom message (see ``js/panel/kernel.js``).
CONTROL_KEY = "jhw_control"


def is_control_message(data: Any) -> bool:
    """Whether ``data`` (a comm message's data) is one of the panel's control messages.

    >>> is_control_message({"method": "custom", "content": {"jhw_control": "smoothing"}})
    True
    >>> is_control_message({"method": "update", "state": {"smoothing": 0.5}})
    False
    """
    if not isinstance(data, dict) or data.get("method") != "custom":
        return False
    content = data.get("content")
    return isinstance(content, dict) and CONTROL_KEY in content


def serve_controls_at_once(comm: Any) -> bool:
    """Route ``comm``'s control messages to the subshell the page sent them on. Returns whether
    the kernel has the routing hook (False: the controls wait for the cell, as before)."""
    route: Callable[[Any, Any], Any] | None = getattr(comm, "_reply_subshell_for", None)
    if not callable(route):
        return False
    if getattr(route, "_jhw_controls", False):
        return True  # already routed (a comm re-set on the same widget)

    def reply_subshell_for(data: Any, default: Any) -> Any:
        # Runs on the kernel's shell channel thread for each of this comm's messages, before
        # any handler: cheap, and it never raises (a failure here would drop the message).
        return default if is_control_message(data) else route(data, default)

    reply_subshell_for._jhw_controls = True  # type: ignore[attr-defined]
    comm._reply_subshell_for = reply_subshell_for
    return True


class CellStatus:
    """The cell that runs a plot, as the kernel knows it (the request of its main shell), and
    "busy" said again for it after a message of the plot's view was served meanwhile.

    ipykernel's private ``Kernel.get_parent`` and ``_publish_status`` (6 and 7) are used, each
    where a kernel has them: elsewhere (no kernel, another one) nothing is said.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()  # a leaf
        self._cell: dict[str, Any] | None = None  # the running cell's request (its header...)
        self._kernel: Any = None

    def started(self, comm: Any) -> None:
        """A plot of ``comm`` starts being run by the cell that calls this (the main thread,
        inside the cell): remember that cell's request."""
        kernel = getattr(comm, "kernel", None)
        try:
            parent = kernel.get_parent("shell") if kernel is not None else None
        except Exception:  # another kernel: nothing to say
            parent = None
        header = (parent or {}).get("header") or {}
        with self._lock:
            ok = header.get("msg_type") == "execute_request"
            self._cell, self._kernel = (parent, kernel) if ok else (None, None)

    def ended(self) -> None:
        """The plot is no longer run by that cell."""
        with self._lock:
            self._cell = self._kernel = None

    def served(self) -> None:
        """A message of the view was handled: while the cell runs, say "busy" for it again
        shortly after, twice (on the package's worker: the kernel's "idle" for the message is
        sent once its handler returns, after this)."""
        with self._lock:
            cell = self._cell
        if cell is not None:
            for delay in BUSY_AGAIN_S:
                HUB.worker.later(delay, lambda: self._busy(cell))

    def _busy(self, cell: dict[str, Any]) -> None:
        # Said under the lock: `ended` (which the cell calls before its own last "idle") then
        # waits for it, so this "busy" can never come after the cell's end.
        with self._lock:
            if self._cell is not cell:  # the cell ended meanwhile: idle is the truth
                return
            # (a kernel without it, or gone: the indicator stays as it is)
            with contextlib.suppress(Exception):
                self._kernel._publish_status("busy", "shell", parent=cell)
