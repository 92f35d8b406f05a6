"""Runs on disk: what a `Store` costs a run, against a `Recorder` timed in the same run; what
reading back costs in time and memory; crash safety and concurrent writers.

    python benchmarks/store.py            # the full tables (a few minutes on 2 cores)
    python benchmarks/store.py --quick    # tiny sizes, to check the script runs

Overhead: each sink timed from entering its block to leaving it (leaving waits until every row
is filed, so the worker's filing is counted), in interleaved rounds; a ratio is the median of
each round's ratio (a round's runs share the machine's load of the moment). Problems, all
compute-bound: (a) gradient descent on least squares (A 1000x100 f32, 10^4 steps, record loss
and the 100-vector x); (b) ``x = tanh(W @ x)`` (W 256x256, 10^5 steps, two scalars); (c) (b)
over 8 vmap lanes; (d) ``X = tanh(W @ X)`` on a 256x32 block (the problem the target, store <=
1.10x recorder, is checked on); (e) a sweep of 4,096 vmap lanes recording a loss and a
4-vector (1 + 4 float32) for 300 steps. Then the store's own CPU per row and per chunk (a
synthetic run, no loop), against a numpy copy of the chunk's bytes.

Reading back: `load_runs` of 10^5 and 10^6 steps of 3 float32 scalars (seconds, and peak
memory over the values' bytes, by tracemalloc), and a 1,000-lane sweep whose lanes all went to
NaN against the same sweep finite. `benchmarks/store_format.py` compares the file layouts.

Then: crash safety (a child killed with SIGKILL mid-run: rows it had filed, rows read back) and
two processes writing one store at once. An Arrow IPC sink joins where pyarrow is importable.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import tracemalloc
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import jaxhist_widget as jhw
from jaxhist_widget import _wire
from jaxhist_widget._host import Run
from jaxhist_widget._host.runtime import RunWriter

ROOT = Path(__file__).resolve().parents[1]

sys.path.insert(0, str(Path(__file__).resolve().parent))
from store_arrow import ArrowIPC, pa, read_arrow  # noqa: E402 (next to this script)


# ------------------------------------------------------------------------- problems
def least_squares(steps):
    key_a, key_b = jax.random.split(jax.random.PRNGKey(0))
    a = jax.random.normal(key_a, (1000, 100), jnp.float32)
    b = jax.random.normal(key_b, (1000,), jnp.float32)
    lr = 1.0 / float(jnp.linalg.norm(a, 2) ** 2 / 1000)

    def body(c):
        i, x, _ = c
        r = a @ x - b
        return i + 1, x - lr * (a.T @ r) / 1000, jnp.mean(r * r)

    def solve(x0):
        return jhw.while_loop(
            lambda c: c[0] < steps,
            body,
            (jnp.int32(0), x0, jnp.float32(0)),
            max_steps=steps,
            record=lambda c: {"loss": c[2], "x": c[1]},
        )

    return jax.jit(solve), (jnp.zeros(100, jnp.float32),)


def tanh_steps(steps, lanes=None, width=1):
    """``x = tanh(W @ x)``: x a 256-vector (``width`` 1) or a 256 x ``width`` block."""
    w = jax.random.normal(jax.random.PRNGKey(1), (256, 256), jnp.float32) / 16

    def body(c):
        i, x, _ = c
        y = jnp.tanh(w @ x + 0.1)
        return i + 1, y, jnp.sum((y - x) ** 2)

    def solve(x0):
        return jhw.while_loop(
            lambda c: c[0] < steps,
            body,
            (jnp.int32(0), x0, jnp.float32(1)),
            max_steps=steps,
            record=lambda c: {"delta": c[2], "x0": c[1].ravel()[0]},
        )

    x0 = jnp.ones((256,) if width == 1 else (256, width), jnp.float32)
    if lanes is None:
        return jax.jit(solve), (x0,)
    return jax.jit(jax.vmap(solve)), (jnp.stack([x0] * lanes),)


def sweep(lanes, steps):
    """A least-squares-like sweep: per lane a rate, a 4-vector and its loss (1 + 4 float32)."""
    rates = jnp.linspace(0.001, 0.1, lanes, dtype=jnp.float32)

    def solve(rate):
        def body(c):
            i, x, _ = c
            x = x - rate * (x - jnp.arange(4.0, dtype=jnp.float32))
            return i + 1, x, jnp.sum(x * x)

        return jhw.while_loop(
            lambda c: c[0] < steps,
            body,
            (jnp.int32(0), jnp.ones(4, jnp.float32), jnp.float32(4.0)),
            max_steps=steps,
            record=lambda c: {"loss": c[2], "x": c[1]},
        )

    return jax.jit(jax.vmap(solve)), (rates,)


#: The problem the target (store <= 1.10x recorder) is checked on: a step of real work.
COMPUTE_BOUND = "(d) tanh 256x256 @ 256x32"


def timed(fn, args, sink):
    """Seconds from entering ``sink``'s block to leaving it (every row filed)."""
    t = time.perf_counter()
    with sink:
        jax.block_until_ready(fn(*args))
    return time.perf_counter() - t


