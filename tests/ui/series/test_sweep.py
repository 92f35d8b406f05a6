"""A sweep of thousands of vmap lanes, told truthfully: the panel's figures (median, min–max,
lane counts) are over every lane, lanes ending at NaN or inf are counted as diverged, the chart
draws an even stride of lanes and the best, median and worst ones (or those named by
``lanes=``) over a band of every lane, and the picture shows the same (the ranked lanes:
``test_sweep_lanes.py``).

Before, the chart drew lanes 0–63 and the panel's median and range were over those 64 ("1.95"
where the median of all 4096 lanes was 0.0053), and a sweep with 280 lanes at NaN read
"4,096 finished".
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxhist_widget as jhw
from jaxhist_widget.ui.series import MAX_LANES, ROLES, Spec

from ...helpers.loops import least_squares_sweep
from ...helpers.static import SVG, picture
from ...helpers.synthetic import feed

LANES = 4096


def _roles(chart) -> dict[str, int]:
    """The lane each role names on a drawn chart (`LivePlot.drawing`): ``{"best": 17, ...}``."""
    lines = [ln for ln in chart.lines if ln.role]
    return {role: ln.lane for ln in lines for role in ln.role.split(", ")}


def _sweep_values(rng: np.random.Generator) -> tuple[list[np.ndarray], np.ndarray]:
    """Per lane a loss curve of its own length; the lanes past 4000 end at NaN or inf, and the
    lowest losses lie beyond lane 63 (so a plot of the first 64 lanes reads them wrong)."""
    lanes = []
    for k in range(LANES):
        n = 50 + k % 7
        curve = np.exp(-np.linspace(0, 1, n) * (1 + k / 100)) * (1 + rng.random())
        if k >= 4000:
            curve[-3:] = np.nan if k % 2 else np.inf
        lanes.append(curve)
    last = np.array([c[-1] for c in lanes])
    return lanes, last


def test_the_panel_figures_are_over_every_lane():
    lanes, last = _sweep_values(np.random.default_rng(0))
    live = jhw.LivePlot()
    feed(live, {"loss": lanes}, lanes=LANES)
    p = live.panel
    finite = last[np.isfinite(last)]  # the lanes at NaN or inf have diverged: no value
    assert p.latest["loss"] == pytest.approx(np.median(finite), rel=1e-6)
    assert p.latest_range["loss"] == pytest.approx([finite.min(), finite.max()], rel=1e-6)
    diverged = int((~np.isfinite(last)).sum())
    assert diverged == 96
    assert p.lane_statuses == {"converged": LANES - diverged, "diverged": diverged}
    assert p.diverged == ["loss"]  # the badge reads diverged


def test_the_panels_median_and_range_count_the_lanes_the_band_and_the_ranked_lanes_count():
    """One definition of "over the lanes": those whose value is finite. Before, the panel's
    median and range left NaN lanes out but counted ±inf ones (a max of inf, a median pulled
    up), while the band and the ranked lanes left both out."""
    lanes, steps = 101, 30
    scale = np.linspace(0.1, 2.0, lanes, dtype=np.float32)
    scale[[10, 30, 50, 70, 90, 100]] = np.inf  # lanes that blow up: loss inf
    scale[[5, 25, 45, 65, 85, 95]] = np.nan  # and lanes that end at NaN

    def solve(s):
        return jhw.while_loop(
            lambda c: c[0] < steps,
            lambda c: (c[0] + 1, c[1] * 0.9),
            (0, jnp.float32(1.0)),
            max_steps=steps,
            record=lambda c: {"loss": s * c[1]},
        )

    live = jhw.LivePlot()
    with live:
        _, hist = jax.jit(jax.vmap(solve))(jnp.asarray(scale))
    last = np.asarray(hist.values["loss"])[:, steps].astype(np.float64)
    finite = last[np.isfinite(last)]
    assert finite.size == 89  # odd: the median is a lane's own value, as the ranked one
    p = live.panel
    assert p.latest["loss"] == pytest.approx(np.median(finite), rel=1e-6)
    assert p.latest_range["loss"] == pytest.approx([finite.min(), finite.max()], rel=1e-6)
    assert p.lane_statuses == {"converged": 89, "diverged": 12}
    chart = live.drawing().chart()
    ranked = _roles(chart)
    assert last[ranked["median"]] == pytest.approx(p.latest["loss"], rel=1e-6)
    assert [last[ranked["best"]], last[ranked["worst"]]] == pytest.approx(p.latest_range["loss"])
    (band,) = chart.bands
    x, y = band.outer  # min–max: the lower edge forward, the upper edge back
    half = len(x) // 2
    assert x[half - 1] == x[half] == steps
    assert [y[half - 1], y[half]] == pytest.approx(p.latest_range["loss"], rel=1e-6)


def test_an_even_stride_of_lanes_is_drawn_over_a_band_of_every_lane():
    lanes, _ = _sweep_values(np.random.default_rng(1))
    live = jhw.LivePlot()
    feed(live, {"loss": lanes}, lanes=LANES)
    drawing = live.drawing()
    chart = drawing.chart()
    drawn = [ln.lane for ln in chart.lines]
    stride = np.linspace(0, LANES - 1, MAX_LANES - len(ROLES)).round().astype(int)
    assert set(stride) <= set(drawn) and len(drawn) <= MAX_LANES
    assert set(drawn) - set(stride) <= set(_roles(chart).values())  # the rest: best, median, ...
    (band,) = chart.bands
    finite = np.concatenate([c[np.isfinite(c)] for c in lanes])
    y = band.outer[1]
    assert (y.min(), y.max()) == pytest.approx((finite.min(), finite.max()))  # every lane's
    assert any("64 of 4,096 lanes drawn" in n for n in drawing.notes)
    _, root = picture(live)
    bands = [p for p in root.iter(f"{SVG}path") if p.get("class") == "jhw-band"]
    assert len(bands) == 2  # quartiles and min–max, in the picture too
    legend = " ".join("".join(t.itertext()) for t in root.iter(f"{SVG}text"))
    assert f"({len(drawn)} of 4096 drawn)" in legend and "lane 4095" in legend


def test_the_band_is_every_steps_quantiles_over_the_lanes_that_have_it():
    lanes, _ = _sweep_values(np.random.default_rng(3))
    live = jhw.LivePlot()
    feed(live, {"loss": lanes}, lanes=LANES)
    (band,) = live.drawing().chart().bands
    steps = max(len(c) for c in lanes)
    table = np.full((steps, LANES), np.nan)  # a step's values side by side, NaN: no such row
    for k, curve in enumerate(lanes):
        table[: len(curve), k] = curve.astype(np.float32)  # as the loop recorded them
    table[~np.isfinite(table)] = np.nan  # a diverged value is left out of the band
    expect = np.nanpercentile(table, [0, 25, 75, 100], axis=1)
    outer, inner = band.outer, band.inner
    for (x, y), (lower, upper) in zip((outer, inner), ((0, 3), (1, 2)), strict=True):
        half = len(x) // 2
        np.testing.assert_array_equal(x[:half], np.arange(steps))  # one point a step
        np.testing.assert_allclose(y[:half], expect[lower], rtol=1e-12)
        np.testing.assert_allclose(y[half:][::-1], expect[upper], rtol=1e-12)


def test_lanes_names_the_lanes_drawn_by_index_or_label():
    lanes, _ = _sweep_values(np.random.default_rng(2))
    labels = [f"lr={k}" for k in range(LANES)]
    live = jhw.LivePlot(lane_labels=labels, lanes=[7, -1, "lr=300", "lr=nope", 7])
    feed(live, {"loss": lanes}, lanes=LANES)
    drawing = live.drawing()
    assert [ln.lane for ln in drawing.chart().lines] == [7, LANES - 1, 300]
    assert any("no lane 'lr=nope'" in n for n in drawing.notes)
    hover = live.figures[0].marks
    names = [label for m in hover for label in getattr(m, "labels", [])]
    assert any("lr=300" in n for n in names) and not any("lr=0 " in n for n in names)
    with pytest.raises(TypeError, match="lane indices"):
        jhw.LivePlot(lanes=[True])
    with pytest.raises(TypeError, match="lanes must be a sequence"):
        jhw.LivePlot(lanes="lr=1")


def test_a_compiled_sweep_reads_as_numpy_reads_its_last_values():
    rates = jnp.logspace(-3, 0.5, LANES)

    solve = least_squares_sweep(100)

    live = jhw.LivePlot(log_y=True)
    with live:
        (_, x), _ = jax.jit(jax.vmap(solve))(rates)
    loss = np.asarray(x, np.float64) ** 2
    bad = int((~np.isfinite(loss)).sum())
    assert 0 < bad < LANES  # some rates diverge
    assert live.panel.lane_statuses == {"converged": LANES - bad, "diverged": bad}
    finite = loss[np.isfinite(loss)]  # a diverged lane (NaN or inf) has no value to count
    assert live.panel.latest["loss"] == pytest.approx(np.median(finite), rel=1e-5)


@pytest.mark.parametrize(
    ("kind", "leaf"), [("scalar", 0), ("component", 1), ("norm", 1), ("median", 2)]
)
def test_a_blocks_lane_values_are_each_lanes_values_side_by_side(kind, leaf):
    # The band reads every lane's rows as one block; each series must read them as it reads a
    # lane's own rows (a vector's norm or median included, and past the leaf it reads).
    rng = np.random.default_rng(4)
    block = [
        rng.normal(size=(7, 5)).astype(np.float32),
        rng.normal(size=(7, 5, 3)).astype(np.float32),
        rng.normal(size=(7, 5, 2)),
    ]
    spec = Spec(label="x", leaf=leaf, kind=kind, index=2 if kind == "component" else 0)
    values = spec.lane_values(block)
    assert values.shape == (5, 7) and values.flags.c_contiguous
    for lane in range(7):
        np.testing.assert_array_equal(values[:, lane], spec.values([b[lane] for b in block]))
