"""How a `Run` stores the rows it receives: segments shared by all lanes, views for readers.

The storage is sized so that tests of whole runs nearly never cross a segment; here segments are
made tiny (``SEGMENT_BYTES``) so that every read and write crosses them.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jaxhist_widget as jhw
from jaxhist_widget._host import Run
from jaxhist_widget._host.runtime import RunWriter, _run
from jaxhist_widget._wire import Layout


@pytest.fixture
def tiny_segments(monkeypatch):
    monkeypatch.setattr(_run, "SEGMENT_BYTES", 1)  # the minimum: 16 rows a segment
    return 16


def make_run(lanes: int | None, max_steps: int = 200) -> tuple[Run, RunWriter]:
    """A run of ``lanes`` and its writer (the hub's half, here the test's)."""
    tree = jax.tree_util.tree_structure({"loss": 0, "x": 0})
    layout = Layout(("loss", "x"), ((), (3,)), ("float32", "int16"), tree, max_steps, 8, None)
    run = Run(7, layout)
    rows = RunWriter(run)
    rows.lanes(lanes)
    return run, rows


def rows_of(lane: int, start: int, count: int) -> list[np.ndarray]:
    """Rows ``start .. start+count`` of ``lane``, recognisable: every value names its row."""
    steps = np.arange(start, start + count)
    loss = (lane * 1000 + steps).astype(np.float32)
    x = (steps[:, None] * 4 + np.arange(3)).astype(np.int16) + lane
    return [loss, x]


def block(lanes: list[int], start: int, count: int) -> list[np.ndarray]:
    """`rows_of` for several lanes, stacked as a decoded chunk's group: ``(lanes, rows, ...)``."""
    per_lane = [rows_of(lane, start, count) for lane in lanes]
    return [np.stack([leaves[i] for leaves in per_lane]) for i in range(2)]


def history_of(run: Run, lanes: int) -> list[list[np.ndarray]]:
    """`Run.history` as a list per lane of ``[loss, x]`` (one lane for an unbatched run)."""
    trees = run.history() if run.lanes is not None else [run.history()]
    assert len(trees) == lanes
    return [[tree["loss"], tree["x"]] for tree in trees]


