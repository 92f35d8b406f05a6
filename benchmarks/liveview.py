"""The live view on a long run: update rate, update cost, message size, and what it costs the run.

    python benchmarks/liveview.py            # the full tables (about two minutes on 2 cores)
    python benchmarks/liveview.py --quick    # tiny sizes, to check the script runs
    python benchmarks/liveview.py --smoothing 0.6   # the same with every line smoothed

1. In process: the cost of one `LivePlot` update (1000 new rows of three scalar fields) after a
   run of 10^3 .. 10^6 rows, the values it reduced (`MinMaxBuckets.work`), and what re-decimating
   the whole history each update (the previous design) costs at that length. Also the size of
   one update of a 64-lane mark (the largest message a LivePlot sends).
2. In a real Jupyter kernel (this interpreter's ipykernel via `jupyter_client`, no frontend: the
   kernel publishes every widget message on iopub whether or not a view listens): a 10^6-step
   run of ``x = tanh(A @ x + 0.1)`` (A 256x256) recording three scalars, with a `LivePlot`
   displayed, interleaved with the same run with a `Recorder`. Counted from iopub: panel updates
   per second over the run and in the busiest second, the largest widget message (JSON plus
   binary buffers); timed in the kernel: each update's cost early and late in the run, and the
   wall time of each run.

The targets (issue 14) are checked on the numbers printed and reported as PASS / MISS lines.
"""

from __future__ import annotations

import argparse
import json
import queue
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _bench import print_table  # the same table as the other benchmarks

from jaxhist_widget.ui.plot import MAX_LANES, LivePlot
from jaxhist_widget.ui.reduce import minmax_decimate
from jaxhist_widget.ui.series import DEFAULT_POINTS

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.helpers.kernels import (
    start_kernel,  # the tests' kernel (the repository root is on the path)
)

KB = 1024
#: The `LivePlot(smoothing=...)` of every plot measured (``--smoothing``; 0: off).
SMOOTHING = 0.0
TARGETS = {"rate": 10.0, "busiest": 25, "message": 64 * KB, "wall": 1.10, "growth": 2.0}


# ----------------------------------------------------------------------------- in process
def fake_run(lanes: int | None, fields: int):
    """The writer of a `Run` of ``fields`` float32 scalars, to fill it by hand (no JAX; its
    ``.run``: the live view only reads rows from it)."""
    import jax

    from jaxhist_widget._host import Run
    from jaxhist_widget._host.runtime import RunWriter
    from jaxhist_widget._wire import Layout

    names = tuple(f"f{k}" for k in range(fields))
    treedef = jax.tree_util.tree_structure(dict.fromkeys(names, 0))
    layout = Layout(names, ((),) * fields, ("<f4",) * fields, treedef, 10**7, 1024, None)
    rows = RunWriter(Run(1, layout))  # the hub's half: it fills the run
    rows.lanes(lanes)
    return rows


def append(rows, lanes: int, start: int, n: int, rng: np.random.Generator) -> None:
    steps = np.arange(start, start + n)
    for lane in range(lanes):
        leaves = [
            (np.exp(-steps / 2e5) * (1 + 0.1 * rng.standard_normal(n)) + k).astype(np.float32)
            for k in range(len(rows.run.layout.names))
        ]
        rows.append(lane, start, leaves)


def work(live: LivePlot) -> int:
    """Values reduced and buckets touched so far by ``live``'s updates (`PlotDrawing.work`)."""
    return live.drawing().work


