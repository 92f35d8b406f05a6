"""TensorBoard event files: every run a `TensorBoard` sink receives, and every run written later
with `to_tensorboard`, reads back through TensorBoard's own readers (its event multiplexer for
the run names, its event accumulator for the events, its record reader checking every CRC) with
every row, step and tag exact.

The kill test starts a real Python process and kills it with SIGKILL while it writes.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
import warnings

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import jaxhist_widget as jhw
from jaxhist_widget._host import Run
from jaxhist_widget._host.runtime import RunWriter
from jaxhist_widget._host.tensorboard import _files as _tensorboard_files
from jaxhist_widget._host.tensorboard._files import RunFiles
from jaxhist_widget._wire import Layout

from ...helpers.backends import ON_TPU
from ...helpers.loops import failing_solve
from ...helpers.stores import CHILD_ENV
from ...helpers.tensorboard import read_events, run_names

pytest.importorskip("tensorboard")

A = jnp.asarray(np.random.default_rng(0).normal(size=(16, 16)) / 6, jnp.float32)
SPECIAL = {3: np.nan, 5: np.inf, 6: -np.inf, 7: -0.0, 8: 1e-42}  # step -> a float32 to record


def record(c):
    """Leaves of every kind a sink sees: float32 scalars with NaN, infinities, -0 and a
    subnormal among them; float16, bfloat16, int and bool scalars; a 3-vector (a tag per
    component) and a 16-vector (a histogram); the step counter."""
    i, x = c
    special = jnp.float32(0.0)
    for step, value in SPECIAL.items():
        special = jnp.where(i == step, jnp.float32(value), special)
    return {
        "i": i,
        "f32": jnp.where(i > 2, special, x[0]),
        "f16": x[1].astype(jnp.float16),
        "bf16": x[2].astype(jnp.bfloat16),
        "count": i * 3 - 7,
        "positive": x[3] > 0,
        "x3": x[:3],
        "x": x,
    }


def loop(x0, steps=40):
    return jhw.while_loop(
        lambda c: c[0] < steps,
        lambda c: (c[0] + 1, jnp.tanh(A @ c[1])),
        (jnp.int32(0), x0),
        max_steps=64,
        record=record,
    )


def starts(lanes):
    return jnp.asarray(np.random.default_rng(lanes).normal(size=(lanes, 16)), jnp.float32)


def bits(a):
    return np.asarray(a, np.float32).view(np.uint32)


def check_lane(events, rows, n):
    """The events of one lane hold exactly its ``n`` rows (from a `Recorder`)."""
    names = rows.keys()
    assert "i" in names and "i" not in events.scalars  # the step counter: the step axis
    assert set(events.scalars) == {"f32", "f16", "bf16", "count", "positive"} | {
        f"x3[{k}]" for k in range(3)
    }
    for tag, (steps, values, walls) in events.scalars.items():
        np.testing.assert_array_equal(steps, np.arange(n))
        leaf = rows["x3"][:, int(tag[3])] if tag.startswith("x3") else rows[tag]
        np.testing.assert_array_equal(bits(values), bits(np.asarray(leaf).astype(np.float32)))
        assert np.all(np.diff(walls) >= 0) and abs(walls[0] - time.time()) < 600
    steps, histos = events.histograms["x"]
    np.testing.assert_array_equal(steps, np.arange(n))
    for h, x in zip(histos, rows["x"], strict=True):
        x = x.astype(np.float64)
        assert (h.min, h.max, h.num) == (x.min(), x.max(), 16.0)
        assert np.isclose(h.sum, x.sum()) and np.isclose(h.sum_squares, (x * x).sum())
        # 30 buckets from min to max, each holding the values from its left edge to its right
        assert len(h.bucket_limit) == len(h.bucket) == 30 and h.bucket_limit[-1] == h.max
        lefts = np.array([h.min, *h.bucket_limit[:-1]])
        inside = (x[:, None] >= lefts) & (x[:, None] < np.array(h.bucket_limit))
        inside[:, -1] |= x == h.max
        np.testing.assert_array_equal(h.bucket, inside.sum(axis=0))


def test_every_row_step_and_tag_reads_back_exactly_in_tensorboard(tmp_path):
    tb = jhw.TensorBoard(tmp_path)
    with tb.named("adam"), jhw.Recorder() as rec:
        jax.jit(jax.vmap(loop))(starts(3))
    run = rec.runs[-1]
    assert tb.run_dirs == [tmp_path / "adam"]
    runs = run_names(tmp_path)
    assert sorted(runs) == ["adam/lane 0", "adam/lane 1", "adam/lane 2"]  # the run selector
    for lane in range(3):
        events = read_events(tmp_path / "adam" / f"lane {lane}")
        rows = run.history()[lane]
        check_lane(events, rows, run.counts[lane])
        values = events.scalars["f32"][1]
        for step, value in SPECIAL.items():  # NaN, infinities, -0, a subnormal: bit for bit
            assert bits(values[step]) == bits(np.float32(value))
        (start, first), (end, last) = events.texts[0], events.texts[-1]
        assert start == 0 and first.startswith(f"**adam**, lane {lane} of 3: started")
        assert "`x` (float32[16]): histogram" in first and "`i` (int32): left out" in first
        assert (end, last) == (40, f"**adam**, lane {lane} of 3: converged after 40 steps")


def test_an_unbatched_run_is_one_directory_and_runs_are_named_as_everywhere(tmp_path):
    def halve(x):
        return jhw.while_loop(lambda x: x > 1.0, lambda x: x / 2, x, max_steps=20)

    tb = jhw.TensorBoard(tmp_path)
    with tb:
        halve(8.0)  # no name: numbered
        halve(4.0)
    with tb.named("adam"):
        halve(16.0)
        halve(32.0)  # taken: numbered as a plot numbers it
    tb.run(halve, 2.0)  # a runner's made-up name
    with tb.named("sweep/lr=0.1"):  # "/" groups runs, as in TensorBoard
        halve(64.0)
    with tb.named("../out"):  # never outside the log directory
        halve(3.0)
    named = jhw.TensorBoard(tmp_path, name="sgd")
    with named:
        halve(5.0)
    with named.named("given"):  # a name given to the block wins over the sink's
        halve(6.0)
    expect = ["run 1", "run 2", "adam", "adam (2)", "halve(2)", "sweep/lr=0.1", "_/out"]
    assert [str(d.relative_to(tmp_path)) for d in tb.run_dirs] == expect
    assert [d.name for d in named.run_dirs] == ["sgd", "given"]
    runs = run_names(tmp_path)
    assert sorted(runs) == sorted([*expect, "sgd", "given"])
    steps, values, _ = read_events(tmp_path / "adam (2)").scalars["value"]
    assert values.tolist() == [32.0, 16.0, 8.0, 4.0, 2.0, 1.0] and steps.tolist() == [*range(6)]


def test_a_run_name_too_long_for_a_file_name_is_written_under_a_shorter_one(tmp_path):
    # A config string as the name: longer than the 255 bytes a file name may have. The run is
    # written all the same (no warning), under a directory whose name is cut to fit, and keeps
    # its whole name where the name is text (its summary; a Store in the same block files it).
    config = "adam lr=0.001 " + " ".join(f"layer{i}=relu(width={64 * i})" for i in range(12))
    names = [config, config + " seed=1", "λ" * 200, config]  # 2-byte letters: 400 bytes
    assert all(len(n.encode()) > 255 for n in names)
    tb, path = jhw.TensorBoard(tmp_path / "tb"), tmp_path / "runs.db"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for name in names:
            with tb.named(name), jhw.Store(path):
                jhw.while_loop(lambda x: x > 1.0, lambda x: x / 2, 8.0, max_steps=9)
    assert not [str(c.message) for c in caught if "jaxhist_widget" in str(c.message)]
    dirs = tb.run_dirs
    assert len(set(dirs)) == 4 and all(len(d.name.encode()) <= 255 for d in dirs)
    assert dirs[3].name == dirs[0].name + " (2)"  # the same name twice: numbered
    assert dirs[0].name.startswith(config[:100]) and dirs[2].name.startswith("λ" * 50)
    runs = run_names(tmp_path / "tb")
    assert sorted(runs) == sorted(d.name for d in dirs)
    for d, name in zip(dirs, names, strict=True):
        events = read_events(d)
        assert events.scalars["value"][1].tolist() == [8.0, 4.0, 2.0, 1.0]
        assert all(f"**{name}**" in text for _, text in events.texts)  # the whole name
    assert [r.name for r in jhw.load_runs(path)] == names


def test_a_run_name_whose_whole_path_passes_the_os_limit_is_written_under_a_shorter_one(tmp_path):
    # 25 `key=value/` parts of ~200 bytes: each part fits a file name, the joined path (~5 KB)
    # does not fit a path (4096 bytes on Linux): no event file was written, only an Errno 36
    # warning per chunk.
    parts = [f"key{i}=" + "v" * 190 for i in range(25)]
    names = ["/".join(parts), "/".join([*parts[:-1], "key24=w"])]  # alike but the last part
    tb = jhw.TensorBoard(tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for name in names:
            with tb.named(name):
                jax.vmap(loop)(starts(2))  # a directory per lane below the run's
    assert not [str(c.message) for c in caught if "jaxhist_widget" in str(c.message)]
    dirs = tb.run_dirs
    assert len(set(dirs)) == 2 and dirs[0].parent == dirs[1].parent
    kept = dirs[0].relative_to(tmp_path).parts[:-1]
    assert len(kept) >= 10 and list(kept) == parts[: len(kept)]  # TensorBoard groups by them
    assert dirs[0].name.startswith(parts[len(kept)])
    limit = os.pathconf(tmp_path, "PC_PATH_MAX")
    for d, name in zip(dirs, names, strict=True):
        for lane in range(2):
            (event_file,) = (d / f"lane {lane}").iterdir()
            assert len(os.fsencode(event_file)) < limit
            events = read_events(d / f"lane {lane}")
            assert len(events.scalars["f32"][0]) == 41  # every row
            assert all(f"**{name}**, lane {lane} of 2" in text for _, text in events.texts)
    runs = run_names(tmp_path)
    assert sorted(runs) == sorted(
        f"{d.relative_to(tmp_path)}/lane {k}" for d in dirs for k in (0, 1)
    )


def test_a_log_directory_too_deep_for_any_run_says_so(tmp_path):
    deep = tmp_path.joinpath(*["d" * 200] * 19)  # 3,800 bytes: no room for a run's files
    with pytest.raises(OSError, match="log directory with a shorter path"):
        _tensorboard_files.claim(deep, "adam")


def test_the_files_are_readable_while_the_run_goes_on(tmp_path):
    w = jnp.eye(256) * 0.999

    def slow(x0):  # a minute, unless stopped
        def body(c):
            return c[0] + 1, jax.lax.fori_loop(0, 8, lambda _, x: jnp.tanh(w @ x) + 1e-3, c[1])

        return jhw.while_loop(
            lambda c: c[0] < 10**6,
            body,
            (jnp.int32(0), x0),
            max_steps=10**6,
            record=lambda c: {"x0": c[1][0]},
        )

    solve = jax.jit(slow).lower(jnp.ones(256)).compile()  # compiled, not run
    tb, rec = jhw.TensorBoard(tmp_path, name="long"), jhw.Recorder()
    thread = threading.Thread(target=lambda: rec.run(tb.run, solve, jnp.ones(256)))
    thread.start()
    try:
        deadline = time.monotonic() + 120
        while (
            time.monotonic() < deadline
            and sum(f.stat().st_size for f in tmp_path.glob("long/*")) < 100_000
        ):  # some 2,000 rows
            time.sleep(0.05)
        # The files as they are now, as TensorBoard finds them mid-run: read from a copy, as
        # the writer adds rows faster than TensorBoard's reader reads them (reading the live
        # file itself ends only once the run does).
        shutil.copytree(tmp_path / "long", tmp_path / "now")
        assert tb.running  # copied while the loop is still at it
        live = read_events(tmp_path / "now")
        seen = len(live.scalars["x0"][0])
        assert seen >= 1_000
        assert [t for _, t in live.texts] == [live.texts[0][1]]  # started, not ended
    finally:
        tb.stop()
        thread.join(timeout=120)
    run = rec.runs[-1]
    assert run.status == "stopped" and run.counts[0] > seen
    events = read_events(tmp_path / "long")
    steps, values, _ = events.scalars["x0"]
    np.testing.assert_array_equal(steps, np.arange(run.counts[0]))
    np.testing.assert_array_equal(values, run.lane_rows(0)[0])
    assert events.texts[-1] == (run.counts[0] - 1, f"**long**: stopped after {steps[-1]} steps")


def test_a_run_whose_host_step_raised_ends_in_its_files_as_its_sinks_saw_it(tmp_path, monkeypatch):
    # What holds wherever it runs: the block is left with the files complete (their slow end
    # waited for), the rows before the failure in them, and the run's end as the hub knows it.
    # A CPU's runtime raises the host step's error: the block ends with it, the run failed. A
    # TPU's only logs it and the program goes on, the callback's output undefined
    # (`callback_errors_raise`): nothing failed that the host could see.
    real = RunFiles.end

    def slow_disk(self, run, wall_time):
        time.sleep(0.5)
        real(self, run, wall_time)

    monkeypatch.setattr(RunFiles, "end", slow_disk)
    tb, rec = jhw.TensorBoard(tmp_path, name="boom"), jhw.Recorder()
    raised = None
    try:
        with tb, rec:
            # waited for: where dispatch is asynchronous a computation's error is raised
            # where its result is used, as JAX does it
            jax.block_until_ready(failing_solve()(jnp.float32(0)))
    except Exception as e:
        raised = e
    (run,) = rec.runs
    events = read_events(tmp_path / "boom")  # complete once the block is left
    steps, values, _ = events.scalars["[1]"]
    assert values.tolist()[:3] == [0.0, 1.0, 2.0] and steps.tolist() == list(range(len(steps)))
    assert len(steps) == run.counts[0]  # every row the run kept
    assert events.texts[-1][1] == f"**boom**: {run.status} after {steps[-1]} steps"
    assert (run.status == "failed") == (raised is not None)
    if not ON_TPU:
        assert "host step failed" in str(raised)


@pytest.mark.usefixtures("sinks_told_in_the_loops_call")
def test_writing_happens_on_the_worker_never_in_the_loops_call(tmp_path, monkeypatch):
    threads = []
    real = RunFiles.write

    def spy(self, run, wall, limit=None):
        threads.append(threading.current_thread().name)
        return real(self, run, wall, limit)

    monkeypatch.setattr(RunFiles, "write", spy)

    class Inline(jhw.Recorder):  # a sink that sees the rows in the loop's call
        def on_rows(self, run, lanes):
            threads.append(("inline", threading.current_thread().name))

    tb = jhw.TensorBoard(tmp_path)
    with tb, Inline():
        loop(starts(1)[0], steps=200)
    inline = {t for t in threads if isinstance(t, tuple)}
    written = [t for t in threads if not isinstance(t, tuple)]
    assert inline and written and set(written) == {"jaxhist-worker"}
    assert all(name != "jaxhist-worker" for _, name in inline)


def test_runs_written_later_match_the_live_files(tmp_path):
    path = tmp_path / "runs.db"
    tb = jhw.TensorBoard(tmp_path / "live")
    with tb.named("adam"), jhw.Store(path), jhw.Recorder() as rec:
        jax.jit(jax.vmap(loop))(starts(2))
        jax.jit(loop)(starts(1)[0])
    stored = jhw.to_tensorboard(path, tmp_path / "stored")
    assert [d.name for d in stored] == ["adam", "adam (2)"]
    again = jhw.to_tensorboard(rec.runs, tmp_path / "stored")  # never mixed into the first
    assert [d.name for d in again] == ["adam (3)", "adam (4)"]
    assert jhw.to_tensorboard(rec.runs[1], tmp_path / "one")[0].name == "adam"
    for live, later in [("adam/lane 1", "adam/lane 1"), ("adam (2)", "adam (4)")]:
        a = read_events(tmp_path / "live" / live)
        b = read_events(tmp_path / "stored" / later)
        assert a.scalars.keys() == b.scalars.keys() and a.histograms.keys() == b.histograms.keys()
        for tag in a.scalars:
            (steps_a, values_a, _), (steps_b, values_b, _) = a.scalars[tag], b.scalars[tag]
            np.testing.assert_array_equal(steps_a, steps_b)
            np.testing.assert_array_equal(bits(values_a), bits(values_b))
        assert [h.bucket for h in a.histograms["x"][1]] == [h.bucket for h in b.histograms["x"][1]]
        assert a.texts[-1] == b.texts[-1]  # its status at its last step
        wall = b.scalars["f32"][2]
        assert np.all(np.diff(wall) >= 0) and wall[-1] > wall[0]  # spread over the run's time
    with pytest.raises(FileNotFoundError, match=r"jhw\.Store"):
        jhw.to_tensorboard(tmp_path / "missing.db", tmp_path / "x")
    with pytest.raises(TypeError, match=r"recorder\.runs"):
        jhw.to_tensorboard([1, 2], tmp_path / "x")


def synthetic(dtype, values):
    """A real `Run` of one scalar leaf of ``dtype`` holding ``values``, ended."""
    tree = jax.tree_util.tree_structure(0)
    run = Run(1, Layout(("v",), ((),), (dtype,), tree, len(values), 8, None))
    rows = RunWriter(run)
    rows.named(dtype, False)
    rows.lanes(None)
    rows.append(0, 0, [np.asarray(values, dtype)])
    rows.finish([1])
    return run


@pytest.mark.parametrize(
    ("dtype", "values"),
    [
        ("float64", [0.1, 1e300, -1e300, 1e-300, np.nan, np.inf, 2.0**-149, 1 / 3]),
        ("int64", [0, 2**24, 2**24 + 1, -(2**31), 2**62 + 12345]),
        ("uint32", [0, 2**32 - 1, 16_777_217]),
        ("int8", [-128, 127, 0]),
        ("bool", [True, False, True]),
        ("bfloat16", [1.5, -0.0, np.inf, 3e-40]),
    ],
)
def test_other_dtypes_are_the_nearest_float32(tmp_path, dtype, values):
    """float64 and wide ints are rounded to the nearest float32 (beyond its range: an infinity),
    narrow types convert exactly, bool is 0 or 1: what `np.float32(x)` gives."""
    [folder] = jhw.to_tensorboard(synthetic(dtype, values), tmp_path)
    steps, got, _ = read_events(folder).scalars["v"]
    with np.errstate(over="ignore"):
        want = np.asarray(values, ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype)
        want = want.astype(np.float32)
    np.testing.assert_array_equal(bits(got), bits(want))
    assert steps.tolist() == list(range(len(values)))


def test_a_histogram_counts_the_finite_components(tmp_path):
    """NaN and infinities are left out of a histogram (its count says how many are in); a row
    of no finite value is an empty histogram."""
    x = np.array(
        [[1, 2, np.nan, np.inf, -np.inf, 3, 3, 3, 4, 5, 6, 7], [np.nan] * 12, [2.5] * 12],
        np.float32,
    )
    tree = jax.tree_util.tree_structure(0)
    run = Run(1, Layout(("x",), ((12,),), ("float32",), tree, 3, 8, None))
    rows = RunWriter(run)
    rows.named("nan", False)
    rows.lanes(None)
    rows.append(0, 0, [x])
    rows.finish([1])
    [folder] = jhw.to_tensorboard(run, tmp_path)
    steps, [full, empty, flat] = read_events(folder).histograms["x"]
    assert steps.tolist() == [0, 1, 2]
    assert (full.min, full.max, full.num, full.sum) == (1.0, 7.0, 9.0, 34.0)
    assert sum(full.bucket) == 9 and (empty.num, sum(empty.bucket)) == (0.0, 0.0)
    assert (flat.min, flat.max, flat.num, max(flat.bucket)) == (2.5, 2.5, 12.0, 12.0)


def test_a_failing_write_is_reported_once_and_the_run_goes_on(tmp_path):
    blocked = tmp_path / "a file"
    blocked.write_text("not a directory")
    with (
        pytest.warns(RuntimeWarning, match=r"TensorBoard\.write raised") as caught,
        jhw.TensorBoard(blocked),
    ):
        final, hist = jax.jit(loop)(starts(1)[0])
    assert len([w for w in caught if "TensorBoard.write" in str(w.message)]) == 1
    assert int(hist.length) == 41 and int(final[0]) == 40  # the loop never noticed


def test_a_write_cut_short_leaves_no_half_record_and_is_tried_again(tmp_path, monkeypatch):
    tree = jax.tree_util.tree_structure(0)
    run = Run(1, Layout(("v",), ((),), ("float32",), tree, 100, 8, None))
    writer = RunWriter(run)
    writer.lanes(3)
    rows = np.arange(300, dtype=np.float32).reshape(3, 100)
    writer.append_lanes([0, 1, 2], 0, [rows[:, :40]])
    files = RunFiles(tmp_path, "cut", run)
    wall = lambda *_, steps: np.full(len(steps), 1e9)  # noqa: E731
    files.write(run, wall)
    writer.append_lanes([0, 1, 2], 40, [rows[:, 40:]])
    real, calls = os.write, []

    def full_disk(fd, data):
        calls.append(len(data))
        if len(calls) == 2:  # lane 0 written; half of lane 1's lands, then the disk is full
            real(fd, bytes(data)[: len(data) // 2])
            raise OSError(28, "No space left on device")
        return real(fd, data)

    monkeypatch.setattr(_tensorboard_files.os, "write", full_disk)
    with pytest.raises(OSError, match="No space"):
        files.write(run, wall)
    assert files.written == [100, 40, 40]
    files.write(run, wall)  # the next chunk brings the rest, and lane 0's rows only once
    for lane in range(3):
        steps, values, _ = read_events(tmp_path / "cut" / f"lane {lane}").scalars["v"]
        assert steps.tolist() == list(range(100)) and values.tolist() == rows[lane].tolist()


def test_thousands_of_lanes_each_get_their_run(tmp_path):
    lanes = 1024
    with jhw.TensorBoard(tmp_path).named("sweep"), jhw.Recorder() as rec:
        jax.jit(jax.vmap(lambda x: loop(x, steps=30)))(starts(lanes))
    run = rec.runs[-1]
    folders = sorted((tmp_path / "sweep").iterdir(), key=lambda p: int(p.name.split()[1]))
    assert [p.name for p in folders] == [f"lane {k}" for k in range(lanes)]
    sizes = {(len(p.name), sum(f.stat().st_size for f in p.iterdir())) for p in folders}
    assert len(sizes) == 4  # the same records, but for the lane's number in the texts
    for lane in (0, 517, lanes - 1):
        check_lane(read_events(folders[lane]), run.history()[lane], run.counts[lane])


KILLED = """
import sys, time, jax, jax.numpy as jnp, jaxhist_widget as jhw

