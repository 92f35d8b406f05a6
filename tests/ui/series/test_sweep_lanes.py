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
from jaxhist_widget.ui.figure import DivergedEnds
from jaxhist_widget.ui.reduce import LaneSeries, ema

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


def _drawn_role(d) -> dict[str, int]:
    return {role: lane for lane, roles in d.lane_roles.items() for role in roles.split(", ")}


def _sweep(rng: np.random.Generator, n: int = 40, diverge: bool = True) -> np.ndarray:
    """``(LANES, n)`` float32 loss curves, every last value its own; with ``diverge`` every
    50th lane ends at NaN or inf (its last five rows), the others at a random level."""
    level = rng.random(LANES) + 0.1
    curves = level[:, None] * np.exp(-np.linspace(0, 1, n))[None, :] + 0.01
    if diverge:
        curves[::50, -5:] = np.nan
        curves[25::100, -5:] = np.inf
    return curves.astype(np.float32)


def _mark(live, number: int = 1):
    (chart,) = live._fig.charts.values()
    return chart, chart._runs[number]


def test_the_best_median_and_worst_lanes_are_drawn_and_named():
    curves = _sweep(np.random.default_rng(0))
    live = jhw.LivePlot()
    feed(live, {"loss": list(curves)}, lanes=LANES)
    (d,) = live._state.drawn
    expected = _roles(curves[:, -1].astype(np.float64))
    assert _drawn_role(d) == expected
    assert set(expected.values()) <= set(d.drawn_lanes) and len(d.drawn_lanes) <= 64
    # named for why they are drawn: hover labels, the legend row, the picture's legend
    _, r = _mark(live)
    best = f"lane {expected['best']} (best)"
    assert f"loss · {best} · run 1" in list(r.marks[0].labels)
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
        live._push(final=False)
        (d,) = live._state.drawn
        before = _drawn_role(d)
        assert before == {k: v for k, v in _roles(curves[:, 29].astype(float)).items()}
        # a lane the stride does not draw becomes the best: it is drawn, from its first row
        new = next(k for k in range(1, LANES) if k not in d.drawn_lanes)
        curves[new, 30:] = np.float32(1e-4)
        loop.send(loss=curves[:, 30:])
        live._push(final=False)
        loop.end()
    after = _drawn_role(d)
    assert after["best"] == new != before["best"] and new in d.drawn_lanes
    assert after == _roles(curves[:, -1].astype(float))
    slot = d.drawn_lanes.index(new)
    _, r = _mark(live)
    assert r.lane_roles[slot] == "best" and "(best)" in r.marks[0].labels[slot]
    # its line is drawn from every row (as a lane drawn from the start is), not from now on
    assert d.series[0, slot].size == curves.shape[1]
    whole = LaneSeries(d.series[0, slot].budget)
    whole.extend(curves[new].astype(np.float64))
    x, y, _ = whole.points(0)
    shown_x, shown_y = np.asarray(r.marks[0].x)[slot], np.asarray(r.marks[0].y)[slot]
    np.testing.assert_array_equal(shown_x[: len(x)], x)
    np.testing.assert_array_equal(shown_y[: len(y)], y)
    assert x[0] == 0 and x[-1] == curves.shape[1] - 1
    # the lane that was best is drawn no more unless the stride has it
    assert before["best"] not in d.drawn_lanes or before["best"] in d._stride


