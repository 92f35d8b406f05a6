"""How responsive a sweep's plot stays in the page: hover and scrolling at 64, 1024 and 4096
vmap lanes, in Chromium + JupyterLab (issue 38: 60 fps scrolling, hover under ~50 ms at 4096).

Each case runs the sweep of `tests/browser/test_sweep_ui.py` (least squares over ``lanes``
learning rates, 300 steps, some diverging; a band of every lane under the stride and ranked
lines) into a displayed LivePlot, then, with the kernel idle:

- **hover**: the pointer moves across the chart in ``--moves`` steps, as a hand does (real input
  events through the DevTools protocol); per move that changed the read-out, the time from the
  input event (its ``timeStamp``) to the end of the frame that shows the new read-out;
- **params hover**: the same across the hyperparameter chart (``loss vs lr``, a point per lane:
  its lane read out and lit in the loss chart; issue 50);
- **scroll**: the notebook is scrolled over the plot with the wheel for ``--scroll`` seconds;
  the page's frame intervals (``requestAnimationFrame``) give its frame rate and the 95th
  percentile interval (a dropped frame shows as a 33 ms one).

Printed: one row per lane count, with the chip it ran on. No target is asserted (the machines
are noisy): the table goes to docs/performance.md. Run::

    python benchmarks/sweep_ui.py                 # 64, 1024, 4096 lanes
    python benchmarks/sweep_ui.py --lanes 4096    # one case

Needs Playwright, JupyterLab and Chromium (``JAXHIST_UI_CHROMIUM``, default /usr/bin/chromium).
"""

from __future__ import annotations

import argparse
import itertools
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.helpers.jupyter_browser import (  # noqa: E402  (the repository root is added above)
    CHROMIUM_ARGS,
    CHROMIUM_PATH,
    open_notebook,
    run_all,
    start_jupyter_server,
    stop_jupyter_server,
    wait_idle,
)

SWEEP = """\
import jax
import jax.numpy as jnp
import numpy as np
import jaxhist_widget as jhw
from IPython.display import display

rates = jnp.logspace(-3, 0.5, {lanes})  # the largest rates diverge


def solve(lr):
    def body(c):
        k, x = c
        return k + 1, x - lr * 2 * x * (1 + x**2)

    return jhw.while_loop(lambda c: c[0] < 300, body, (0, jnp.float32(2.0)), max_steps=300,
                          record=lambda c: {{"loss": c[1] ** 2, "x": c[1]}})
"""

RUN = (
    "live = jhw.LivePlot(log_y=True, lane_values={'lr': np.asarray(rates)})\n"
    "display(live)\nwith live:\n    (k, x), hist = jax.jit(jax.vmap(solve))(rates)\n"
    # Room below the plot to scroll into.
    "from IPython.display import HTML\ndisplay(HTML('<div style=\"height:2400px\"></div>'))"
)

# Records input events and each change of the read-out with the end of the frame showing it.
PROBE_JS = """
() => {
  const log = (window.__jhwUi = { moves: [], shows: [], frames: [] });
  window.addEventListener('mousemove', (e) => log.moves.push(e.timeStamp), true);
  const tip = document.querySelector('.jhw-hover');
  new MutationObserver(() => {
    const at = performance.now();
    const done = () => log.shows.push({ at, done: performance.now() });
    requestAnimationFrame(() => setTimeout(done, 0));
  }).observe(tip, { attributes: true, attributeFilter: ['data-step', 'data-name', 'data-value'] });
  return !!tip;
}
"""

FRAMES_JS = """
(ms) => new Promise((resolve) => {
  const times = [];
  const end = performance.now() + ms;
  const tick = (t) => {
    times.push(t);
    if (t < end) requestAnimationFrame(tick); else resolve(times);
  };
  requestAnimationFrame(tick);
})
"""


def hover_latencies(page, moves: int, chart: str = ".jhw-figure") -> list[float]:
    """Move across ``chart``'s plot area (the first of them); per read-out change, input ->
    frame done (ms)."""
    area = page.locator(f"{chart} .plotarea_background").first.bounding_box()
    page.mouse.move(area["x"] + 5, area["y"] + area["height"] / 2)
    page.wait_for_timeout(300)
    page.evaluate("() => { window.__jhwUi.moves = []; window.__jhwUi.shows = []; }")
    for k in range(moves):
        x = area["x"] + area["width"] * (0.05 + 0.9 * k / max(1, moves - 1))
        y = area["y"] + area["height"] * (0.2 + 0.6 * ((k * 7) % 11) / 10)
        page.mouse.move(x, y)
        page.wait_for_timeout(60)  # a hand's pace: ~16 moves a second
    page.wait_for_timeout(300)
    log = page.evaluate("() => window.__jhwUi")
    out = []
    for show in log["shows"]:
        before = [m for m in log["moves"] if m <= show["at"]]
        if before:
            out.append(show["done"] - before[-1])
    return out


