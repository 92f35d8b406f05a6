"""Runs on disk: what a `Store` costs a run, against a `Recorder` timed in the same run, and how
its format compares with Arrow IPC on overhead, crash safety and concurrent writers.

    python benchmarks/store.py            # the full tables (a few minutes on 2 cores)
    python benchmarks/store.py --quick    # tiny sizes, to check the script runs

Sinks, each timed from entering its block to leaving it (leaving waits until every row is
filed, so deferred writing is counted), in interleaved rounds; a ratio is the median of each
round's ratio (a round's runs share the machine's load of the moment):

- ``recorder``:   `Recorder` (rows kept in memory; the baseline of the ratio);
- ``store``:      `Store` (SQLite, WAL, one commit per chunk, written on the package's worker);
- ``store-sync``: the same, but each chunk written inside the loop's host call (a sink whose
  rows cannot wait): what the worker saves;
- ``encode-only``: the store without SQLite (rows read and encoded, no statement run): what
  of the overhead is SQLite's own inserting and committing;
- ``arrow-ipc``:  an Arrow IPC stream file per run, one record batch per chunk (vector leaves as
  fixed-size binary), only where ``pyarrow`` is importable (not a dependency of this package).

Problems, all compute-bound: (a) gradient descent on least squares (A 1000x100 f32, 10^4 steps,
record loss and the 100-vector x); (b) ``x = tanh(W @ x)`` (W 256x256, 10^5 steps, record two
scalars); (c) (b) over 8 vmap lanes (2*10^4 steps each); (d) ``X = tanh(W @ X)`` on a 256x32 block
(3*10^4 steps of real work: the problem the target, store <= 1.10x recorder, is checked on).
Then the store's own CPU cost per row filed (a synthetic run, no loop).

Then: crash safety (a child killed with SIGKILL mid-run: rows it had filed, rows read back) and
two processes writing one store at once (rows written, rows read back).
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import jaxhist_widget as jhw

ROOT = Path(__file__).resolve().parents[1]

sys.path.insert(0, str(Path(__file__).resolve().parent))
from store_arrow import ArrowIPC, pa, read_arrow  # noqa: E402 (next to this script)


class SyncStore(jhw.Store):
    """A `Store` whose writes happen in the loop's host call (the loop waits for each)."""

    rows_can_wait = False


class _NoFile:
    """A connection that runs nothing: what the store pays besides SQLite."""

    lastrowid = 1

    def execute(self, *args):
        return self

    def executemany(self, *args):
        return self


class EncodeOnlyStore(jhw.Store):
    """A `Store` that does all but SQLite's part of filing rows: the worker hop, reading the
    rows and encoding them into statements' parameters, then runs no statement. Its ratio
    against ``store`` says how much of the overhead is SQLite inserting and committing."""

    def _write_rows(self, run, lanes):
        self._transaction = lambda fn: fn(_NoFile())
        try:
            super()._write_rows(run, lanes)
        finally:
            del self._transaction  # back to the class's method


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
            (jnp.int32(0), x0, jnp.float32(jnp.inf)),
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
            (jnp.int32(0), x0, jnp.float32(1.0)),
            max_steps=steps,
            record=lambda c: {"delta": c[2], "x0": c[1].ravel()[0]},
        )

    x0 = jnp.ones((256,) if width == 1 else (256, width), jnp.float32)
    if lanes is None:
        return jax.jit(solve), (x0,)
    return jax.jit(jax.vmap(solve)), (jnp.stack([x0] * lanes),)


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
    head += ["store-sync / rec", "encode-only / rec"]
    if pa is not None:
        head.append("arrow-ipc / rec")
    table, ratios = [], {}
    for label, (fn, args) in problems.items():
        jax.block_until_ready(fn(*args))  # compile
        # One store per sink kind and problem, as a user keeps one: opening the file (schema,
        # WAL) is paid once, not per run.
        store, sync = jhw.Store(folder / f"{label}.db"), SyncStore(folder / f"{label}-sync.db")
        encode = EncodeOnlyStore(folder / f"{label}-encode.db")
        sinks = {
            "recorder": jhw.Recorder,
            "store": lambda store=store: store,
            "store-sync": lambda sync=sync: sync,
            "encode-only": lambda encode=encode: encode,
        }
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
            # The median of each round's ratio: the two runs of a round share the machine's
            # load of the moment (on a shared box a run's time alone varies 2-3x).
            rs = [a / b for a, b in zip(times[name], times["recorder"], strict=True)]
            return statistics.median(rs), f"{min(rs):.2f}-{max(rs):.2f}"

        ratios[label], spread = paired("store")
        line = [
            label,
            f"{rows:,}",
            f"{med['recorder']:.3f}",
            f"{med['store']:.3f}",
            f"{ratios[label]:.2f}x ({spread})",
            f"{paired('store-sync')[0]:.2f}x",
            f"{paired('encode-only')[0]:.2f}x",
        ]
        if pa is not None:
            line.append(f"{paired('arrow-ipc')[0]:.2f}x")
        table.append(line)
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


