"""The LivePlot figure: ticks, legend, colors, kept runs, hover labels (no frontend).

What a view would draw is read from the widgets' traits: tick values and d3 formats of the
axes, the figure margins, the marks' colors, styles, opacities and labels, and the legend row.
Runs are synthetic (`tests.synthetic`: rows fed through the hub by hand, no compiled loop); the
tick and legend rules are also checked as the pure functions they are (`_ticks`, `_legend`).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import jax.numpy as jnp
import numpy as np
import pytest

import jaxhist_widget as jhw
from jaxhist_widget.ui import look as legend
from jaxhist_widget.ui.figure import LiveFigure
from jaxhist_widget.ui.figure._legend import legend_html
from jaxhist_widget.ui.look import TICK_CHAR_PX, ticks
from jaxhist_widget.ui.plot import LivePlot

from ...helpers.static import SVG, picture
from ...helpers.synthetic import FakeLoop, feed, layout


def falling(steps: int, decades: float = 11.0, start: float = 5.0) -> np.ndarray:
    """A loss falling over ``decades`` orders of magnitude in ``steps`` steps."""
    return start * np.logspace(0, -decades, steps + 1)


def d3_like(fmt: str, t: float) -> str:
    """The label d3-format writes for ``fmt`` (the subset `_tick_format` uses)."""
    m = re.fullmatch(r"(,?)(?:\.(\d+))?(~?)([efg])", fmt)
    assert m, f"unexpected tick format {fmt!r}"
    comma, prec, trim, kind = m.groups()
    if kind == "g":
        return f"{t:{comma}g}"
    text = f"{t:{comma}.{int(prec)}{kind}}"
    if kind == "e":
        mant, exp = text.split("e")
        if trim and "." in mant:
            mant = mant.rstrip("0").rstrip(".")
        text = f"{mant}e{int(exp):+d}"
    elif trim and "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def labels(axis) -> list[str]:
    return [d3_like(axis.tick_format, t) for t in axis.tick_values]


def assert_readable_axes(fig) -> None:
    """Ticks inside the domain, one format per axis, distinct labels, and labels that fit
    (``fig``: a bqplot Figure, e.g. ``live.figure``)."""
    x_axis, y_axis = fig.axes
    for axis in (x_axis, y_axis):
        values = list(axis.tick_values)
        assert len(values) >= 2, (axis.tick_values, axis.scale.min, axis.scale.max)
        assert all(axis.scale.min - 1e-12 <= t <= axis.scale.max + 1e-12 for t in values)
        shown = labels(axis)
        assert len(set(shown)) == len(shown), f"labels repeat: {shown}"
    # x: integer steps, thousands separators, at most 5 ticks (fits a 330 px output)
    assert all(float(t).is_integer() for t in x_axis.tick_values)
    assert x_axis.tick_format == ",.0~f" and len(x_axis.tick_values) <= 5
    # y: every label fits the left margin
    widest = max(map(len, labels(y_axis)))
    assert fig.fig_margin["left"] >= widest * TICK_CHAR_PX + 8


# ------------------------------------------------------------------------------ ticks
def test_ticks_of_a_log_axis_spanning_eleven_decades():
    live = LivePlot(log_y=True)
    feed(live, {"loss": falling(300)})
    assert_readable_axes(live.figure)
    y_axis = live.figure.axes[1]
    values = np.asarray(y_axis.tick_values)
    assert y_axis.scale.min < 1e-6 and values.max() >= 1, (y_axis.scale.min, values)
    # powers of ten only, one scientific format for all, never "0.0000100" beside "1.00e+4"
    assert np.allclose(np.log10(values), np.round(np.log10(values)))
    assert y_axis.tick_format == ".0e"
    assert all(re.fullmatch(r"\de[+-]\d+", s) for s in labels(y_axis)), labels(y_axis)
    live.log_y = False  # the rebuilt linear axis gets its own ticks
    assert_readable_axes(live.figure)
    assert "e" not in live.figure.axes[1].tick_format


@pytest.mark.parametrize(
    ("lo", "hi"),
    [(-0.05, 1.05), (1.2e-4, 3.1e-4), (1000.0001, 1000.0009), (-3e7, 2e8), (0, 20_000)],
)
def test_linear_tick_labels_are_short_distinct_and_without_trailing_zeros(lo, hi):
    values = ticks.linear_ticks(lo, hi, 6)
    fmt, width = ticks.tick_format(values)
    shown = [d3_like(fmt, t) for t in values]
    assert 3 <= len(values) <= 7 and len(set(shown)) == len(shown), shown
    assert max(map(len, shown)) <= width
    assert not any(re.search(r"\.\d*0(e|$)", s) for s in shown), shown


def test_log_ticks_are_powers_of_ten_or_1_2_5_within_a_decade():
    assert ticks.log_ticks(1e-12, 10.0) == [10.0**e for e in range(-12, 2) if e % 3 == 0]
    assert ticks.log_ticks(0.15, 0.9) == [0.2, 0.5]
    assert ticks.log_ticks(0.0, 1.0) == [] and ticks.log_ticks(2.0, 1.0) == []


def test_every_log_axis_is_written_in_one_notation_whatever_its_range():
    # Fixed point on one chart (10,000 · 100 · 1) and scientific on the next (1e+6 … 1e+0,
    # 1e-1 · 3e-2) read as three notations in one panel: every log axis writes powers of ten.
    for lo, hi, labels in (
        (1e-9, 1e3, ["10⁻⁹", "10⁻⁶", "10⁻³", "10⁰", "10³"]),
        (0.01, 10.0, ["10⁻²", "10⁻¹", "10⁰", "10¹"]),
        (1.0, 1e4, ["10⁰", "10¹", "10²", "10³", "10⁴"]),
        (0.02, 0.2, ["2×10⁻²", "5×10⁻²", "10⁻¹", "2×10⁻¹"]),
    ):
        values = ticks.log_ticks(lo, hi)
        fmt, width = ticks.tick_format(values, log=True)
        assert [ticks.tick_text(fmt, v, log=True) for v in values] == labels
        assert width == max(map(len, labels))
    # A linear axis keeps its own (fixed point while short), the step axis SI prefixes.
    assert ticks.tick_text(",~g", 0.5) == "0.5"


def test_axis_limits_are_round_and_hold_the_data():
    assert ticks.x_limits(0, 0) == (0.0, 1.0)  # a zero-step run: a unit axis, not a point
    assert ticks.x_limits(0, 20_000) == (0.0, 20_000.0)
    assert ticks.x_limits(200, 301) == (200.0, 320.0)  # a continued run starts at its step
    lo, hi = ticks.linear_limits(0.13, 0.91)
    assert lo <= 0.13 - 0.03 and hi >= 0.91 + 0.03 and hi - lo < 1.0
    assert ticks.linear_limits(np.inf, -np.inf) == (0.0, 1.0)  # no finite value
    assert ticks.linear_limits(3.0, 3.0)[0] < 3.0 < ticks.linear_limits(3.0, 3.0)[1]
    lo, hi = ticks.log_limits(1e-7, 2.0)
    assert lo <= 1e-7 / 1.15 and hi >= 2.0 * 1.15 and hi <= 2.0 * 1.15 * 10 ** (1 / 8)
    assert ticks.log_limits(np.inf, -np.inf) == (0.1, 10.0)
    assert ticks.left_margin(1) == 40 and ticks.left_margin(9) == 9 * 7 + 14


def test_zero_step_runs_point_stands_off_the_y_axis_with_one_tick():
    """Issue 50: a zero-step run's marker sat on the y axis (x from 0 to 1), half hidden by it
    in the exported picture. Its step is now the middle of the axis, live and in the picture."""
    live = LivePlot()
    feed(live, {"value": [0.5]})
    assert live.panel.step == 0
    x_axis = live.figure.axes[0]
    assert (x_axis.scale.min, x_axis.scale.max) == (-0.5, 0.5)
    assert list(x_axis.tick_values) == [0.0] and labels(x_axis) == ["0"]  # its one step
    _, root = picture(live)
    (point,) = [c for c in root.iter(f"{SVG}circle") if c.get("class") == "jhw-point"]
    (axes,) = [g for g in root.iter(f"{SVG}g") if g.get("class") == "jhw-axes"]
    left, right = axis_span(axes)
    assert abs(float(point.get("cx")) - (left + right) / 2) < 1  # in the middle


def axis_span(axes: ET.Element) -> tuple[float, float]:
    """The picture's x axis line's ends (its path ``M{x0},{y1}V{y0}H{x1}``)."""
    (path,) = [p for p in axes.iter(f"{SVG}path") if p.get("d", "").startswith("M")]
    d = path.get("d")
    return float(d[1:].split(",")[0]), float(d.rsplit("H", 1)[1])


def test_long_run_x_ticks_are_few_and_round():
    live = LivePlot()
    with live:
        loop = FakeLoop(layout(max_steps=20_000))
        for start in range(0, 20_001, 4001):  # a few flushes, as a run streams them
            loop.send(value=np.arange(start, min(start + 4001, 20_001), dtype=np.float32))
        loop.end("max_steps")
    x_axis = live.figure.axes[0]
    assert list(x_axis.tick_values) == [0, 5000, 10000, 15000, 20000]
    assert labels(x_axis) == ["0", "5,000", "10,000", "15,000", "20,000"]  # as the panel writes


@pytest.mark.parametrize("log_y", [False, True])
def test_axis_limits_stay_put_while_a_run_grows(log_y):
    # A scale change makes the browser redraw every line on it and its axis: during a live run
    # the limits move on round numbers only, not at every update.
    fig = LiveFigure(log_y=log_y)
    fig.add_run(1)
    fig.add_marks(1, ["loss"])
    changes = {"x": 0, "y": 0}
    fig.x_scale.observe(lambda _: changes.__setitem__("x", changes["x"] + 1), "max")
    fig.y_scale.observe(lambda _: changes.__setitem__("y", changes["y"] + 1), ["min", "max"])
    updates = np.unique(np.geomspace(10, 100_000, 600).astype(int))
    for step in updates:  # a 10^5-step run seen by 600 updates; the loss falls 1 -> 1e-5
        loss = float(step) ** -1.0
        line = ([np.array([0, step])], [np.array([1.0, loss])], (loss, 1.0, loss))
        fig.set_lines(1, [line], last_step=int(step))
        fig.update_scales()
        top = fig.x_scale.max
        assert step <= top <= 4 / 3 * step  # the last step is on the axis, near its end
        lo, hi = fig.y_scale.min, fig.y_scale.max
        assert lo <= loss and hi >= 1.0  # every value is inside the limits
        assert_readable_axes(fig.figure)
    # 4 decades: about 10 round numbers a decade, whatever the number of updates
    assert changes["x"] <= 45, changes
    assert changes["y"] <= (40 if log_y else 25), changes


# ------------------------------------------------------------------- colors, legend
def all_marks(live):
    """Every chart's marks, in grid order."""
    return [m for f in live.figures for m in f.marks]


