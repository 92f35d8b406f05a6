"""The x axis in time (``x_axis="relative" | "wall"``): each row's host arrival time, kept per
chunk on its `Run`; the option and its panel control; the live axis and the static picture.
"""

from __future__ import annotations

import re
import time
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxhist_widget as jhw


def _loop(x0: jax.Array, steps: int = 400) -> tuple:
    return jhw.while_loop(lambda x: x[..., 0] < steps, lambda x: x + 1.0, x0, max_steps=steps + 5)


def _slow_loop(x0: jax.Array) -> tuple:
    """A loop whose chunks arrive over a visible span: a host pause in each step."""

    def step(x: jax.Array) -> jax.Array:
        jax.debug.callback(lambda: time.sleep(0.002))
        return x + 1.0

    return jhw.while_loop(lambda x: x[..., 0] < 150, step, x0, max_steps=200)


def test_rows_carry_their_chunks_host_arrival_times() -> None:
    rec = jhw.Recorder()
    before = time.time()
    with rec:
        jax.jit(_slow_loop)(jnp.zeros(2))
    after = time.time()
    run = rec.runs[-1]
    rows, arrived = run.arrivals()
    assert len(rows) >= 3  # several chunks, one pair each (not one per row)
    assert len(rows) < run.counts[0]
    assert np.all(np.diff(rows) > 0) and np.all(np.diff(arrived) >= 0)
    assert rows[-1] == run.counts[0]
    times = run.times()
    assert times.shape == (run.counts[0],)
    assert np.all(np.diff(times) >= 0)
    assert before <= times[0] <= times[-1] <= after
    assert times[-1] - times[0] > 0.1  # 150 steps of 2 ms: spread over the run, not one time
    # A chunk's last row is at its arrival; the rows before it are spread back to the last one.
    assert np.allclose(run.row_times(rows - 1), arrived)
    assert not run.times().flags.writeable


def test_vmapped_lanes_share_their_chunks_times() -> None:
    rec = jhw.Recorder()
    with rec:
        jax.jit(jax.vmap(_loop))(jnp.zeros((3, 2)))
    run = rec.runs[-1]
    assert run.lanes == 3
    rows, arrived = run.arrivals()
    assert len(rows) == len(arrived) >= 2
    lanes = [run.times(k) for k in range(3)]
    assert all(len(t) == n for t, n in zip(lanes, run.counts, strict=True))
    assert np.array_equal(lanes[0], lanes[2])
    assert np.all(np.diff(lanes[1]) >= 0)


def test_a_stored_run_spreads_its_rows_over_its_filed_start_and_end(tmp_path) -> None:
    path = tmp_path / "runs.db"
    with jhw.Store(path):
        _loop(jnp.zeros(2), 50)
    (stored,) = jhw.load_runs(path)
    times = stored.times()
    assert len(times) == stored.counts[0] and np.all(np.diff(times) >= 0)
    assert abs(times[0] - time.time()) < 600


def test_the_x_axis_option_and_its_control() -> None:
    with pytest.raises(ValueError, match="x_axis must be 'step', 'relative'"):
        jhw.LivePlot(x_axis="seconds")
    live = jhw.LivePlot(x_axis="relative")
    assert live.x_axis == live.panel.x_axis == "relative"
    live.panel._on_view_message(None, {"jhw_control": "x_axis", "value": "wall"}, [])
    assert live.x_axis == "wall"
    live.panel._on_view_message(None, {"jhw_control": "x_axis", "value": "nonsense"}, [])
    assert live.x_axis == "wall"  # a value it cannot be changes nothing
    live.x_axis = "step"
    assert live.panel.x_axis == "step"


def _x_axis(live: jhw.LivePlot) -> Any:
    return live.figures[0].axes[0]


def test_relative_and_wall_axes_draw_seconds_with_time_labels() -> None:
    live = jhw.LivePlot(keep_runs=True)
    with live:
        jax.jit(_slow_loop)(jnp.zeros(2))
    axis = _x_axis(live)
    assert axis.label == "step"
    steps = np.asarray(live.figures[0].marks[0].x)
    live.x_axis = "relative"  # after the run: redrawn from its rows' times
    axis = _x_axis(live)
    assert axis.label == "relative time"
    xs = np.asarray(live.figures[0].marks[0].x, float)
    assert xs[0] == 0.0 and 0.1 < xs[-1] < 60 and np.all(np.diff(xs) >= 0)
    assert len(xs) == len(steps)
    labels = [axis.tick_labels[_key(v)] for v in axis.tick_values]
    assert labels and all(re.fullmatch(r"\d+(\.\d+)? (s|min|h)", t) for t in labels), labels
    assert live.figures[0].axes[0].scale.max >= xs[-1]

    live.x_axis = "wall"
    axis = _x_axis(live)
    assert axis.label == "wall clock"
    xs = np.asarray(live.figures[0].marks[0].x, float)
    assert abs(xs[-1] - time.time()) < 600
    labels = [axis.tick_labels[_key(v)] for v in axis.tick_values]
    assert labels and all(re.fullmatch(r"\d\d:\d\d:\d\d(\.\d+)?", t) for t in labels), labels
    clocks = live.panel.x_clocks  # the hover read-out's time -> step pairs
    ((times, at_steps),) = clocks.values()
    assert at_steps[0] == 0 and at_steps[-1] == steps[-1] and len(times) == len(at_steps)

    live.x_axis = "step"
    assert _x_axis(live).label == "step" and live.panel.x_clocks == {}
    assert np.array_equal(np.asarray(live.figures[0].marks[0].x), steps)


def _key(value: float) -> str:
    value = float(value)
    return str(int(value)) if value.is_integer() else repr(value)


def test_a_time_axis_sets_the_step_window_aside_with_a_note() -> None:
    live = jhw.LivePlot(last_steps=20)
    with live:
        _loop(jnp.zeros(2), 200)
    assert len(live.figures[0].marks[0].x) <= 21
    live.x_axis = "relative"
    assert len(live.figures[0].marks[0].x) > 21  # every row on the time axis
    assert "apply to the step axis" in live.legend.value
    live.x_axis = "step"
    assert len(live.figures[0].marks[0].x) <= 21
    assert "apply to the step axis" not in live.legend.value


def test_the_picture_draws_the_time_axis() -> None:
    live = jhw.LivePlot(x_axis="wall")
    with live:
        jax.jit(_slow_loop)(jnp.zeros(2))
    svg = live._outputs.picture()["image/svg+xml"]
    ticks = re.findall(r'class="x"[^>]*>([^<]*)<', svg)
    assert ticks and all(re.fullmatch(r"\d\d:\d\d:\d\d(\.\d+)?", t) for t in ticks), ticks
    assert "wall clock" in svg
    live.x_axis = "relative"
    svg = live._outputs.picture()["image/svg+xml"]
    ticks = re.findall(r'class="x"[^>]*>([^<]*)<', svg)
    assert ticks and all(re.fullmatch(r"\d+(\.\d+)? (s|min|h)", t) for t in ticks), ticks
    assert "relative time" in svg
