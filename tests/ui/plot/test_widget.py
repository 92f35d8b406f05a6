"""Tests of `LivePlot`, `LivePanel` and `minmax_decimate` against real `jhw.while_loop` runs.

No frontend here: widgets talk to `comm.DummyComm`, so what a view would receive is read with
``get_state()`` and by observing trait changes (each observed change of ``panel.step`` is one
panel update sent).
"""

from __future__ import annotations

import html
import math
import sys
import threading
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import jaxhist_widget as jhw
from jaxhist_widget.ui import look as legend
from jaxhist_widget.ui.panel import ESM_PATH, LivePanel
from jaxhist_widget.ui.plot import MAX_UPDATES_PER_SECOND, LivePlot
from jaxhist_widget.ui.plot import _liveplot as liveplot
from jaxhist_widget.ui.reduce import LaneSeries, minmax_decimate


# Module-level step functions: eager calls of the same functions reuse one compiled loop.
def _above_one(x):
    return x > 1.0


def _half(x):
    return x / 2


def halve(x, max_steps=50):
    return jhw.while_loop(_above_one, _half, x, max_steps=max_steps)


def _loss_above(c):
    return c["loss"] > 1e-4


def _shrink(c):
    x = c["x"] * 0.9
    return {"loss": jnp.sum(x**2), "x": x}


def descent(x0, max_steps=200):
    """Gradient descent on |x|^2 recording a scalar loss and the vector x."""
    init = {"loss": jnp.sum(x0**2), "x": x0}
    return jhw.while_loop(_loss_above, _shrink, init, max_steps=max_steps)


jit_halve = jax.jit(halve)
jit_descent = jax.jit(descent, static_argnames="max_steps")


def assert_tree_equal(a, b):
    la, lb = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    assert jax.tree_util.tree_structure(a) == jax.tree_util.tree_structure(b)
    for x, y in zip(la, lb, strict=True):
        np.testing.assert_array_equal(x, y)


# ------------------------------------------------------------------------- panel state
def test_panel_state_after_jit_run():
    live = LivePlot(title="descent")
    with live:
        _, hist = jit_descent(jnp.array([3.0, 4.0]))
    rows = hist.to_numpy()
    state = live.panel.get_state()
    assert state["status"] == "converged"
    assert state["step"] == int(hist.length) - 1
    assert state["max_steps"] == 200
    assert state["fields"] == ["loss", "x[0]", "x[1]"]  # a 2-vector: a line per component
    assert state["latest"]["loss"] == pytest.approx(float(rows["loss"][-1]))
    assert state["latest"]["x[1]"] == pytest.approx(float(rows["x"][-1][1]))
    assert state["title"] == "descent"
    assert state["lanes"] == 0
    assert state["error"] == ""
    assert state["elapsed"] > 0 and state["rate"] > 0
    # the plot: one Lines per field, ending at the last step with the last value
    loss_line = live.figure.marks[0]
    assert list(loss_line.labels) == ["loss · run 1"]  # what the hover read-out shows
    assert loss_line.x[-1] == state["step"]
    assert loss_line.y[-1] == pytest.approx(float(rows["loss"][-1]))


def test_status_max_steps_and_components():
    live = LivePlot(fields=["x", "|x|", "x[1]"])
    with live:
        descent(jnp.array([3.0, 4.0]), max_steps=5)
    state = live.panel.get_state()
    assert state["status"] == "max_steps"
    assert state["step"] == 5
    assert state["fields"] == ["x[0]", "x[1]", "|x|", "x[1]"]
    x_last = 0.9**5 * np.array([3.0, 4.0])
    assert state["latest"]["x[0]"] == pytest.approx(x_last[0], rel=1e-5)
    assert state["latest"]["|x|"] == pytest.approx(np.linalg.norm(x_last), rel=1e-5)


