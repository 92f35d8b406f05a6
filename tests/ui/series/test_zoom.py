"""The zoom (``step_range``, a drag across a chart in the browser): every chart shows the same
fixed steps, drawn afresh from their rows (every point of the range of a 10^6-step run), each
y axis fitting them; it wins over ``last_steps`` until reset; path charts are not zoomed; the
static picture shows it. Synthetic runs."""

from __future__ import annotations

import numpy as np
import pytest

import jaxhist_widget as jhw
from jaxhist_widget.ui.plot import _outputs as _display
from jaxhist_widget.ui.reduce import ema

from ...helpers.synthetic import FakeLoop, feed, layout


def marks_by_title(live: jhw.LivePlot) -> dict[str, object]:
    return {f.title: f.marks[0] for f in live.figures}


def test_a_zoom_draws_every_point_of_its_steps_on_every_chart() -> None:
    n = 1_000_000
    steps = np.arange(n)
    loss = (np.exp(-steps / 200_000.0) + 0.01 * np.sin(steps)).astype(np.float32)
    lr = (1e-3 * (1 + steps % 7)).astype(np.float32)
    live = jhw.LivePlot(max_points=2000)
    feed(live, {"loss": loss, "lr": lr}, max_steps=n)
    lo, hi = 400_000, 401_234  # (not a round span: the axis is not rounded out)
    whole = np.asarray(live.figure.marks[0].x)
    # The whole-run lines hold a few of their min/max buckets in those steps, not the steps.
    assert np.count_nonzero((whole >= lo) & (whole <= hi)) < 10
    before = {t: (m.scales["y"].min, m.scales["y"].max) for t, m in marks_by_title(live).items()}

    live.step_range = (lo, hi)
    assert live.panel.step_range == [lo, hi] and live.step_range == (lo, hi)
    for title, values in (("loss", loss), ("lr", lr)):
        mark = marks_by_title(live)[title]
        np.testing.assert_array_equal(np.asarray(mark.x), np.arange(lo, hi + 1))  # every step
        np.testing.assert_array_equal(np.asarray(mark.y), values[lo : hi + 1])
        x_scale, y_scale = mark.scales["x"], mark.scales["y"]
        assert (x_scale.min, x_scale.max) == (lo, hi)  # exactly the range, one for all charts
        shown = values[lo : hi + 1]
        assert y_scale.min <= shown.min() and shown.max() <= y_scale.max
    loss_y = marks_by_title(live)["loss"].scales["y"]
    # the loss axis fits the range (0.13 .. 0.15), not the whole run's 0 .. 1
    assert loss_y.max - loss_y.min < 0.2 * (before["loss"][1] - before["loss"][0])

    live.step_range = None  # every step again, from the whole-run lines
    mark = live.figure.marks[0]
    assert np.asarray(mark.x)[0] == 0 and np.asarray(mark.x)[-1] == n - 1
    assert len(mark.x) <= 2000 and mark.scales["x"].min == 0 and mark.scales["x"].max >= n - 1


def test_a_zoom_wins_over_the_last_steps_until_reset() -> None:
    n = 5000
    live = jhw.LivePlot(last_steps=1000, step_range=(100, 200))
    feed(live, {"loss": np.linspace(1.0, 0.0, n)}, max_steps=n)
    mark = live.figure.marks[0]
    assert (mark.scales["x"].min, mark.scales["x"].max) == (100, 200)
    np.testing.assert_array_equal(np.asarray(mark.x), np.arange(100, 201))
    live.step_range = None  # the window of the last 1000 steps again
    assert live.last_steps == 1000
    assert np.asarray(live.figure.marks[0].x)[0] == n - 1 - 1000
    live.step_range = (10, 20)
    live.last_steps = 500  # a window asked for now replaces the zoom
    assert live.step_range is None and live.panel.step_range == []
    assert np.asarray(live.figure.marks[0].x)[0] == n - 1 - 500


def test_a_zoom_sent_by_the_view_during_a_run_stays_put_as_rows_come() -> None:
    live = jhw.LivePlot()
    panel = live.panel
    with live:
        loop = FakeLoop(layout(("loss",), max_steps=1000))
        loop.send(loss=np.arange(100.0))  # steps 0..99
        live.refresh()
        panel._on_view_message(None, {"jhw_control": "step_range", "value": [50, 150]}, [])
        mark = live.figure.marks[0]
        np.testing.assert_array_equal(np.asarray(mark.x), np.arange(50, 100))
        loop.send(loss=np.arange(100.0, 300.0))  # steps 100..299: the range fills, no further
        live.refresh()
        np.testing.assert_array_equal(np.asarray(mark.x), np.arange(50, 151))
        np.testing.assert_array_equal(np.asarray(mark.y), np.arange(50.0, 151.0))
        drawn = mark.y
        loop.send(loss=np.arange(300.0, 400.0))
        live.refresh()
        assert mark.y is drawn  # rows past the range: its lines are not drawn again
        assert (mark.scales["x"].min, mark.scales["x"].max) == (50, 150)
        assert mark.scales["y"].max <= 160  # fits 50..150, not the 399 the run reached
        loop.end()
    assert live.step_range == (50, 150)
    for bad in ([150, 50], [1.5, 3], "x", [True, 3], [-1, 5], [1, 2, 3]):
        panel._on_view_message(None, {"jhw_control": "step_range", "value": bad}, [])
        assert live.step_range == (50, 150), bad
    panel._on_view_message(None, {"jhw_control": "step_range", "value": None}, [])  # dblclick
    assert live.step_range is None and np.asarray(live.figure.marks[0].x)[-1] == 399


