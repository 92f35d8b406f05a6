"""A sweep's hyperparameter view: lanes that carry values (``lane_values=``, or ``lane_labels=``
as numbers) get a chart per parameter of each lane's last and best value of the ranked field
against it (``loss vs lr``), on a log x axis where the values span decades, its y range fitting
the lanes that did not run away; in the static picture and the chart's CSV too, and the view
knows each point's lane (its hover names and lights it).

Before (issue 50) ``LivePlot(lane_labels=rates)`` with the rates themselves was refused
("lane_labels must hold str only" / "not a sequence") and nothing plotted a lane against its
parameter.
"""

from __future__ import annotations

import csv
import io

import jax.numpy as jnp
import numpy as np
import pytest

import jaxhist_widget as jhw

from ...helpers.static import SVG, picture
from ...helpers.sweeps import STEPS, sweep
from ...helpers.synthetic import FakeLoop, feed, layout

LANES = 4096


def expected(values: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Each lane's last and lowest finite value, as recorded (float32)."""
    last, best = [], []
    for v in values:
        v = v.astype(np.float32).astype(np.float64)
        finite = v[np.isfinite(v)]
        last.append(finite[-1])
        best.append(finite.min())
    return np.array(last), np.array(best)


def test_lane_labels_may_be_the_swept_numbers() -> None:
    rates = jnp.logspace(-3, 0, 4)  # a jax array: the natural thing to pass
    live = jhw.LivePlot(lane_labels=rates)
    feed(live, {"loss": sweep(4, 0)}, lanes=4, max_steps=STEPS)
    assert "0.001" in live.legend.value and "1</span>" in live.legend.value
    assert [f.title for f in live.figures] == ["loss", "loss vs lane label"]
    jhw.LivePlot(lane_labels=np.array([1, 2, 3]))  # numpy ints too
    with pytest.raises(TypeError, match="lane_labels must hold str only"):
        jhw.LivePlot(lane_labels=["a", 1.0])


def test_a_chart_of_each_lanes_last_and_best_value_against_its_parameter() -> None:
    rng = np.random.default_rng(1)
    rates = np.logspace(-4, 0, LANES)[rng.permutation(LANES)]  # lanes in any order
    values = sweep(LANES, 205)
    live = jhw.LivePlot(lane_values={"lr": rates})
    feed(live, {"loss": values}, lanes=LANES, max_steps=STEPS)
    chart = live.drawing().chart("loss vs lr")
    last_line, best_line = chart.line("loss last"), chart.line("loss best")
    order = np.argsort(rates, kind="stable")
    last, best = expected(values)
    np.testing.assert_array_equal(last_line.x, rates[order])  # ascending parameter
    np.testing.assert_array_equal(last_line.y, last[order])
    np.testing.assert_array_equal(best_line.y, best[order])
    assert chart.log_x  # 4 decades of rates
    # its y range fits the lanes that did not run away (the last 205 grow to 1e36)
    assert chart.y_range[1] < 2.0
    # the lanes are named by their values, and the view knows each point's lane
    entry = live.panel.param_lanes["loss vs lr"]
    assert entry["run"] == "run 1" and entry["param"] == "lr" and entry["field"] == "loss"
    assert entry["names"][0] == f"lr={jhw.ui.look.format_value(rates[order][0])}"
    assert len(entry["names"]) == LANES


def test_the_picture_and_the_csv_hold_the_hyperparameter_chart() -> None:
    rates = np.logspace(-3, 0, 64)
    values = sweep(64, 4)
    live = jhw.LivePlot(lane_values={"lr": rates}, title="sweep")
    feed(live, {"loss": values}, lanes=64, max_steps=STEPS)
    _, root = picture(live)
    charts = {g.get("data-title"): g for g in root.iter(f"{SVG}g") if g.get("class") == "jhw-chart"}
    lines = [p.get("data-label") for p in charts["loss vs lr"].iter(f"{SVG}path")]
    assert "loss last" in lines and "loss best" in lines
    reply, (data,) = live._downloads.answer({"id": 1, "chart": "loss vs lr", "format": "csv"})
    assert reply["error"] == "" and reply["name"] == "sweep-loss_vs_lr.csv"
    rows = list(csv.reader(io.StringIO(data.decode())))
    assert rows[0] == ["run", "lane", "name", "lr", "loss last", "loss best"]
    last, best = expected(values)
    assert len(rows) == 65
    for row in rows[1:]:
        lane = int(row[1])
        assert row[2] == f"lr={jhw.ui.look.format_value(rates[lane])}"
        assert float(row[3]) == rates[lane]
        assert (float(row[4]), float(row[5])) == (last[lane], best[lane])


def test_lane_values_are_checked() -> None:
    with pytest.raises(TypeError, match="lane_values must be one number per vmap lane"):
        jhw.LivePlot(lane_values={"lr": ["a", "b"]})
    with pytest.raises(ValueError, match="one value per lane each"):
        jhw.LivePlot(lane_values={"lr": [1.0, 2.0], "wd": [1.0]})
    with pytest.raises(ValueError, match="name the vmap lanes differently"):
        jhw.LivePlot(lane_labels=["a", "b"], lane_values=[1.0, 2.0, 3.0])
    # a run of another lane count draws no hyperparameter chart (its lanes are named lane k)
    live = jhw.LivePlot(lane_values=[1.0, 2.0, 3.0])
    with pytest.warns(UserWarning, match="lane_labels"):
        feed(live, {"loss": sweep(4, 0)}, lanes=4, max_steps=STEPS)
    assert [f.title for f in live.figures] == ["loss"]


def test_the_best_lane_named_under_the_chart_follows_the_rows() -> None:
    # Mid-run the lead changes: the chart's legend names the best lane of the rows drawn now.
    # Before, it kept naming the lane best when the chart was made.
    live = jhw.LivePlot(lane_values={"lr": np.array([0.1, 0.2, 0.3])})

    def legend() -> str:
        (cell,) = [c for c in live.charts.children if c.children[0].title == "loss vs lr"]
        return cell.children[1].value

    with live:
        loop = FakeLoop(layout(("loss",)), lanes=3)
        loop.send(loss=[np.full(10, v) for v in (0.1, 0.5, 0.9)])
        live.refresh()
        assert "best: lr=0.1 " in legend()
        loop.send(loss=[np.full(10, v) for v in (0.6, 0.5, 0.01)])
        live.refresh()
        assert "best: lr=0.3 " in legend()
        loop.end()
