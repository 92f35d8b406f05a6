"""Vectors and paths on a long run: what one `LivePlot` update costs after n rows.

    python benchmarks/vectors.py            # the full table (about a minute on 2 cores)
    python benchmarks/vectors.py --quick    # tiny sizes, to check the script runs

In process (no kernel, no JAX loop: rows appended to a `Run` by hand, as the hub files them), the
median cost of one update (1000 new rows) after a run of 10^3 .. 10^6 rows, for one field drawn
each way a vector can be: three scalars (the baseline, what `benchmarks/liveview.py` measures),
10 components as lines, 50 components as a band, 50 as a heatmap, and a 2-D path; and the same
update of 64 vmap lanes. "work" counts the values reduced and buckets touched (what the unit
tests bound). The target: an update costs the new rows and the point budget, not the length of
the run (cost at 10^6 rows / cost at 10^3 rows <= 2), and no widget message exceeds 64 KB.
"""

from __future__ import annotations

import json
import statistics
import time

import numpy as np

# The scripts' shared helpers sit beside them (a script's own folder is on its path).
from _bench import arguments, machine, print_table, rounds

from jaxhist_widget.ui.plot import LivePlot

KB = 1024
GROWTH = 2.0
#: Each case: a name, the record's leaves (name -> shape) and the LivePlot options.
CASES = [
    ("3 scalars", {"a": (), "b": (), "c": ()}, {}),
    ("10 components, lines", {"v": (10,)}, {}),
    ("50 components, band", {"v": (50,)}, {}),
    ("50 components, heatmap", {"v": (50,)}, {"vectors": "heatmap"}),
    ("2-D path", {"xy": (2,)}, {"paths": ["xy"], "fields": ["xy[0]"]}),
]


def fake_run(leaves: dict[str, tuple[int, ...]], lanes: int | None):
    """The writer of a `Run` of float32 ``leaves``, to fill it by hand (its ``.run``: the
    live view only reads rows from it)."""
    import jax

    from jaxhist_widget._host import Run
    from jaxhist_widget._host.runtime import RunWriter
    from jaxhist_widget._wire import Layout

    names = tuple(leaves)
    treedef = jax.tree_util.tree_structure(dict.fromkeys(names, 0))
    shapes = tuple(leaves.values())
    layout = Layout(names, shapes, ("<f4",) * len(names), treedef, 10**7, 1024, None)
    rows = RunWriter(Run(1, layout))  # the hub's half: it fills the run
    rows.lanes(lanes)
    return rows


def append(rows, lanes: int, start: int, n: int, rng: np.random.Generator) -> None:
    """Rows ``start ..`` of every lane: values that shrink and wander, per component."""
    t = np.arange(start, start + n)[:, None]
    for lane in range(lanes):
        leaves = []
        for shape in rows.run.layout.shapes:
            size = int(np.prod(shape))
            k = np.arange(size)[None, :]
            rate = 2e5 * (1 + k / max(size, 1))
            values = np.exp(-t / rate) * (1 + 0.1 * rng.standard_normal((n, size))) + 0.01 * k
            if shape == (2,):  # a path: a slowing spiral
                r = np.exp(-t[:, 0] / 3e5)
                values = np.stack([r * np.cos(t[:, 0] / 500), r * np.sin(t[:, 0] / 500)], 1)
            leaves.append(values.reshape(n, *shape).astype(np.float32))
        rows.append(lane, start, leaves)


def work(live: LivePlot) -> int:
    """Values reduced and buckets touched so far by ``live``'s updates (`PlotDrawing.work`)."""
    return live.drawing().work


def largest_message(live: LivePlot) -> int:
    """Bytes of the largest widget state a chart of ``live`` holds: JSON plus binary buffers."""
    from ipywidgets.widgets.widget import _remove_buffers

    widgets = [m for f in live.figures for m in f.marks]
    widgets += [m.image for m in widgets if hasattr(m, "image")]
    sizes = []
    for w in widgets:
        state, _, buffers = _remove_buffers(w.get_state())
        sizes.append(len(json.dumps(state)) + sum(memoryview(b).nbytes for b in buffers))
    return max(sizes)


def update_cost(case, n: int, lanes: int | None, repeat: int) -> tuple[float, float, int]:
    """(ms per update, work per update, largest message bytes) after ``n`` rows."""
    _, leaves, options = case
    rng = np.random.default_rng(0)
    filled = fake_run(leaves, lanes)
    run = filled.run
    live = LivePlot(**options)
    live.on_start(run)
    b, done = lanes or 1, 0
    while done < n:  # arrive in chunks, updating now and then, as a run does
        k = min(65_536 // b, n - done)
        append(filled, b, done, k, rng)
        done += k
        live.refresh()
    times, works = [], []
    for _ in range(repeat):
        append(filled, b, done, 1000, rng)
        done += 1000
        w = work(live)
        t = time.perf_counter()
        live.refresh()
        times.append(time.perf_counter() - t)
        works.append(work(live) - w)
    assert live.panel.status == "running", live.panel.error
    return 1e3 * statistics.median(times), statistics.median(works), largest_message(live)


def main() -> None:
    args = arguments(__doc__).parse_args()
    sizes = [1_000, 10_000] if args.quick else [1_000, 10_000, 100_000, 1_000_000]
    repeat = 3 if args.quick else rounds(args.budget, 2.0, default=15, low=3)
    print(machine())
    lane_rows = 2_000 if args.quick else 20_000
    print("one update (1000 new rows per lane) after a run of n rows, in process, ms (work)")
    head = ["field drawn as", *(f"{n:,} rows" for n in sizes), f"64 lanes, {lane_rows:,}"]
    table, checks = [], []
    for case in CASES:
        row, costs, works, biggest = [case[0]], [], [], 0
        for n in sizes:
            ms, reduced, message = update_cost(case, n, None, repeat)
            costs.append(ms)
            works.append(reduced)
            biggest = max(biggest, message)
            row.append(f"{ms:.2f} ({reduced:,.0f})")
        ms, reduced, message = update_cost(case, lane_rows, 64, max(2, repeat // 5))
        biggest = max(biggest, message)
        row.append(f"{ms:.1f} ({reduced:,.0f})")
        table.append(row)
        growth, work_growth = costs[-1] / costs[0], works[-1] / works[0]
        checks.append(
            (
                f"{case[0]}: cost at {sizes[-1]:,} rows / at {sizes[0]:,} rows <= {GROWTH}: "
                f"{growth:.2f} (work {work_growth:.2f}); largest message {biggest:,} B",
                growth <= GROWTH and work_growth <= GROWTH and biggest <= 64 * KB,
            )
        )
    print_table(head, table)
    print()
    for text, ok in checks:
        print(("PASS " if ok else "MISS ") + text)


if __name__ == "__main__":
    main()