def update_cost(n: int, repeat: int) -> tuple[float, float, float]:
    """(ms per update, values reduced per update, ms to re-decimate everything) after n rows."""
    rng = np.random.default_rng(0)
    filled = fake_run(None, 3)
    run = filled.run
    live = LivePlot(smoothing=SMOOTHING)
    live.on_start(run)
    done = 0
    while done < n:  # arrive in chunks, updating now and then, as a run does
        k = min(65_536, n - done)
        append(filled, 1, done, k, rng)
        done += k
        live.refresh()
    times, works = [], []
    for _ in range(repeat):
        append(filled, 1, done, 1000, rng)
        done += 1000
        w = work(live)
        t = time.perf_counter()
        live.refresh()
        times.append(time.perf_counter() - t)
        works.append(work(live) - w)
    y = run.lane_rows(0)[0].astype(np.float64)
    t = time.perf_counter()
    for _ in range(3):  # the previous design: every field's whole history, every update
        minmax_decimate(np.arange(y.size), y, DEFAULT_POINTS)  # a line's points by default
    full = time.perf_counter() - t
    return 1e3 * statistics.median(times), statistics.median(works), 1e3 * full


def message_bytes(widget) -> int:
    """Bytes of the message that sends ``widget``'s whole state: JSON plus binary buffers."""
    from ipywidgets.widgets.widget import _remove_buffers

    state, _, buffers = _remove_buffers(widget.get_state())
    return len(json.dumps(state)) + sum(memoryview(b).nbytes for b in buffers)


def widest_message(lanes: int, rows: int) -> int:
    rng = np.random.default_rng(1)
    filled = fake_run(lanes, 2)
    run = filled.run
    live = LivePlot(smoothing=SMOOTHING)
    live.on_start(run)
    append(filled, lanes, 0, rows, rng)
    live.refresh()
    return max(message_bytes(m) for f in live.figures for m in f.marks)


def in_process(sizes: list[int], repeat: int) -> list[tuple[str, bool]]:
    print("1. one update (1000 new rows, 3 scalar fields) after a run of n rows, in process")
    head = ["rows n", "update ms", "work (values + buckets)", "re-decimate all ms (before)"]
    table, costs, works = [], [], []
    for n in sizes:
        ms, reduced, full = update_cost(n, repeat)
        costs.append(ms)
        works.append(reduced)
        table.append([f"{n:,}", f"{ms:.2f}", f"{reduced:,.0f}", f"{full:.1f}"])
    print_table(head, table)
    big = widest_message(MAX_LANES, 20_000)
    print(f"largest mark message, {MAX_LANES} lanes x 20,000 rows: {big:,} bytes")
    print()
    growth, work_growth = costs[-1] / costs[0], works[-1] / works[0]
    return [
        (
            f"update cost at {sizes[-1]:,} rows / at {sizes[0]:,} rows <= {TARGETS['growth']}: "
            f"{growth:.2f} (work {work_growth:.2f})",
            growth <= TARGETS["growth"] and work_growth <= TARGETS["growth"],
        ),
        (f"{MAX_LANES}-lane mark message <= 64 KB: {big:,} B", big <= TARGETS["message"]),
    ]


# --------------------------------------------------------------------------------- kernel
SETUP = """
import json, time
import numpy as np
import jax, jax.numpy as jnp
import jaxhist_widget as jhw
from IPython.display import display

STEPS = {steps}
A = jnp.asarray(np.random.default_rng(0).standard_normal((256, 256)) / 16, jnp.float32)

def body(c):
    i, x = c
    return i + 1, jnp.tanh(A @ x + 0.1)

def record(c):
    i, x = c
    return {{"loss": jnp.sum(x * x), "peak": jnp.abs(x).max(), "x0": x[0]}}

solve = jax.jit(lambda x: jhw.while_loop(
    lambda c: c[0] < STEPS, body, (0, x), max_steps=STEPS, record=record))
x0 = jnp.ones(256)
with jhw.Recorder():  # compile and warm up
    jax.block_until_ready(solve(x0))
"""

