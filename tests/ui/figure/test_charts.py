"""One chart per metric: `LivePlot(charts=...)`, its grid, its colors and its static picture."""

from __future__ import annotations

import itertools
import math
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import jaxhist_widget as jhw
from jaxhist_widget.ui import look as legend
from jaxhist_widget.ui.figure import MAX_CHARTS
from jaxhist_widget.ui.look import chart_columns

from ...helpers.colours import contrast, lab
from ...helpers.synthetic import feed

SVG = "{http://www.w3.org/2000/svg}"


def adam(n: int = 400) -> dict[str, np.ndarray]:
    """An optimizer's metrics, three scales apart: loss ~1, grad_norm ~10, lr ~1e-3."""
    steps = np.arange(n, dtype=float)
    return {
        "loss": 0.16 + 2.0 * np.exp(-steps / 60),
        "grad_norm": 30.0 * np.exp(-steps / 100) + 2.0,
        "lr": 1e-3 * np.minimum(1.0, (steps + 1) / 50),
    }


def marks(figure) -> list:
    return list(figure.marks)


def test_one_chart_per_field_each_with_its_own_y_range_and_the_same_steps() -> None:
    live = jhw.LivePlot()
    values = adam()
    feed(live, values, max_steps=1000)
    figures = live.figures
    assert [f.title for f in figures] == ["loss", "grad_norm", "lr"]
    assert live.panel.figures == figures and live.panel.figure is figures[0]
    # each chart's cell: its figure, its own legend under it
    assert tuple(cell.children[0] for cell in live.charts.children) == tuple(figures)
    x_limits = {(f.marks[0].scales["x"].min, f.marks[0].scales["x"].max) for f in figures}
    assert len(x_limits) == 1  # one step range on every chart
    for figure, (name, v) in zip(figures, values.items(), strict=True):
        (mark,) = marks(figure)
        assert mark.labels == [f"{name} · run 1"]
        assert mark.colors == [legend.PALETTE[0]]  # the run's colour, in every chart
        y = mark.scales["y"]
        assert y.min <= v.min() and v.max() <= y.max
        assert y.max - y.min < 3 * (v.max() - v.min())  # scaled to its own data, not to all
    # the legend is one row for all charts; here it has nothing to name (the titles do)
    assert live.widget.children == (live.panel, live.charts, live.legend)
    assert live.legend.value == ""


def test_shared_draws_every_field_on_one_chart() -> None:
    live = jhw.LivePlot(charts="shared")
    feed(live, adam(), max_steps=1000)
    (figure,) = live.figures
    assert figure.title == "" and len(figure.marks) == 3


def test_more_metrics_than_charts_share_one() -> None:
    live = jhw.LivePlot()
    feed(live, {f"m{k:02d}": np.linspace(k, 0, 20) for k in range(MAX_CHARTS + 1)})
    (figure,) = live.figures
    assert len(figure.marks) == MAX_CHARTS + 1
    few = jhw.LivePlot()
    feed(few, {f"m{k:02d}": np.linspace(k, 0, 20) for k in range(MAX_CHARTS)})
    assert len(few.figures) == MAX_CHARTS


@pytest.mark.parametrize("bad", ["per-field", "grid", None, 3])
def test_a_bad_charts_value_names_the_choices(bad) -> None:
    with pytest.raises(ValueError, match=r"'per_field'.*'shared'"):
        jhw.LivePlot(charts=bad)


def test_a_vector_leaf_stays_on_one_chart() -> None:
    live = jhw.LivePlot(fields=["class_loss", "lr"])
    steps = np.arange(50.0)
    class_loss = np.stack([np.exp(-steps / (10 + k)) for k in range(4)], axis=1)
    feed(
        live,
        {"class_loss": class_loss, "lr": 1e-3 + 0 * steps},
        shapes=[(4,), ()],
        max_steps=100,
    )
    first, second = live.figures
    assert first.title == "class_loss" and second.title == "lr"
    assert [m.labels[0] for m in first.marks] == [f"class_loss[{k}] · run 1" for k in range(4)]
    assert [m.colors[0] for m in first.marks] == list(legend.PALETTE[:4])


