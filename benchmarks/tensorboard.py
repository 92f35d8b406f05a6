"""TensorBoard event files: what the `TensorBoard` sink costs a run, against a `Recorder` timed in
the same run, and what its event-file writer costs per row against tensorboardX's.

    python benchmarks/tensorboard.py            # the full tables (a few minutes on 2 cores)
    python benchmarks/tensorboard.py --quick    # tiny sizes, to check the script runs

Sinks, each timed from entering its block to leaving it (leaving waits until every row is in
the files), in interleaved rounds; a ratio is the median of each round's ratio:

- ``recorder``:    `Recorder` (rows kept in memory; the baseline of the ratios);
- ``tensorboard``: `TensorBoard` (this package's event-file writer, on the package's worker);
- ``store``:       `Store` (SQLite), for scale: the other sink that writes every row to disk.

Problems: the store benchmark's (``benchmarks/store.py``: (a) least squares, x a 100-vector;
(b) ``x = tanh(W @ x)`` 256x256; (c) (b) over 8 vmap lanes; (d) a 256x32 block, the problem the
target, tensorboard <= 1.10x recorder, is checked on, as the store's is), then (e) a sweep of
4096 vmap lanes of a 32x32 ``tanh`` step (the many-lanes case).

Then the writer's own CPU per row (a synthetic run, no loop): this package's against
``tensorboardX.SummaryWriter`` writing the same tags (``add_scalar`` / ``add_histogram`` per row,
flushed per chunk), only where ``tensorboardX`` is importable (it is not a dependency of this
package: it is timed only to say what writing the format ourselves saves), and the bytes a row
takes in the file.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import jaxhist_widget as jhw
from jaxhist_widget._host.tensorboard._files import RunFiles, TagPlan

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import machine
from store import COMPUTE_BOUND, least_squares, print_table, tanh_steps

try:  # optional peer, for the comparison only
    from tensorboardX import SummaryWriter
except ImportError:  # pragma: no cover - depends on the environment
    SummaryWriter = None

SWEEP = "(e) sweep: 4096 lanes, tanh 32x32"


class TensorBoardXWriter:
    """One lane's rows written as `TensorBoard` writes them, through tensorboardX instead: a
    `SummaryWriter`, ``add_scalar`` per scalar tag and row, ``add_histogram`` (30 bins) per
    large leaf and row, flushed after each chunk."""

    def __init__(self, folder, run):
        self.writer, self.plan, self.done = SummaryWriter(str(folder)), TagPlan(run.layout), 0

    def write(self, run):
        scalars, hists = self.plan.values(run.rows_since(0, self.done))
        for i in range(len(scalars)):
            for tag, value in zip(self.plan.scalar_tags, scalars[i].tolist(), strict=True):
                self.writer.add_scalar(tag, value, self.done + i)
            for tag, h in zip(self.plan.histogram_tags, hists, strict=True):
                self.writer.add_histogram(tag, h[i], self.done + i, bins=30)
        self.writer.flush()
        self.done += len(scalars)


# ------------------------------------------------------------------------------ overhead
def sweep(steps, lanes):
    """4096 lanes of a small ``tanh`` step: many lanes, few flops each."""
    w = jax.random.normal(jax.random.PRNGKey(2), (32, 32), jnp.float32) / 6

    def solve(x0):
        def body(c):
            i, x, _ = c
            y = jnp.tanh(w @ x + 0.1)
            return i + 1, y, jnp.sum((y - x) ** 2)

        return jhw.while_loop(
            lambda c: c[0] < steps,
            body,
            (jnp.int32(0), x0, jnp.float32(1.0)),
            max_steps=steps,
            record=lambda c: {"delta": c[2], "x0": c[1][0]},
        )

    return jax.jit(jax.vmap(solve)), (jnp.ones((lanes, 32), jnp.float32),)


def timed(fn, args, sink):
    """Seconds from entering ``sink``'s block to leaving it (every row written)."""
    t = time.perf_counter()
    with sink:
        jax.block_until_ready(fn(*args))
    return time.perf_counter() - t


def overhead_table(problems, repeat, folder):
    head = ["problem", "rows", "recorder s", "tensorboard s", "tb / rec (spread)", "store / rec"]
    table, ratios = [], {}
    for label, (fn, args, rounds) in problems.items():
        jax.block_until_ready(fn(*args))  # compile
        store = jhw.Store(folder / f"{label}.db")
        sinks = {
            "recorder": jhw.Recorder,
            "tensorboard": lambda label=label: jhw.TensorBoard(folder / "tb" / label),
            "store": lambda store=store: store,
        }
        times = {name: [] for name in sinks}
        rows = 0
        for _ in range(min(repeat, rounds)):  # interleaved: noise hits every sink alike
            for name, make in sinks.items():
                sink = make()
                times[name].append(timed(fn, args, sink))
                if name == "recorder":
                    rows = sum(sink.runs[-1].counts)

        def paired(name, times=times):
            # The median of each round's ratio: a round's runs share the machine's load.
            rs = [a / b for a, b in zip(times[name], times["recorder"], strict=True)]
            return statistics.median(rs), f"{min(rs):.2f}-{max(rs):.2f}"

        ratios[label], spread = paired("tensorboard")
        line = [
            label,
            f"{rows:,}",
            f"{statistics.median(times['recorder']):.3f}",
            f"{statistics.median(times['tensorboard']):.3f}",
            f"{ratios[label]:.2f}x ({spread})",
            f"{paired('store')[0]:.2f}x",
        ]
        table.append(line)
    print_table(head, table)
    return ratios