def test_a_diverged_line_is_flagged_at_its_last_finite_point_live_and_in_the_picture():
    curves = _sweep(np.random.default_rng(2))
    live = jhw.LivePlot()
    feed(live, {"loss": list(curves)}, lanes=LANES)
    (d,) = live._state.drawn
    bad = [k for k in d.drawn_lanes if not np.isfinite(curves[k, -1])]
    assert bad and _roles(curves[:, -1].astype(float))["diverged"] in bad
    # each flag at its lane's last finite row: step and value
    ends = {(float(len(curves[k]) - 6), float(curves[k, -6])) for k in bad}
    chart, r = _mark(live)
    (flags,) = [e for e in r.extras if isinstance(e, DivergedEnds)]
    (mark,) = flags.marks
    assert flags.marks[0] in chart.figure.marks
    assert set(zip(np.asarray(mark.x, float), np.asarray(mark.y, float), strict=True)) == ends
    # the band leaves the diverged lanes out where they are NaN/inf, and says how many
    diverged = int((~np.isfinite(curves[:, -1])).sum())
    note = f"loss min–max ({diverged:,} diverged lanes left out)"
    assert note in live.legend.value
    _, root = picture(live)
    (group,) = [g for g in root.iter(f"{SVG}g") if g.get("class") == "jhw-diverged"]
    shown = {(float(p.get("data-x")), float(p.get("data-y"))) for p in group}
    assert shown == {(x, float(f"{y:g}")) for x, y in ends}
    texts = " ".join("".join(t.itertext()) for t in root.iter(f"{SVG}text"))
    assert note in texts and "diverged: last finite value" in texts


def test_the_users_lanes_are_never_overridden():
    curves = _sweep(np.random.default_rng(3))
    live = jhw.LivePlot(lanes=[3, 5])
    feed(live, {"loss": list(curves)}, lanes=LANES)
    (d,) = live._state.drawn
    assert d.drawn_lanes == (3, 5) and d.lane_roles == {}


def test_a_compiled_sweep_draws_numpys_best_median_and_worst_lanes():
    rates = jnp.logspace(-3, 0.5, LANES)

    solve = least_squares_sweep(60)

    live = jhw.LivePlot(log_y=True)
    with live:
        jax.jit(jax.vmap(solve))(rates)
    (d,) = live._state.drawn
    has, latest = d.run.latest()
    last = np.where(has, latest[0].astype(np.float64), np.nan)
    roles, expected = _drawn_role(d), _roles(last)
    finite = np.sort(last[np.isfinite(last)])
    # by value (many lanes reach the same float32 loss: ties pick any of them)
    assert last[roles["best"]] == finite[0] and last[roles["worst"]] == finite[-1]
    assert last[roles["median"]] == finite[(finite.size - 1) // 2]
    assert roles["diverged"] == expected["diverged"]
    assert set(roles.values()) <= set(d.drawn_lanes)


@pytest.mark.parametrize("smoothing, last_steps", [(0.0, 40), (0.6, 0)])
def test_re_chosen_lanes_keep_smoothed_and_window_lines_whole(smoothing, last_steps):
    curves = _sweep(np.random.default_rng(4), n=60, diverge=False)
    live = jhw.LivePlot(smoothing=smoothing, last_steps=last_steps)
    with live:
        loop = FakeLoop(layout(("loss",)), LANES)
        loop.send(loss=curves[:, :30])
        live._push(final=False)
        (d,) = live._state.drawn
        new = next(k for k in range(1, LANES) if k not in d.drawn_lanes)
        curves[new, 30:] = np.float32(1e-4)
        loop.send(loss=curves[:, 30:])
        live._push(final=False)
        loop.end()
    slot = d.drawn_lanes.index(new)
    _, r = _mark(live)
    if last_steps:
        x, y = np.asarray(r.marks[0].x)[slot], np.asarray(r.marks[0].y)[slot]
        assert x[0] == 19  # the last 40 steps of 0 .. 59: this lane's, from its stored rows
        np.testing.assert_array_equal(y[:41], curves[new, 19:])
    else:  # its smoothed line averages every row of it
        _, line = live._state.smoothed_of(d).series[0, slot]
        assert line.size == curves.shape[1] and "(best)" in r.smoothed[0].labels[slot]
        expected = ema(curves[new].astype(np.float64), smoothing)
        assert line.last == pytest.approx(expected[-1])