def test_kept_runs_and_lanes_stay_lines_inside_each_chart() -> None:
    live = jhw.LivePlot(keep_runs=True)
    feed(live, adam(), max_steps=1000)
    feed(live, adam(300), max_steps=1000)
    for figure in live.figures:
        older, newer = figure.marks  # one line per run, each in its run's colour
        assert older.colors == [legend.PALETTE[0]] and newer.colors == [legend.PALETTE[1]]
        assert list(older.opacities) == list(newer.opacities) == [1.0]
    lanes = jhw.LivePlot()
    curves = np.stack([adam()["loss"] * (k + 1) for k in range(3)])
    feed(lanes, {"loss": curves, "lr": curves / 1000}, lanes=3, max_steps=1000)
    for figure in lanes.figures:
        (mark,) = figure.marks
        assert len(mark.labels) == 3 and mark.colors == list(legend.PALETTE[:3])


def test_a_new_run_with_other_fields_shows_only_its_charts() -> None:
    live = jhw.LivePlot()
    feed(live, adam(), max_steps=1000)
    feed(live, {"err": np.linspace(1.0, 0.0, 20)}, max_steps=100)
    assert [f.title for f in live.figures] == ["err"]
    assert live.panel.figures == live.figures


def test_the_log_toggle_applies_to_every_chart() -> None:
    live = jhw.LivePlot()
    feed(live, adam(), max_steps=1000)
    live.panel.log_y = True
    for figure in live.figures:
        (mark,) = figure.marks
        assert type(mark.scales["y"]).__name__ == "LogScale"
        assert figure.axes[1].scale is mark.scales["y"]


def _send(panel, content) -> None:
    # What ipywidgets calls for a custom message from a view (`model.send(content)` in JS).
    panel._handle_custom_msg(content, [])


def _scales(live) -> dict[str, str]:
    return {f.title: type(f.marks[0].scales["y"]).__name__ for f in live.figures}


def test_each_chart_has_its_own_log_toggle() -> None:
    live = jhw.LivePlot()
    feed(live, adam(), max_steps=1000)
    _send(live.panel, {"jhw_control": "chart_log", "value": ["lr", True]})
    assert _scales(live) == {"loss": "LinearScale", "grad_norm": "LinearScale", "lr": "LogScale"}
    assert live.panel.log_charts == ["lr"] and live.log_y is False
    for figure in live.figures:  # the axis is on the mark's scale
        assert figure.axes[1].scale is figure.marks[0].scales["y"]
    # the static picture draws the lr chart on a log axis: its labels are powers of ten
    root = ET.fromstring(live._repr_mimebundle_()["image/svg+xml"])
    charts = {g.get("data-title"): g for g in root.iter(f"{SVG}g") if g.get("class") == "jhw-chart"}
    lr_labels = [t.text for t in charts["lr"].iter(f"{SVG}text") if t.get("class") == "y"]
    assert lr_labels and all("10⁻" in text for text in lr_labels), lr_labels
    # malformed values change nothing
    for bad in (["lr"], ["lr", 1], [3, True], "lr", None):
        _send(live.panel, {"jhw_control": "chart_log", "value": bad})
    assert live.panel.log_charts == ["lr"]
    _send(live.panel, {"jhw_control": "chart_log", "value": ["lr", False]})
    assert set(_scales(live).values()) == {"LinearScale"} and live.panel.log_charts == []
    # the panel's "log y" puts every chart on one scale, charts made later included
    live.log_y = True
    assert set(_scales(live).values()) == {"LogScale"}
    assert sorted(live.panel.log_charts) == ["grad_norm", "loss", "lr"]
    feed(live, {"err": np.linspace(1.0, 0.1, 20)}, max_steps=100)
    assert _scales(live) == {"err": "LogScale"} and "err" in live.panel.log_charts
    live.log_y = False
    assert _scales(live) == {"err": "LinearScale"} and live.panel.log_charts == []


def test_chart_columns_reflow_with_the_width() -> None:
    assert chart_columns(600, 3) == 1  # a narrow cell: one column
    assert chart_columns(1400, 3) == 3
    assert chart_columns(1400, 1) == 1
    assert chart_columns(1400, 9) == 4