MEASURE = """
def timed(kind, rep):
    if kind == "liveplot":
        sink = jhw.LivePlot(title=f"rep {{rep}}", smoothing={smoothing})
        display(sink)
        costs = []
        real = sink._updates.push
        def push_now(ended=None):
            t = time.perf_counter()
            real(ended)
            cost = time.perf_counter() - t
            runs = sink.runs
            step = max(runs[-1].counts) if runs and runs[-1].counts else 0
            costs.append((step, cost))
        sink._updates.push = push_now
    else:
        sink, costs = jhw.Recorder(), []
    print("START", kind, rep, flush=True)
    t = time.perf_counter()
    with sink:
        jax.block_until_ready(solve(x0))
    wall = time.perf_counter() - t
    print("END", kind, rep, flush=True)
    print("RESULT", json.dumps({{"kind": kind, "rep": rep, "wall": wall, "costs": costs}}),
          flush=True)
    if kind == "liveplot":
        for figure in sink.figures:
            figure.close()
        sink.panel.close()

for rep in range({reps}):
    for kind in (("recorder", "liveplot") if rep % 2 == 0 else ("liveplot", "recorder")):
        timed(kind, rep)
"""


def execute(kc, code: str, timeout: float) -> list[dict]:
    """Run ``code``; return every iopub message it caused (raises on an error)."""
    msg_id = kc.execute(code)
    messages, deadline = [], time.monotonic() + timeout
    while True:
        if time.monotonic() > deadline:
            raise TimeoutError("the benchmark cell did not finish")
        try:
            msg = kc.get_iopub_msg(timeout=1)
        except queue.Empty:
            continue
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        messages.append(msg)
        if msg["msg_type"] == "error":
            raise RuntimeError("\n".join(msg["content"]["traceback"]))
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return messages


def stamp(msg: dict) -> float:
    import datetime as dt

    d = msg["header"]["date"]
    return (dt.datetime.fromisoformat(d) if isinstance(d, str) else d).timestamp()


def size(msg: dict) -> int:
    buffers = msg.get("buffers") or []
    return len(json.dumps(msg["content"])) + sum(memoryview(b).nbytes for b in buffers)


def analyse(messages: list[dict], steps: int) -> dict:
    """Per LivePlot run: panel updates (kernel times) and message sizes between START and END."""
    panels: set[str] = set()
    marks: set[str] = set()
    windows: dict[tuple[str, int], list[float]] = {}
    results = []
    events: list[tuple[float, str, dict]] = []
    for msg in messages:
        kind, content = msg["msg_type"], msg["content"]
        if kind == "comm_open":
            state = content.get("data", {}).get("state", {})
            if "stop_clicks" in state:
                panels.add(content["comm_id"])
            if state.get("_model_name") == "LinesModel":
                marks.add(content["comm_id"])
        elif kind == "stream":
            for line in content["text"].splitlines():
                word, *rest = line.split(" ", 1)
                if word in ("START", "END"):
                    k, rep = rest[0].split()
                    windows.setdefault((k, int(rep)), []).append(stamp(msg))
                elif word == "RESULT":
                    results.append(json.loads(rest[0]))
        elif kind == "comm_msg":
            events.append((stamp(msg), content["comm_id"], msg))
    out = {"walls": {"liveplot": [], "recorder": []}, "runs": []}
    for r in results:
        out["walls"][r["kind"]].append(r["wall"])
        if r["kind"] != "liveplot":
            continue
        t0, t1 = windows[("liveplot", r["rep"])]
        inside = [(t, c, m) for t, c, m in events if t0 <= t <= t1 + 0.5]
        updates = sorted(
            t
            for t, c, m in inside
            if c in panels and "step" in m["content"]["data"].get("state", {})
        )
        busiest = max((sum(1 for u in updates if a <= u < a + 1.0) for a in updates), default=0)
        costs = r["costs"]
        early = [c for s, c in costs if s <= 0.1 * steps] or [costs[0][1]]
        late = [c for s, c in costs if s >= 0.9 * steps] or [costs[-1][1]]
        sizes = [size(m) for _, c, m in inside]
        mark_sizes = [size(m) for _, c, m in inside if c in marks]
        out["runs"].append(
            {
                "updates": len(updates),
                "rate": (len(updates) - 1) / (t1 - t0) if len(updates) > 1 else 0.0,
                "busiest": busiest,
                "early_ms": 1e3 * statistics.median(early),
                "late_ms": 1e3 * statistics.median(late),
                "largest": max(sizes, default=0),
                "largest_mark": max(mark_sizes, default=0),
                "messages": len(inside),
                "bytes": sum(sizes),
                "seconds": t1 - t0,
            }
        )
    return out


