"""The static picture's budget: its size and its redraw at a run end, as runs are kept.

    python benchmarks/picture.py            # sweeps of up to 200 kept runs, in a real kernel too
    python benchmarks/picture.py --quick    # tiny sizes, to check the script runs

A `LivePlot`'s output carries a static SVG picture (what a reader without the kernel sees),
redrawn at every run end and saved in the notebook. Its budget (issue 31): at most ~200 kB
whatever the runs, lanes or components, and a redraw at a run end within ~20 ms after 200 kept
runs. Measured here:

1. In this process: runs of 1,000 steps and 3 fields fed to a ``keep_runs=True`` plot; after
   1, 50 and 200 runs, the picture's size and the time to copy and draw it (``picture``);
   beside them one run of twelve 10-component vectors and one run of 512 lanes.
2. In a real kernel (``jupyter_client``): the same sweep with the plot displayed, then one
   run end's redraw as the plot does it (`Outputs.update`: the picture copied, drawn and sent
   as an ``update_display_data`` message).

Medians of repeats; the machine is shared, so read the sizes and the orders of magnitude.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import numpy as np

# The scripts' shared helpers sit beside them (a script's own folder is on its path).
from _bench import arguments, machine, print_table

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' synthetic runs
import jaxhist_widget as jhw
from tests.helpers.synthetic import feed

BUDGET_KB, BUDGET_MS = 200, 20.0


def median_ms(fn, repeat: int = 7) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def measure(live: jhw.LivePlot) -> tuple[int, float]:
    """The picture's size (kB) and the median time to copy and draw it (ms)."""
    svg = live._outputs.picture()["image/svg+xml"]
    return len(svg.encode()) // 1000, median_ms(live._outputs.picture)


def in_process(counts: list[int], steps: int) -> list[list[object]]:
    rows = []
    rng = np.random.default_rng(0)
    live = jhw.LivePlot(keep_runs=True)
    for n in range(1, counts[-1] + 1):
        feed(live, {k: np.cumsum(rng.normal(size=steps + 1)) for k in "abc"}, max_steps=steps)
        if n in counts:
            rows.append([f"{n} kept run(s) × 3 fields × {steps:,} steps", *measure(live)])
    vectors = jhw.LivePlot(vectors="lines")
    values = {f"v{i}": rng.normal(size=(steps + 1, 10)) for i in range(12)}
    feed(vectors, values, shapes=[(10,)] * 12, max_steps=steps)
    rows.append([f"1 run, 12 vectors × 10 components × {steps:,} steps", *measure(vectors)])
    lanes = jhw.LivePlot()
    loss = np.cumsum(rng.normal(size=(512, steps + 1)), axis=1)
    feed(lanes, {"loss": loss}, lanes=512, max_steps=steps)
    rows.append([f"1 run, 512 lanes × {steps:,} steps", *measure(lanes)])
    return rows


KERNEL_CODE = """
import sys, time, statistics
sys.path.insert(0, {root!r})
import numpy as np, jaxhist_widget as jhw
from tests.helpers.synthetic import feed
live = jhw.LivePlot(keep_runs=True)
display(live)  # displayed: each run end redraws its picture
rng = np.random.default_rng(0)
for _ in range({runs}):
    feed(live, {{k: np.cumsum(rng.normal(size={steps} + 1)) for k in "abc"}}, max_steps={steps})
times = []
for _ in range(7):
    t = time.perf_counter(); live._outputs.update(); times.append(time.perf_counter() - t)
svg = live._outputs.picture()["image/svg+xml"]
print("RESULT", len(svg.encode()) // 1000, statistics.median(times) * 1e3)
"""


def in_kernel(runs: int, steps: int) -> tuple[int, float]:
    """The sweep in a real kernel, the plot displayed; one run end's redraw (ms) and size."""
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="python3")
    out: list[str] = []
    try:
        code = KERNEL_CODE.format(root=str(Path(__file__).resolve().parents[1]), runs=runs,
                                  steps=steps)  # fmt: skip

        def hook(msg: dict) -> None:
            if msg["msg_type"] == "stream":
                out.append(msg["content"]["text"])
            elif msg["msg_type"] == "error":
                out.append("\n".join(msg["content"]["traceback"]))

        kc.execute_interactive(code, output_hook=hook, timeout=600)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    text = "".join(out)
    line = next((x for x in text.splitlines() if x.startswith("RESULT")), None)
    if line is None:
        raise RuntimeError(f"the kernel printed no result:\n{text}")
    _, kb, ms = line.split()
    return int(kb), float(ms)


def main() -> None:
    args = arguments(__doc__).parse_args()
    print(machine())
    counts, steps = ([1, 5, 20], 200) if args.quick else ([1, 50, 200], 1000)
    rows = in_process(counts, steps)
    kb, ms = in_kernel(counts[-1], steps)
    rows.append([f"in a kernel, displayed: a run end after {counts[-1]} kept runs", kb, ms])
    print()
    print_table(
        ["case", "picture kB", "copy + draw ms"],
        [[case, kb, f"{ms:.1f}"] for case, kb, ms in rows],
    )
    worst_kb = max(r[1] for r in rows)
    print(
        f"\nlargest picture {worst_kb} kB (budget {BUDGET_KB} kB); a run end after "
        f"{counts[-1]} kept runs {rows[len(counts) - 1][2]:.1f} ms here, {ms:.1f} ms in a kernel "
        f"(budget {BUDGET_MS:.0f} ms)"
    )


if __name__ == "__main__":
    main()
