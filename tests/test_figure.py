"""The LivePlot figure: ticks, legend, colors, kept runs, hover read-out (no frontend).

What a view would draw is read from the widgets' traits: tick values and d3 formats of the
axes, the figure margins, the marks' colors, styles, opacities and labels, and the legend row.
"""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxhist_widget as jhw
from jaxhist_widget import figure
from jaxhist_widget.liveplot import LivePlot


def descend(lr, steps=300):
    """Gradient descent on a 2-d quadratic: loss falls over orders of magnitude."""
    a = jnp.array([[3.0, 0.5], [0.5, 1.0]])

    def record(x):
        g = a @ x
        return {"loss": 0.5 * x @ a @ x, "grad_norm": jnp.linalg.norm(g)}

    return jhw.while_loop(
        lambda x: 0.5 * x @ a @ x > 1e-12,
        lambda x: jnp.tanh(x - lr * (a @ x)),
        jnp.array([2.0, -1.5]),
        max_steps=steps,
        record=record,
    )


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


def assert_readable_axes(live: LivePlot) -> None:
    """Ticks inside the domain, one format per axis, distinct labels, and labels that fit."""
    x_axis, y_axis = live.figure.axes
    for axis in (x_axis, y_axis):
        ticks = list(axis.tick_values)
        assert len(ticks) >= 2, (axis.tick_values, axis.scale.min, axis.scale.max)
        assert all(axis.scale.min - 1e-12 <= t <= axis.scale.max + 1e-12 for t in ticks)
        shown = labels(axis)
        assert len(set(shown)) == len(shown), f"labels repeat: {shown}"
    # x: integer steps, thousands separators, at most 5 ticks (fits a 330 px output)
    assert all(float(t).is_integer() for t in x_axis.tick_values)
    assert x_axis.tick_format == ",.0~f" and len(x_axis.tick_values) <= 5
    # y: every label fits the left margin
    widest = max(map(len, labels(y_axis)))
    assert live.figure.fig_margin["left"] >= widest * figure._TICK_CHAR_PX + 8


def test_ticks_of_a_log_axis_spanning_eleven_decades():
    live = LivePlot(log_y=True)
    with live:
        jax.jit(descend)(0.05)
    assert_readable_axes(live)
    y_axis = live.figure.axes[1]
    ticks = np.asarray(y_axis.tick_values)
    assert y_axis.scale.min < 1e-6 and ticks.max() >= 1, (y_axis.scale.min, ticks)
    # powers of ten only, one scientific format for all, never "0.0000100" beside "1.00e+4"
    assert np.allclose(np.log10(ticks), np.round(np.log10(ticks)))
    assert y_axis.tick_format == ".0e"
    assert all(re.fullmatch(r"\de[+-]\d+", s) for s in labels(y_axis)), labels(y_axis)
    live.log_y = False  # the rebuilt linear axis gets its own ticks
    assert_readable_axes(live)
    assert "e" not in live.figure.axes[1].tick_format


@pytest.mark.parametrize(
    ("lo", "hi"),
    [(-0.05, 1.05), (1.2e-4, 3.1e-4), (1000.0001, 1000.0009), (-3e7, 2e8), (0, 20_000)],
)
def test_linear_tick_labels_are_short_distinct_and_without_trailing_zeros(lo, hi):
    ticks = figure._linear_ticks(lo, hi, 6)
    fmt, width = figure._tick_format(ticks)
    shown = [d3_like(fmt, t) for t in ticks]
    assert 3 <= len(ticks) <= 7 and len(set(shown)) == len(shown), shown
    assert max(map(len, shown)) <= width
    assert not any(re.search(r"\.\d*0(e|$)", s) for s in shown), shown


def test_zero_step_run_has_integer_ticks_on_a_unit_x_axis():
    live = LivePlot()
    with live:
        jhw.while_loop(lambda x: x > 1.0, lambda x: x / 2, 0.5, max_steps=10)
    assert live.panel.step == 0
    assert (live.figure.axes[0].scale.min, live.figure.axes[0].scale.max) == (0.0, 1.0)
    assert list(live.figure.axes[0].tick_values) == [0.0, 1.0]
    assert_readable_axes(live)