def test_stop_click_stops_the_run():
    """A Stop click (the view incrementing stop_clicks) reaches Python and stops the loop."""
    live = LivePlot()

    def click_at_20(i):
        if int(i) == 20:
            live.panel.stop_clicks += 1  # what the frontend's click handler does

    def body(c):
        jax.debug.callback(click_at_20, c[0])
        return (c[0] + 1, c[1])

    with live:
        (i, _), hist = jhw.while_loop(
            lambda c: c[0] < 10_000, body, (0, 0.0), max_steps=10_000, stream_every=1
        )
    assert live.panel.status == "stopped"
    assert live.runs[-1].status == "stopped"
    assert 20 <= int(i) < 10_000
    assert live.panel.step == int(hist.length) - 1


def test_stop_click_when_idle_does_not_stop_next_run():
    live = LivePlot()
    with live:
        live.panel.stop_clicks += 1  # a late click, after nothing is running
        halve(100.0)
    assert live.panel.status == "converged"


def test_strict_keywords():
    with pytest.raises(
        TypeError, match=r"'colour'.*allowed: fields, log_y, keep_runs, title, max_points"
    ):
        LivePlot(colour="red")
    with pytest.raises(TypeError):
        LivePlot(["loss"])  # keyword-only
    with pytest.raises(ValueError, match="max_points"):
        LivePlot(max_points=4)  # fewer than first, last and one bucket's min, max and gap
    with pytest.raises(ValueError, match="max_points"):
        LivePlot(max_points=10_000)
    with pytest.raises(TypeError, match="fields"):
        LivePlot(fields=[1, 2])


# ------------------------------------------------------------------------- history
@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_history_equals_device_history(mode):
    fn = descent if mode == "eager" else jit_descent
    live = LivePlot()
    with live:
        _, hist = fn(jnp.array([3.0, 4.0, 1.0]))
    assert_tree_equal(live.history(), hist.to_numpy())
    assert_tree_equal(live.history(-1), live.runs[-1].history())


def test_history_by_run_index_with_kept_runs():
    live = LivePlot(keep_runs=True)
    with live:
        _, first = halve(10.0)
        _, second = jit_halve(1000.0)
    assert len(live.runs) == 2
    assert_tree_equal(live.history(0), first.to_numpy())
    assert_tree_equal(live.history(-1), second.to_numpy())
    assert_tree_equal(live.history(1), second.to_numpy())


def test_history_vmap_one_line_per_lane():
    live = LivePlot()
    with live:
        _, hist = jax.vmap(halve)(jnp.array([10.0, 1000.0, 0.5]))
    expected = hist.to_numpy()
    got = live.history()
    assert len(got) == len(expected) == 3
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(g, e)
    state = live.panel.get_state()
    assert state["lanes"] == 3
    assert state["step"] == max(len(e) for e in expected) - 1
    (mark,) = live.figure.marks
    assert list(mark.labels) == [f"value · lane {k} · run 1" for k in range(3)]
    assert mark.y.shape[0] == 3
    for lane, e in enumerate(expected):  # each lane's line, padded with its last point
        y = mark.y[lane]
        np.testing.assert_allclose(y[: len(e)], e)
        assert (y[len(e) :] == e[-1]).all()


def test_to_pandas_and_csv(tmp_path):
    pd = pytest.importorskip("pandas")
    live = LivePlot()
    with live:
        _, hist = descent(jnp.array([3.0, 4.0]))
    rows = hist.to_numpy()
    df = live.to_pandas()
    assert list(df.columns) == ["step", "loss", "x[0]", "x[1]"]
    np.testing.assert_array_equal(df["x[1]"], rows["x"][:, 1])
    path = live.to_csv(tmp_path / "run.csv")
    back = pd.read_csv(path)
    assert list(back.columns) == list(df.columns)
    np.testing.assert_allclose(back["loss"], rows["loss"], rtol=1e-6)


def test_a_leaf_named_step_does_not_replace_the_step_column():
    pytest.importorskip("pandas")
    live = LivePlot()
    with live:
        jhw.while_loop(
            lambda c: c["step"] < 3, lambda c: {"step": c["step"] + 10}, {"step": 0}, max_steps=5
        )
    df = live.to_pandas()
    assert df["step"].tolist() == [0, 1]
    assert df["step_value"].tolist() == [0, 10]