def overhead_table(problems, repeat, folder):
    head = ["problem", "rows", "recorder s", "store s", "store / rec (spread)"]
    if pa is not None:
        head.append("arrow-ipc / rec")
    table, ratios = [], {}
    for label, (fn, args) in problems.items():
        jax.block_until_ready(fn(*args))  # compile
        store = jhw.Store(folder / f"{label}.db")  # one per problem, as a user keeps one
        sinks = {"recorder": jhw.Recorder, "store": lambda store=store: store}
        if pa is not None:
            (folder / label).mkdir(exist_ok=True)
            sinks["arrow-ipc"] = lambda at=folder / label: ArrowIPC(at)
        times = {name: [] for name in sinks}
        rows = 0
        for _ in range(repeat):  # interleaved: machine noise hits every sink alike
            for name, make in sinks.items():
                sink = make()
                times[name].append(timed(fn, args, sink))
                if name == "recorder":
                    rows = sum(sink.runs[-1].counts)
        med = {name: statistics.median(ts) for name, ts in times.items()}

        def paired(name, times=times):
            rs = [a / b for a, b in zip(times[name], times["recorder"], strict=True)]
            return statistics.median(rs), f"{min(rs):.2f}-{max(rs):.2f}"

        ratios[label], spread = paired("store")
        line = [
            label,
            f"{rows:,}",
            f"{med['recorder']:.3f}",
            f"{med['store']:.3f}",
            f"{ratios[label]:.2f}x ({spread})",
        ]
        if pa is not None:
            line.append(f"{paired('arrow-ipc')[0]:.2f}x")
        table.append(line)
        store.close()
    print_table(head, table)
    return ratios


def print_table(head, table):
    widths = [max(len(str(r[i])) for r in [head, *table]) for i in range(len(head))]

    def line(r):
        return "| " + " | ".join(str(c).rjust(w) for c, w in zip(r, widths, strict=True)) + " |"

    print(line(head))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in table:
        print(line(r))


def synthetic_layout(names, shapes, steps, dtype="float32"):
    """A float32 `Layout` of leaves ``names`` (flat tuple record)."""
    tree = jax.tree_util.tree_structure(tuple(0 for _ in names))
    return _wire.Layout(tuple(names), tuple(shapes), (dtype,) * len(names), tree, steps, 64, None)


# ------------------------------------------------------------------- filing cost
def filing_cost(quick):
    """CPU the store spends per row and per chunk filing a synthetic run (its hook, then the
    worker's filing), against a numpy copy of the chunk's bytes: no loop, so nothing else."""
    table = []
    cases = [
        ("1 lane, 2 float32 scalars", None, [(), ()], 200, 50),
        ("1 lane, scalar + 100-vector", None, [(), (100,)], 200, 50),
        ("4,096 lanes, (1 + 4) float32", 4096, [(), (4,)], 12, 8 if quick else 25),
    ]
    for label, lanes, shapes, per, n_chunks in cases:
        layout = synthetic_layout(["a", "b"][: len(shapes)], shapes, per * n_chunks)
        run = Run(1, layout)
        rows = RunWriter(run)  # the hub's half: it fills the run
        rows.lanes(lanes)
        store = jhw.Store(Path(tempfile.mkdtemp()) / "filing.db")
        store._start(run)
        store.flush()
        b = 1 if lanes is None else lanes
        rng = np.random.default_rng(0)
        cpu = copy = 0.0
        for k in range(n_chunks):
            part = [rng.random((b, per, *s), np.float32) for s in shapes]
            rows.append_lanes(list(range(b)), k * per, part)
            t = time.process_time()
            for x in part:
                np.copy(x)
            copy += time.process_time() - t
            t = time.process_time()
            store.on_rows(run, [])
            store.flush()
            cpu += time.process_time() - t
        store.close()
        rows = b * per * n_chunks
        table.append(
            [
                label,
                f"{rows:,}",
                f"{cpu / rows * 1e6:.3f}",
                f"{cpu / n_chunks * 1e3:.2f}",
                f"{copy / n_chunks * 1e3:.3f}",
            ]
        )
    print_table(
        ["rows of", "rows", "CPU µs / row", "CPU ms / chunk", "numpy copy ms / chunk"], table
    )


