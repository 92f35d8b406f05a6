"""`panel_state`: every run-state trait of the panel, as a pure function of plain inputs.

The runs are real `Run`s fed by hand through the hub (`tests.synthetic`); times are passed in
(``now``), so rates and elapsed times are exact. What a `LivePlot` shows end to end is in
``test_panel.py`` and ``test_sink.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

from jaxhist_widget.ui.panel import FAILED_TEXT, LivePanel, RateWindow, panel_state

from ...helpers.synthetic import Capture, FakeLoop, layout

RUN_TRAITS = {
    "status", "error", "step", "max_steps", "lanes", "elapsed", "rate", "run_number", "fields",
    "latest", "latest_range", "lane_statuses", "lane_names", "diverged",
}  # fmt: skip


def test_no_run_is_idle_and_every_trait_is_set():
    state = panel_state(None, now=5.0, run_number=3)
    assert set(state) == RUN_TRAITS
    assert state == {**state, "status": "idle", "error": "", "step": 0, "max_steps": 0}
    assert state["run_number"] == 3 and state["rate"] == 0.0 and state["fields"] == []
    # an update that failed with no run to show still says so
    assert panel_state(None, now=5.0, error="boom")["status"] == "error"
    # every value is one the panel's traits accept
    LivePanel(**panel_state(None, now=0.0, error="x"))


def test_a_running_run_then_its_end():
    with Capture() as cap:
        loop = FakeLoop(layout(("loss",), max_steps=500))
        (run,) = cap.runs
        t0 = run.started
        state = panel_state(run, now=t0 + 1.0, run_number=1, fields=["loss"])
        assert state["status"] == "running" and state["step"] == 0 and state["max_steps"] == 500
        assert state["elapsed"] == pytest.approx(1.0) and state["rate"] == 0.0
        assert state["latest"] == {}  # a field with no rows yet shows no value
        loop.send(loss=np.linspace(1.0, 0.0, 101))
        window = RateWindow()
        window.restart(t0)
        window.add(t0 + 2.0, 100)
        state = panel_state(
            run,
            now=t0 + 2.0,
            fields=["loss"],
            last_values=[[0.0]],
            rate_samples=window.samples,
        )
        assert (state["status"], state["step"], state["latest"]) == ("running", 100, {"loss": 0.0})
        assert state["rate"] == pytest.approx(50.0)  # 100 steps in the 2 s since the start
        assert state["latest_range"] == {} and state["lane_statuses"] == {}
        loop.end("max_steps")
    assert run.ended is not None
    average = 100 / (run.ended - run.started)
    for now, samples in [(run.ended, window.samples), (run.ended + 60.0, [(run.ended, 100)])]:
        # The end's state, and a trailing flush's long after it: the run's average, whatever
        # the window holds and whenever it is asked.
        state = panel_state(run, now=now, rate_samples=samples)
        assert state["status"] == "max_steps"
        assert state["rate"] == pytest.approx(average)
        assert state["elapsed"] == pytest.approx(run.ended - run.started)


def test_rate_is_measured_over_a_window():
    """Rows arrive in bursts; the rate shown is steps over the last few seconds, not over the
    time since the previous update."""
    with Capture() as cap:
        loop = FakeLoop(layout(max_steps=100_000))
        (run,) = cap.runs
        window = RateWindow(seconds=4.0)
        window.restart(100.0)
        rates = []
        # One second per update; bursts of 2000 and 0 steps alternate (mean 1000 steps/s).
        step = 0
        for k in range(1, 11):
            if k % 2:
                loop.send(value=np.zeros(2000 + (step == 0)))  # row 0 is step 0
                step += 2000
            window.add(100.0 + k, step)
            state = panel_state(run, now=100.0 + k, rate_samples=window.samples)
            assert state["step"] == step
            rates.append(state["rate"])
        loop.end()
    # Per-update rates would swing between 2000 and 0; over a >= 4 s window they stay near 1000.
    assert all(800 <= r <= 1250 for r in rates[4:]), rates
    assert len(window.samples) <= 6  # only the window is kept, however long the run


def test_errors_and_failed_runs():
    with Capture() as cap:
        loop = FakeLoop(layout())
        (run,) = cap.runs
        bad = panel_state(run, now=run.started, error="LivePlot(fields=...): no field 'x'")
        assert bad["status"] == "error" and "no field 'x'" in bad["error"]
        assert panel_state(run, now=run.started)["error"] == ""  # no error: none shown
        loop.send(value=[1.0, 2.0])
        loop.end("failed")
    # The computation raised: its own text, before any other error; its rows are still shown.
    state = panel_state(run, now=run.ended, error="an earlier update failed")
    assert (state["status"], state["error"], state["step"]) == ("error", FAILED_TEXT, 1)


def test_lanes_summary_names_only_the_few_lanes_that_ended_differently():
    statuses = ["converged"] * 4 + ["max_steps"] * 3 + ["stopped"] * 2
    names = [f"lr={k}" for k in range(9)]
    with Capture() as cap:
        loop = FakeLoop(layout(max_steps=10), lanes=9)
        (run,) = cap.runs
        loop.send(value=[np.arange(3.0)] * 9)
        running = panel_state(run, now=run.started, lane_names=names)
        assert running["lanes"] == 9 and running["lane_statuses"] == {}  # only once ended
        loop.end(statuses)
    last = [[1.0, 5.0, np.nan, 2.0, -np.inf, 9.0, 3.0, 2.5, 2.5]]
    state = panel_state(run, now=run.ended, fields=["loss"], last_values=last, lane_names=names)
    assert state["status"] == "stopped" and state["lanes"] == 9
    assert state["lane_statuses"] == {"converged": 4, "max_steps": 3, "stopped": 2}
    # two lanes at most are named: three are no longer "the few"
    assert state["lane_names"] == {"stopped": ["lr=7", "lr=8"]}
    assert state["diverged"] == ["loss"]  # a NaN lane and an -inf lane
    # the median and range over the lanes, the diverged ones (NaN, ±inf) left out
    assert state["latest"] == {"loss": 2.5}
    assert state["latest_range"] == {"loss": [1.0, 9.0]}
    # no lane with a value: NaN, spelled for JSON
    for gone in ([np.nan] * 9, [np.inf, -np.inf] + [np.nan] * 7):
        none = panel_state(run, now=run.ended, fields=["loss"], last_values=[gone])
        assert none["latest"] == {"loss": "nan"} and none["latest_range"] == {"loss": ["nan"] * 2}
    LivePanel(**state)  # values the panel's traits accept


def test_unbatched_latest_and_a_zero_step_run():
    with Capture() as cap:
        loop = FakeLoop(layout(("loss", "x"), shapes=[(), (2,)]))
        (run,) = cap.runs
        loop.send(loss=[np.inf], x=[[3.0, 4.0]])
        loop.end()
    state = panel_state(run, now=run.ended, fields=["loss", "|x|"], last_values=[[np.inf], [5.0]])
    assert state["latest"] == {"loss": "inf", "|x|": 5.0} and state["latest_range"] == {}
    assert (state["status"], state["step"], state["rate"]) == ("converged", 0, 0.0)
    assert state["diverged"] == ["loss"]  # the view says "diverged" over "finished"
    assert state["fields"] == ["loss", "|x|"] and state["lanes"] == 0


def test_an_attached_plot_waiting_for_its_loop_says_compiling():
    # Inside `with live:` (or a %%jaxhist cell) before the loop starts, JAX traces and
    # compiles it, often for seconds: the panel says so instead of "idle" over empty axes.
    waiting = panel_state(None, now=1.0, waiting=True)
    assert waiting["status"] == "compiling" and waiting["step"] == 0
    LivePanel(**waiting)  # a value the panel's trait accepts
    assert panel_state(None, now=1.0)["status"] == "idle"  # not attached: nothing to wait for
    assert panel_state(None, now=1.0, waiting=True, error="x")["status"] == "error"
    with Capture() as cap:
        loop = FakeLoop(layout())
        (previous,) = cap.runs
        loop.send(value=[1.0, 2.0])
        loop.end()
    # attached again after a run ended: the next loop compiles, the old end is not "now"
    again = panel_state(previous, now=previous.ended + 1.0, run_number=1, waiting=True)
    assert again["status"] == "compiling" and again["run_number"] == 1


def test_non_finite_latest_values_are_flagged_as_diverged_not_as_an_error():
    with Capture() as cap:
        loop = FakeLoop(layout(("loss", "lr"), max_steps=100))
        (run,) = cap.runs
        loop.send(loss=[1.0, np.nan], lr=[0.1, 0.1])
        state = panel_state(
            run, now=run.started + 1.0, fields=["loss", "lr"], last_values=[[np.nan], [0.1]]
        )
        # while running, too: the user may want to stop a run that blew up
        assert state["status"] == "running" and state["diverged"] == ["loss"]
        assert state["error"] == ""  # the computation itself succeeded
        loop.end("max_steps")
    fine = panel_state(run, now=run.ended, fields=["loss", "lr"], last_values=[[0.5], [0.1]])
    assert fine["status"] == "max_steps" and fine["diverged"] == []
    # a failed run is an error, whatever its values
    with Capture() as cap:
        loop = FakeLoop(layout())
        (failed,) = cap.runs
        loop.send(value=[np.inf])
        loop.end("failed")
    state = panel_state(failed, now=failed.ended, fields=["value"], last_values=[[np.inf]])
    assert state["status"] == "error" and state["diverged"] == []
