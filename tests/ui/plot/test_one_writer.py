"""One writer of the panel's traits: the plot, under its lock, whatever thread asks.

ipywidgets' ``hold_sync`` is not thread-safe: while one thread holds a widget's sync (the plot's
update sends every run-state trait in one message), a trait another thread sets joins that
thread's pending keys, which it may send or clear before or while the other adds to them. So a
control set from the main thread (a property, a view message) while a callback thread updates
the panel could be lost for the view, or fail the update ("Set changed size during iteration").
No deterministic interleaving is reachable from outside ipywidgets, so many threads write while
updates flow, and every write must reach the view.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any

import ipywidgets
import numpy as np
import pytest

import jaxhist_widget as jhw

from ...helpers.synthetic import FakeLoop, layout

#: The control traits the writer threads set, each through the plot's public option.
CONTROLS = ("smoothing", "ignore_outliers", "log_x", "last_steps", "keep_runs")


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> dict[str, dict[str, Any]]:
    """The latest value of each trait the panel sent its view, by model id (the comm's own
    send still runs: nothing stands in for it)."""
    latest: dict[str, dict[str, Any]] = {}
    lock = threading.Lock()
    send = ipywidgets.Widget._send

    def record(self: ipywidgets.Widget, msg: dict[str, Any], buffers: Any = None) -> None:
        if msg.get("method") == "update" and self.comm is not None:
            with lock:
                latest.setdefault(self.comm.comm_id, {}).update(msg["state"])
        send(self, msg, buffers=buffers)

    monkeypatch.setattr(ipywidgets.Widget, "_send", record)
    return latest


def test_writes_from_many_threads_while_updates_flow_all_reach_the_view(
    sent: dict[str, dict[str, Any]],
) -> None:
    live = jhw.LivePlot(fields=["loss"])
    errors: list[BaseException] = []
    statuses: list[str] = []
    stop = threading.Event()
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # interleave the threads' bytecode far more often than usual

    def updates() -> None:
        # A run streaming from a callback thread: each flush pushes (the throttle is spaced out
        # by forcing a push), which sets every run-state trait of the panel in one hold_sync.
        try:
            with live:
                loop = FakeLoop(layout(("loss",), max_steps=10**6))
                while not stop.is_set():
                    loop.send(loss=np.random.rand(8))
                    live.refresh()
                    statuses.append(live.panel.status)
                loop.end()
        except BaseException as e:
            errors.append(e)

    def writer(k: int) -> None:
        rng = np.random.default_rng(k)
        try:
            while not stop.is_set():
                live.smoothing = float(rng.choice([0.0, 0.5, 0.9]))
                live.ignore_outliers = bool(rng.integers(2))
                live.log_x = bool(rng.integers(2))
                live.last_steps = int(rng.choice([0, 50, 500]))
                live.keep_runs = bool(rng.integers(2))
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=updates)]
    threads += [threading.Thread(target=writer, args=(k,)) for k in range(4)]
    try:
        for t in threads:
            t.start()
        time.sleep(2.0)
        stop.set()
        for t in threads:
            t.join(60)
    finally:
        sys.setswitchinterval(switch)
    assert not errors, errors
    # No update failed on a write it raced with (the panel says "error" for a failed update).
    assert "error" not in statuses, live.panel.error
    assert live.panel.status == "converged"
    # Every control's last value reached the view: none was left in another thread's pending
    # keys and cleared with them.
    view = sent[live.panel.model_id]
    for name in CONTROLS:
        assert view.get(name, live.panel.trait_defaults(name)) == getattr(live.panel, name), name