def scroll_frames(page, seconds: float) -> list[float]:
    """Frame intervals (ms) while the wheel scrolls the notebook down and up over the plot."""
    area = page.locator(".jhw-liveplot").first.bounding_box()
    page.mouse.move(area["x"] + area["width"] / 2, area["y"] + 40)
    frames = page.evaluate_handle(FRAMES_JS, seconds * 1000)
    end = time.monotonic() + seconds
    direction = 1
    while time.monotonic() < end:
        for _ in range(8):
            page.mouse.wheel(0, 60 * direction)
            page.wait_for_timeout(16)
        direction = -direction
    times = frames.json_value()
    return [b - a for a, b in itertools.pairwise(times)]


def measure(browser, server, lanes: int, moves: int, seconds: float) -> dict[str, float]:
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        open_notebook(page, server, [SWEEP.format(lanes=lanes), RUN], name=f"sweep-{lanes}.ipynb")
        run_all(page)
        wait_idle(page, timeout=600)
        page.wait_for_function(
            "() => { const p = document.querySelector('.jhw-liveplot .jhw-panel');"
            " return p && p.dataset.status !== 'running' && p.dataset.status !== 'compiling'; }",
            timeout=120_000,
        )
        page.locator(".jhw-liveplot").first.scroll_into_view_if_needed()
        page.wait_for_timeout(1000)
        assert page.evaluate(PROBE_JS), "no hover read-out in the page"
        lines = page.evaluate(
            "() => document.querySelector('.jhw-figure').querySelectorAll('path.line').length"
        )
        hover = hover_latencies(page, moves)
        params = hover_latencies(page, moves, ".jhw-params")
        frames = scroll_frames(page, seconds)
        ordered = sorted(frames)
        return {
            "lines": lines,
            "hovers": len(hover),
            "hover_median": statistics.median(hover) if hover else float("nan"),
            "hover_p95": sorted(hover)[int(0.95 * (len(hover) - 1))] if hover else float("nan"),
            "params_median": statistics.median(params) if params else float("nan"),
            "params_p95": sorted(params)[int(0.95 * (len(params) - 1))] if params else float("nan"),
            "fps": 1000.0 * len(frames) / sum(frames) if frames else float("nan"),
            "frame_p95": ordered[int(0.95 * (len(ordered) - 1))] if ordered else float("nan"),
        }
    finally:
        page.context.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lanes", type=int, nargs="*", default=[64, 1024, 4096])
    parser.add_argument("--moves", type=int, default=40, help="pointer moves across the chart")
    parser.add_argument("--scroll", type=float, default=3.0, help="seconds of scrolling")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    rows = []
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        server = start_jupyter_server(Path(tmp))
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM_PATH),
            headless=True,
            chromium_sandbox=False,
            args=CHROMIUM_ARGS,
        )
        try:
            for lanes in args.lanes:
                rows.append((lanes, measure(browser, server, lanes, args.moves, args.scroll)))
                server.shutdown_kernels()
            version = browser.version
        finally:
            browser.close()
            stop_jupyter_server(server)
    print(
        f"Chromium {version} (headless), {platform.machine()} {platform.processor() or ''} "
        f"with {__import__('os').cpu_count()} cores; goal at 4096 lanes: hover < 50 ms, 60 fps"
    )
    head = (
        "| lanes | paths drawn | hovers | hover median | hover p95 | params hover median "
        "| params hover p95 | scroll fps | frame p95 |"
    )
    print(head)
    print("|" + "|".join("-" * (len(c) + 2) for c in head.strip("|").split("|")) + "|")
    for lanes, r in rows:
        print(
            f"| {lanes:,} | {r['lines']} | {r['hovers']} | {r['hover_median']:.1f} ms | "
            f"{r['hover_p95']:.1f} ms | {r['params_median']:.1f} ms | {r['params_p95']:.1f} ms | "
            f"{r['fps']:.0f} | {r['frame_p95']:.1f} ms |"
        )


if __name__ == "__main__":
    main()
