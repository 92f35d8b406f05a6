"""The panel's kernel side: Stop mode per runner, lanes summary, lane labels, statuses.

No frontend: widgets talk to `comm.DummyComm`; what a view would receive is read with
``get_state()``. Runs are synthetic (`tests.helpers.synthetic`) except where a real loop is the
point (Stop). The pure rules (rate window, statuses, errors) are in
``tests/ui/panel/test_panel_state.py``; the view's own logic (formats, status words,
kernel-death state) in ``js/panel.test.mjs`` and, in a real browser, in
``tests/browser/test_panel_ui.py``.
"""

from __future__ import annotations

import asyncio
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxhist_widget as jhw
from jaxhist_widget.ui.plot import LivePlot

from ...helpers.synthetic import FakeLoop, feed, layout


def count_to(limit, max_steps=6):
    return jhw.while_loop(lambda x: x < limit, lambda x: x + 1.0, 0.0, max_steps=max_steps)


def matvec(n=64, max_steps=2000):
    """A compute-bound step with no Python in it."""
    a = jax.random.normal(jax.random.key(0), (n, n)) / n**0.5

    def body(x):
        return jnp.tanh(a @ x)

    def record(x):
        return {"norm": jnp.linalg.norm(x)}

    return jhw.while_loop(lambda x: True, body, jnp.ones(n), max_steps=max_steps, record=record)


def test_stop_mode_is_interrupt_only_inside_a_normal_runner():
    live = LivePlot()
    assert live.panel.stop_mode == "message"
    with live:
        assert live.panel.stop_mode == "interrupt"
        with live:  # nested blocks keep it
            assert live.panel.stop_mode == "interrupt"
        assert live.panel.stop_mode == "interrupt"
    assert live.panel.stop_mode == "message"
    seen = []
    live.run(lambda: seen.append(live.panel.stop_mode))
    assert seen == ["interrupt"]
    assert live.panel.stop_mode == "message"


def test_stop_mode_is_message_in_run_async_and_outside_the_main_thread():
    live = LivePlot()
    seen = []

    async def main():
        def fn():
            seen.append(live.panel.stop_mode)
            return jax.jit(count_to)(3.0)

        return await live.run_async(fn)

    (_, hist) = asyncio.run(main())
    assert int(hist.length) == 4
    assert seen == ["message"] and live.panel.stop_mode == "message"
    # Awaited inside a `with live:` block: the event loop is free, the message works.
    with live:
        asyncio.run(main())
        assert live.panel.stop_mode == "interrupt"
    assert seen == ["message", "message"]

    # A `with` in a worker thread cannot arm interrupts: a click must stay a message.
    import threading

    def worker():
        with live:
            seen.append(live.panel.stop_mode)

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert seen == ["message"] * 3


def test_vmap_lane_statuses_median_and_range():
    live = LivePlot(lane_labels=["lim=2", "lim=3", "lim=10"])
    # Counting to 2, 3 and 10 with max_steps=6: the third lane hits the cap.
    lanes = [np.arange(3.0), np.arange(4.0), np.arange(7.0)]
    feed(live, {"value": lanes}, status=["converged", "converged", "max_steps"], lanes=3)
    state = live.panel.get_state(
        ["status", "lane_statuses", "lane_names", "latest", "latest_range", "lanes", "step"]
    )
    assert state["status"] == "max_steps" and state["step"] == 6
    assert state["lanes"] == 3
    assert state["lane_statuses"] == {"converged": 2, "max_steps": 1}
    # Only statuses held by at most two lanes are named, by the given labels.
    assert state["lane_names"] == {"converged": ["lim=2", "lim=3"], "max_steps": ["lim=10"]}
    # Latest values: 2, 3 and 6 (capped at max_steps=6): median 3, range [2, 6].
    assert state["latest"] == {"value": 3.0}
    assert state["latest_range"] == {"value": [2.0, 6.0]}


