"""A real Jupyter kernel (jupyter_client + ipykernel) on this interpreter, and a driver for it.

Shared by the kernel tests (the ``kernel`` fixtures in ``tests/conftest.py``) and
`benchmarks/liveview.py`; needs no pytest.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import queue
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import ROOT


def start_kernel(tmp: Path, ready_timeout: float = 60) -> tuple[Any, Any]:
    """A running kernel and a connected client: ``(KernelManager, BlockingKernelClient)``.

    The kernelspec is written under ``tmp`` for *this* interpreter, whatever "python3" points
    to on the machine; the kernel starts in the repository root.
    """
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    spec_dir = tmp / "kernels" / "jhw-test"
    spec_dir.mkdir(parents=True, exist_ok=True)
    (spec_dir / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "jhw test",
                "language": "python",
                "env": {"JAX_PLATFORMS": os.environ.get("JAX_PLATFORMS", "cpu")},
            }
        )
    )
    km = KernelManager(
        kernel_name="jhw-test",
        kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(tmp / "kernels")]),
    )
    km.start_kernel(cwd=str(ROOT))
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=ready_timeout)
    return km, kc


@dataclass
class Execution:
    """What one ``execute`` saw: the reply, the iopub messages and when each arrived."""

    reply: dict[str, Any]
    reply_received: float
    messages: list[tuple[float, dict[str, Any]]] = field(default_factory=list)
    queued: list[dict[str, Any]] = field(default_factory=list)  # replies to `then` cells

    @property
    def stdout(self) -> str:
        return "".join(
            m["content"]["text"]
            for _, m in self.messages
            if m["msg_type"] == "stream" and m["content"]["name"] == "stdout"
        )

    @property
    def errors(self) -> list[str]:
        return [
            "\n".join(m["content"]["traceback"])
            for _, m in self.messages
            if m["msg_type"] == "error"
        ]


def message_time(msg: dict[str, Any]) -> float:
    """The kernel's timestamp of a message, in seconds since the epoch."""
    d = msg["header"]["date"]
    if isinstance(d, str):
        d = dt.datetime.fromisoformat(d)
    return d.timestamp()


class KernelDriver:
    """A thin driver over a `jupyter_client` client: execute cells, watch iopub, send comm msgs."""

    def __init__(self, manager: Any, client: Any) -> None:
        self.manager, self.client = manager, client

    def execute(
        self,
        code: str,
        timeout: float = 180,
        on_message: Callable[[dict[str, Any]], None] | None = None,
        then: list[str] | None = None,
    ) -> Execution:
        """Run ``code``; collect iopub until the kernel is idle for it; call ``on_message`` on
        each iopub message as it arrives (to react mid-cell: click Stop, interrupt, ...).

        ``then``: cells sent right behind it, as Run All sends them (``stop_on_error``); their
        replies are in `Execution.queued`."""
        kc = self.client
        msg_id = kc.execute(code, stop_on_error=True)
        later = [kc.execute(c, stop_on_error=True) for c in then or []]
        replies: dict[str, tuple[float, dict[str, Any]]] = {}
        idle = False
        messages: list[tuple[float, dict[str, Any]]] = []
        deadline = time.monotonic() + timeout
        while not (idle and msg_id in replies and all(m in replies for m in later)):
            if time.monotonic() > deadline:
                raise TimeoutError(f"cell did not finish in {timeout} s:\n{code}")
            try:
                r = kc.get_shell_msg(timeout=0)
                replies[r["parent_header"].get("msg_id")] = (time.monotonic(), r)
            except queue.Empty:
                pass
            try:
                msg = kc.get_iopub_msg(timeout=0.02)
            except queue.Empty:
                continue
            messages.append((time.monotonic(), msg))
            if on_message is not None:
                on_message(msg)
            if (
                msg["msg_type"] == "status"
                and msg["content"]["execution_state"] == "idle"
                and msg["parent_header"].get("msg_id") == msg_id
            ):
                idle = True
        received, reply = replies[msg_id]
        return Execution(reply, received, messages, [replies[m][1] for m in later])

    def send_comm_update(self, comm_id: str, state: dict[str, Any]) -> None:
        """Send what a view sends when the user changes a synced trait (e.g. clicks Stop)."""
        kc = self.client
        content = {
            "comm_id": comm_id,
            "data": {"method": "update", "state": state, "buffer_paths": []},
        }
        msg = kc.session.msg("comm_msg", content)
        kc.shell_channel.send(msg)

    def create_subshell(self) -> str:
        """A new kernel subshell (as JupyterLab makes one for widget messages); its id."""
        kc = self.client
        kc.control_channel.send(kc.session.msg("create_subshell_request", {}))
        reply = kc.control_channel.get_msg(timeout=30)
        assert reply["content"]["status"] == "ok", reply["content"]
        return str(reply["content"]["subshell_id"])

    def send_control(
        self, comm_id: str, name: str, value: Any = None, subshell: str | None = None
    ) -> None:
        """Send what a LivePlot panel's view sends for a click (``js/panel/kernel.js``), on
        ``subshell`` (as JupyterLab sends widget messages) or the main shell."""
        kc = self.client
        data = {"method": "custom", "content": {"jhw_control": name, "value": value}}
        msg = kc.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
        if subshell is not None:
            msg["header"]["subshell_id"] = subshell
        kc.shell_channel.send(msg)

    def interrupt(self) -> None:
        """What the notebook's ■ does: SIGINT to the kernel process."""
        self.manager.interrupt_kernel()


def printed(run: Execution, tag: str) -> dict[str, Any]:
    line = next((ln for ln in run.stdout.splitlines() if ln.startswith(f"{tag} ")), None)
    assert line is not None, f"no {tag} line; stdout {run.stdout!r}, errors {run.errors}"
    return json.loads(line.removeprefix(f"{tag} "))


def check_ok(run: Execution) -> None:
    assert not run.errors, "the cell showed a traceback:\n" + "\n".join(run.errors)
    assert run.reply["content"]["status"] == "ok", run.reply["content"]
