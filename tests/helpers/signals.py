"""Ctrl-C sent to test processes the way a terminal sends it, one delivered press at a time."""

from __future__ import annotations

import os
import signal
import subprocess
import time


def press(proc: subprocess.Popen) -> None:
    """Press Ctrl-C in ``proc``, and return once the signal was delivered to it.

    Linux keeps one pending instance of a signal: a second SIGINT sent while the first is still
    pending (on a loaded machine the child may not run for milliseconds) is merged into it by
    the kernel, and no program can count it. Waiting until the first one left the pending set
    keeps every press of a burst a press the child receives, however short the gap after it.
    """
    proc.send_signal(signal.SIGINT)
    _wait_delivered([proc.pid])


def press_group(leader: subprocess.Popen, members: list[subprocess.Popen]) -> None:
    """Press Ctrl-C in the process group ``leader`` leads (as a terminal does for its
    foreground job), and return once every one of ``members`` received it."""
    os.killpg(leader.pid, signal.SIGINT)
    _wait_delivered([m.pid for m in members])


def _wait_delivered(pids: list[int]) -> None:
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline and any(_sigint_pending(pid) for pid in pids):
        time.sleep(0.0002)


def _sigint_pending(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("ShdPnd:"):  # signals pending for the whole process
                    return bool(int(line.split()[1], 16) >> (signal.SIGINT - 1) & 1)
    except OSError:  # gone, or no /proc: nothing to wait for
        pass
    return False
