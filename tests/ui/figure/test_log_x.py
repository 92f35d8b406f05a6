"""A logarithmic step axis (``log_x``): every chart's marks and step axis on one log scale,
powers-of-ten ticks, step 0 (which a log axis cannot place) a gap, and back. Synthetic runs."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import bqplot
import numpy as np
import pytest

import jaxhist_widget as jhw

from ...helpers.synthetic import feed

SVG = "{http://www.w3.org/2000/svg}"


def test_the_step_axis_goes_log_on_every_chart_and_back() -> None:
    live = jhw.LivePlot(log_x=True)
    steps = np.arange(1001.0)
    feed(live, {"loss": 1 / (1 + steps), "lr": 1e-3 + 0 * steps}, max_steps=1000)
    for figure in live.figures:
        (mark,) = figure.marks
        x_axis = figure.axes[0]
        assert isinstance(mark.scales["x"], bqplot.LogScale) and x_axis.scale is mark.scales["x"]
        assert x_axis.scale.min == 1 and x_axis.scale.max >= 1000
        assert list(x_axis.tick_values) == [1.0, 10.0, 100.0, 1000.0]
        x, y = np.asarray(mark.x), np.asarray(mark.y)
        assert x[0] == 1 and np.isnan(y[0])  # step 0: a gap, never a NaN position
        assert (x > 0).all() and np.isfinite(y[1:]).all()
    assert len({id(f.axes[0].scale) for f in live.figures}) == 1  # one shared step scale
    live.panel._on_view_message(None, {"jhw_control": "log_x", "value": False}, [])
    assert not live.log_x
    for figure in live.figures:
        (mark,) = figure.marks
        assert isinstance(mark.scales["x"], bqplot.LinearScale)
        assert np.asarray(mark.x)[0] == 0 and np.isfinite(np.asarray(mark.y)[0])  # restored
        assert figure.axes[0].tick_values[0] == 0
    live.log_x = True  # a chart made later follows it
    feed(live, {"loss": 1 / (1 + steps), "grad_norm": steps}, max_steps=1000)
    assert all(isinstance(f.marks[0].scales["x"], bqplot.LogScale) for f in live.figures)
    with pytest.raises(TypeError, match="log_x must be True or False"):
        jhw.LivePlot(log_x="yes")


def test_the_picture_draws_the_log_step_axis() -> None:
    live = jhw.LivePlot(log_x=True)
    feed(live, {"loss": 1 / (1 + np.arange(1001.0))}, max_steps=1000)
    root = ET.fromstring(live._repr_mimebundle_()["image/svg+xml"])
    labels = [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "x"]
    assert labels == ["1", "10", "100", "1,000"]
    xs = {round(float(t.get("x"))) for t in root.iter(f"{SVG}text") if t.get("class") == "x"}
    gaps = np.diff(sorted(xs))
    assert gaps.max() - gaps.min() <= 1  # a decade takes the same width: a log axis


@pytest.mark.parametrize(("last", "window"), [(1000, 100), (5000, 2000), (300, 250)])
def test_a_last_steps_window_on_a_log_axis_ends_near_its_last_step(last, window) -> None:
    # The axis was rounded to a decade past its first step: ~10x past the last one.
    live = jhw.LivePlot(log_x=True, last_steps=window)
    feed(live, {"loss": 1 / (1 + np.arange(last + 1.0))}, max_steps=last)
    scale = live.figures[0].axes[0].scale
    assert scale.min == last - window and last <= scale.max <= 1.25 * last
    # a whole run from step 1 keeps its round end (a decade at least)
    live.last_steps = 0
    assert scale.min == 1 and scale.max >= 10