def test_field_colors_follow_the_palette_in_order():
    # On a shared chart one run's fields are told apart by colour (one chart each: the run's).
    adam = LivePlot(fields=["loss", "grad_norm"], charts="shared")
    lbfgs = LivePlot(fields=["grad_norm"])
    feed(adam, {"grad_norm": falling(20), "loss": falling(20)})
    feed(lbfgs, {"grad_norm": falling(20), "loss": falling(20)})
    colors = {m.labels[0]: m.colors[0] for m in all_marks(adam)}
    # By position, not hashed from the name: the first field is blue, never olive or red.
    assert colors == {"loss · run 1": legend.PALETTE[0], "grad_norm · run 1": legend.PALETTE[1]}
    assert lbfgs.figure.marks[0].colors == [legend.PALETTE[0]]
    # the legend row shows the same colors, outside the figures
    for color in colors.values():
        assert f'stroke="{color}"' in adam.legend.value
    assert not any(m.display_legend for m in all_marks(adam))
    assert adam.widget.children[-1] is adam.legend


def test_field_colors_never_collide_within_a_plot():
    names = [f"f{k}" for k in range(10)]
    assert len(set(legend.field_colors(names))) == 10


def test_lane_colors_follow_the_ramp_without_repeats():
    colors = legend.lane_colors(64)
    assert len(set(colors)) == 64
    assert colors[0] == legend.LANE_RAMP[0] and colors[-1] == legend.LANE_RAMP[-1]
    # up to the palette's size, lanes get its categorical colors (six lanes: six hues)
    assert legend.lane_colors(6) == list(legend.PALETTE[:6])