def test_each_chart_gets_the_x_ticks_its_width_allows() -> None:
    wide, narrow = jhw.LivePlot(), jhw.LivePlot()
    for live in (wide, narrow):
        feed(live, adam(20_000), max_steps=20_000)
    wide.panel.plot_width = 1400
    narrow.panel.plot_width = 600
    # three charts side by side at 1400 px: each about as wide as one chart at 600 px
    ticks = [len(f.axes[0].tick_values) for f in (wide.figure, narrow.figure)]
    assert abs(ticks[0] - ticks[1]) <= 1, ticks


#: JupyterLab 4's ``--jp-layout-color0`` in the light and the dark theme.
_LIGHT, _DARK = "#ffffff", "#111111"


@pytest.mark.parametrize("n", [1, 6, 10, 16, 64])
def test_every_line_color_has_3_to_1_contrast_in_both_themes(n) -> None:
    colors = legend.lane_colors(n)
    assert len(set(colors)) == n
    for color in colors:
        assert contrast(color, _LIGHT) >= 3.0, color
        assert contrast(color, _DARK) >= 3.0, color


def test_no_two_palette_colours_are_near_duplicates() -> None:
    # two blues, two oranges and two teals read as one series in a legend of ten
    pairs = itertools.combinations(legend.PALETTE, 2)
    closest = min(pairs, key=lambda p: math.dist(lab(p[0]), lab(p[1])))
    assert math.dist(*map(lab, closest)) >= 30, closest


def test_the_palette_has_no_pure_red_or_green() -> None:
    for color in legend.PALETTE:
        r, g, b = (int(color[i : i + 2], 16) for i in (1, 3, 5))
        assert not (r > 160 and g < 90 and b < 90), color  # reads as an error
        assert not (g > 140 and r < 90 and b < 90), color  # reads as success


def test_the_static_picture_draws_the_same_charts() -> None:
    live = jhw.LivePlot(title="Adam")
    feed(live, adam(), max_steps=1000)
    root = ET.fromstring(live._repr_mimebundle_()["image/svg+xml"])
    charts = [g for g in root.iter(f"{SVG}g") if g.get("class") == "jhw-chart"]
    assert [g.get("data-title") for g in charts] == ["loss", "grad_norm", "lr"]
    for g, figure in zip(charts, live.figures, strict=True):
        labels = [p.get("data-label") for p in g.iter(f"{SVG}path") if p.get("class") == "jhw-line"]
        assert labels == [figure.marks[0].labels[0]]
        y_labels = [t.text for t in g.iter(f"{SVG}text") if t.get("class") == "y"]
        axis = figure.axes[1]
        from jaxhist_widget.ui.look import d3_format

        assert y_labels == [d3_format(axis.tick_format, t) for t in axis.tick_values]
    # two columns in the picture's 720 px: the third chart starts a second row
    tops = [float(next(t for t in g.iter(f"{SVG}text")).get("y")) for g in charts]
    assert tops[0] == tops[1] < tops[2]


def test_the_panels_log_y_reads_on_only_while_every_chart_is_on_a_log_axis() -> None:
    """Issue 50: with one chart, turning its log button off left "log y" checked over a linear
    axis. "log y" now follows the charts' own toggles (the view shows a mix half-checked)."""
    live = jhw.LivePlot(log_y=True)
    feed(live, {"loss": np.linspace(1.0, 0.1, 20)}, max_steps=100)
    _send(live.panel, {"jhw_control": "chart_log", "value": ["loss", False]})
    assert _scales(live) == {"loss": "LinearScale"} and live.log_y is False
    _send(live.panel, {"jhw_control": "chart_log", "value": ["loss", True]})
    assert _scales(live) == {"loss": "LogScale"} and live.log_y is True
    # several charts: one turned off leaves the others on a log axis, and "log y" off
    live = jhw.LivePlot(log_y=True)
    feed(live, adam(), max_steps=1000)
    _send(live.panel, {"jhw_control": "chart_log", "value": ["lr", False]})
    assert _scales(live) == {"loss": "LogScale", "grad_norm": "LogScale", "lr": "LinearScale"}
    assert live.log_y is False and sorted(live.panel.log_charts) == ["grad_norm", "loss"]
    _send(live.panel, {"jhw_control": "chart_log", "value": ["lr", True]})
    assert live.log_y is True and set(_scales(live).values()) == {"LogScale"}