@settings(max_examples=40, deadline=None)
@given(
    rounds=st.integers(1, 8),
    lanes=st.sampled_from([None, 1, 3, 5]),
    rnd=st.randoms(use_true_random=False),
    start=st.integers(0, 120),
    length=st.integers(0, 60),
)
def test_rows_read_back_exactly_across_segments_and_lane_groups(rounds, lanes, rnd, start, length):
    """Lanes appended together (a slice or a list of lanes) or alone, each group with its own
    row count, read back the same rows; arrays handed out earlier never change later."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_run, "SEGMENT_BYTES", 1)  # 16-row segments: every read and write crosses
        run, rows = make_run(lanes)
    assert run._seg_rows == 16
    n_lanes = 1 if lanes is None else lanes
    count = [0] * n_lanes
    earlier = []
    for _ in range(rounds):
        # lanes at the same row may share a chunk, as a decoded chunk's groups do
        todo = list(range(n_lanes))
        while todo:
            at = count[todo[0]]
            same = [lane for lane in todo if count[lane] == at]
            group = sorted(rnd.sample(same, rnd.randint(1, len(same))))
            size = rnd.randint(1, 25)
            rows.append_lanes(group, at, block(group, at, size))
            for lane in group:
                count[lane] += size
            todo = [lane for lane in todo if lane not in group]
        earlier.append([np.array(a) for a in run.lane_rows(0)] + run.lane_rows(0))
        views = history_of(run, n_lanes)[-1]  # the last lane's, read at once with the others
        earlier.append([np.array(a) for a in views] + views)
    assert run.counts == count
    for lane, views in enumerate(history_of(run, n_lanes)):  # every lane, read at once
        for got, w in zip(views, rows_of(lane, 0, count[lane]), strict=True):
            np.testing.assert_array_equal(got, w)
            assert got.dtype == w.dtype and not got.flags.writeable
    for lane in range(n_lanes):
        want = rows_of(lane, 0, count[lane])
        for got, w in zip(run.lane_rows(lane), want, strict=True):
            np.testing.assert_array_equal(got, w)
            assert got.dtype == w.dtype and not got.flags.writeable
        for got, w in zip(run.rows_since(lane, start), want, strict=True):
            np.testing.assert_array_equal(got, w[start:])
        # a bounded read (a zoomed view's steps): rows start .. start + length only
        for got, w in zip(run.rows_since(lane, start, start + length), want, strict=True):
            np.testing.assert_array_equal(got, w[start : start + length])
    for loss, x, loss_view, x_view in earlier:  # still what they were when handed out
        np.testing.assert_array_equal(loss_view, loss)
        np.testing.assert_array_equal(x_view, x)


def test_rows_within_one_segment_are_views_not_copies(tiny_segments):
    run, rows = make_run(2)
    rows.append_lanes([0, 1], 0, block([0, 1], 0, 10))
    a, b = run.lane_rows(1)[0], run.rows_since(1, 4)[0]
    assert np.shares_memory(a, b)  # both read the one segment
    rows.append(0, 10, rows_of(0, 10, 10))  # lane 0 now spans two segments: joined, a copy
    np.testing.assert_array_equal(run.lane_rows(0)[0], rows_of(0, 0, 20)[0])


def test_rows_of_several_lanes_read_at_once_across_segments(tiny_segments):
    """`Run.block` gives what `rows_since` gives each lane, stacked: lanes as a slice
    or a list, rows across segments or in one; a lane short of rows is refused; a subclass
    keeping its rows elsewhere is read through its own `rows_since`."""
    run, rows = make_run(5)
    rows.append_lanes([0, 1, 2, 3], 0, block([0, 1, 2, 3], 0, 40))
    rows.append_lanes([4], 0, block([4], 0, 20))
    for lanes, spans in [
        ([0, 1, 2, 3], [(0, 40), (16, 32), (17, 35)]),
        ([1, 3], [(5, 19), (31, 40)]),
        ([2], [(0, 16), (3, 3)]),
        ([0, 4], [(0, 20), (14, 20)]),
    ]:
        for start, stop in spans:
            got = run.block(lanes, start, stop)
            for leaf, want in zip(got, block(lanes, start, stop - start), strict=True):
                np.testing.assert_array_equal(leaf, want)
                assert leaf.shape[:2] == (len(lanes), stop - start) and not leaf.flags.writeable
    assert np.shares_memory(run.block([0, 1], 0, 8)[0], run.rows_since(1, 0, 8)[0])
    with pytest.raises(ValueError, match="not received"):
        run.block([0, 4], 0, 30)

    class Elsewhere(Run):
        def rows_since(self, lane, start, stop=None):
            return rows_of(lane, start, stop - start)

    other = Elsewhere(1, run.layout)
    for leaf, want in zip(other.block([1, 2], 3, 9), block([1, 2], 3, 6), strict=True):
        np.testing.assert_array_equal(leaf, want)


def test_one_column_of_several_lanes_reads_as_a_block_transposed(tiny_segments):
    """`Run.columns` (a sweep's band reads each series so) is `Run.block`'s column, steps by
    lanes, C-ordered and read-only: lanes as a slice or a list, rows across segments or in one,
    a scalar leaf and each component of a vector one, a subclass through its own rows."""
    run, rows = make_run(5)
    rows.append_lanes([0, 1, 2, 3], 0, block([0, 1, 2, 3], 0, 40))
    rows.append_lanes([4], 0, block([4], 0, 20))
    for lanes, spans in [
        ([0, 1, 2, 3], [(0, 40), (16, 32), (17, 35), (5, 5)]),
        ([1, 3], [(5, 19), (31, 40)]),
        ([0, 4], [(0, 20), (14, 20)]),
        ([], [(0, 3)]),
    ]:
        for start, stop in spans:
            loss, x = run.block(lanes, start, stop)
            for leaf, index, want in [(0, 0, loss), *((1, k, x[:, :, k]) for k in range(3))]:
                got = run.columns(lanes, start, stop, leaf, index)
                np.testing.assert_array_equal(got, want.T)
                assert got.dtype == want.dtype and got.shape == (stop - start, len(lanes))
                assert got.flags.c_contiguous and not got.flags.writeable
    with pytest.raises(ValueError, match="not received"):
        run.columns([0, 4], 0, 30, 0, 0)

    class Elsewhere(Run):
        def rows_since(self, lane, start, stop=None):
            return rows_of(lane, start, stop - start)

    other = Elsewhere(1, run.layout)
    np.testing.assert_array_equal(
        other.columns([1, 2], 3, 9, 1, 2), block([1, 2], 3, 6)[1][:, :, 2].T
    )


def test_each_lanes_latest_row_is_read_at_once_across_segments(tiny_segments):
    # lanes that ended at different rows, their last rows in different 16-row segments, one
    # with no row yet; and the same through a subclass keeping its rows elsewhere (`block`)
    lengths = [40, 17, 0, 33, 16]
    run, rows = make_run(len(lengths))
    for lane, n in enumerate(lengths):
        for start in range(0, n, 7):
            rows.append(lane, start, rows_of(lane, start, min(7, n - start)))

    class Elsewhere(Run):
        def rows_since(self, lane, start, stop=None):
            return run.rows_since(lane, start, stop)

        @property
        def counts(self):
            return run.counts

    other = Elsewhere(1, run.layout)
    RunWriter(other).lanes(len(lengths))
    for reader in (run, other):
        has, (loss, x) = reader.latest()
        assert has.tolist() == [n > 0 for n in lengths]
        for lane, n in enumerate(lengths):
            want = rows_of(lane, n - 1, 1) if n else [np.zeros(1), np.zeros((1, 3))]
            assert loss[lane] == want[0][0] and x[lane].tolist() == want[1][0].tolist()


def test_rows_out_of_order_are_refused():
    run, rows = make_run(3)
    rows.append_lanes([0, 2], 0, block([0, 2], 0, 4))
    with pytest.raises(RuntimeError, match="lane 2: rows from 2, not 4"):
        rows.append_lanes([2], 2, block([2], 2, 1))
    with pytest.raises(RuntimeError, match="lane 1: rows from 3, not 0"):
        rows.append(1, 3, rows_of(1, 3, 1))
    assert run.counts == [4, 0, 4]


def test_each_lanes_end_code_names_its_status_and_an_unknown_code_is_a_stop():
    run, rows = make_run(7)
    rows.finish([1, 2, 3, 4, 0, 9, -1])
    assert run.statuses == [
        "converged", "max_steps", "stopped", "failed", "running", "stopped", "stopped"
    ]  # fmt: skip
    assert run.status == "failed"


def test_a_run_has_one_writer():
    run, _ = make_run(2)
    with pytest.raises(RuntimeError, match="has a writer already"):
        RunWriter(run)


def test_a_vmapped_run_streams_exactly_its_device_history_across_segments(tiny_segments):
    """64 lanes that stop at different steps (each lane's own tolerance), in chunks that cross
    the 16-row segments at every offset."""
    a = jax.random.normal(jax.random.PRNGKey(1), (32, 32)) / 8

    def solve(x0, tol):
        def body(c):
            i, x = c
            return i + 1, jnp.tanh(a @ x) * 0.9

        return jhw.while_loop(
            lambda c: jnp.linalg.norm(c[1]) > tol,
            body,
            (jnp.int32(0), x0),
            max_steps=90,
            record=lambda c: {"i": c[0], "x": c[1]},
            stream_every=7,
        )

    x0 = jax.random.normal(jax.random.PRNGKey(2), (64, 32))
    tol = jnp.geomspace(1e-1, 1e-6, 64)
    with jhw.Recorder() as rec:
        _, hist = jax.jit(jax.vmap(solve))(x0, tol)
    device, streamed = hist.to_numpy(), rec.history()
    lengths = np.asarray(hist.length)
    assert len(set(lengths.tolist())) > 10 and lengths.max() > 16 * 2  # lanes end apart
    for lane in range(64):
        for key in ("i", "x"):
            np.testing.assert_array_equal(streamed[lane][key], device[lane][key])