# ------------------------------------------------------------------------ reading
def stored_run(path, layout, lanes, parts, name="r"):
    with jhw.Store(path, name=name):
        from jaxhist_widget._host import HUB

        rid = int(HUB.open_run(layout)[0])
        b = 1 if lanes is None else lanes
        at = 0
        for part in parts:
            k = part[0].shape[1]
            head = [rid, -1 if lanes is None else lanes, k]
            for _ in range(b):
                head += [at, k, at, 0]
            HUB.receive_chunk(
                layout,
                np.array(head, np.int32).view(np.uint32),
                *[np.ascontiguousarray(x).reshape(-1).view(np.uint32) for x in part],
            )
            at += k
        head = [rid, -1 if lanes is None else lanes, 1] + [at, 0, at, 2] * b
        empty = [np.zeros(b * int(np.prod(s, dtype=np.int64)), np.uint32) for s in layout.shapes]
        HUB.receive_chunk(layout, np.array(head, np.int32).view(np.uint32), *empty)


def reading(quick, folder):
    rng = np.random.default_rng(0)
    table = []
    sizes = [10_000, 100_000] if quick else [100_000, 1_000_000]
    for steps in sizes:
        path = folder / f"read-{steps}.db"
        layout = synthetic_layout(["a", "b", "c"], [(), (), ()], steps)
        per = 10_000
        parts = [[rng.random((1, per), np.float32) for _ in range(3)] for _ in range(steps // per)]
        stored_run(path, layout, None, parts)
        values = steps * 3 * 4
        tracemalloc.start()
        t = time.perf_counter()
        jhw.load_runs(path)
        elapsed = time.perf_counter() - t
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        t = time.perf_counter()
        jhw.load_runs(path)  # again, untraced: tracemalloc slows allocation
        table.append(
            [
                f"1 lane x {steps:,} steps x 3 float32",
                f"{time.perf_counter() - t:.3f}",
                f"{peak / values:.2f}x",
                f"{elapsed:.3f}",
            ]
        )
    lanes, steps = (100, 200) if quick else (1000, 1000)
    times = {}
    for kind in ("finite", "NaN"):
        path = folder / f"sweep-{kind}.db"
        layout = synthetic_layout(["loss", "lr"], [(), ()], steps)
        loss = rng.random((lanes, steps), np.float32)
        if kind == "NaN":
            loss[:, 10:] = np.nan  # every lane diverged early
        parts = [
            [loss[:, k : k + 100], np.ones((lanes, 100), np.float32)] for k in range(0, steps, 100)
        ]
        stored_run(path, layout, lanes, parts)
        t = time.perf_counter()
        jhw.load_runs(path)
        times[kind] = time.perf_counter() - t
        table.append([f"{lanes:,} lanes x {steps:,} steps, {kind}", f"{times[kind]:.3f}", "", ""])
    print_table(["run read back", "load_runs s", "peak memory / values", "s (traced)"], table)
    print(f"NaN / finite: {times['NaN'] / times['finite']:.2f}x (target <= 2x)")


# -------------------------------------------------------------- crash, concurrency
CHILD_HEAD = """
import sys, os, time
import jax, jax.numpy as jnp, jaxhist_widget as jhw
sys.path.insert(0, {bench!r})
from store_arrow import ArrowIPC
from pathlib import Path
kind, where = sys.argv[1], sys.argv[2]
def sink(name):
    return jhw.Store(where, name=name) if kind == "sqlite" else ArrowIPC(Path(where))
"""

KILLED = """
w = jnp.eye(64) * 0.999
def body(c):
    return c[0] + 1, jnp.tanh(w @ c[1]) + 1e-3
with sink("killed"):
    jhw.while_loop(lambda c: c[0] < 10**7, body, (jnp.int32(0), jnp.ones(64)),
                   max_steps=10**7, record=lambda c: {"i": c[0], "x0": c[1][0]})
"""

WRITER = """
steps, runs, go = int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
loop = jax.jit(lambda k: jhw.while_loop(lambda c: c[0] < steps, lambda c: (c[0] + 1, c[1]),
               (jnp.int32(0), k), max_steps=steps, record=lambda c: {"i": c[0], "k": c[1]},
               stream_every=1))
jax.block_until_ready(loop(jnp.int32(0)))
while not os.path.exists(go):
    time.sleep(0.005)
for k in range(runs):
    with sink(f"{os.getpid()}-{k}"):
        jax.block_until_ready(loop(jnp.int32(k)))
"""


def child_env():
    path = os.pathsep.join([str(ROOT), *sys.path])
    return {**os.environ, "PYTHONPATH": path, "JAX_PLATFORMS": "cpu"}


def script(body):
    head = textwrap.dedent(CHILD_HEAD.format(bench=str(ROOT / "benchmarks")))
    return head + textwrap.dedent(body)


def stored_rows(kind, where):
    if kind == "sqlite":
        return sum(sum(r.counts) for r in jhw.load_runs(where)) if Path(where).exists() else 0
    return read_arrow(Path(where))


def filed_so_far(kind, where):
    """Rows committed so far, read as a user's other process would."""
    if kind != "sqlite":
        return read_arrow(Path(where))
    try:
        with sqlite3.connect(f"file:{where}?mode=ro", uri=True) as conn:
            row = conn.execute("SELECT rows FROM runs").fetchone()
        return sum(json.loads(row[0])) if row and row[0] else 0
    except sqlite3.Error:
        return 0


def crash(kind, where, filed_before_kill):
    proc = subprocess.Popen(
        [sys.executable, "-c", script(KILLED), kind, str(where)], env=child_env()
    )
    seen = 0
    deadline = time.monotonic() + 300
    while seen < filed_before_kill and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
        seen = filed_so_far(kind, where)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return seen, stored_rows(kind, where)


def concurrent(kind, where, steps, runs):
    go = Path(tempfile.mkdtemp()) / "go"
    args = [kind, str(where), str(steps), str(runs), str(go)]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script(WRITER), *args],
            env=child_env(),
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    time.sleep(3.0)  # both compiled and waiting
    t = time.perf_counter()
    go.touch()
    errors = [p.communicate()[1] for p in procs]
    elapsed = time.perf_counter() - t
    failed = sum("raised" in e or "Error" in e for e in errors)
    return 2 * runs * (steps + 1), stored_rows(kind, where), elapsed, failed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes (checks the script)")
    opts = parser.parse_args()
    scale, repeat = (20, 2) if opts.quick else (1, 7)
    folder = Path(tempfile.mkdtemp(prefix="jhw-store-bench-"))
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(
        f"jax {jax.__version__}, {jax.devices()[0].platform}; SQLite {sqlite3.sqlite_version}; "
        f"pyarrow: {pa.__version__ if pa is not None else 'not installed (arrow-ipc skipped)'}"
        "\n"
    )
    problems = {
        "(a) lsq, x: 100-vector": least_squares(10_000 // scale),
        "(b) tanh 256x256": tanh_steps(100_000 // scale),
        "(c) (b) x 8 lanes": tanh_steps(20_000 // scale, lanes=8),
        COMPUTE_BOUND: tanh_steps(30_000 // scale, width=32),
        "(e) 4,096 lanes x (1 + 4) f32": sweep(4096 // (16 if opts.quick else 1), 300),
    }
    print("Overhead: seconds from entering the sink's block to leaving it (rows all filed)")
    ratios = overhead_table(problems, repeat, folder)
    verdict = "PASS" if ratios[COMPUTE_BOUND] <= 1.10 else "FAIL"
    if opts.quick:  # runs of milliseconds: the per-run cost of a few commits dominates
        verdict = "(quick sizes, not judged)"
    print(f"{verdict} store / recorder <= 1.10 on {COMPUTE_BOUND}: {ratios[COMPUTE_BOUND]:.2f}")

    print("\nThe store's own cost: filing a synthetic run's chunks, no loop running")
    filing_cost(opts.quick)

    print("\nReading back")
    reading(opts.quick, folder)

    kinds = ["sqlite"] + (["arrow"] if pa is not None else [])
    print("\nCrash safety: a child killed with SIGKILL mid-run")
    table = []
    for kind in kinds:
        where = folder / ("crash.db" if kind == "sqlite" else "crash-arrow")
        if kind == "arrow":
            where.mkdir()
        seen, back = crash(kind, where, 2_000 if opts.quick else 50_000)
        table.append([kind, f"{seen:,}", f"{back:,}", "yes" if back >= seen else "NO"])
    print_table(["format", "rows filed before the kill", "rows read back", "all kept"], table)

    print("\nConcurrent writers: two processes, one store, a commit per row (stream_every=1)")
    table = []
    steps, runs = (100, 2) if opts.quick else (500, 4)
    for kind in kinds:
        where = folder / ("two.db" if kind == "sqlite" else "two-arrow")
        if kind == "arrow":
            where.mkdir()  # one file per run: Arrow IPC has no shared append
        want, back, elapsed, failed = concurrent(kind, where, steps, runs)
        table.append([kind, f"{want:,}", f"{back:,}", f"{elapsed:.2f}", failed])
    print_table(["format", "rows written", "rows read back", "wall s", "writer errors"], table)
    print("\ndone: rows read back against rows filed, above")


if __name__ == "__main__":
    main()