def test_long_run_x_ticks_are_few_and_round():
    live = LivePlot()
    with live:
        jax.jit(
            lambda x: jhw.while_loop(lambda x: x < 1e9, lambda x: x + 1.0, x, max_steps=20_000)
        )(0.0)
    x_axis = live.figure.axes[0]
    assert list(x_axis.tick_values) == [0, 5000, 10000, 15000, 20000]
    assert labels(x_axis) == ["0", "5,000", "10,000", "15,000", "20,000"]  # as the panel writes


def test_field_colors_are_stable_across_plots():
    adam, lbfgs = LivePlot(fields=["loss", "grad_norm"]), LivePlot(fields=["grad_norm"])
    with adam:
        descend(0.05, steps=20)
    with lbfgs:
        descend(0.2, steps=20)
    colors = {m.labels[0]: m.colors[0] for m in adam.figure.marks}
    assert colors["grad_norm · run 1"] == lbfgs.figure.marks[0].colors[0]
    assert colors["grad_norm · run 1"] != colors["loss · run 1"]
    # the legend row shows the same colors, outside the figure
    for color in colors.values():
        assert f'stroke="{color}"' in adam.legend.value
    assert not any(m.display_legend for m in adam.figure.marks)
    assert adam.widget.children[-1] is adam.legend


def test_field_colors_never_collide_within_a_plot():
    names = [f"f{k}" for k in range(10)]
    assert len(set(figure._field_colors(names))) == 10


def test_64_lane_sweep_legend_is_a_lane_scale_plus_one_entry_per_field():
    lrs = jnp.linspace(0.01, 0.3, 64)
    names = [f"lr={float(v):.3f}" for v in lrs]
    live = LivePlot(lane_labels=names)
    with live:
        jax.jit(jax.vmap(lambda lr: descend(lr, steps=100)))(lrs)
    grad, loss = live.figure.marks  # record keys are sorted: grad_norm, loss
    for mark in (loss, grad):
        assert len(mark.colors) == 64 and len(set(mark.colors)) == 64  # no repeats every 10
        # No bqplot tooltip over the panel's hover read-out, which reads the figure's lines.
        assert mark.tooltip is None and live.panel.figure is live.figure
    assert loss.line_style != grad.line_style  # fields told apart by dash style
    assert grad.labels[5] == f"grad_norm · {names[5]} · run 1"  # the hover read-out
    legend = live.legend.value
    assert legend.count('class="jhw-legend-item"') == 2
    assert legend.count('jhw-legend-lane"') == 0  # no per-lane entries above LEGEND_LANES
    assert legend.count("jhw-legend-lanes") == 1 and names[0] in legend and names[-1] in legend


def test_few_lanes_are_named_in_the_legend():
    live = LivePlot()
    with live:
        jax.vmap(
            lambda lim: jhw.while_loop(lambda x: x < lim, lambda x: x + 1.0, 0.0, max_steps=9)
        )(jnp.array([2.0, 4.0, 6.0]))
    legend = live.legend.value
    assert [f"lane {k}" in legend for k in range(3)] == [True] * 3
    assert legend.count('class="jhw-legend-lane"') == 3


def test_keep_runs_fades_every_earlier_run_and_names_runs():
    live = LivePlot(keep_runs=True, fields="loss")
    with live:
        for lr in (0.02, 0.05, 0.1, 0.2):
            descend(lr, steps=30)
    marks = live.figure.marks
    assert len(marks) == 4
    opacities = [m.opacities[0] if len(m.opacities) else 1.0 for m in marks]
    assert opacities[-1] == 1.0  # the current run in full color
    assert opacities[0] < opacities[1] < opacities[2] < 1.0, opacities  # every earlier one faded
    legend = live.legend.value
    assert [f"loss (run {k})" in legend for k in range(1, 5)] == [True] * 4
    assert [m.labels[0] for m in marks] == [f"loss · run {k}" for k in range(1, 5)]