def test_every_leaf_keeps_a_column_when_names_collide(tmp_path):
    # a leaf named as another's component (`x[0]`) or as the index (`step`, and `step_value`
    # too): each keeps its own column, in the table, the DataFrame and the CSV alike
    pd = pytest.importorskip("pandas")
    live = LivePlot()
    record = lambda c: {  # noqa: E731
        "step": c * 10, "step_value": c + 0.5, "x": jnp.stack([c, -c]), "x[0]": c + 100.0
    }  # fmt: skip
    with live:
        jhw.while_loop(lambda c: c < 2.0, lambda c: c + 1.0, 0.0, max_steps=4, record=record)
    df = live.to_pandas()
    assert df["step"].tolist() == [0, 1, 2]
    assert df["step_value"].tolist() == [0, 10, 20]
    assert df["step_value_value"].tolist() == [0.5, 1.5, 2.5]
    assert df["x[0]"].tolist() == [0, 1, 2] and df["x[1]"].tolist() == [0, -1, -2]
    assert df["x[0]_value"].tolist() == [100, 101, 102]
    back = pd.read_csv(live.to_csv(tmp_path / "run.csv"))
    assert list(back.columns) == list(df.columns)


def test_history_without_runs_is_a_clear_error():
    with pytest.raises(LookupError, match="no run yet"):
        LivePlot().history()


# ------------------------------------------------------------------------- routing
@pytest.mark.slow  # compiles several loops: kept out of the quick subset
def test_two_liveplots_get_only_their_own_runs():
    a, b = LivePlot(keep_runs=True), LivePlot(keep_runs=True)
    with a:
        halve(10.0)
    with b:
        halve(1000.0)
    with a, b:
        halve(4.0)
    assert [r.history().tolist()[0] for r in a.runs] == [10.0, 4.0]
    assert [r.history().tolist()[0] for r in b.runs] == [1000.0, 4.0]
    assert a.panel is not b.panel and a.figure is not b.figure
    assert a.panel.run_number == 2 and b.panel.run_number == 2
    assert len(a.figure.marks) == 2 and len(b.figure.marks) == 2
    assert not set(map(id, a.figure.marks)) & set(map(id, b.figure.marks))


def test_keep_runs_fades_previous_and_clear_forgets():
    live = LivePlot(keep_runs=True)
    with live:
        halve(10.0)
        halve(20.0)
    old, new = live.figure.marks
    assert old.colors == [legend.PALETTE[0]] and new.colors == [legend.PALETTE[1]]
    assert [r["name"] for r in live.panel.runs] == ["run 1", "run 2"]
    assert len(live.runs) == 2
    live.panel.clear_clicks += 1  # the Clear button
    assert live.runs == [] and live.figure.marks == []
    assert live.panel.status == "idle"


def test_without_keep_runs_only_latest_is_held():
    live = LivePlot()
    with live:
        halve(10.0)
        halve(20.0)
    assert len(live.runs) == 1 and len(live.figure.marks) == 1
    assert live.history().tolist()[0] == 20.0


def test_log_y_toggle_swaps_scale():
    live = LivePlot(log_y=False)
    with live:
        halve(1000.0)
    (mark,) = live.figure.marks
    y_axis = live.figure.axes[1]
    assert mark.scales["y"] is y_axis.scale and type(y_axis.scale).__name__ == "LinearScale"
    live.panel.log_y = True  # the frontend toggle
    # marks and axis are rebuilt on the log scale (bqplot views ignore a swapped scale)
    (log_mark,) = live.figure.marks
    y_axis = live.figure.axes[1]
    assert (
        type(log_mark.scales["y"]).__name__ == "LogScale" and log_mark.scales["y"] is y_axis.scale
    )
    np.testing.assert_array_equal(log_mark.y, mark.y)
    assert list(log_mark.labels) == list(mark.labels)
    assert 0 < y_axis.scale.min <= 1000.0 / 2**10 and y_axis.scale.max >= 1000.0
    with live:  # a run after the toggle draws on the log scale too
        halve(10.0)
    assert all(type(m.scales["y"]).__name__ == "LogScale" for m in live.figure.marks)
    live.log_y = False
    assert type(live.figure.marks[0].scales["y"]).__name__ == "LinearScale"


