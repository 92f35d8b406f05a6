"""The "last N steps" window (``last_steps``): the charts show the latest N steps, decimated
afresh from their rows (exact on a long run), each y axis fitting them. Synthetic runs."""

from __future__ import annotations

import numpy as np
import pytest

import jaxhist_widget as jhw
from jaxhist_widget.ui.reduce import ema, minmax_decimate

from ...helpers.synthetic import FakeLoop, feed, layout


def test_the_window_shows_the_last_steps_from_their_rows() -> None:
    n = 200_000
    y = np.exp(-np.arange(n) / 20_000.0) + 0.01 * np.sin(np.arange(n))
    y[n - 300] = 5.0  # a spike inside the window
    live = jhw.LivePlot(last_steps=1000, max_points=100, keep_runs=True, ignore_outliers=False)
    feed(live, {"loss": np.linspace(9.0, 8.0, 50)}, max_steps=n)  # an earlier, short run
    with live:
        loop = FakeLoop(layout(("loss",), max_steps=n))
        for chunk in np.array_split(y, 20):
            loop.send(loss=chunk)
            live.refresh()
        loop.end()
    assert live.panel.status == "converged" and not live.panel.error
    old, mark = live.figure.marks
    assert len(old.x) == 0  # the earlier run ended before the window: nothing of it shown
    x_scale = mark.scales["x"]
    assert (x_scale.min, x_scale.max) == (n - 1 - 1000, n - 1)
    x, shown = np.asarray(mark.x), np.asarray(mark.y)
    rows = y.astype(np.float32).astype(np.float64)[n - 1 - 1000 :]
    ex, ey = minmax_decimate(np.arange(n - 1 - 1000, n), rows, 100)  # of the window's rows
    np.testing.assert_array_equal(x, ex.astype(int))
    np.testing.assert_array_equal(shown, ey)
    assert 5.0 in shown  # the spike is kept
    y_scale = mark.scales["y"]
    # fits the window's values (-0.01 .. the spike's 5), not the earlier run's 9 nor step 0's 1
    assert -1 < y_scale.min < 0 and 5 <= y_scale.max < 6
    live.last_steps = 0  # every step again, from the whole-run lines
    assert np.asarray(live.figure.marks[1].x)[0] == 0 and len(live.figure.marks[0].x) == 50
    assert live.figure.marks[1].scales["x"].min == 0
    for bad, error in ((-1, ValueError), (1.5, TypeError), (True, TypeError)):
        with pytest.raises(error, match="last_steps must be"):
            jhw.LivePlot(last_steps=bad)


def test_a_smoothed_window_reads_as_the_whole_runs_average() -> None:
    rng = np.random.default_rng(3)
    y = 1 + rng.normal(size=20_000)
    live = jhw.LivePlot(smoothing=0.9, last_steps=500)
    feed(live, {"loss": y}, max_steps=20_000)
    _, smoothed = live.figure.marks
    x = np.asarray(smoothed.x)
    assert x.min() >= 19_999 - 500 and smoothed.labels == ["loss · run 1 · smoothed"]
    whole = ema(y.astype(np.float32), 0.9)  # the average over every row
    np.testing.assert_allclose(np.asarray(smoothed.y), whole[x], rtol=1e-7, atol=1e-7)
    live.panel._on_view_message(None, {"jhw_control": "last_steps", "value": 0}, [])
    assert np.asarray(live.figure.marks[1].x)[0] == 0