@pytest.mark.parametrize("keep_runs", [True, False])
def test_continue_steps_draws_a_resumed_run_from_where_the_last_one_ended(keep_runs):
    # Resuming: each call runs at most 100 steps from the previous call's final carry.
    def chunk(x):
        return jhw.while_loop(
            lambda x: x > 1e-6, lambda x: x * 0.97, x, max_steps=100, stream_every=7
        )

    live = LivePlot(continue_steps=True, keep_runs=keep_runs)
    x = jnp.float32(1.0)
    with live:
        for _ in range(3):
            x, hist = chunk(x)
    assert int(hist.length) == 101  # every chunk ran its 100 steps
    xs = [np.asarray(m.x) for d in live._drawn for m in d.marks]
    assert xs[-1][0] == 200 and xs[-1][-1] == 300  # the third run continues at step 200
    if keep_runs:
        assert [(x[0], x[-1]) for x in xs] == [(0, 100), (100, 200), (200, 300)]
    assert (live._fig.x_scale.min, live._fig.x_scale.max) == ((0.0 if keep_runs else 200.0), 300.0)
    assert live.history().shape == (101,)  # host rows keep each run's own steps
    with pytest.raises(TypeError, match="continue_steps"):
        LivePlot(continue_steps=1)


@pytest.mark.parametrize("log_y", [False, True])
def test_axis_limits_stay_put_while_a_run_grows(log_y):
    # A scale change makes the browser redraw every line on it and its axis: during a live run
    # the limits move on round numbers only, not at every update.
    live = LivePlot(log_y=log_y)
    with live:
        descend(0.1, steps=50)
    (d,) = live._drawn
    changes = {"x": 0, "y": 0}
    live._fig.x_scale.observe(lambda _: changes.__setitem__("x", changes["x"] + 1), "max")
    live._fig.y_scale.observe(lambda _: changes.__setitem__("y", changes["y"] + 1), ["min", "max"])
    updates = np.unique(np.geomspace(10, 100_000, 600).astype(int))
    for step in updates:  # a 10^5-step run seen by 600 updates; the loss falls 1 -> 1e-5
        d.max_step = int(step)
        loss = float(step) ** -1.0
        d.extent = {0: (loss, 1.0, loss)}
        live._fig.update_scales(live._drawn, live._lane_names)
        top = live._fig.x_scale.max
        assert step <= top <= 4 / 3 * step  # the last step is on the axis, near its end
        lo, hi = live._fig.y_scale.min, live._fig.y_scale.max
        assert lo <= loss and hi >= 1.0  # every value is inside the limits
        assert_readable_axes(live)
    # 4 decades: about 10 round numbers a decade, whatever the number of updates
    assert changes["x"] <= 45, changes
    assert changes["y"] <= (40 if log_y else 25), changes


@pytest.mark.parametrize("batched", [False, True])
def test_marks_leave_the_scale_limits_to_the_figure(batched):
    # Issue 14: each line's data update made the browser recompute the line's min and max for
    # its scales, whose limits the figure sets anyway. Every mark (also those rebuilt by the
    # log toggle) must tell bqplot to keep its data out of the domain, and the limits must be
    # explicit, so that what is drawn does not change.
    live = LivePlot(keep_runs=True)
    for lr in (0.1, 0.2):
        with live:
            if batched:
                jax.vmap(descend, in_axes=(0, None))(jnp.array([0.1, 0.2, 0.3]), 300)
            else:
                descend(lr)
    live.log_y = True
    live.log_y = False
    marks = live.figure.marks
    assert len(marks) == 4, marks  # two runs, two fields each
    for mark in marks:
        assert mark.preserve_domain == {"x": True, "y": True}, mark.preserve_domain
        for scale in mark.scales.values():
            assert scale.min is not None and scale.max is not None, scale
            assert scale.min < scale.max
