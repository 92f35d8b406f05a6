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
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["is_control_message", "serve_controls_at_once"]

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
