"""Tick choice and tick labels (`jaxhist_widget.ui.look.ticks`), as the figure applies them and as
the static picture writes them. Pure functions and widgets without a frontend: milliseconds.

What a reader of a long run expects from TensorBoard: short step labels ("200k", "1M"), enough
ticks on a log axis that spans little, as many x ticks as the plot's width holds, and the last
x label inside the figure.
"""

from __future__ import annotations

import itertools
import json
import math
import shutil
import subprocess

import numpy as np
import pytest

import jaxhist_widget as jhw
from jaxhist_widget.ui.figure import LiveFigure
from jaxhist_widget.ui.look import TICK_CHAR_PX, d3_format, ticks

from ...helpers.static import picture, texts
from ...helpers.synthetic import feed


def x_labels(fig: LiveFigure) -> list[str]:
    axis = fig.x_axis
    return [d3_format(axis.tick_format, t) for t in axis.tick_values]


def figure_with_steps(last_step: int, width: float | None = None) -> LiveFigure:
    fig = LiveFigure(log_y=False)
    fig.add_run(1)
    fig.add_marks(1, ["loss"])
    line = ([np.array([0, last_step])], [np.array([1.0, 0.5])], (0.5, 1.0, 0.5))
    fig.set_lines(1, [line], last_step=last_step)
    if width is not None:
        fig.set_width(width)
    fig.update_scales()
    return fig


def test_a_million_step_axis_reads_200k_to_1M():
    fig = figure_with_steps(1_000_000)
    assert x_labels(fig) == ["0", "250k", "500k", "750k", "1M"]
    wide = figure_with_steps(1_000_000, width=1400)
    assert x_labels(wide) == ["0", "100k", "200k", "300k", "400k", "500k", "600k", "700k",
                              "800k", "900k", "1M"]  # fmt: skip
    # d3-format's SI type, as bqplot's axis applies it
    assert fig.x_axis.tick_format.endswith("~s")


@pytest.mark.parametrize(
    ("values", "digits", "labels"),
    [
        ([0, 200_000, 400_000, 1_000_000], 1, ["0", "200k", "400k", "1M"]),
        ([0, 500_000, 1_000_000, 1_500_000], 2, ["0", "500k", "1M", "1.5M"]),
        ([2_000_000, 2_250_000, 2_500_000], 3, ["2M", "2.25M", "2.5M"]),
        ([0, 5e9, 1e10], 1, ["0", "5G", "10G"]),
    ],
)
def test_si_labels_are_short_exact_and_without_trailing_zeros(values, digits, labels):
    fmt, width = ticks.tick_format(values, si=True)
    assert fmt == f".{digits}~s"
    assert [d3_format(fmt, v) for v in values] == labels
    assert width == max(map(len, labels))


def test_steps_under_a_million_keep_thousands_separators():
    # "20,000" reads better than "20k" while it is short (and is what the panel writes)
    assert ticks.tick_format([0, 10_000, 20_000], si=True)[0] == ",.0~f"
    # a y axis of large values stays in one scientific format
    assert "s" not in ticks.tick_format([0, 1e8, 2e8])[0]


@pytest.mark.parametrize(("lo", "hi"), [(0.05, 2.0), (0.012, 0.9), (0.3, 20.0), (1e-3, 0.08)])
def test_a_log_axis_spanning_under_two_decades_has_enough_ticks(lo, hi):
    values = ticks.log_ticks(lo, hi)
    assert len(values) >= 4, values
    assert all(lo <= v <= hi for v in values)
    fmt, _ = ticks.tick_format(values, log=True)
    shown = [d3_format(fmt, v) for v in values]
    assert len(set(shown)) == len(shown), shown


def test_a_log_axis_over_many_decades_keeps_powers_of_ten():
    assert ticks.log_ticks(1e-4, 10.0) == [10.0**e for e in range(-4, 2)]
    assert ticks.log_ticks(1e-12, 10.0) == [10.0**e for e in range(-12, 2, 3)]  # every 3rd


def test_the_number_of_x_ticks_follows_the_plot_width():
    counts = {w: len(figure_with_steps(20_000, width=w).x_axis.tick_values) for w in (400, 1400)}
    assert counts[1400] >= 2 * counts[400] - 1, counts
    assert counts[1400] >= 7 and counts[400] <= 5, counts
    assert len(figure_with_steps(20_000).x_axis.tick_values) <= 5  # width unknown: few


def test_labels_of_a_wide_plot_do_not_touch():
    for last in (9, 130, 20_000, 777_777, 3_000_000):
        fig = figure_with_steps(last, width=1400)
        margin = fig.figure.fig_margin
        plot = 1400 - margin["left"] - margin["right"]
        values = list(fig.x_axis.tick_values)
        span = fig.x_scale.max - fig.x_scale.min
        gap = min(b - a for a, b in itertools.pairwise(values)) / span * plot
        widest = max(map(len, x_labels(fig))) * TICK_CHAR_PX
        assert gap >= widest + 2 * TICK_CHAR_PX, (last, x_labels(fig), gap)


@pytest.mark.parametrize("last", [9, 11, 999, 99_000, 120_000, 777_777, 1_000_000, 3e9])
def test_the_last_x_label_fits_inside_the_figure(last):
    # bqplot centres a tick label on its tick; the last tick is the axis end: half the label
    # lies in the right margin, which must hold it with room to spare.
    fig = figure_with_steps(int(last))
    label = x_labels(fig)[-1]
    half = math.ceil(len(label) * TICK_CHAR_PX / 2)
    assert fig.figure.fig_margin["right"] >= half + 8, (label, fig.figure.fig_margin)


def test_the_plot_width_reported_by_a_view_sets_the_x_ticks():
    live = jhw.LivePlot()
    feed(live, {"loss": np.linspace(1.0, 0.0, 20_001)}, max_steps=20_000)
    narrow = len(live.figure.axes[0].tick_values)
    live.panel.plot_width = 1400  # as the panel's view writes it
    assert len(live.figure.axes[0].tick_values) > narrow


def test_the_static_picture_writes_the_widgets_short_labels():
    live = jhw.LivePlot()
    steps = 1_000_000
    feed(live, {"loss": np.linspace(1.0, 0.0, steps + 1, dtype=np.float32)}, max_steps=steps)
    axis = live.figure.axes[0]
    _, root = picture(live)
    shown = [t.text for t in texts(root, "x")]
    assert shown == [d3_format(axis.tick_format, t) for t in axis.tick_values]
    assert shown == ["0", "250k", "500k", "750k", "1M"]


def test_log_labels_are_keyed_as_javascript_writes_the_tick_values() -> None:
    # bqplot looks a tick's label up by the tick value turned into a string in the page: a key
    # written otherwise leaves that tick in the fallback format (a mixed axis).
    node = shutil.which("node")
    if node is None:
        pytest.skip("no node to ask how JavaScript writes numbers")
    values = [
        *(10.0**e for e in range(-12, 25)),
        *(m * 10.0**e for e in range(-9, 9) for m in (2, 2.5, 3, 5)),
        0.0,
        1e-7,
        1.5e-7,
        123456.789,
        1e21,
        1.25e21,
        -0.001,
        -3e-8,
        5e-324,
        1.7976931348623157e308,
    ]
    out = subprocess.run(
        [
            node,
            "-e",
            "for (const v of JSON.parse(process.argv[1])) console.log(String(v))",
            json.dumps(values),
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.split()
    assert [ticks.js_number_key(v) for v in values] == out