def test_unbatched_run_has_no_lane_summary():
    live = LivePlot(lane_labels=["unused"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # labels are for vmapped runs: no lane-count warning
        feed(live, {"value": np.arange(4.0)})
    state = live.panel.get_state(["lane_statuses", "lane_names", "latest", "latest_range"])
    assert state == {
        "lane_statuses": {},
        "lane_names": {},
        "latest": {"value": 3.0},
        "latest_range": {},
    }


def test_lane_labels_of_the_wrong_length_warn_and_fall_back():
    live = LivePlot(lane_labels=["only one"])
    with pytest.warns(UserWarning, match="1 labels but the run has 2 vmap lanes"):
        feed(live, {"value": [np.arange(3.0), np.arange(4.0)]}, lanes=2)
    assert live.panel.lane_names == {"converged": ["lane 0", "lane 1"]}
    assert "lane 0" in live.legend.value and "only one" not in live.legend.value


@pytest.mark.parametrize(
    ("labels", "match"),
    [("abc", "sequence of str"), (3, "sequence of str"), ([1, "a"], "str only")],
)
def test_lane_labels_are_validated(labels, match):
    with pytest.raises(TypeError, match=match):
        LivePlot(lane_labels=labels)
    LivePlot(lane_labels=[1, 2])  # numbers: the swept values (issue 50)


def test_zero_step_run_has_no_rate():
    live = LivePlot()
    feed(live, {"value": [0.0]})  # cond false at once: zero steps
    assert live.panel.get_state(["status", "step", "rate"]) == {
        "status": "converged",
        "step": 0,
        "rate": 0.0,
    }


def test_a_run_shows_running_then_its_end_then_clear_shows_idle():
    live = LivePlot(title="t")
    with live:
        loop = FakeLoop(layout(max_steps=50))
        assert live.panel.get_state(["status", "run_number", "max_steps", "step"]) == {
            "status": "running",
            "run_number": 1,
            "max_steps": 50,
            "step": 0,
        }
        loop.send(value=np.arange(10.0))
        assert live.panel.step == 9 and live.panel.latest == {"value": 9.0}
        loop.end("stopped")
    assert live.panel.status == "stopped" and live.panel.title == "t"
    live.clear()
    state = live.panel.get_state(["status", "step", "latest", "fields", "run_number", "title"])
    assert state == {
        "status": "idle",
        "step": 0,
        "latest": {},
        "fields": [],
        "run_number": 1,  # runs received: a Stop click names the run it was for
        "title": "t",
    }


def test_stop_click_in_message_mode_stops_a_compute_bound_run():
    """The kernel side of a Stop click (message mode) on a step with no Python in it."""
    live = LivePlot()
    fn = jax.jit(matvec, static_argnames=("n", "max_steps"))
    fn(max_steps=5)  # compile outside the run

    class Clicker(jhw.Sink):
        def on_rows(self, run, lanes):
            if max(run.counts) > 50:
                live.panel.stop_clicks += 1

    clicker = Clicker()
    with live, clicker:
        _, hist = fn(max_steps=1_000_000)
    assert live.panel.status == "stopped"
    assert len(live.history()["norm"]) == int(hist.length) < 1_000_001


def test_no_warning_for_a_clean_vmap_run():
    live = LivePlot()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        feed(live, {"value": [np.arange(3.0), np.arange(4.0), [np.nan, np.nan]]}, lanes=3)
    # a lane ending in NaN is counted as diverged, and the median skips it
    assert live.panel.lane_statuses == {"converged": 2, "diverged": 1}
    assert live.panel.latest == {"value": 2.5}


def test_an_attached_plot_says_compiling_until_its_loop_starts():
    live = LivePlot()
    assert live.panel.status == "idle"
    with live:  # the loop below is traced and compiled first: seconds, in a real notebook
        assert live.panel.status == "compiling"
        loop = FakeLoop(layout(max_steps=5))
        assert live.panel.status == "running"
        loop.send(value=np.arange(3.0))
        loop.end()
        assert live.panel.status == "converged"  # the view says "finished"
    assert live.panel.status == "converged"
    with live:  # the next cell: its loop compiles; the old end is not what happens now
        assert live.panel.status == "compiling" and live.panel.run_number == 1
    # the block ended without a loop (it raised first): the plot's run is shown again
    assert live.panel.status == "converged" and live.panel.step == 2
    empty = LivePlot()
    with empty:
        assert empty.panel.status == "compiling"
    assert empty.panel.status == "idle"


def test_a_run_whose_latest_values_are_not_finite_is_flagged_diverged():
    live = LivePlot()
    feed(live, {"loss": [1.0, 10.0, np.inf], "lr": [0.1, 0.1, 0.1]}, status="converged")
    # the run's own status is unchanged (public API); the panel flags the field
    assert live.panel.status == "converged" and live.panel.error == ""
    assert live.panel.diverged == ["loss"]
    feed(live, {"loss": [1.0, 0.5, 0.25], "lr": [0.1, 0.1, 0.1]})
    assert live.panel.diverged == []


def test_a_chart_made_on_a_log_axis_shows_its_log_button_on():
    # one chart, LivePlot(log_y=True): the axis was logarithmic, its button read off
    for fields in ({"loss": np.linspace(1, 0.1, 5)}, {"a": np.ones(3), "b": np.ones(3)}):
        live = LivePlot(log_y=True)
        feed(live, fields)
        assert live.panel.log_charts == list(fields) == list(live.drawing().log_charts)