# --------------------------------------------------------------------------- writer cost
def synthetic_run(shape, lanes, rows):
    """A run of ``lanes`` and the writer that fills it (the hub's half)."""
    from jaxhist_widget._host import Run
    from jaxhist_widget._host.runtime import RunWriter
    from jaxhist_widget._wire import Layout

    tree = jax.tree_util.tree_structure({"a": 0, "b": 0})
    layout = Layout(("a", "b"), ((), shape), ("float32", "float32"), tree, rows, 8, None)
    filled = RunWriter(Run(1, layout))
    filled.lanes(lanes)
    return filled


def writer_cost(rows):
    """CPU µs per row to write a synthetic run's chunks as event files (no loop running)."""
    cases = [
        ("2 float32 scalars", (), None),
        ("2 float32 scalars", (), 256),
        ("scalar + 100-vector (histogram)", (100,), None),
    ]
    table = []
    for label, shape, lanes in cases:
        n = 1 if lanes is None else lanes
        per_lane = max(rows // n, 40)
        chunk = per_lane // 20
        rng = np.random.default_rng(0)
        chunks = [
            [rng.random((n, chunk), np.float32), rng.random((n, chunk, *shape), np.float32)]
            for _ in range(20)
        ]
        cpu, size = {}, {}
        for writer in ["jaxhist_widget", "tensorboardX"]:
            if writer == "tensorboardX" and (SummaryWriter is None or n > 1):
                continue
            filled, folder = synthetic_run(shape, lanes, per_lane), Path(tempfile.mkdtemp())
            run = filled.run
            if writer == "tensorboardX":
                tbx = TensorBoardXWriter(folder, run)
                write = lambda run=run, tbx=tbx: tbx.write(run)  # noqa: E731
            else:
                files = RunFiles(folder, "bench", run)
                write = lambda run=run, files=files: files.write(  # noqa: E731
                    run, lambda *_, steps: np.full(len(steps), 1e9)
                )
            t = time.process_time()
            for k, leaves in enumerate(chunks):
                filled.append_lanes(list(range(n)), k * chunk, leaves)
                write()
            cpu[writer] = (time.process_time() - t) / (n * chunk * 20) * 1e6
            size[writer] = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
            size[writer] /= n * chunk * 20
        lanes_text = "1" if lanes is None else f"{lanes} (vmap)"
        peer = f"{cpu['tensorboardX']:.2f}" if "tensorboardX" in cpu else "-"
        table.append(
            [
                label,
                lanes_text,
                f"{n * chunk * 20:,}",
                f"{cpu['jaxhist_widget']:.2f}",
                peer,
                f"{size['jaxhist_widget']:.0f}",
            ]
        )
    head = ["rows of", "lanes", "rows", "µs/row (ours)", "µs/row (tensorboardX)", "bytes/row"]
    print_table(head, table)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes (checks the script)")
    parser.add_argument("--repeat", type=int, help="rounds per problem (default 7; quick: 2)")
    parser.add_argument("--only", default="", help="only the problems whose label holds this")
    opts = parser.parse_args()
    scale, repeat = (20, 2) if opts.quick else (1, 7)
    repeat = opts.repeat or repeat
    folder = Path(tempfile.mkdtemp(prefix="jhw-tensorboard-bench-"))
    tbx = SummaryWriter is not None
    print(machine())
    print(
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; tensorboardX: "
        f"{__import__('tensorboardX').__version__ if tbx else 'not installed (skipped)'}\n"
    )
    problems = {  # label: (fn, args, rounds at most)
        "(a) lsq, x: 100-vector": (*least_squares(10_000 // scale), repeat),
        "(b) tanh 256x256": (*tanh_steps(100_000 // scale), repeat),
        "(c) (b) x 8 lanes": (*tanh_steps(20_000 // scale, lanes=8), repeat),
        COMPUTE_BOUND: (*tanh_steps(30_000 // scale, width=32), repeat),
        SWEEP: (*sweep(2_000 // scale, 4096 // (16 if opts.quick else 1)), 3),
    }
    problems = {k: v for k, v in problems.items() if opts.only in k}
    print("Overhead: seconds from entering the sink's block to leaving it (rows all written)")
    ratios = overhead_table(problems, repeat, folder)
    if COMPUTE_BOUND in ratios:
        verdict = "PASS" if ratios[COMPUTE_BOUND] <= 1.10 else "FAIL"
        if opts.quick:
            verdict = "(quick sizes, not judged)"
        ratio = ratios[COMPUTE_BOUND]
        print(f"{verdict} tensorboard / recorder <= 1.10 on {COMPUTE_BOUND}: {ratio:.2f}")

    if not opts.only:
        print("\nThe writer's own cost: a synthetic run's 20 chunks written, no loop running")
        writer_cost(2_000 if opts.quick else 200_000)


if __name__ == "__main__":
    main()