def filing_cost(rows):
    """µs of CPU per row `Store.on_rows` takes to file chunks of a synthetic run, away from
    any loop: the store's own cost, which the overhead table sees through the machine's load."""
    from jaxhist_widget._host import Run
    from jaxhist_widget._wire import Layout

    table = []
    for label, shape in [("2 float32 scalars", ()), ("float32 scalar + 100-vector", (100,))]:
        tree = jax.tree_util.tree_structure({"a": 0, "b": 0})
        layout = Layout(("a", "b"), ((), shape), ("float32", "float32"), tree, rows, 8, None)
        run = Run(1, layout)
        run._ensure_lanes(None)
        store = jhw.Store(Path(tempfile.mkdtemp()) / "filing.db")
        store.on_start(run)
        rng, chunk, cpu = np.random.default_rng(0), rows // 20, 0.0
        for k in range(20):
            b = rng.random((chunk, *shape), np.float32)
            run.append(0, k * chunk, [rng.random(chunk, np.float32), b])
            t = time.process_time()
            store.on_rows(run, [0])
            cpu += time.process_time() - t
        table.append([label, f"{rows:,}", f"{cpu / rows * 1e6:.2f}"])
    print_table(["rows of", "rows", "CPU µs per row filed"], table)


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
base = jhw.Store if kind == "sqlite" else ArrowIPC
class Told(base):
    def on_rows(self, run, lanes):  # says how many rows were filed, once they are
        super().on_rows(run, lanes)
        print(run.counts[0], flush=True)
w = jnp.eye(64) * 0.999
def body(c):
    return c[0] + 1, jnp.tanh(w @ c[1]) + 1e-3
told = Told(where) if kind == "sqlite" else Told(Path(where))
with told:
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
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), *sys.path]),
        "JAX_PLATFORMS": "cpu",
    }


def script(body):
    return textwrap.dedent(CHILD_HEAD.format(bench=str(ROOT / "benchmarks"))) + textwrap.dedent(
        body
    )


def stored_rows(kind, where):
    if kind == "sqlite":
        return sum(sum(r.counts) for r in jhw.load_runs(where)) if Path(where).exists() else 0
    return read_arrow(Path(where))


def crash(kind, where, filed_before_kill):
    proc = subprocess.Popen(
        [sys.executable, "-c", script(KILLED), kind, str(where)],
        stdout=subprocess.PIPE,
        text=True,
        env=child_env(),
    )
    seen = 0
    for line in proc.stdout:
        seen = int(line)
        if seen >= filed_before_kill:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return seen, stored_rows(kind, where)


def concurrent(kind, where, steps, runs):
    go = Path(tempfile.mkdtemp()) / "go"
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                script(WRITER),
                kind,
                str(where),
                str(steps),
                str(runs),
                str(go),
            ],
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
    scale, repeat = (20, 2) if opts.quick else (1, 9)
    folder = Path(tempfile.mkdtemp(prefix="jhw-store-bench-"))
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(
        f"jax {jax.__version__}, {jax.devices()[0].platform}; pyarrow: "
        f"{pa.__version__ if pa is not None else 'not installed (arrow-ipc skipped)'}\n"
    )
    problems = {
        "(a) lsq, x: 100-vector": least_squares(10_000 // scale),
        "(b) tanh 256x256": tanh_steps(100_000 // scale),
        "(c) (b) x 8 lanes": tanh_steps(20_000 // scale, lanes=8),
        COMPUTE_BOUND: tanh_steps(30_000 // scale, width=32),
    }
    print("Overhead: seconds from entering the sink's block to leaving it (rows all filed)")
    ratios = overhead_table(problems, repeat, folder)
    verdict = "PASS" if ratios[COMPUTE_BOUND] <= 1.10 else "FAIL"
    if opts.quick:  # runs of milliseconds: the per-run cost of three commits dominates
        verdict = "(quick sizes, not judged)"
    print(f"{verdict} store / recorder <= 1.10 on {COMPUTE_BOUND}: {ratios[COMPUTE_BOUND]:.2f}")

    print("\nThe store's own cost: filing a synthetic run's chunks, no loop running")
    filing_cost(5_000 if opts.quick else 100_000)

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


if __name__ == "__main__":
    main()