class Told(jhw.TensorBoard):
    # says how many rows of the run are in the files, each time the worker has written
    def _write_notes(self):
        super()._write_notes()
        for files in list(self._files.values()):
            print(files.written[0], flush=True)

w = jnp.eye(32) * 0.999
def body(c):
    return c[0] + 1, jnp.tanh(w @ c[1]) + 1e-3
with Told(sys.argv[1], name="killed"):
    jhw.while_loop(lambda c: c[0] < 10**6, body, (jnp.int32(0), jnp.ones(32)),
                   max_steps=10**6, record=lambda c: {"i": c[0], "x0": c[1][0]})
print("finished", flush=True)
"""


@pytest.mark.slow
def test_a_process_killed_mid_run_leaves_every_written_chunk_readable(tmp_path):
    from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader

    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(KILLED), str(tmp_path)],
        stdout=subprocess.PIPE,
        text=True,
        env=CHILD_ENV,
    )
    seen = 0
    try:
        for line in proc.stdout:  # chunks written while the loop runs, then the kill lands
            assert line.strip() != "finished", "the loop ended before the kill"
            seen = int(line)
            if seen > 20_000:
                break
        proc.send_signal(signal.SIGKILL)  # while it goes on writing
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == -signal.SIGKILL and seen > 20_000
    [path] = (tmp_path / "killed").iterdir()
    with warnings.catch_warnings():
        records = list(RawEventFileLoader(str(path)).Load())  # every CRC checked
    assert sum(len(r) + 16 for r in records) == path.stat().st_size  # no torn record
    events = read_events(tmp_path / "killed")
    steps, values, _ = events.scalars["x0"]
    assert len(steps) >= seen
    np.testing.assert_array_equal(steps, np.arange(len(steps)))  # from step 0, no gap
    assert values[0] == 1.0
    [(step, text)] = events.texts  # it started, and never ended
    assert step == 0 and text.startswith("**killed**: started")
