"""A `ChartGrid` is one class that owns its parts, each whole in its own module with an explicit
constructor: the time axis (`TimeAxis`: what the x axis counts, each run's steps placed on it)
and the scales (`GridScales`: log y, log steps, outliers, the window), which it hands the
charts. Each part works on its own, given only what its constructor and methods name."""

from __future__ import annotations

import numpy as np

from jaxhist_widget.ui.figure import ChartGrid, LiveFigure
from jaxhist_widget.ui.figure._grid_scales import GridScales
from jaxhist_widget.ui.figure._time_axis import TimeAxis


def test_the_grid_owns_its_parts_and_inherits_none() -> None:
    grid = ChartGrid(log_y=None)
    assert ChartGrid.__mro__ == (ChartGrid, object)
    assert isinstance(grid.time, TimeAxis) and isinstance(grid.scales, GridScales)
    assert grid.scales.time is grid.time  # the scales span the grid's own time axis
    grid.set_x_time("wall")
    assert grid.x_time == grid.time.mode == "wall"


def test_the_time_axis_places_a_runs_steps_by_its_clock() -> None:
    time = TimeAxis()
    time.add_run(1, 10)  # drawn from step 10
    time.set_clock(1, lambda steps: 100.0 + 2 * steps)  # 2 s a step, from t = 100
    steps = np.array([10.0, 12.0])
    assert time.x_of(1, steps) is steps  # the step axis: the steps themselves
    time.set_mode("wall", [])
    assert time.x_of(1, steps).tolist() == [120.0, 124.0]
    time.set_mode("relative", [])
    assert time.x_of(1, steps).tolist() == [0.0, 4.0]  # since the run's first step
    xs, ys, _ = time.place(1, ([steps], [np.ones(2)], (1.0, 1.0, 1.0)))
    assert xs[0].tolist() == [0.0, 4.0] and ys[0].tolist() == [1.0, 1.0]
    assert time.place_flags(1, np.array([12.0, 5.0])).tolist() == [[4.0, 5.0]]
    assert np.isnan(time.x_of(2, steps)).all()  # no clock known: no time
    time.drop_runs([1])
    assert np.isnan(time.x_of(1, steps)).all()


def test_the_scales_put_the_charts_they_are_handed_on_the_grids_axes() -> None:
    time = TimeAxis()
    scales = GridScales(time, log_y=None)
    chart = LiveFigure(False, title="loss", x_scale=scales.x_scale)
    scales.fit(chart)
    assert chart.auto_log and not chart.log_x
    scales.set_log_x(True, [chart])
    assert chart.log_x and chart.x_scale is scales.x_log
    time.set_mode("relative", [chart])
    scales.fit_all_x([chart])  # a time axis stays linear: the log toggle is the steps'
    assert not chart.log_x and chart.x_time == "relative"
    scales.set_log(True, [chart])
    assert chart.log and not chart.auto_log and scales.log
    scales.set_log_charts([], {"loss": chart})
    assert not chart.log