def in_kernel(steps: int, reps: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        km, kc = start_kernel(Path(tmp), ready_timeout=120)
        try:
            execute(kc, SETUP.format(steps=steps), timeout=600)
            measure = MEASURE.format(reps=reps, smoothing=SMOOTHING)
            messages = execute(kc, measure, timeout=1800)
        finally:
            kc.stop_channels()
            km.shutdown_kernel(now=True)
    return analyse(messages, steps)


def report(res: dict, steps: int) -> list[tuple[str, bool]]:
    print(
        f"2. a {steps:,}-step run (tanh(A @ x), A 256x256, 3 scalar fields) in a real kernel, "
        f"LivePlot vs Recorder interleaved"
    )
    head = [
        "run",
        "seconds",
        "updates",
        "updates/s",
        "busiest 1 s",
        "update ms early",
        "update ms late",
        "largest msg B",
        "messages",
        "KB sent",
    ]
    table = []
    for k, r in enumerate(res["runs"]):
        table.append(
            [
                f"LivePlot {k + 1}",
                f"{r['seconds']:.2f}",
                r["updates"],
                f"{r['rate']:.1f}",
                r["busiest"],
                f"{r['early_ms']:.2f}",
                f"{r['late_ms']:.2f}",
                f"{r['largest']:,}",
                r["messages"],
                f"{r['bytes'] / KB:,.0f}",
            ]
        )
    print_table(head, table)
    live, rec = res["walls"]["liveplot"], res["walls"]["recorder"]
    ratio = statistics.median(live) / statistics.median(rec)
    print(
        "wall s, LivePlot: "
        + ", ".join(f"{t:.2f}" for t in live)
        + " | Recorder: "
        + ", ".join(f"{t:.2f}" for t in rec)
        + f" | median ratio {ratio:.3f}"
    )
    runs = res["runs"]
    rates = [r["rate"] for r in runs]
    rate, worst = statistics.median(rates), min(rates)
    busiest = max(r["busiest"] for r in runs)
    largest = max(r["largest"] for r in runs)
    return [
        (
            f"updates/s over the whole run >= {TARGETS['rate']:.0f}: {rate:.1f} "
            f"(median of {len(runs)} runs; slowest run {worst:.1f})",
            rate >= 10,
        ),
        (f"updates in the busiest second <= {TARGETS['busiest']}: {busiest}", busiest <= 25),
        (f"largest message <= 64 KB: {largest:,} B", largest <= TARGETS["message"]),
        (f"wall LivePlot / Recorder <= {TARGETS['wall']}: {ratio:.3f}", ratio <= 1.10),
    ]


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="tiny sizes, to check the script runs")
    p.add_argument("--reps", type=int, default=None, help="kernel runs per sink (default 3)")
    p.add_argument(
        "--smoothing", type=float, default=0.0, help="LivePlot(smoothing=...) weight (0: off)"
    )
    args = p.parse_args(argv)
    global SMOOTHING
    SMOOTHING = args.smoothing
    if SMOOTHING:
        print(f"every LivePlot smoothed, weight {SMOOTHING}")
    if args.quick:
        sizes, repeat, steps, reps = [1_000, 10_000], 3, 200_000, 1
    else:
        sizes, repeat, steps, reps = [1_000, 10_000, 100_000, 1_000_000], 20, 1_000_000, 3
    reps = args.reps or reps
    checks = in_process(sizes, repeat)
    checks += report(in_kernel(steps, reps), steps)
    print()
    for text, ok in checks:
        print(("PASS " if ok else "MISS ") + text)
    if args.quick:
        print("(--quick: a short run; the targets apply to the full run)")


if __name__ == "__main__":
    main()
