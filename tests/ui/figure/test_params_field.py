"""The hyperparameter chart ranks a field the user chooses, best its lowest or highest value:
``LivePlot(params_field="acc", params_best="max")``, the properties of the same names and the
controls in the chart's corner (the view sends ``params_field`` / ``params_best``), changed
live; the static picture and the chart's CSV follow; a field not plotted is refused naming the
fix (or, not plotted by the sweep, said in a note).

Before (issue 50) the chart always plotted the first plotted field, its best the minimum: an
accuracy's best was its worst, and nothing could choose another field.
"""

from __future__ import annotations

import csv
import html
import io

import numpy as np
import pytest

import jaxhist_widget as jhw

from ...helpers.static import SVG, picture
from ...helpers.sweeps import STEPS, sweep
from ...helpers.synthetic import feed

LANES = 64


def accuracy(lanes: int) -> list[np.ndarray]:
    """Per lane an accuracy rising to a peak then falling back a little (its last is not its
    best, nor its lowest)."""
    t = np.arange(STEPS, dtype=np.float64)
    return [0.5 + 0.4 * (k / lanes) * np.sin(np.pi * t / (1.5 * STEPS)) for k in range(lanes)]


def sweep_plot(**options: object) -> tuple[jhw.LivePlot, np.ndarray, list[np.ndarray]]:
    rates = np.logspace(-3, 0, LANES)
    acc = accuracy(LANES)
    live = jhw.LivePlot(lane_values={"lr": rates}, title="sweep", **options)  # type: ignore[arg-type]
    feed(live, {"loss": sweep(LANES, 0), "acc": acc}, lanes=LANES, max_steps=STEPS)
    return live, rates, acc


def marks(live: jhw.LivePlot, title: str) -> tuple[np.ndarray, np.ndarray]:
    chart = live.drawing().chart(title)  # its lines: "acc last", "acc best" for "acc vs lr"
    field = title.split(" vs ")[0]
    return chart.line(f"{field} last").y, chart.line(f"{field} best").y


def as_recorded(values: list[np.ndarray]) -> list[np.ndarray]:
    return [v.astype(np.float32).astype(np.float64) for v in values]


def test_the_chart_ranks_the_field_asked_for_its_best_the_highest() -> None:
    live, _, acc = sweep_plot(params_field="acc", params_best="max")
    assert [f.title for f in live.figures] == ["loss", "acc", "acc vs lr"]
    last, best = marks(live, "acc vs lr")
    values = as_recorded(acc)
    np.testing.assert_array_equal(last, [v[-1] for v in values])
    np.testing.assert_array_equal(best, [v.max() for v in values])  # not the minimum
    entry = live.panel.param_lanes["acc vs lr"]
    assert entry["field"] == "acc" and entry["best"] == "max"
    assert entry["fields"] == ["loss", "acc"]  # what the chart's select offers
    assert live.params_field == "acc" and live.params_best == "max"


def test_the_choice_changes_live_from_python_and_from_the_view() -> None:
    live, _, acc = sweep_plot()
    assert [f.title for f in live.figures] == ["loss", "acc", "loss vs lr"]  # the default
    live.params_field = "acc"
    assert [f.title for f in live.figures] == ["loss", "acc", "acc vs lr"]
    _, best = marks(live, "acc vs lr")
    # an accuracy's best is its highest, by its name (params_best left None)
    np.testing.assert_array_equal(best, [v.max() for v in as_recorded(acc)])
    assert live.params_best is None
    # the chart's best toggle, as the view sends it
    live.panel._on_view_message(live.panel, {"jhw_control": "params_best", "value": "min"}, [])
    _, best = marks(live, "acc vs lr")
    np.testing.assert_array_equal(best, [v.min() for v in as_recorded(acc)])
    assert live.params_best == "min"
    shown = [entry for chart in live.drawing().charts.values() for entry in chart.legend]
    assert "acc best (lowest)" in shown, shown  # the chart's legend under it follows
    # the chart's field select, as the view sends it
    live.panel._on_view_message(live.panel, {"jhw_control": "params_field", "value": "loss"}, [])
    assert [f.title for f in live.figures] == ["loss", "acc", "loss vs lr"]
    assert live.params_field == "loss"
    live.params_field = None  # back to the default: a loss-like field
    assert live.panel.params_field == "" and live.params_field is None


