"""Smoothing (TensorBoard's debiased EMA, computed in the kernel from every row, the raw line
kept faint) and the outlier-robust y range. Synthetic runs: milliseconds."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import jaxhist_widget as jhw
from jaxhist_widget.ui.look import RAW_OPACITY
from jaxhist_widget.ui.reduce import Ema, MinMaxBuckets, check_weight, ema

from ...helpers.synthetic import FakeLoop, feed, layout

SVG = "{http://www.w3.org/2000/svg}"


def tensorboard(values, weight):
    """TensorBoard's smoothing, one value at a time (its front end's loop, written here)."""
    last, count, out = 0.0, 0, []
    for v in values:
        if not math.isfinite(v):
            out.append(v)
            continue
        last = last * weight + (1 - weight) * v
        count += 1
        out.append(last / (1 - weight**count))
    return np.array(out)


@pytest.mark.parametrize("weight", [0.0, 0.05, 0.6, 0.9, 0.99, 0.999])
def test_the_average_is_tensorboards_and_the_same_in_chunks(weight) -> None:
    rng = np.random.default_rng(1)
    y = 1.0 + np.exp(-np.arange(5000) / 800) + 0.2 * rng.normal(size=5000)
    y[[7, 1234]] = np.nan
    y[4000] = np.inf
    expected = tensorboard(y, weight)
    average = Ema(weight)
    chunked = np.concatenate([average.extend(c) for c in np.array_split(y, 41)])
    for got in (ema(y, weight), chunked):
        finite = np.isfinite(expected)
        assert np.array_equal(np.isfinite(got), finite)  # gaps pass through
        np.testing.assert_allclose(got[finite], expected[finite], rtol=1e-12, atol=1e-12)
    # debiased: the first value is itself, not pulled toward 0
    assert ema(np.array([5.0, 5.0]), 0.9).tolist() == pytest.approx([5.0, 5.0])


@pytest.mark.parametrize("weight", [0.6, 0.99])
@pytest.mark.parametrize("top", [1e300, 1.7e308])
def test_the_average_of_huge_values_stays_finite(weight, top) -> None:
    # Values past ~1e200 overflowed the blocks' sums (times w**-j, up to 1e150): inf, then NaN.
    y = np.geomspace(1e200, top, 3000) * np.where(np.arange(3000) % 7 == 0, -1.0, 1.0)
    y[[5, 2000]] = np.nan
    expected = tensorboard(y, weight)
    average = Ema(weight)
    chunked = np.concatenate([average.extend(c) for c in np.array_split(y, 13)])
    for got in (ema(y, weight), chunked):
        assert np.array_equal(np.isfinite(got), np.isfinite(y))
        np.testing.assert_allclose(got[np.isfinite(y)], expected[np.isfinite(y)], rtol=1e-9)


def test_check_weight_names_the_range() -> None:
    assert check_weight(0.6) == 0.6
    bad_weights = ((1.0, ValueError), (-0.1, ValueError), (True, TypeError), ("0.6", TypeError))
    for bad, error in bad_weights:
        with pytest.raises(error, match=r"smoothing must be"):
            check_weight(bad)
    with pytest.raises(ValueError, match="smoothing must be in"):
        jhw.LivePlot(smoothing=1.5)


def test_the_smoothed_line_is_the_decimation_of_the_exact_average() -> None:
    # A long noisy run in chunks, few points: what is drawn is each bucket's extremes of the
    # average of every row, not an average of the drawn (decimated) points.
    rng = np.random.default_rng(2)
    n = 100_000
    y = np.exp(-np.arange(n) / 20_000) + 0.5 * rng.normal(size=n)
    live = jhw.LivePlot(smoothing=0.95, max_points=200)
    with live:
        loop = FakeLoop(layout(("loss",), max_steps=n))
        for chunk in np.array_split(y, 37):
            loop.send(loss=chunk)
            live.refresh()  # an update per chunk
        loop.end()
    raw, smoothed = live.figure.marks
    assert smoothed.labels == ["loss · run 1 · smoothed"]
    exact = MinMaxBuckets(100)  # half the raw line's points (smooth, it needs fewer)
    exact.extend(ema(y.astype(np.float32), 0.95))
    x_exact, y_exact = exact.points()
    np.testing.assert_array_equal(np.asarray(smoothed.x), x_exact)
    np.testing.assert_allclose(np.asarray(smoothed.y), y_exact, rtol=1e-9)
    # far smoother than the raw line it is drawn over, which stays, faint
    assert np.ptp(np.asarray(smoothed.y)[50:]) < 0.3 * np.ptp(np.asarray(raw.y)[50:])
    assert list(raw.opacities) == [RAW_OPACITY] and list(smoothed.opacities) == [1.0]
    assert raw.colors == smoothed.colors


def smooth(live: jhw.LivePlot, weight: float) -> None:
    """What the panel's slider sends when let go."""
    live.panel._on_view_message(None, {"jhw_control": "smoothing", "value": weight}, [])


