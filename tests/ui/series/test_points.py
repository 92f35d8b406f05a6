"""``max_points`` is points per line: a sweep's lines each get it, whatever the lanes. Before,
past 8 lanes each line got a share of a fixed 4,000-point budget: a 64-lane, 250-step sweep
drew 34 points a line with ``max_points=4000``. Left at its default, the lanes of a mark still
share 4,000 points, so that no update's message exceeds 64 KB. Real compiled sweeps."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxhist_widget as jhw
from jaxhist_widget.ui.series import DEFAULT_POINTS, MARK_POINTS, MAX_LANES

from ...helpers.loops import least_squares_sweep

STEPS = 250


def sweep(live: jhw.LivePlot, lanes: int) -> np.ndarray:
    """A compiled gradient-descent sweep of ``lanes`` rates watched by ``live``; its losses
    (lanes, steps + 1)."""
    with live:
        _, hist = jax.jit(jax.vmap(least_squares_sweep(STEPS)))(jnp.linspace(0.01, 0.1, lanes))
    return np.asarray(hist.values["loss"], np.float64)


def drawn_points(live: jhw.LivePlot) -> list[int]:
    """Points of each drawn lane's line (a lane's line is padded to the widest with its last
    point: counted once)."""
    return [len(np.unique(line.x)) for line in live.drawing().chart().lines]


@pytest.mark.parametrize("lanes", [64, MAX_LANES + 36])  # every lane drawn; ranked lanes
def test_each_line_of_a_sweep_gets_max_points(lanes):
    live = jhw.LivePlot(max_points=4000, log_y=False)
    loss = sweep(live, lanes)
    lanes = [line.lane for line in live.drawing().chart().lines]  # the drawn lanes, in order
    assert drawn_points(live) == [STEPS + 1] * len(lanes)  # every row of every line
    # (not the band's polygons nor its median, nor the arrows where a line leaves the y range,
    # which leaves its first rows out as outliers: each lane's 4 at step 0, of a bulk under 0.5)
    (mark,) = [m for m in live.figure.marks if type(m).__name__ == "Lines" and len(m.labels) > 1]
    for k, lane in enumerate(lanes):
        np.testing.assert_array_equal(np.asarray(mark.x)[k], np.arange(STEPS + 1))
        np.testing.assert_allclose(np.asarray(mark.y, np.float64)[k], loss[lane], rtol=1e-7)


def test_a_smaller_max_points_caps_each_line_and_the_default_shares_a_marks_points():
    few = jhw.LivePlot(max_points=100)
    sweep(few, 64)
    assert max(drawn_points(few)) <= 100 < STEPS
    default = jhw.LivePlot()
    sweep(default, 64)
    assert max(drawn_points(default)) <= min(DEFAULT_POINTS, MARK_POINTS // 64)