def test_legend_html_names_runs_lanes_and_escapes():
    one = legend.LegendLine("loss<1>", 1, "#123456", "dashed", 0.3)
    html = legend_html([one])
    assert "loss&lt;1&gt;" in html and "(run 1)" not in html  # one run: no run names
    assert 'stroke="#123456"' in html and 'stroke-opacity="0.30"' in html
    assert 'stroke-dasharray="6,3"' in html
    two = legend_html([one, legend.LegendLine("loss<1>", 2, "#654321", "solid", 1.0)])
    assert "(run 1)" in two and "(run 2)" in two
    few = legend_html([], ["a", "b"], 2)
    assert few.count('class="jhw-legend-lane"') == 2 and "jhw-legend-lanes" not in few
    names = [f"lane {k}" for k in range(64)]
    many = legend_html([], names, 100)
    assert 'class="jhw-legend-lane"' not in many and many.count("jhw-legend-lanes") == 1
    assert "lane 0" in many and "lane 63 (64 of 100 drawn)" in many
    assert legend_html([]) == ""


def test_64_lane_sweep_legend_is_a_lane_scale():
    names = [f"lr={v:.3f}" for v in np.linspace(0.01, 0.3, 64)]
    live = LivePlot(lane_labels=names)
    curves = np.stack([falling(100, decades=3, start=1 + k) for k in range(64)])
    feed(live, {"grad_norm": curves, "loss": curves**2}, lanes=64)
    # one chart each (under their lines, the band of every lane; over them, its median)
    grad, loss = [m for m in all_marks(live) if m.fill == "none" and "median" not in m.labels[0]]
    for mark in (loss, grad):
        assert len(mark.colors) == 64 and len(set(mark.colors)) == 64  # no repeats every 10
        # No bqplot tooltip over the panel's hover read-out, which reads the figure's lines.
        assert mark.tooltip is None and live.panel.figures == live.figures
    assert [f.title for f in live.figures] == ["grad_norm", "loss"]
    assert grad.labels[5] == f"grad_norm · {names[5]} · run 1"  # the hover read-out
    html = live.legend.value
    # a chart per field, titled with it: the legend names the goal, the lanes named for it
    # (best, median, worst: each in its colour), the lanes' band and median, once for both
    # charts, and the lanes' scale
    assert html.count('class="jhw-legend-item"') == 4 + 3 and "best = lowest loss: " in html
    assert html.count("lanes min–max") == 1
    shared = LivePlot(lane_labels=names, charts="shared")
    feed(shared, {"grad_norm": curves, "loss": curves**2}, lanes=64)
    # dash styles named, with the goal and its lanes
    assert shared.legend.value.count('class="jhw-legend-item"') == 2 + 4 + 3
    assert html.count('jhw-legend-lane"') == 0  # no per-lane entries above LEGEND_LANES
    assert html.count("jhw-legend-lanes") == 1 and names[0] in html and names[-1] in html