def test_the_slider_smooths_every_drawn_run_and_off_drops_the_lines() -> None:
    live = jhw.LivePlot(keep_runs=True, charts="shared")
    steps = np.arange(300.0)
    noisy = {"loss": 1 + np.sin(steps) * 0.5, "lr": 1e-3 + 0 * steps}
    feed(live, noisy)
    lanes = np.stack([1 + np.cos(steps) * 0.5, 2 + np.cos(steps) * 0.5])
    feed(live, {"loss": lanes, "lr": lanes / 100}, lanes=2)
    assert len(live.figure.marks) == 4
    smooth(live, 0.9)
    assert live.smoothing == 0.9
    marks = live.figure.marks
    assert len(marks) == 8  # every line got its twin, drawn over the raw ones
    raw, twins = marks[:4], marks[4:]
    assert all(t.labels[0].endswith(" · smoothed") for t in twins)
    for r, t in zip(raw, twins, strict=True):
        assert t.colors == r.colors and t.line_style == r.line_style
        assert max(r.opacities) < min(t.opacities)
    # the batched run's lanes are smoothed each (one line per lane)
    y = np.asarray(twins[2].y)
    assert y.shape[0] == 2
    np.testing.assert_allclose(y[0][-1], ema(lanes[0].astype(np.float32), 0.9)[-1])
    first = np.asarray(twins[0].y).copy()
    smooth(live, 0.5)  # a new weight: recomputed from the rows
    assert not np.allclose(np.asarray(live.figure.marks[4].y), first)
    smooth(live, 0.0)
    assert live.figure.marks == raw and all(t.comm is None for t in twins)  # closed
    assert all(list(m.opacities) in ([1.0], [1.0, 1.0]) for m in raw)


def test_the_picture_draws_the_smoothed_line_over_the_faint_raw_one() -> None:
    live = jhw.LivePlot(smoothing=0.8)
    feed(live, {"loss": 1 + np.sin(np.arange(100.0))})
    root = ET.fromstring(live._repr_mimebundle_()["image/svg+xml"])
    lines = [p for p in root.iter(f"{SVG}path") if p.get("class") == "jhw-line"]
    assert [(p.get("data-label"), float(p.get("stroke-opacity"))) for p in lines] == [
        ("loss · run 1", RAW_OPACITY),
        ("loss · run 1 · smoothed", 1.0),
    ]
    said = [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "jhw-smoothing"]
    assert said == ["smoothing 0.8 (raw lines faint)"]


# ----------------------------------------------------------------------- outliers
def test_ignoring_outliers_fits_the_axis_to_the_bulk_of_the_line() -> None:
    y = 1.0 + 0.1 * np.sin(np.arange(2000.0) / 50)
    y[[100, 900, 1500]] = [500.0, -300.0, 800.0]  # three spikes
    live = jhw.LivePlot()
    feed(live, {"loss": y})
    assert live.ignore_outliers  # by default, as TensorBoard
    scale = live.figure.marks[0].scales["y"]
    assert 1.1 <= scale.max <= 1.5 and 0.5 <= scale.min <= 0.9, (scale.min, scale.max)
    assert 800.0 in np.asarray(live.figure.marks[0].y)  # the spikes are still drawn
    live.panel._on_view_message(None, {"jhw_control": "ignore_outliers", "value": False}, [])
    assert not live.ignore_outliers
    scale = live.figure.marks[0].scales["y"]
    assert scale.max >= 800 and scale.min <= -300  # every point
    live.ignore_outliers = True
    assert live.figure.marks[0].scales["y"].max <= 1.5
    with pytest.raises(TypeError, match="ignore_outliers must be True or False"):
        jhw.LivePlot(ignore_outliers=1)
