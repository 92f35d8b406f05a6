"""A scan's row 0 of what it records from ``y`` stands in for a ``y`` no step has made yet:
NaN for a float, but 0 for an int or bool, which was drawn (and in the picture) as a point at
step 0. Real scans through the plot's reductions: lines, sweep lines, a band over the lanes,
a zoom, smoothing and the static picture."""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxhist_widget as jhw
from jaxhist_widget.ui.series import MAX_LANES

from ...helpers.static import SVG, picture

STEPS = 6


def step(c, x):
    """A training-like step whose y has a float loss, an int count and a bool flag."""
    c = c + x
    return c, {"loss": 10.0 - c, "hits": (c > 2.0).astype(jnp.int32) + 3, "ok": c > 0.5}


def scan(c0, record=None):
    return jhw.scan(step, c0, jnp.ones(STEPS), record=record)


def drawn(live: jhw.LivePlot) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per field, the first drawn lane's points as the live figure has them."""
    lines = [ln for c in live.drawing().charts.values() for ln in c.lines if not ln.smoothed]
    first: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for ln in lines:  # (in the order of the lanes drawn)
        first.setdefault(ln.field, (ln.x, ln.y))
    return first


def vertices(live: jhw.LivePlot, label: str) -> list[int]:
    """The points of each line of a field in the static picture (its raw line and, smoothed,
    the smoothed one: an SVG path each, M, then L per point)."""
    _, root = picture(live)
    paths = [p for p in root.iter(f"{SVG}path") if p.get("class") == "jhw-line"]
    return [len(re.findall(r"[ML]", p.get("d"))) for p in paths if p.get("data-label") in (
        f"{label} · run 1", f"{label} · run 1 · smoothed")]  # fmt: skip


@pytest.mark.parametrize("smoothing", [0.0, 0.5])
def test_an_int_or_bool_y_is_drawn_from_step_1_as_a_float_one_is(smoothing):
    live = jhw.LivePlot(smoothing=smoothing)
    with live:
        (_, ys), hist = jax.jit(scan)(0.0)
    for label, (x, y) in drawn(live).items():
        assert x[0] == 0 and np.isnan(y[0]), label  # row 0: no point
        np.testing.assert_array_equal(y[1:], np.asarray(ys[label], np.float64))
        assert vertices(live, label) == [STEPS] * (1 + (smoothing > 0)), label
    # the rows themselves keep the History's row 0, as recorded
    assert live.history()["hits"][0] == 0 == hist.values["hits"][0]
    assert live.panel.latest == {"hits": 4.0, "loss": 4.0, "ok": 1.0}


def test_a_sweep_and_a_zoom_leave_row_0_out_of_every_lane():
    live = jhw.LivePlot(step_range=(0, 3))
    with live:
        jax.jit(jax.vmap(scan))(jnp.arange(3.0))
    for mark in (m for f in live.figures for m in f.marks):
        x, y = np.asarray(mark.x), np.asarray(mark.y, np.float64)
        assert (x[:, 0] == 0).all() and np.isnan(y[:, 0]).all(), mark.labels
        assert np.isfinite(y[:, 1:]).all()


def test_a_band_over_many_lanes_starts_at_step_1():
    live = jhw.LivePlot()
    with live:
        jax.jit(jax.vmap(scan))(jnp.linspace(0.0, 1.0, MAX_LANES + 6))
    bands = [b for c in live.drawing().charts.values() for b in c.bands]
    assert sorted(b.field for b in bands) == ["hits", "loss", "ok"]  # a band per field
    for band in bands:
        (x, _), (inner, _) = band.outer, band.inner
        assert x.min() == inner.min() == 1, band.field  # no edge point at step 0
    assert set(live.panel.lane_statuses) == {"converged"}  # row 0 is no diverged value


def test_row_0_of_a_record_of_the_carry_is_drawn():
    live = jhw.LivePlot()
    with live:
        jax.jit(lambda c: scan(c, record=lambda c, y: {"c": c, "hits": y["hits"]}))(0)
    lines = drawn(live)
    assert lines["c"][1][0] == 0.0  # the carry's row 0 is real
    assert np.isnan(lines["hits"][1][0])  # a value recorded from y is not, whatever its dtype
