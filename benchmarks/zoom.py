"""The zoom on a long run: what applying a zoom costs, and what an update costs while zoomed.

    python benchmarks/zoom.py            # runs of up to 10^6 rows, 3 scalar fields
    python benchmarks/zoom.py --quick    # tiny sizes, to check the script runs

1. Applying a zoom of w steps (`live.step_range = (lo, lo + w)`) to a finished run of n rows:
   its lines drawn afresh from the rows of those steps (every point while w <= max_points),
   O(w) whatever n. Measured beside, in the same run: the same plot's "last w steps" window
   (the same machinery) and zooming back out (the whole-run lines).
2. One update (1000 new rows) of a live run of n rows: not zoomed; zoomed into steps the run
   has passed (nothing in the range changed: no line is drawn again); zoomed onto the steps
   the new rows arrive in (the range drawn afresh).

Medians of repeats; the machine is shared, so read the ratios, not the absolute times.
"""

from __future__ import annotations

import statistics
import time

import numpy as np

# The scripts' shared helpers sit beside them (a script's own folder is on its path).
from _bench import arguments, machine, print_table, rounds
from liveview import append, fake_run  # the live view benchmark's hand-filled runs

from jaxhist_widget.ui.plot import LivePlot


def filled(n: int) -> tuple[LivePlot, object]:
    """A plot drawing a run of ``n`` rows of three fields, fed in chunks as a run arrives, and
    the run's writer (to append more)."""
    rng = np.random.default_rng(0)
    run = fake_run(None, 3)
    live = LivePlot()
    live.on_start(run.run)
    done = 0
    while done < n:
        k = min(65_536, n - done)
        append(run, 1, done, k, rng)
        done += k
        live.refresh()
    return live, run


def median_ms(fn, repeat: int) -> float:
    times = []
    for k in range(repeat):
        t = time.perf_counter()
        fn(k)
        times.append(time.perf_counter() - t)
    return 1e3 * statistics.median(times)


def apply_ms(live: LivePlot, lo: int, w: int, repeat: int) -> tuple[float, float, float]:
    """ms to zoom to ``w`` steps from ``lo``, to show the last ``w`` steps, to zoom out."""

    def zoom(k: int) -> None:  # one step apart each time, so every set is a change
        live.step_range = (lo + k % 2, lo + w + k % 2)

    def window(k: int) -> None:
        live.last_steps = w + k % 2

    def out(k: int) -> None:
        live.step_range = None

    zoom_ms = median_ms(zoom, repeat)
    live.step_range = None
    window_ms = median_ms(window, repeat)
    live.last_steps = 0
    outs = []
    for k in range(repeat):
        zoom(k)
        outs.append(median_ms(out, 1))
    return zoom_ms, window_ms, statistics.median(outs)


def apply_costs(sizes: list[int], widths: list[int], repeat: int) -> None:
    print("1. applying a zoom of w steps to a finished run of n rows (3 fields), ms")
    head = ["rows n", "w", "zoom", "last w steps", "zoom out", "zoom / last w"]
    table = []
    for n in sizes:
        live, _ = filled(n)
        for w in [w for w in widths if w <= n]:
            zoom_ms, window_ms, out_ms = apply_ms(live, (n - w) // 2, w, repeat)
            table.append([f"{n:,}", f"{w:,}", f"{zoom_ms:.2f}", f"{window_ms:.2f}"])
            table[-1] += [f"{out_ms:.2f}", f"{zoom_ms / window_ms:.2f}"]
    print_table(head, table)
    print()


def update_ms(n: int, mode: str, repeat: int) -> float:
    """ms per update (1000 new rows) after ``n`` rows: ``mode`` "none" (not zoomed), "past"
    (zoomed into steps the run has passed) or "new" (onto the steps the new rows fall in)."""
    rng = np.random.default_rng(1)
    live, run = filled(n)
    if mode == "past":
        live.step_range = (n // 4, n // 4 + 1000)
    elif mode == "new":
        live.step_range = (n, n + 1000 * repeat)

    def update(k: int) -> None:
        append(run, 1, n + 1000 * k, 1000, rng)
        live.refresh()

    return median_ms(update, repeat)


def update_costs(sizes: list[int], repeat: int) -> None:
    print("2. one update (1000 new rows) of a live run of n rows, ms")
    head = ["rows n", "not zoomed", "zoomed into the past", "zoomed onto new rows", "past / not"]
    table = []
    for n in sizes:
        costs = [update_ms(n, mode, repeat) for mode in ("none", "past", "new")]
        table.append([f"{n:,}", *(f"{c:.2f}" for c in costs), f"{costs[1] / costs[0]:.2f}"])
    print_table(head, table)
    print()


def main(argv: list[str] | None = None) -> None:
    args = arguments(__doc__).parse_args(argv)
    print(machine())
    if args.quick:
        sizes, widths, repeat = [10_000], [1000], 3
    else:
        sizes, widths = [10_000, 1_000_000], [1000, 100_000, 1_000_000]
        repeat = rounds(args.budget, 3.0, default=9, low=3)
    apply_costs(sizes, widths, repeat)
    update_costs(sizes, repeat)
    print("a zoom draws the rows of its steps only: its cost follows w, not n")
    if args.quick:
        print("(--quick: tiny sizes; read the full run's numbers)")


if __name__ == "__main__":
    main()
