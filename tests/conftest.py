"""Shared fixtures: a real Jupyter kernel (this interpreter's ipykernel via jupyter_client)."""

from __future__ import annotations

import datetime as dt
import os
import queue
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from .kernels import start_kernel

ROOT = Path(__file__).resolve().parents[1]

# CI explores the same examples on every run (a submission must not fail on a fresh random
# draw); locally each run draws new ones, and failures are kept in .hypothesis/.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


def pytest_configure(config: pytest.Config) -> None:
    # The tests press Ctrl-C as in a terminal's foreground job, in this process and in the
    # scripts it starts. A suite started in the background of a shell without job control
    # (`bash .ci/run &` in a script) inherits SIGINT ignored, and every child would inherit that
    # too: give Ctrl-C its default meaning back (a child's exec resets it to the default).
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


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

    def interrupt(self) -> None:
        """What the notebook's ■ does: SIGINT to the kernel process."""
        self.manager.interrupt_kernel()


@pytest.fixture
def kernel(tmp_path: Path) -> Iterator[KernelDriver]:
    """A fresh real kernel for one test."""
    pytest.importorskip("jupyter_client")
    pytest.importorskip("ipykernel")
    km, kc = start_kernel(tmp_path)
    try:
        yield KernelDriver(km, kc)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


@pytest.fixture(scope="module")
def module_kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelDriver]:
    """One real kernel shared by a module's tests (they run in order, like notebook cells)."""
    pytest.importorskip("jupyter_client")
    pytest.importorskip("ipykernel")
    km, kc = start_kernel(tmp_path_factory.mktemp("kernel"))
    try:
        yield KernelDriver(km, kc)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
