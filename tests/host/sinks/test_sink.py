"""`Sink` (`_host/sinks/_sink.py`): attaching and arming from any thread, leaving a block
whatever happens while it is left, and what a LivePlot shows once its run ended."""

from __future__ import annotations

import signal
import threading
import time

import jax
import numpy as np
import pytest

import jaxhist_widget as jhw
from jaxhist_widget._host import HUB

from ...helpers.hub import LAYOUT, flush


def test_a_press_while_a_block_is_left_leaves_nothing_behind(monkeypatch):
    # R2: an interrupt raised while the bridge is being torn down used to skip `detach`,
    # leaving the sink attached to every later run and the package's handler installed.
    before = signal.getsignal(signal.SIGINT)
    rec = jhw.Recorder()
    real_uninstall = HUB.interrupts._uninstall

    def pressed_meanwhile():
        signal.raise_signal(signal.SIGINT)  # a press in the middle of disarming
        return real_uninstall()

    monkeypatch.setattr(HUB.interrupts, "_uninstall", pressed_meanwhile)
    with pytest.raises(KeyboardInterrupt), rec:  # nothing ran: the press is the user's
        pass
    assert rec not in HUB.attached() and not rec.attached
    assert HUB.interrupts.armed() == []
    assert signal.getsignal(signal.SIGINT) is before
    assert signal.set_wakeup_fd(-1) == -1  # the package's fd is not left set


def test_a_block_in_a_thread_never_disarms_the_main_threads_block():
    # R4: arming is per thread. A `run` on a worker thread while the main thread is inside
    # `with rec:` must not pop the main thread's arming (and disarm from the worker).
    rec = jhw.Recorder()
    f = jax.jit(lambda x: jhw.while_loop(lambda x: x > 1, lambda x: x / 2, x, max_steps=20))
    errors = []
    with rec:
        assert HUB.interrupts.armed() == [rec]
        started = threading.Event()

        def worker():
            try:
                with rec:
                    started.set()
                    time.sleep(0.05)
                    f(100.0)
            except BaseException as e:
                errors.append(e)

        t = threading.Thread(target=worker)
        t.start()
        started.wait(5)
        t.join(10)
        assert HUB.interrupts.armed() == [rec], "the worker's block disarmed the main thread's"
        assert rec.attached
    assert HUB.interrupts.armed() == [] and not rec.attached and not errors


def test_a_trailing_flush_after_the_end_keeps_the_final_panel():
    # R1: a trailing flush that fires as a run ends must not replace the run's final rate
    # (its average) with the rate over the last seconds.
    live = jhw.LivePlot()
    with live:
        run_id = int(HUB.open_run(LAYOUT)[0])
        for i in range(0, 40, 4):
            flush(run_id, i, [float(j) for j in range(i, i + 4)])
            time.sleep(0.01)
        flush(run_id, 40, [40.0], status=1)
    run = live.runs[-1]
    final = live.panel.rate
    assert live.panel.status == "converged"
    assert final == pytest.approx(40 / run.elapsed)
    live.refresh()  # an update after the end (a trailing flush that came late)
    assert live.panel.rate == final
    assert np.asarray(live.history()).tolist() == [float(i) for i in range(41)]