# --------------------------------------------------------------- throttle and latency
def test_update_rate_is_capped_and_final_step_sent():
    steps = 20_000
    fast = jax.jit(
        lambda x: jhw.while_loop(
            lambda c: c[0] < steps,
            lambda c: (c[0] + 1, jnp.sin(c[1])),
            (0, x),
            max_steps=steps,
            stream_every=4,
        )
    )
    jax.block_until_ready(fast(1.0))  # compile outside the timing
    live = LivePlot()
    sent: list[tuple[float, int]] = []
    live.panel.observe(lambda ch: sent.append((time.perf_counter(), ch["new"])), "step")
    t0 = time.perf_counter()
    with live:  # timed with the block's end: where dispatch is asynchronous, the loop runs then
        fast(1.0)
    duration = time.perf_counter() - t0
    chunks = steps // 4
    assert sent[-1][1] == steps  # the final step always arrives
    assert live.panel.status == "converged"
    # ~5000 chunks arrived; updates are bounded by the cap (+ the unthrottled final one)
    assert len(sent) <= duration * MAX_UPDATES_PER_SECOND + 2, (len(sent), duration)
    assert len(sent) < chunks / 10


def test_trailing_flush_shows_rows_during_a_slow_step():
    """Rows held back by the throttle still show when the next step is slow (no new rows)."""
    live = LivePlot()
    seen = {}

    def slow_at_30(i):
        if int(i) == 30:
            time.sleep(0.4)
            seen["step"] = live.panel.step

    def body(c):
        jax.debug.callback(slow_at_30, c)
        return c + 1

    with live:
        jhw.while_loop(lambda c: c < 40, body, 0, max_steps=100, stream_every=1)
    # During step 31's body, rows 0..30 had arrived: step 30 must have been shown by the timer.
    assert seen["step"] == 30
    assert live.panel.step == 40


