"""A sweep of several hyperparameters is drawn so it can be read: two parameters swept over a
grid are one heatmap (a cell per pair of values, coloured by the goal's field's last value, on
a log scale where it spans decades, diverged cells crossed, the best cell starred and named);
more than two, or values that form no grid, are a chart per parameter of points, never a line
through lanes that share a value.

Before (issue 57) ``lane_values={"lr": lrs, "wd": wds}`` on 8 x 8 lanes drew ``train_loss vs
lr`` and ``vs wd``, each a line joining the 64 lanes in parameter order (a sawtooth), ranked
``train_loss`` (the first alphabetically) rather than the ``val_loss`` that decides, with two
selects to change it, and named the best (lr, wd) nowhere.
"""

from __future__ import annotations

import jax
import numpy as np
import pytest

import jaxhist_widget as jhw

from ...helpers.loops import grid_sweep
from ...helpers.static import SVG, picture

STEPS = 200
LRS = np.logspace(-3, 0, 8)
WDS = np.array([0.0, 1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3, 1.0])


@pytest.fixture(scope="module")
def grid() -> tuple[jhw.LivePlot, np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    lr, wd = (a.ravel().astype(np.float32) for a in np.meshgrid(LRS, WDS, indexing="ij"))
    live = jhw.LivePlot(lane_values={"lr": lr, "wd": wd})
    with live:
        hist = jax.jit(jax.vmap(grid_sweep(STEPS)))(lr, wd)
    rows = {k: np.asarray(v[:, 1:], np.float64) for k, v in hist.values.items()}
    return live, lr, wd, rows


def test_a_grid_of_two_parameters_is_one_heatmap_of_the_goal(grid) -> None:
    live, lr, wd, rows = grid
    drawing = live.drawing()
    # the held-out loss decides (not train_loss, the first written and alphabetically)
    assert list(drawing.charts) == ["train_loss", "val_loss", "val_loss vs lr × wd"]
    chart = drawing.chart("val_loss vs lr × wd")
    g = chart.grid
    assert g is not None and g.params == ("lr", "wd") and g.field == "val_loss"
    assert chart.lines == ()  # cells, no line through lanes that share a value
    np.testing.assert_allclose(g.columns, LRS.astype(np.float32))
    np.testing.assert_allclose(g.rows, WDS.astype(np.float32))
    val = rows["val_loss"]
    gone = ~np.isfinite(val).all(axis=1)
    last = np.array([v[np.isfinite(v)][-1] for v in val])
    cell = {(float(a), float(b)): k for k, (a, b) in enumerate(zip(lr, wd, strict=True))}
    for r, b in enumerate(g.rows):
        for c, a in enumerate(g.columns):
            k = cell[float(a), float(b)]
            assert g.values[r, c] == pytest.approx(last[k], rel=1e-6)
            assert g.diverged[r, c] == gone[k]
    assert 0 < gone.sum() < len(gone)  # the largest rates diverged: crossed
    # the best cell: the lowest last val_loss of the lanes that did not diverge, starred and
    # named under the chart and in the legend's goal
    ok = np.flatnonzero(~gone)
    best = int(ok[np.argmin(last[ok])])
    r, c = g.best
    assert (float(g.columns[c]), float(g.rows[r])) == (float(lr[best]), float(wd[best]))
    named = f"lr={lr[best]:.4g}, wd={wd[best]:.4g}"
    assert any(e.startswith(f"best: {named}") for e in chart.legend), chart.legend
    assert drawing.legend[0].startswith(f"best = lowest val_loss: {named}")
    # one select to change what it ranks (the goal is the plot's)
    assert [entry["tools"] for entry in live.panel.param_lanes.values()] == [True]


def test_the_grid_colours_on_a_log_scale_where_its_values_span_decades(grid) -> None:
    live, *_ = grid
    g = live.drawing().chart("val_loss vs lr × wd").grid
    lo, hi = g.color_range
    assert g.log_color == (hi >= 100 * lo)
    assert lo == np.nanmin(g.values[~g.diverged])  # its best cell at the scale's end


def test_the_picture_draws_the_cells_the_crosses_and_the_star(grid) -> None:
    live, *_ = grid
    _, root = picture(live)
    (chart,) = [c for c in root.iter(f"{SVG}g") if c.get("data-title") == "val_loss vs lr × wd"]
    assert len(list(chart.iter(f"{SVG}image"))) == 1
    (star,) = [g for g in chart.iter(f"{SVG}g") if g.get("class") == "jhw-best"]
    assert len(star) == 1
    crosses = [g for g in chart.iter(f"{SVG}g") if g.get("class") == "jhw-diverged"]
    assert sum(len(g) for g in crosses) == int(
        live.drawing().chart("val_loss vs lr × wd").grid.diverged.sum()
    )


@pytest.mark.parametrize("kind", ["three", "scattered"])
def test_values_that_form_no_grid_are_points_per_parameter(kind: str) -> None:
    rng = np.random.default_rng(0)
    lanes = 27
    if kind == "three":  # a 3 x 3 x 3 grid: a chart per parameter
        a, b, c = (v.ravel() for v in np.meshgrid([1e-3, 1e-2, 1e-1], [0, 0.1, 0.3], [1, 2, 3]))
        values = {"lr": a, "wd": b, "seed": c}
    else:  # random pairs: no grid
        values = {"lr": 10 ** rng.uniform(-3, -1, lanes), "wd": rng.uniform(0, 0.3, lanes)}
    lr = values["lr"].astype(np.float32)
    wd = values["wd"].astype(np.float32)
    live = jhw.LivePlot(lane_values=values)
    with live:
        jax.jit(jax.vmap(grid_sweep(50)))(lr, wd)
    charts = live.drawing().charts
    assert [t for t in charts if " vs " in t] == [f"val_loss vs {p}" for p in values]
    for title in (t for t in charts if " vs " in t):
        lines = charts[title].lines
        assert lines and all(not ln.joined for ln in lines), title  # points, no line
        assert charts[title].grid is None


def test_one_parameter_of_a_value_per_lane_stays_a_line() -> None:
    lr = LRS.astype(np.float32)
    live = jhw.LivePlot(lane_values={"lr": lr})
    with live:
        jax.jit(jax.vmap(grid_sweep(50)))(lr, np.zeros_like(lr))
    chart = live.drawing().chart("val_loss vs lr")
    assert chart.line("val_loss last").joined and chart.line("best lane").role == "best"
