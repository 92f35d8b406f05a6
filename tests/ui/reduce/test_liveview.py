"""The live view on long runs: incremental min/max decimation, bounded work, bounded messages.

`MinMaxBuckets` is checked against a reference computed from the whole line at the bucket size
it ended with (every bucket's min, max and first gap, in step order), for many small appends and
for one big one; `LivePlot` is checked on real `jhw.while_loop` runs (vmap lanes, a spike, NaN,
resumed runs) and on a long run fed by hand through the hub (`tests.synthetic`), counting the
work each update does (values reduced and buckets touched, not time).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from ipywidgets.widgets.widget import _remove_buffers

import jaxhist_widget as jhw
from jaxhist_widget.ui.plot import MAX_LANES, LivePlot
from jaxhist_widget.ui.reduce import MinMaxBuckets
from jaxhist_widget.ui.series import DEFAULT_POINTS, MARK_POINTS, RunDrawing

from ...helpers.synthetic import Capture, FakeLoop, layout

KB64 = 64 * 1024


def reference(y: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """What min/max decimation with buckets of ``size`` keeps of the whole line ``y``: each
    bucket's first min and first max of its finite values, its first non-finite point (as NaN),
    the first and the last point, in step order."""
    keep = {0, len(y) - 1}
    for start in range(0, len(y), size):
        seg = y[start : start + size]
        finite = np.isfinite(seg)
        if finite.any():
            keep.add(start + int(np.where(finite, seg, np.inf).argmin()))
            keep.add(start + int(np.where(finite, seg, -np.inf).argmax()))
        if not finite.all():
            keep.add(start + int((~finite).argmax()))
    idx = np.array(sorted(keep))
    return idx, np.where(np.isfinite(y[idx]), y[idx], np.nan)


values = st.one_of(
    st.floats(-5, 5),
    st.sampled_from([0.0, 1.0, -1.0]),  # ties: the first of equal values is kept
    st.sampled_from([math.nan, math.inf, -math.inf]),
)


@settings(max_examples=150, deadline=None)
@given(
    y=st.lists(values, min_size=1, max_size=2500),
    cuts=st.lists(st.integers(1, 300), min_size=1, max_size=40),
    max_points=st.integers(5, 200),
)
@example(y=[1.0] * 7 + [50.0] + [1.0] * 992, cuts=[3], max_points=9)  # one spike, flat line
def test_incremental_decimation_equals_the_reference(y, cuts, max_points):
    y = np.array(y)
    whole = MinMaxBuckets(max_points)
    whole.extend(y)
    pieces = MinMaxBuckets(max_points)
    start, k = 0, 0
    while start < len(y):  # many small appends, of the sizes hypothesis picked, cycled
        step = cuts[k % len(cuts)]
        pieces.extend(y[start : start + step])
        start, k = start + step, k + 1
    assert pieces.size == whole.size and pieces.n == whole.n == len(y)
    x1, y1 = whole.points()
    x2, y2 = pieces.points()
    np.testing.assert_array_equal(x1, x2)
    np.testing.assert_array_equal(y1, y2)
    # every bucket's min and max (and first gap), in step order, and nothing else
    xr, yr = reference(y, whole.size)
    np.testing.assert_array_equal(x1, xr)
    np.testing.assert_array_equal(y1, yr)
    assert len(x1) <= max_points
    finite = y[np.isfinite(y)]
    if finite.size:  # the spike and the dip are drawn
        assert finite.max() in y1 and finite.min() in y1
    # not decimated more than needed: at half the bucket size the buckets would not fit
    if whole.size > 1:
        complete = len(y) // (whole.size // 2) * (whole.size // 2)
        at_half = len(reference(y[:complete], whole.size // 2)[0]) if complete else 0
        assert at_half > max_points - 5  # (5: first, last, and the partial bucket's 3)


def test_a_spike_in_a_million_rows_is_drawn_at_its_step():
    rng = np.random.default_rng(0)
    y = 1.0 + 0.01 * rng.standard_normal(1_000_000)
    y[654_321] = 40.0
    y[100_000:100_010] = np.nan
    line = MinMaxBuckets(2000)
    for chunk in np.array_split(y, 977):  # uneven chunks, as a run streams them
        line.extend(chunk)
    x, yd = line.points()
    assert len(x) <= 2000 and x[-1] == 999_999 and x[0] == 0
    assert np.nanmax(yd) == 40.0 and x[np.nanargmax(yd)] == 654_321
    assert np.isnan(yd).any() and 100_000 <= x[np.isnan(yd)][0] < 100_010


# ----------------------------------------------------------------------------- work bound
def test_each_update_reduces_only_the_new_rows():
    """A long run fed by hand (no JAX: many updates, exactly), drawn by a `RunDrawing` (what a
    LivePlot does per run at each update) and by a LivePlot watching the same run."""
    rng = np.random.default_rng(0)
    live, cap = LivePlot(), Capture()
    n, chunk, per_push = 0, 1000, []
    with live, cap:
        loop = FakeLoop(layout(("f0", "f1", "f2"), max_steps=10**7))
        (run,) = cap.runs
        drawing = RunDrawing(run, 1)  # every leaf, as LivePlot() draws
        for _ in range(300):  # 300,000 rows, one update per 1000
            leaves = {f"f{k}": rng.standard_normal(chunk) for k in range(3)}
            loop.send(**leaves)
            n += chunk
            assert drawing.start(live.max_points)
            before = drawing.work
            drawing.ingest()
            drawing.lines()
            per_push.append(drawing.work - before)
        loop.end("max_steps")
    budget = min(DEFAULT_POINTS, MARK_POINTS)  # one lane: the whole mark budget, capped
    assert {s.budget for s in drawing.series.values()} == {budget}
    # each update: the 3 x 1000 new values, plus a few passes over at most `budget` buckets
    # per series (merging, drawing); the same early and late in the run
    assert max(per_push) <= 3 * (chunk + 4 * budget), max(per_push)
    assert sum(per_push[-50:]) <= 1.2 * sum(per_push[50:100])
    assert all(s.size == n for s in drawing.series.values())  # every row was seen
    assert drawing.last_step == n - 1
    for mark in [m for f in live.figures for m in f.marks]:
        assert len(mark.x) <= budget and mark.x[-1] == n - 1


def test_a_plots_drawing_counts_the_work_of_each_update():
    """`LivePlot.drawing().work`, what `benchmarks/liveview.py` and `vectors.py` read: each
    update counts the new values it reduced and the buckets it touched, the same early and late
    in a long run."""
    rng = np.random.default_rng(1)
    live = LivePlot()
    assert live.drawing().work == 0  # no run: nothing drawn, nothing done
    chunk, per_update = 1000, []
    with live:
        loop = FakeLoop(layout(("f0", "f1", "f2"), max_steps=10**7))
        for _ in range(200):
            before = live.drawing().work
            loop.send(**{f"f{k}": rng.standard_normal(chunk) for k in range(3)})
            live.refresh()
            per_update.append(live.drawing().work - before)
        loop.end("max_steps")
    budget = min(DEFAULT_POINTS, MARK_POINTS)
    # every new value, plus a few passes over at most `budget` buckets per series (as a lone
    # RunDrawing's, above: the plot's own update, when its throttle lets one through, too)
    assert min(per_update) >= 3 * chunk, min(per_update)
    assert max(per_update) <= 3 * (chunk + 4 * budget), max(per_update)
    assert sum(per_update[-50:]) <= 1.2 * sum(per_update[50:100])


def bucket_size(values: np.ndarray, budget: int) -> int:
    """The bucket size a line of ``values`` ends with at ``budget`` points (appended whole or
    in pieces: the same, see `test_incremental_decimation_equals_the_reference`)."""
    line = MinMaxBuckets(budget)
    line.extend(values)
    return line.size


# ------------------------------------------------------------------------- real runs
def spiky(lanes: int, steps: int):
    """A vmapped loop of ``x = tanh(A @ x)`` recording a noisy loss with a spike in lane 3 at
    step 777 and NaN in lane 5 from step 900 to 950."""
    a = jnp.asarray(np.random.default_rng(0).standard_normal((32, 32)) / 6, jnp.float32)

    def one(scale, lane):
        def body(c):
            i, x = c
            return i + 1, jnp.tanh(a @ x * scale + 0.01 * jnp.sin(i * 1.7))

        def record(c):
            i, x = c
            loss = jnp.sum(x * x) + jnp.where((lane == 3) & (i == 777), 100.0, 0.0)
            loss = jnp.where((lane == 5) & (i >= 900) & (i < 950), jnp.nan, loss)
            return {"loss": loss, "peak": jnp.abs(x).max()}

        return jhw.while_loop(
            lambda c: c[0] < steps, body, (0, jnp.ones(32)), max_steps=steps, record=record
        )

    lanes_ = jnp.arange(lanes)
    return jax.jit(jax.vmap(one))(1.0 + 0.02 * lanes_, lanes_)


def lane_lines(mark, lanes: int):
    x, y = np.asarray(mark.x), np.asarray(mark.y, float)
    return [(x[k], y[k]) for k in range(lanes)]


@pytest.mark.slow  # compiles several loops: kept out of the quick subset
def test_vmap_lanes_are_each_drawn_as_their_own_reference():
    lanes, steps = 8, 20_000
    live = LivePlot()
    with live:
        _, _hist = spiky(lanes, steps)
    rows = live.history()
    budget = min(DEFAULT_POINTS, MARK_POINTS // lanes)  # by default the lanes share a mark
    lines = [m for f in live.figures for m in f.marks if type(m).__name__ == "Lines"]
    for mark, name in zip(lines, ("loss", "peak"), strict=True):
        for lane, (x, y) in enumerate(lane_lines(mark, lanes)):
            ref = rows[lane][name].astype(np.float64)
            xr, yr = reference(ref, bucket_size(ref, budget))
            # the drawn line is the reference, padded with its last point to the widest lane
            n = len(xr)
            np.testing.assert_array_equal(x[:n], xr)
            np.testing.assert_array_equal(y[:n], yr)
            assert (x[n:] == xr[-1]).all() and len(x) <= budget
    loss = lane_lines(live.figures[0].marks[0], lanes)
    x3, y3 = loss[3]
    assert y3.max() > 100 and x3[y3.argmax()] == 777  # the spike, at its step
    x5, y5 = loss[5]
    assert np.isnan(y5).any() and 900 <= x5[np.isnan(y5)][0] < 950  # the gap
    assert live.panel.step == steps


@pytest.mark.slow  # compiles several loops: kept out of the quick subset
def test_64_lane_update_message_stays_under_64_kb():
    live = LivePlot()
    with live:
        spiky(MAX_LANES, 3000)
    lanes = [m for f in live.figures for m in f.marks if type(m).__name__ == "Lines"]
    for mark in [m for m in lanes if len(m.labels) == MAX_LANES]:  # (not the band's median)
        # what an update sends: x and y of every lane, as binary buffers
        state, _, buffers = _remove_buffers(mark.get_state(["x", "y"]))
        sent = len(str(state)) + sum(memoryview(b).nbytes for b in buffers)
        assert sent <= KB64, sent
        # and the worst case: every lane at its full budget, in the dtypes sent
        x, y = np.asarray(mark.x), np.asarray(mark.y)
        budget = min(DEFAULT_POINTS, MARK_POINTS // MAX_LANES)
        worst = MAX_LANES * budget * (x.dtype.itemsize + y.dtype.itemsize) + len(str(state))
        assert worst <= KB64, (worst, x.dtype, y.dtype, budget)
        assert x.shape == y.shape and x.shape[0] == MAX_LANES


def test_resumed_long_runs_continue_on_one_step_axis_and_keep_their_spikes():
    def chunk(x, kick):
        return jhw.while_loop(
            lambda c: c[0] < 10_000,
            lambda c: (c[0] + 1, c[1] * 0.9999 + jnp.where(c[0] == 4321, kick, 0.0)),
            (0, x),
            max_steps=10_000,
            record=lambda c: {"v": c[1]},
        )

    live = LivePlot(continue_steps=True, keep_runs=True, max_points=200)
    x = jnp.float32(1.0)
    with live:
        for k in range(3):
            (_, x), _hist = jax.jit(chunk)(x, 5.0 * (k + 1))
    assert len([m for f in live.figures for m in f.marks]) == 3
    for k, mark in enumerate([m for f in live.figures for m in f.marks]):
        xs, ys = np.asarray(mark.x), np.asarray(mark.y)
        assert xs[0] == 10_000 * k and xs[-1] == 10_000 * (k + 1)  # one step axis
        v = live.runs[k].history()["v"].astype(np.float64)
        xr, yr = reference(v, bucket_size(v, 200))
        np.testing.assert_array_equal(xs, xr + 10_000 * k)
        np.testing.assert_array_equal(ys, yr)
        assert len(xs) <= 200
        # the kick lands in the row after step 4321
        assert xs[np.argmax(np.diff(ys)) + 1] == 10_000 * k + 4322
    x_scale = live.figure.axes[0].scale
    assert (x_scale.min, x_scale.max) == (0.0, 30_000.0)
