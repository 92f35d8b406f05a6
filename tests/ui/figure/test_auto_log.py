"""A chart whose positive values span three decades or more goes to a log y axis of itself
(``log_y=None``, the default), the hyperparameter chart too, its best point starred; until the
user chooses: a chart's own log toggle or the panel's "log y" is kept, whatever the values do.

Before (issue 57) the 4096-rate ``loss vs lr`` stayed linear though its own "log?" button said
it spanned 3 decades: lr 0.01 to 0.8 all sat on 0, the best point unmarked.
"""

from __future__ import annotations

import jax
import numpy as np
import pytest

import jaxhist_widget as jhw

from ...helpers.loops import least_squares_sweep
from ...helpers.synthetic import FakeLoop, feed, layout

RATES = np.logspace(-2, 0, 512).astype(np.float32)  # the largest diverge


@pytest.fixture(scope="module")
def sweep() -> tuple[jhw.LivePlot, np.ndarray]:
    live = jhw.LivePlot(lane_values={"lr": RATES})
    with live:
        _, hist = jax.jit(jax.vmap(least_squares_sweep(60)))(RATES)
    return live, np.asarray(hist.values["loss"], np.float64)


def test_a_sweep_spanning_decades_is_drawn_on_log_axes_its_best_point_starred(sweep) -> None:
    live, loss = sweep
    drawing = live.drawing()
    assert drawing.chart("loss").log_y and drawing.chart("loss vs lr").log_y
    assert set(drawing.log_charts) == {"loss", "loss vs lr"} == set(live.panel.log_charts)
    lo, hi = drawing.chart("loss vs lr").y_range
    assert hi / lo > 1e6  # the converged rates' decades, none of them a flat line on 0
    # the best lane (the goal's: the lowest last loss), starred on its point
    (best,) = [ln for ln in drawing.chart("loss").lines if "best" in ln.role.split(", ")]
    star = drawing.chart("loss vs lr").line("best lane")
    assert star.role == "best" and not star.joined
    assert star.x.tolist() == [float(RATES[best.lane])]
    assert star.y[0] == pytest.approx(loss[best.lane, -1], rel=1e-6)
    name = f"lr={RATES[best.lane]:.4g}"
    assert any(e.startswith(f"best: {name} (loss ") for e in drawing.chart("loss vs lr").legend)


def test_log_y_false_keeps_linear_axes_and_offers_a_log_one() -> None:
    live = jhw.LivePlot(log_y=False, lane_values={"lr": RATES[::8]})
    with live:
        jax.jit(jax.vmap(least_squares_sweep(60)))(RATES[::8])
    assert live.drawing().log_charts == ()
    assert live.panel.log_hints["loss"] >= 3  # its log button reads "log?"


def test_a_chart_goes_to_log_once_then_the_users_toggle_is_kept() -> None:
    live = jhw.LivePlot()
    with live:
        loop = FakeLoop(layout(("loss",)))
        loop.send(loss=np.geomspace(1.0, 0.1, 20))  # a decade: linear
        live.refresh()
        assert not live.drawing().chart("loss").log_y
        loop.send(loss=np.geomspace(0.1, 1e-6, 20))  # now six decades: log
        live.refresh()
        assert live.drawing().chart("loss").log_y
        # the user sets it back to linear: kept as the values go on spanning decades
        live.panel._on_view_message(
            live.panel, {"jhw_control": "chart_log", "value": ["loss", False]}, []
        )
        loop.send(loss=np.geomspace(1e-6, 1e-9, 20))
        live.refresh()
        assert not live.drawing().chart("loss").log_y
        loop.end()
    assert not live.drawing().chart("loss").log_y


@pytest.mark.parametrize("ignore_outliers", [True, False])
def test_a_few_values_far_from_the_bulk_keep_a_chart_linear(ignore_outliers: bool) -> None:
    # A warm-up's learning rate, 0 for 100 steps then rising to 1e-3 (its first rises 3
    # decades under its last, its 0s no place on a log axis), and a loss at 1 that spiked to
    # 1e4 once: the bulk of each spans a decade at most. Before, both went log.
    ramp = np.r_[np.zeros(100), np.linspace(1e-3 / 1000, 1e-3, 1000)]
    spike = np.r_[np.full(50, 1.0), 1e4, np.full(50, 1.0)]
    for name, values in (("lr", ramp), ("loss", spike)):
        live = jhw.LivePlot(ignore_outliers=ignore_outliers)
        feed(live, {name: values}, max_steps=2000)
        assert live.drawing().log_charts == (), name