def test_the_picture_and_the_csv_follow_the_choice() -> None:
    live, rates, acc = sweep_plot()
    live.params_field, live.params_best = "acc", "max"
    _, root = picture(live)
    charts = {g.get("data-title"): g for g in root.iter(f"{SVG}g") if g.get("class") == "jhw-chart"}
    assert "acc vs lr" in charts and "loss vs lr" not in charts
    lines = [p.get("data-label") for p in charts["acc vs lr"].iter(f"{SVG}path")]
    assert "acc last" in lines and "acc best" in lines
    assert "acc best (highest)" in svg_text(root)
    reply, (data,) = live._downloads.answer({"id": 1, "chart": "acc vs lr", "format": "csv"})
    assert reply["error"] == "", reply
    rows = list(csv.reader(io.StringIO(data.decode())))
    assert rows[0] == ["run", "lane", "name", "lr", "acc last", "acc best"]
    values = as_recorded(acc)
    for row in rows[1:]:
        lane = int(row[1])
        assert float(row[3]) == rates[lane]
        assert (float(row[4]), float(row[5])) == (values[lane][-1], values[lane].max())


def svg_text(root: object) -> str:
    return " ".join(t.text or "" for t in root.iter(f"{SVG}text"))  # type: ignore[attr-defined]


def test_a_field_not_plotted_is_refused_naming_the_fix() -> None:
    with pytest.raises(
        ValueError, match=r"params_field='acc' is not plotted: fields= plots 'loss'"
    ):
        jhw.LivePlot(fields=["loss"], params_field="acc")
    with pytest.raises(TypeError, match="params_field must be the name of a plotted field"):
        jhw.LivePlot(params_field=3)
    with pytest.raises(ValueError, match=r"params_best must be 'min' .*, 'max' .* or None"):
        jhw.LivePlot(params_best="highest")
    jhw.LivePlot(fields=["x"], params_field="x[0]")  # a component of a plotted leaf
    live, _, _ = sweep_plot()
    with pytest.raises(
        ValueError, match=r"'accuracy' is not plotted: the sweep plots 'loss', 'acc'"
    ):
        live.params_field = "accuracy"
    assert live.params_field is None  # unchanged
    with pytest.raises(ValueError, match="params_best must be"):
        live.params_best = "best"


def test_a_field_the_sweep_does_not_plot_is_said_under_the_charts() -> None:
    live, _, _ = sweep_plot(params_field="accuracy")
    assert [f.title for f in live.figures] == ["loss", "acc"]  # no chart to rank by it
    legend = html.unescape(live.legend.value)
    assert "params_field='accuracy' is not plotted" in legend
    assert "choose one of 'loss', 'acc'" in legend
    live.params_field = "acc"
    assert "params_field=" not in html.unescape(live.legend.value)
    assert [f.title for f in live.figures] == ["loss", "acc", "acc vs lr"]