def test_few_lanes_are_named_in_the_legend():
    live = LivePlot()
    feed(live, {"value": np.arange(12.0).reshape(3, 4)}, lanes=3)
    html = live.legend.value
    assert [f"lane {k}" in html for k in range(3)] == [True] * 3
    assert html.count('class="jhw-legend-lane"') == 3


# ------------------------------------------------------------------------ kept runs
def test_kept_runs_get_distinct_colours_and_names():
    live = LivePlot(keep_runs=True, fields="loss")
    for decades in (2, 4, 6, 8):
        feed(live, {"loss": falling(30, decades)})
    marks = live.figure.marks
    assert len(marks) == 4
    # told apart by colour, none faded (the older ones were near invisible in dark mode)
    assert [m.colors for m in marks] == [[c] for c in legend.PALETTE[:4]]
    assert [list(m.opacities) for m in marks] == [[1.0]] * 4
    assert [m.labels[0] for m in marks] == [f"loss · run {k}" for k in range(1, 5)]
    runs = live.panel.runs  # the run list: one entry per run, in its colour
    assert [(r["name"], r["color"], r["status"]) for r in runs] == [
        (f"run {k}", legend.PALETTE[k - 1], "converged") for k in range(1, 5)
    ]
    assert "jhw-legend-item" not in live.legend.value  # runs are named by the run list


def test_kept_runs_on_a_shared_chart_are_coloured_by_run_and_dashed_by_field():
    live = LivePlot(keep_runs=True, charts="shared")
    feed(live, {"loss": falling(30), "lr": falling(30, 1)})
    one = [(m.colors, m.line_style) for m in live.figure.marks]
    assert one == [([legend.PALETTE[0]], "solid"), ([legend.PALETTE[1]], "solid")]
    feed(live, {"loss": falling(30), "lr": falling(30, 1)})
    looks = [(m.colors, m.line_style) for m in live.figure.marks]
    blue, orange = [legend.PALETTE[0]], [legend.PALETTE[1]]
    assert looks == [(blue, "solid"), (blue, "dashed"), (orange, "solid"), (orange, "dashed")]
    html = live.legend.value  # the fields by dash style
    assert 'stroke-dasharray="6,3"' in html and "lr</span>" in html


