"""The browser's time to draw one LivePlot update, in Chromium + JupyterLab (issue 14's goal:
3 lines x 2000 points within 50 ms).

A compute-bound run (``tanh(A @ x)``, no Python in the step) streams into a displayed LivePlot
while the pointer rests on the plot (the hover read-out refreshing). For every update the page
records when its messages arrived and when the first frame showing all of it was done (see
``tests/helpers/draw_timing.py``). A line holds between ``max_points / 2`` and ``max_points`` points
(min/max buckets merge in pairs), so the updates of all runs are grouped by points per line
(to the nearest 500). Printed per group: the number of updates, the median and max draw time
(the page has the whole update -> the frame showing it is done), the median from its first
line message (includes the kernel's time sending the rest), the page's main-thread time per
update (all its tasks during the run / updates), the largest message, and PASS/MISS against
the goal (on the median). Run::

    python benchmarks/browser_draw.py            # 1 and 3 lines, max_points 1000 / 2000 / 4000
    python benchmarks/browser_draw.py --quick    # only 3 lines x max_points 2000
    python benchmarks/browser_draw.py --kernel-threads 1   # XLA on one thread: a core is free

Needs Playwright, JupyterLab and Chromium (``JAXHIST_UI_CHROMIUM``, default /usr/bin/chromium).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.helpers.draw_timing import (  # noqa: E402  (the repository root is added just above)
    GOAL_MS,
    install,
    live_run_cells,
    main_thread_meter,
    summary,
    updates,
)
from tests.helpers.jupyter_browser import (  # noqa: E402
    CHROMIUM_ARGS,
    CHROMIUM_PATH,
    cell_output_text,
    open_notebook,
    run_all,
    start_jupyter_server,
    stop_jupyter_server,
    wait_idle,
)


def measure(browser, server, lines: int, points: int, steps: int, verbose: bool):
    """The updates of one live run, and the page's main-thread ms per update."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        install(page)
        name = f"draw-{lines}x{points}.ipynb"
        open_notebook(page, server, live_run_cells(lines, steps, max_points=points), name=name)
        busy = main_thread_meter(page)
        run_all(page)
        # One chart per metric: the others may already exist when it looks (strict mode).
        area = page.locator(".jhw-figure .plotarea_background").first
        area.wait_for(state="attached", timeout=120_000)
        page.locator(".jhw-liveplot .jhw-legend").scroll_into_view_if_needed()
        box = area.bounding_box()
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        wait_idle(page, timeout=600)
        main_ms = busy()
        ids = json.loads(re.search(r"^IDS (.*)$", cell_output_text(page, 2), re.M).group(1))
        found = updates(page, ids["marks"], ids["panel"])
        if verbose:
            for u in found:
                print(
                    f"  step {u.step:>9,} lines {u.lines} points {u.points:>5} "
                    f"{u.bytes / 1024:6.1f} KB draw {u.draw_ms:6.1f} ms span {u.span_ms:6.1f} ms"
                )
        return found, main_ms / max(1, len(found))
    finally:
        page.context.close()  # new_page made a context of its own


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only 3 lines x max_points 2000")
    parser.add_argument("--verbose", action="store_true", help="print every update")
    parser.add_argument("--repeat", type=int, default=1, help="runs per case")
    parser.add_argument(
        "--kernel-threads", type=int, default=0, help="XLA CPU threads of the kernel (0: all)"
    )
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    if args.kernel_threads:  # the server passes its environment on to the kernels
        os.environ["XLA_FLAGS"] = (
            os.environ.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen=false"
            f" intra_op_parallelism_threads={args.kernel_threads}"
        ).strip()
    cases = [(3, 2000)] if args.quick else [(1, 2000), (3, 1000), (3, 2000), (3, 4000)]
    # ~190,000 steps/s here and at most 20 updates/s: a run of 150,000 steps gave one update of
    # full lines, too few for a median.
    steps = 1_500_000 if args.quick else 1_000_000
    groups: dict[tuple[int, int], list] = {}
    main_ms: dict[tuple[int, int], list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        server = start_jupyter_server(Path(tmp))
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM_PATH),
            headless=True,
            chromium_sandbox=False,
            args=CHROMIUM_ARGS,
        )
        try:
            for _ in range(args.repeat):
                for lines, points in cases:
                    found, ms = measure(browser, server, lines, points, steps, args.verbose)
                    server.shutdown_kernels()
                    for u in found:
                        if u.points >= 200:  # the first updates of a run: lines still short
                            key = (lines, 500 * round(u.points / 500))
                            groups.setdefault(key, []).append(u)
                            main_ms.setdefault(key, []).append(ms)
        finally:
            browser.close()
            stop_jupyter_server(server)
    threads = args.kernel_threads or "all"
    print(
        f"kernel XLA threads: {threads}; goal: 3 lines x 2000 points drawn within {GOAL_MS:.0f} ms"
    )
    head = (
        "| lines x points | updates | draw median | draw max | from 1st msg median | "
        "main thread / update | largest msg | goal |"
    )
    print(head)
    print("|" + "|".join("-" * (len(c) + 2) for c in head.strip("|").split("|")) + "|")
    for (lines, points), found in sorted(groups.items()):
        s = summary(found)
        goal = "PASS" if s["median"] <= GOAL_MS else "MISS"
        kb = max(u.largest for u in found) / 1024
        print(
            f"| {lines} x ~{points} | {s['n']} | {s['median']:.1f} ms | {s['max']:.1f} ms | "
            f"{s['span_median']:.1f} ms | {statistics.median(main_ms[lines, points]):.1f} ms | "
            f"{kb:.1f} KB | {goal} |"
        )


if __name__ == "__main__":
    main()