def test_a_lane_drawn_only_in_the_band_is_drawn_while_pointed_at() -> None:
    """Past the drawn-lane limit a lane is no line of its own: the page asks for it (the
    ``lane_probe`` control) while its point in the hyperparameter chart is hovered, and gets its
    line over the chart, named as a lane's line (the page lights it by that name)."""
    lanes = 4096
    rates = np.logspace(-3, 0, lanes)
    values = sweep(lanes, 100)
    live = jhw.LivePlot(lane_values={"lr": rates})
    feed(live, {"loss": values}, lanes=lanes, max_steps=STEPS)
    drawn = [line.lane for line in live.drawing().chart("loss").lines]
    lane = next(k for k in range(lanes) if k not in drawn)
    number = 1  # the plot's first run: the page names a run by its number
    ask = live.panel._on_view_message
    ask(live.panel, {"jhw_control": "lane_probe", "value": [number, lane]}, [])
    loss = live.drawing().chart("loss")
    probe = loss.lines[-1]  # over the lines
    assert probe.role == "probe" and [ln.role for ln in loss.lines].count("probe") == 1
    name = live.panel.param_lanes["loss vs lr"]["names"][lane]  # (lanes in order of lr)
    assert probe.label == f"loss · {name} · run 1"
    recorded = values[lane].astype(np.float32).astype(np.float64)
    np.testing.assert_array_equal(probe.y, recorded)
    np.testing.assert_array_equal(probe.x, np.arange(STEPS))
    assert _picture_has_no(live, name)  # a pointer's, not the plot's

    def probes() -> list[str]:
        return [ln.label for ln in live.drawing().chart("loss").lines if ln.role == "probe"]

    ask(live.panel, {"jhw_control": "lane_probe", "value": None}, [])
    assert probes() == []
    assert live.drawing().chart("loss").y_range == loss.y_range  # the axes never follow it
    # a lane drawn as a line of its own is lit as such: no probe
    ask(live.panel, {"jhw_control": "lane_probe", "value": [number, drawn[0]]}, [])
    assert probes() == []
    ask(live.panel, {"jhw_control": "lane_probe", "value": "nonsense"}, [])
    assert probes() == []
    # every lane's line, for the page to draw the one it points at without asking each time
    content, (data,) = live._updates.lanes.lane_lines(number)
    assert content["fields"] == ["loss"] and content["charts"] == ["loss"]
    x = np.asarray(content["x"])
    y = np.frombuffer(data, np.float32).reshape(1, lanes, len(x))
    assert x[0] == 0 and x[-1] == STEPS - 1
    np.testing.assert_array_equal(y[0, lane], values[lane][x].astype(np.float32))
    assert live._updates.lanes.lane_lines(99) == (
        {"jhw_lane_lines": 99, "fields": [], "charts": []},
        [],
    )


def _picture_has_no(live: jhw.LivePlot, name: str) -> bool:
    _, root = picture(live)
    return all(name not in (p.get("data-label") or "") for p in root.iter(f"{SVG}path"))


def test_an_accuracys_runaways_below_leave_the_y_range() -> None:
    """Lanes whose accuracy-like field falls away (to -1e30 and -inf) are left out of the
    chart's y range, as a loss's runaways above are."""
    t = np.arange(STEPS, dtype=np.float64)
    score = [0.5 + 0.4 * (1 - np.exp(-0.1 * t)) * (k / LANES) for k in range(LANES - 4)]
    for k in range(4):
        away = -((1.7 + 0.1 * k) ** t)
        away[away < -1e30] = -np.inf
        score.append(away)
    live = jhw.LivePlot(lane_values={"lr": np.logspace(-3, 0, LANES)}, params_best="max")
    feed(live, {"score": score}, lanes=LANES, max_steps=STEPS)
    low, high = live.drawing().chart("score vs lr").y_range
    assert -1.0 < low < 0.5 < high < 2.0


def test_the_jaxhist_magic_takes_them_too() -> None:
    from jaxhist_widget._extension._magics import JaxHistMagics
    from jaxhist_widget._extension._options import _parse, _plot_options

    args = _parse(JaxHistMagics.jaxhist_cell, "--params-field acc --params-best max")
    assert _plot_options(args) == {"params_field": "acc", "params_best": "max"}
    assert _plot_options(_parse(JaxHistMagics.jaxhist_cell, "")) == {}


def test_a_vector_leafs_median_is_ranked_by_its_name() -> None:
    rates = np.logspace(-3, 0, 8)
    w = np.stack([np.linspace(1, 0.1 * (k + 1), STEPS)[:, None] * np.ones(5) for k in range(8)])
    live = jhw.LivePlot(lane_values={"lr": rates}, vectors="band")
    feed(live, {"loss": sweep(8, 0), "w": list(w)}, lanes=8, max_steps=STEPS, shapes=[(), (5,)])
    live.params_field = "w"  # its chart's name: its median is what the chart ranks
    assert "w median vs lr" in [f.title for f in live.figures]