def test_a_smoothed_zoom_reads_as_the_whole_runs_average_and_log_x_spans_it() -> None:
    rng = np.random.default_rng(5)
    y = 1 + rng.normal(size=20_000)
    live = jhw.LivePlot(smoothing=0.9, step_range=(5000, 6000))
    feed(live, {"loss": y}, max_steps=20_000)
    _, smoothed = live.figure.marks
    x = np.asarray(smoothed.x)
    assert x.min() >= 5000 and x.max() <= 6000
    whole = ema(y.astype(np.float32), 0.9)  # the average over every row
    np.testing.assert_allclose(np.asarray(smoothed.y), whole[x], rtol=1e-7, atol=1e-7)
    live.log_x = True
    scale = live.figure.marks[0].scales["x"]
    assert (scale.min, scale.max) == (5000, 6000)


def test_path_charts_are_not_zoomed_by_step() -> None:
    t = np.linspace(0, 6, 400)
    xy = np.stack([np.cos(t) * (1 + t), np.sin(t) * (1 + t)], axis=1)
    live = jhw.LivePlot(paths=["xy"])
    feed(live, {"xy": xy}, max_steps=400, shapes=[(2,)])
    path = next(f for f in live.figures if f.title == "xy[1] vs xy[0]")
    before = np.asarray(path.marks[0].x).copy(), (path.marks[0].scales["x"].min,)
    live.step_range = (10, 20)
    steps = next(f for f in live.figures if f.title == "xy")
    assert (steps.marks[0].scales["x"].min, steps.marks[0].scales["x"].max) == (10, 20)
    np.testing.assert_array_equal(np.asarray(path.marks[0].x), before[0])  # the whole path
    assert (path.marks[0].scales["x"].min,) == before[1] and len(before[0]) > 100


def test_the_static_picture_shows_the_zoom(monkeypatch: pytest.MonkeyPatch) -> None:
    import IPython.display

    updates: list[dict] = []
    monkeypatch.setattr(IPython.display, "display", lambda *a, **k: None)
    monkeypatch.setattr(IPython.display, "update_display", lambda b, **k: updates.append(b))
    monkeypatch.setattr(_display, "in_kernel", lambda: True)
    live = jhw.LivePlot()
    live._ipython_display_()
    feed(live, {"loss": np.linspace(3.0, 1.0, 10_000)}, max_steps=10_000)
    before = len(updates)
    live.step_range = (2000, 3000)
    assert len(updates) == before + 1  # the picture is replaced, as for any view option
    chart = live.drawing().chart()  # what the picture copies
    assert chart.x_range == (2000, 3000)
    assert all(2000 <= t <= 3000 for t in chart.x_ticks) and len(chart.x_ticks) >= 3
    np.testing.assert_array_equal(chart.line().x, np.arange(2000, 3001))


def test_a_bad_step_range_names_the_fix() -> None:
    for bad, error in (
        ((5, 2), ValueError),
        (5, TypeError),
        ((0, np.inf), ValueError),
        (("a", 3), TypeError),
        ((-1, 4), ValueError),
        ((1, 2, 3), TypeError),
    ):
        with pytest.raises(error, match=r"step_range must"):
            jhw.LivePlot(step_range=bad)
    live = jhw.LivePlot()
    with pytest.raises(TypeError, match=r"e\.g\. \(1000, 2000\)"):
        live.step_range = "all"
    live.step_range = (1.5, 9.2)  # whole steps around it
    assert live.step_range == (1, 10)


@pytest.mark.parametrize("kind", ["band", "heatmap"])
def test_a_zoomed_vector_chart_fits_its_y_axis_to_the_steps_shown(kind: str) -> None:
    n = 20_000
    noise = np.random.default_rng(0).normal(size=(n, 50)) * 0.1
    v = (noise + np.linspace(5.0, 0.0, n)[:, None]).astype(np.float32)  # 5 .. 0 over the run
    live = jhw.LivePlot(vectors=kind)
    feed(live, {"w": v}, max_steps=n, shapes=[(50,)])
    (median,) = [m for m in live.figure.marks if "median" in "".join(m.labels)]
    live.step_range = (10_000, 10_500)
    shown = v[10_000:10_501]
    np.testing.assert_array_equal(np.asarray(median.x), np.arange(10_000, 10_501))
    y = median.scales["y"]
    # its band / histogram there (2.0 .. 2.9, to a bucket), not the whole run's 0 .. 5
    assert y.min <= shown.min() and shown.max() <= y.max and y.max - y.min < 1.5, (y.min, y.max)
