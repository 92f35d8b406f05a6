"""The panel's kernel side: Stop mode per runner, rate window, lanes summary, lane labels.

No frontend: widgets talk to `comm.DummyComm`; what a view would receive is read with
``get_state()``. The view's own logic (formats, ETA, kernel-death state) is tested in
``js/panel.test.mjs`` and, in a real browser, in ``tests/ui/test_panel_ui.py``.
"""

from __future__ import annotations

import asyncio
import warnings

import jax
import jax.numpy as jnp
import pytest

import jaxhist_widget as jhw
from jaxhist_widget import liveplot
from jaxhist_widget.liveplot import LivePlot


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
    with live:
        jax.jit(jax.vmap(count_to))(jnp.array([2.0, 3.0, 10.0]))
    state = live.panel.get_state(
        ["status", "lane_statuses", "lane_names", "latest", "latest_range", "lanes"]
    )
    assert state["status"] == "max_steps"
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
        with live:
            jax.jit(count_to)(3.0)
    state = live.panel.get_state(["lane_statuses", "lane_names", "latest", "latest_range"])
    assert state == {
        "lane_statuses": {},
        "lane_names": {},
        "latest": {"value": 3.0},
        "latest_range": {},
    }


def test_lane_labels_of_the_wrong_length_warn_and_fall_back():
    live = LivePlot(lane_labels=["only one"])
    with pytest.warns(UserWarning, match="1 labels but the run has 2 vmap lanes"), live:
        jax.jit(jax.vmap(count_to))(jnp.array([2.0, 3.0]))
    assert live.panel.lane_names == {"converged": ["lane 0", "lane 1"]}


@pytest.mark.parametrize(
    ("labels", "match"),
    [("abc", "sequence of str"), (3, "sequence of str"), ([1, 2], "str only")],
)
def test_lane_labels_are_validated(labels, match):
    with pytest.raises(TypeError, match=match):
        LivePlot(lane_labels=labels)


def test_zero_step_run_has_no_rate():
    live = LivePlot()
    with live:
        jax.jit(count_to)(0.0)  # cond false at once: zero steps
    assert live.panel.get_state(["status", "step", "rate"]) == {
        "status": "converged",
        "step": 0,
        "rate": 0.0,
    }


def test_rate_is_measured_over_a_window(monkeypatch):
    """Rows arrive in bursts; the rate shown is steps over the last RATE_WINDOW_S seconds, not
    over the time since the previous update. Driven with a fake clock."""
    live = LivePlot()
    clock = [100.0]
    monkeypatch.setattr(liveplot.time, "perf_counter", lambda: clock[0])
    monkeypatch.setattr(liveplot, "RATE_WINDOW_S", 4.0)

    class FakeRun:
        counts = (1,)
        lanes = None
        ended = None
        status = "running"
        elapsed = 0.0
        layout = type("L", (), {"max_steps": 10_000})()

    run = FakeRun()
    d = liveplot._Drawn(run, 1, [])
    live._rate_points.clear()
    live._rate_points.append((100.0, 0))
    rates = []
    # One second per update; bursts of 2000 and 0 steps alternate (mean 1000 steps/s).
    step = 0
    for k in range(1, 11):
        clock[0] = 100.0 + k
        step += 2000 if k % 2 else 0
        run.counts = [step + 1]
        live._update_panel(d, final=False)
        rates.append(live.panel.rate)
    # Per-update rates would swing between 2000 and 0; over a >= 4 s window they stay near 1000.
    assert all(800 <= r <= 1250 for r in rates[4:]), rates


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
        with live:
            jax.jit(jax.vmap(count_to))(jnp.array([2.0, 3.0]))
    assert live.panel.lane_statuses == {"converged": 2}