# -------------------------------------------------------------------- errors, NaN
def test_error_in_update_path_shows_error_and_run_completes(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("decimation exploded")

    monkeypatch.setattr(LaneSeries, "points", broken)
    live = LivePlot()
    with live:
        final, hist = jit_halve(1000.0)
    assert float(final) == pytest.approx(1000.0 / 2**10)
    assert live.panel.status == "error"
    assert "decimation exploded" in live.panel.error
    assert_tree_equal(live.history(), hist.to_numpy())  # still recorded
    monkeypatch.undo()
    with live:  # the next good run clears the error
        halve(10.0)
    assert live.panel.status == "converged" and live.panel.error == ""


def test_unknown_field_is_a_note_under_the_charts_not_the_runs_error():
    live = LivePlot(fields=["nope"])
    with live:
        _, hist = descent(jnp.array([1.0, 1.0]))
    assert live.panel.status == "converged" and live.panel.error == ""  # the run succeeded
    (note,) = live.drawing().notes
    assert "'nope'" in note and "'loss'" in note and note in html.unescape(live.legend.value)
    assert_tree_equal(live.history(), hist.to_numpy())


def test_nan_and_inf_do_not_break_plot():
    def body(c):
        i, _ = c
        v = jnp.where(i == 5, jnp.nan, jnp.where(i == 7, jnp.inf, jnp.float32(i)))
        return (i + 1, v)

    live = LivePlot(fields=["[1]"])
    with live:
        jhw.while_loop(lambda c: c[0] < 10, body, (0, jnp.float32(0)), max_steps=20)
    assert live.panel.get_state()["latest"] == {"[1]": 9.0}
    (mark,) = live.figure.marks
    assert np.isnan(mark.y[6]) and np.isnan(mark.y[8])  # gaps, inf included
    scale = live.figure.axes[1].scale
    assert math.isfinite(scale.min) and math.isfinite(scale.max)
    assert scale.min < 0 + 1e-9 and scale.max >= 9.0 and scale.max < 20

    live2 = LivePlot()
    with live2:
        jhw.while_loop(lambda x: x < 3, lambda x: x + 1, jnp.float32(-jnp.inf), max_steps=2)
    assert live2.panel.latest["value"] == "-inf"  # JSON-safe spelling for the view


# ---------------------------------------------------------------------- no frontend
def test_no_frontend_works_silently_and_save_png_explains(tmp_path, monkeypatch):
    live = LivePlot()
    assert type(live.panel.comm).__name__ == "DummyComm"
    with live:
        _, hist = halve(10.0)
    assert_tree_equal(live.history(), hist.to_numpy())
    monkeypatch.setitem(sys.modules, "cairosvg", None)  # not installed
    with pytest.raises(ImportError, match="pip install cairosvg"):
        live.save_png(tmp_path / "plot.png")
    assert not (tmp_path / "plot.png").exists()


def test_display_reuses_one_container():
    live = LivePlot()
    bundle = live._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == live.widget.model_id
    assert live.widget is live.widget
    assert live.widget.children == (live.panel, live.charts, live.legend)
    (cell,) = live.charts.children  # one chart (empty) before any run: its figure, its legend
    assert cell.children[0] is live.figure


def test_panel_esm_is_the_js_module():
    assert ESM_PATH.name == "panel.js" and ESM_PATH.exists()
    assert "export default" in ESM_PATH.read_text()
    assert "jhw-stop" in LivePanel().get_state()["_esm"]  # what the view receives


def test_threaded_runs_each_shown():
    """Two runs in two threads streaming to one plot: both recorded, nothing raised."""
    live = LivePlot(keep_runs=True)
    with live:
        threads = [threading.Thread(target=halve, args=(v,)) for v in (10.0, 100.0)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert sorted(r.history().tolist()[0] for r in live.runs) == [10.0, 100.0]
    assert live.panel.error == ""


# ---------------------------------------------------------------------- decimation
def test_decimation_bounded_and_keeps_extremes():
    rng = np.random.default_rng(0)
    n = 1_000_000
    y = rng.normal(size=n)
    y[123_457] = 100.0
    y[876_543] = -100.0
    x, yd = minmax_decimate(np.arange(n), y, 2000)
    assert len(x) == len(yd) <= 2000
    assert (x + yd).nbytes <= 2000 * 8 and x.nbytes + yd.nbytes <= 64_000  # the 64 KB budget
    assert 100.0 in yd and -100.0 in yd
    assert x[0] == 0 and x[-1] == n - 1
    assert np.all(np.diff(x) > 0)  # in step order, no duplicates
    np.testing.assert_array_equal(yd, y[x.astype(int)])  # real points, not averages


def test_decimation_short_input_is_unchanged_but_inf_becomes_gap():
    x, y = minmax_decimate([0, 1, 2], [1.0, np.inf, 3.0], 100)
    np.testing.assert_array_equal(x, [0, 1, 2])
    np.testing.assert_array_equal(y, [1.0, np.nan, 3.0])


def test_decimation_nan_gap_kept_and_never_an_extreme():
    n = 100_000
    y = np.linspace(0, 1, n)
    y[50_000:50_010] = np.nan
    y[70_000] = np.inf
    y[70_001] = -np.inf
    x, yd = minmax_decimate(np.arange(n), y, 300)
    assert len(x) <= 300
    gaps = x[np.isnan(yd)]
    assert any(50_000 <= g < 50_010 for g in gaps) and any(70_000 <= g <= 70_001 for g in gaps)
    finite = yd[~np.isnan(yd)]
    assert finite.max() == 1.0 and finite.min() == 0.0
    all_nan = minmax_decimate(np.arange(n), np.full(n, np.nan), 300)[1]
    assert np.isnan(all_nan).all() and len(all_nan) <= 300


@settings(max_examples=200, deadline=None)
@given(
    y=st.lists(
        st.one_of(
            st.floats(allow_nan=True, allow_infinity=True, width=64),
            st.floats(-10, 10),
        ),
        min_size=1,
        max_size=3000,
    ),
    max_points=st.integers(5, 500),
)
@example(y=[1.0, math.inf, 0.0, 2.0, 0.0], max_points=5)  # one bucket: min, max, gap, ends
def test_decimation_properties(y, max_points):
    y = np.array(y, dtype=np.float64)
    n = len(y)
    x, yd = minmax_decimate(np.arange(n), y, max_points)
    assert len(x) == len(yd) <= max(max_points, n if n <= max_points else 0)
    idx = x.astype(int)
    assert np.all(np.diff(idx) > 0) and idx[0] == 0 and idx[-1] == n - 1
    finite = np.isfinite(y)
    # every kept point is real: its own value, or NaN exactly where the input was non-finite
    np.testing.assert_array_equal(np.isnan(yd), ~finite[idx])
    np.testing.assert_array_equal(yd[finite[idx]], y[idx][finite[idx]])
    if finite.any():  # the global finite extremes are kept
        assert y[finite].max() in yd and y[finite].min() in yd
    if (~finite).any():  # a gap stays visible
        assert np.isnan(yd).any()


def test_a_line_never_ends_in_nan_so_bqplot_can_place_its_label():
    live = LivePlot()
    with live:  # diverges to inf, then nan
        jhw.while_loop(lambda x: x < 1e38, lambda x: x * x * 1e10, jnp.float32(2.0), max_steps=8)
    y = np.asarray(live.figure.marks[0].y, float)
    assert np.isfinite(y[-1]) and len(y) < 9
    np.testing.assert_array_equal(live.history()[: len(y)], y)


@settings(max_examples=30, deadline=None)
@given(chunks=st.lists(st.integers(1, 7), min_size=0, max_size=6), start=st.integers(0, 45))
def test_rows_since_equals_the_tail_of_all_rows(chunks, start):
    from jaxhist_widget._host import Run
    from jaxhist_widget._host.runtime import RunWriter
    from jaxhist_widget._wire import Layout

    layout = Layout(("x",), ((2,),), ("<f4",), jax.tree_util.tree_structure(0), 50, 8, None)
    run = Run(1, layout)
    rows = RunWriter(run)
    rows.lanes(None)
    n = 0
    for size in chunks:
        rows.append(0, n, [np.arange(n, n + size, dtype=np.float32)[:, None].repeat(2, 1)])
        n += size
        if size % 3 == 0:
            run.lane_rows(0)  # compaction in between must not change the answer
    np.testing.assert_array_equal(run.rows_since(0, start)[0], run.lane_rows(0)[0][start:])


@pytest.mark.slow  # compiles several loops: kept out of the quick subset
def test_costly_updates_are_spaced_out(monkeypatch):
    """When drawing is slow (a long run), updates thin out so drawing stays a small share."""
    real = LaneSeries.points
    calls = []

    def slow(*args):  # each update draws every series once: calls count the updates
        calls.append(1)
        # 20 ms of work (the throttle counts an update's processor time: a wait is no cost)
        start = time.thread_time()
        while time.thread_time() - start < 0.02:
            pass
        return real(*args)

    monkeypatch.setattr(LaneSeries, "points", slow)
    live = LivePlot()

    def sleepy(x):
        time.sleep(0.002)
        return x

    body = lambda c: (  # noqa: E731
        c[0] + 1,
        jax.pure_callback(sleepy, jax.ShapeDtypeStruct((), jnp.float32), c[1] * 0.99),
    )
    t = time.perf_counter()
    with live:  # timed with the block's end: where dispatch is asynchronous, the loop runs then
        jax.jit(lambda x: jhw.while_loop(lambda c: c[0] < 600, body, (0, x), max_steps=600))(1.0)
    elapsed = time.perf_counter() - t
    pushes = len(calls) / len(live.panel.fields)
    # each update costs >= 20 ms, so at most one per PUSH_BUDGET * 20 ms (+ the final one)
    assert pushes <= elapsed / (liveplot.PUSH_BUDGET * 0.02) + 2, (pushes, elapsed)
    assert pushes >= 2  # but it still updates while running
    assert live.panel.step == 600
