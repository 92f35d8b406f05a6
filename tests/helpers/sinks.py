"""Sinks the stop tests share: one that asks for a stop, one that presses Ctrl-C."""

from __future__ import annotations

import os
import signal
import threading

import jaxhist_widget as jhw


class StopAfter(jhw.Recorder):
    """Asks for a stop (from its callback) once ``rows`` rows of a lane have arrived."""

    def __init__(self, rows: int) -> None:
        super().__init__()
        self.rows = rows

    def on_rows(self, run: jhw.Run, lanes: list[int]) -> None:
        if max(run.counts) >= self.rows:
            self.stop()


class InterruptAfter(jhw.Recorder):
    """Has another thread send this process SIGINT (as the notebook's ■ does) once ``rows``
    rows of a lane have arrived."""

    def __init__(self, rows: int) -> None:
        super().__init__()
        self.rows, self.sent = rows, False

    def on_rows(self, run: jhw.Run, lanes: list[int]) -> None:
        if not self.sent and max(run.counts) >= self.rows:
            self.sent = True
            threading.Thread(target=os.kill, args=(os.getpid(), signal.SIGINT)).start()
