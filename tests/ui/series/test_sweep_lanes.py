"""Past the drawable limit, a sweep's chart draws the lanes that tell where it stands: the best
(lowest last finite value of the first field), median and worst lanes, and the first diverged
one, chosen anew as rows arrive, each line whole (drawn from all of its stored rows), named
for why it is drawn; a line that ends at NaN or ±inf is flagged at its last finite point; the
band says how many diverged lanes it leaves out; the static picture shows the same.

Before, the lanes drawn were an even stride fixed at the run's first rows: the best lane of a
4096-lane sweep was drawn only if the stride hit it, and a diverged line just stopped.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxhist_widget as jhw
from jaxhist_widget.ui.reduce import LaneSeries, ema
from jaxhist_widget.ui.series import MARK_POINTS, MAX_LANES, ROLES

from ...helpers.loops import least_squares_sweep
from ...helpers.static import SVG, picture
from ...helpers.synthetic import FakeLoop, feed, layout

LANES = 4096


def _roles(last: np.ndarray) -> dict[str, int]:
    """Numpy's best (argmin), median (the lower one) and worst (argmax) lane of the finite
    ``last`` values, and the first lane that is not finite."""
    finite = np.isfinite(last)
    values = np.where(finite, last, np.nan)
    order = np.argsort(np.where(finite, last, np.inf))  # the finite lanes first, ascending
    roles = {
        "best": int(np.nanargmin(values)),
        "median": int(order[(finite.sum() - 1) // 2]),
        "worst": int(np.nanargmax(values)),
    }
    return roles | ({"diverged": int(np.flatnonzero(~finite)[0])} if not finite.all() else {})


def _drawn_role(chart) -> dict[str, int]:
    """The lane each role names on the drawn chart (`LivePlot.drawing`)."""
    lines = [ln for ln in chart.lines if ln.role and not ln.smoothed]
    return {role: ln.lane for ln in lines for role in ln.role.split(", ")}


def _lanes(chart) -> list[int]:
    """The lanes the chart draws as lines, in order."""
    return [ln.lane for ln in chart.lines if not ln.smoothed]


def _sweep(rng: np.random.Generator, n: int = 40, diverge: bool = True) -> np.ndarray:
    """``(LANES, n)`` float32 loss curves, every last value its own; with ``diverge`` every
    50th lane ends at NaN or inf (its last five rows), the others at a random level."""
    level = rng.random(LANES) + 0.1
    curves = level[:, None] * np.exp(-np.linspace(0, 1, n))[None, :] + 0.01
    if diverge:
        curves[::50, -5:] = np.nan
        curves[25::100, -5:] = np.inf
    return curves.astype(np.float32)


def test_the_best_median_and_worst_lanes_are_drawn_and_named():
    curves = _sweep(np.random.default_rng(0))
    live = jhw.LivePlot()
    feed(live, {"loss": list(curves)}, lanes=LANES)
    chart = live.drawing().chart()
    expected = _roles(curves[:, -1].astype(np.float64))
    assert _drawn_role(chart) == expected
    assert set(expected.values()) <= set(_lanes(chart)) and len(_lanes(chart)) <= 64
    # named for why they are drawn: hover labels, the legend row, the picture's legend
    best = f"lane {expected['best']} (best)"
    assert chart.line(lane=expected["best"]).label == f"loss · {best} · run 1"
    legend = live.legend.value
    for role, lane in expected.items():
        assert f"lane {lane} ({role})" in legend
    _, root = picture(live)
    texts = " ".join("".join(t.itertext()) for t in root.iter(f"{SVG}text"))
    assert best in texts and f"lane {expected['worst']} (worst)" in texts
    labels = {p.get("data-label") for p in root.iter(f"{SVG}path")}
    assert f"loss · {best} · run 1" in labels  # the same lines, in the picture


def test_the_drawn_lanes_follow_the_data_and_a_new_lane_is_drawn_whole():
    rng = np.random.default_rng(1)
    curves = _sweep(rng, n=60, diverge=False)
    live = jhw.LivePlot()
    with live:
        loop = FakeLoop(layout(("loss",)), LANES)
        loop.send(loss=curves[:, :30])
        live.refresh()
        chart = live.drawing().chart()
        before = _drawn_role(chart)
        assert before == {k: v for k, v in _roles(curves[:, 29].astype(float)).items()}
        # a lane the stride does not draw becomes the best: it is drawn, from its first row
        new = next(k for k in range(1, LANES) if k not in _lanes(chart))
        curves[new, 30:] = np.float32(1e-4)
        loop.send(loss=curves[:, 30:])
        live.refresh()
        loop.end()
    chart = live.drawing().chart()
    after = _drawn_role(chart)
    assert after["best"] == new != before["best"] and new in _lanes(chart)
    assert after == _roles(curves[:, -1].astype(float))
    line = chart.line(lane=new)
    assert line.role == "best" and "(best)" in line.label
    # its line is drawn from every row (as a lane drawn from the start is), not from now on:
    # the points of a line of its share (4000 a mark, 64 lanes) fed every row at once
    whole = LaneSeries(MARK_POINTS // MAX_LANES)
    whole.extend(curves[new].astype(np.float64))
    x, y, _ = whole.points(0)
    np.testing.assert_array_equal(line.x, x)
    np.testing.assert_array_equal(line.y, y)
    assert x[0] == 0 and x[-1] == curves.shape[1] - 1
    # the lane that was best is drawn no more unless the stride has it
    stride = np.linspace(0, LANES - 1, MAX_LANES - len(ROLES)).round().astype(int)
    assert before["best"] not in _lanes(chart) or before["best"] in stride


def test_a_diverged_line_is_flagged_at_its_last_finite_point_live_and_in_the_picture():
    curves = _sweep(np.random.default_rng(2))
    live = jhw.LivePlot()
    feed(live, {"loss": list(curves)}, lanes=LANES)
    chart = live.drawing().chart()
    bad = [k for k in _lanes(chart) if not np.isfinite(curves[k, -1])]
    assert bad and _roles(curves[:, -1].astype(float))["diverged"] in bad
    # each flag at its lane's last finite row: step and value (one flag each, shown)
    ends = {(float(len(curves[k]) - 6), float(curves[k, -6])) for k in bad}
    assert len(chart.flags) == len(bad) and set(map(tuple, chart.flags.tolist())) == ends
    # the band leaves the diverged lanes out where they are NaN/inf (the header counts them)
    diverged = int((~np.isfinite(curves[:, -1])).sum())
    assert "lanes min–max" in live.legend.value
    assert [band.left_out for band in chart.bands] == [diverged]
    _, root = picture(live)
    (group,) = [g for g in root.iter(f"{SVG}g") if g.get("class") == "jhw-diverged"]
    shown = {(float(p.get("data-x")), float(p.get("data-y"))) for p in group}
    assert shown == {(x, float(f"{y:g}")) for x, y in ends}
    texts = " ".join("".join(t.itertext()) for t in root.iter(f"{SVG}text"))
    assert "lanes min–max" in texts and "diverged: last finite value" in texts


def test_the_users_lanes_are_never_overridden():
    curves = _sweep(np.random.default_rng(3))
    live = jhw.LivePlot(lanes=[3, 5])
    feed(live, {"loss": list(curves)}, lanes=LANES)
    chart = live.drawing().chart()
    assert _lanes(chart) == [3, 5] and [ln.role for ln in chart.lines] == ["", ""]


def test_a_compiled_sweep_draws_numpys_best_median_and_worst_lanes():
    rates = jnp.logspace(-3, 0.5, LANES)

    solve = least_squares_sweep(60)

    live = jhw.LivePlot(log_y=True)
    with live:
        jax.jit(jax.vmap(solve))(rates)
    (run,) = live.runs
    chart = live.drawing().chart()
    has, latest = run.latest()
    last = np.where(has, latest[0].astype(np.float64), np.nan)
    roles, expected = _drawn_role(chart), _roles(last)
    finite = np.sort(last[np.isfinite(last)])
    # by value (many lanes reach the same float32 loss: ties pick any of them)
    assert last[roles["best"]] == finite[0] and last[roles["worst"]] == finite[-1]
    assert last[roles["median"]] == finite[(finite.size - 1) // 2]
    assert roles["diverged"] == expected["diverged"]
    assert set(roles.values()) <= set(_lanes(chart))


@pytest.mark.parametrize("smoothing, last_steps", [(0.0, 40), (0.6, 0)])
def test_re_chosen_lanes_keep_smoothed_and_window_lines_whole(smoothing, last_steps):
    curves = _sweep(np.random.default_rng(4), n=60, diverge=False)
    live = jhw.LivePlot(smoothing=smoothing, last_steps=last_steps)
    with live:
        loop = FakeLoop(layout(("loss",)), LANES)
        loop.send(loss=curves[:, :30])
        live.refresh()
        new = next(k for k in range(1, LANES) if k not in _lanes(live.drawing().chart()))
        curves[new, 30:] = np.float32(1e-4)
        loop.send(loss=curves[:, 30:])
        live.refresh()
        loop.end()
    chart = live.drawing().chart()
    if last_steps:
        line = chart.line(lane=new)
        # the last 40 steps of 0 .. 59: this lane's, from its stored rows
        np.testing.assert_array_equal(line.x, np.arange(19, 60))
        np.testing.assert_array_equal(line.y, curves[new, 19:])
    else:  # its smoothed line averages every row of it
        line = chart.line(lane=new, smoothed=True)
        assert "(best)" in line.label and line.x[0] == 0 and line.x[-1] == curves.shape[1] - 1
        expected = ema(curves[new].astype(np.float64), smoothing)
        np.testing.assert_allclose(line.y, expected[line.x.astype(int)], rtol=1e-12)