@pytest.mark.parametrize("keep_runs", [True, False])
def test_continue_steps_draws_a_resumed_run_from_where_the_last_one_ended(keep_runs):
    # Resuming: each call runs 100 steps from the previous call's final carry (its row 0 is the
    # previous run's last row).
    live = LivePlot(continue_steps=True, keep_runs=keep_runs)
    x = 1.0
    for _ in range(3):
        rows = x * 0.97 ** np.arange(101)
        feed(live, {"value": rows}, status="max_steps", max_steps=100)
        x = rows[-1]
    xs = [np.asarray(m.x) for m in live.figure.marks]
    assert xs[-1][0] == 200 and xs[-1][-1] == 300  # the third run continues at step 200
    if keep_runs:
        assert [(x[0], x[-1]) for x in xs] == [(0, 100), (100, 200), (200, 300)]
    else:
        assert len(xs) == 1
    x_scale = live.figure.axes[0].scale
    assert (x_scale.min, x_scale.max) == ((0.0 if keep_runs else 200.0), 300.0)
    assert live.history().shape == (101,)  # host rows keep each run's own steps
    with pytest.raises(TypeError, match="continue_steps"):
        LivePlot(continue_steps=1)


@pytest.mark.parametrize("batched", [False, True])
def test_marks_leave_the_scale_limits_to_the_figure(batched):
    # Each line's data update made the browser recompute the line's min and max for
    # its scales, whose limits the figure sets anyway. Every mark (also those rebuilt by the
    # log toggle) must tell bqplot to keep its data out of the domain, and the limits must be
    # explicit, so that what is drawn does not change.
    live = LivePlot(keep_runs=True)
    for start in (1.0, 2.0):
        if batched:
            curves = np.stack([falling(300, 3, start + k) for k in range(3)])
            feed(live, {"grad_norm": curves, "loss": curves**2}, lanes=3)
        else:
            feed(live, {"grad_norm": falling(300, 3, start), "loss": falling(300, 6, start)})
    live.log_y = True
    live.log_y = False
    marks = all_marks(live)
    assert len(marks) == 4, marks  # two runs, two fields each
    for mark in marks:
        assert mark.preserve_domain == {"x": True, "y": True}, mark.preserve_domain
        for scale in mark.scales.values():
            assert scale.min is not None and scale.max is not None, scale
            assert scale.min < scale.max


def test_the_figure_closes_the_marks_it_drops():
    # A widget lives until closed: dropped runs' marks must be closed, once no longer listed.
    fig = LiveFigure(log_y=False)
    for number in (1, 2):
        fig.add_run(number)
        fig.add_marks(number, ["loss", "gain"])
    first = list(fig.figure.marks[:2])
    fig.restyle()
    assert [m.line_style for m in fig.figure.marks] == ["solid", "dashed"] * 2
    fig.drop_runs([1, 7])  # a number it does not draw is ignored
    assert fig.figure.marks == fig.figure.marks[-2:] and len(fig.figure.marks) == 2
    assert all(m.comm is None for m in first)  # closed
    assert "run 1" not in fig.legend.value and "(run 2)" not in fig.legend.value


def test_each_line_ends_at_a_point_its_axes_can_place():
    # bqplot puts a line's label at its last point: a NaN there (a diverged lane) or a value
    # <= 0 on a log axis is an invalid SVG transform, an error in the page at every update
    lanes = [np.array([4.0, 2.0, 1.0]), np.array([3.0, 1.0, np.nan]), np.array([2.0, 1.0, 0.0])]

    def last_points(live: LivePlot) -> np.ndarray:
        (mark,) = [m for m in live.figures[0].marks if np.ndim(m.y) == 2]
        return np.asarray(mark.y)[:, -1]

    for log_y in (False, True):
        live = LivePlot(log_y=log_y)
        feed(live, {"loss": lanes}, lanes=3)
        last = last_points(live)
        assert np.isfinite(last).all() and (not log_y or (last > 0).all()), (log_y, last)
    live = LivePlot()
    feed(live, {"loss": lanes}, lanes=3)
    live.panel.log_y = True  # the toggle: the lines are set again on the log axis
    assert (last_points(live) > 0).all()


def test_a_run_of_one_row_is_a_point_live_and_in_the_picture():
    # a loop whose cond is False at once records its initial value only: a line of one point
    # draws nothing, so the run was listed but never seen
    live = LivePlot(keep_runs=True)
    with live.named("no step"):
        jhw.while_loop(lambda x: x > 10.0, lambda x: x / 2, jnp.float32(3.0), max_steps=5)
    with live.named("steps"):
        jhw.while_loop(lambda x: x > 1.0, lambda x: x / 2, jnp.float32(8.0), max_steps=5)
    marks = [m for m in live.figures[0].marks if len(m.labels)]
    by_run = {m.labels[0].split(" · ")[-1]: m for m in marks}
    assert by_run["no step"].marker == "circle" and by_run["steps"].marker is None
    _, root = picture(live)
    points = [c for c in root.iter(f"{SVG}circle") if c.get("class") == "jhw-point"]
    assert [p.get("data-label") for p in points] == ["value · no step"]
    # at step 0 with a run of steps beside it: the axis starts a little before, so the
    # point is not half under the y axis (issue 50)
    x_scale = live.figures[0].axes[0].scale
    assert x_scale.min < 0 and 0.01 < -x_scale.min / (x_scale.max - x_scale.min) < 0.05
    (axes,) = [g for g in root.iter(f"{SVG}g") if g.get("class") == "jhw-axes"]
    assert float(points[0].get("cx")) - axis_span(axes)[0] > 5  # px: a marker's width clear


def test_the_step_axis_fits_the_runs_once_they_ended():
    # while a run streams the axis end moves a few times a decade (a round end ahead of the
    # data); once it ended (finished, or stopped at 3,385) the axis fits it
    live = LivePlot()
    with live:
        loop = FakeLoop(layout(("loss",), max_steps=10_000))
        loop.send(loss=np.linspace(1, 0, 3386))
        x_scale = live.figures[0].axes[0].scale
        assert (x_scale.min, x_scale.max) == (0, 4000)
        loop.end("stopped")
    assert (x_scale.min, x_scale.max) == (0, 3400)


def test_an_empty_plot_says_what_to_do_until_a_run_is_drawn_and_after_clear():
    live = LivePlot()
    assert "No run yet: run a loop" in live.legend.value and "with live:" in live.legend.value
    feed(live, {"loss": np.linspace(1, 0, 5)})
    assert "No run yet" not in live.legend.value
    live.clear()
    assert "No run yet" in live.legend.value


def test_an_empty_plot_draws_no_invented_axes_nor_status():
    """Issue 50: before any run the plot drew axes from 0 to 1 and an "idle" badge, live and
    in its picture. Now no chart is shown until a run draws one (the legend row says what to
    do), and the picture has no chart and no badge ("no run yet")."""
    live = LivePlot(title="empty")
    assert live.charts.layout.visibility == "hidden" and live.charts.layout.height == "0px"
    root = ET.fromstring(live._repr_mimebundle_()["image/svg+xml"])
    classes = {g.get("class") for g in root.iter(f"{SVG}g")}
    assert "jhw-chart" not in classes and "jhw-status" not in classes
    assert "no run yet" in "".join(t.text or "" for t in root.iter(f"{SVG}text"))
    with live:  # attached: compiling, still nothing drawn
        assert live.charts.layout.visibility == "hidden"
        loop = FakeLoop(layout(("loss",)))
        loop.send(loss=np.linspace(1, 0, 5))
        assert live.charts.layout.visibility is None  # the first rows: the chart
        loop.end("converged")
    root = ET.fromstring(live._repr_mimebundle_()["image/svg+xml"])
    classes = {g.get("class") for g in root.iter(f"{SVG}g")}
    assert {"jhw-chart", "jhw-status"} <= classes
    live.clear()
    assert live.charts.layout.visibility == "hidden"


def test_a_charts_runs_are_read_only_for_everyone_but_the_chart() -> None:
    # (issue 58) Five modules read `Chart._runs`; they read `runs`, a view the chart alone
    # changes (`add_run`, `drop_runs`).
    fig = LiveFigure(log_y=False)
    fig.add_run(1, 0, "adam")
    fig.add_run(2, 10, "sgd")
    assert list(fig.runs) == [1, 2] and fig.runs[2].x0 == 10
    with pytest.raises(TypeError):
        fig.runs[3] = fig.runs[1]
    fig.drop_runs([1])
    assert list(fig.runs) == [2]  # a view: what the chart holds now
