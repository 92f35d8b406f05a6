"""The browser's time to draw one LivePlot update, measured in the page (Chromium, JupyterLab).

An update is what one push of the kernel sends: one message per line mark (its x and y), the
scales and axes, then the panel (its ``step``). In the page, `INIT_JS` (installed before Lab
loads, with ``page.add_init_script``) records

- every kernel WebSocket message: its arrival time (the event's ``timeStamp``, taken when the
  browser received it, however busy the page is), its comm id and the state keys it sets, and
  the size of its binary buffers;
- every change of a line's SVG path (``d``) and of the panel's step (``data-step``), with the
  time the frame that shows it was done: the task after that frame's rendering. A change made
  outside a frame (the panel, applying a message) is shown by the next animation frame; a
  change made inside one (bqplot sets a path in a d3 transition, which runs in an animation
  frame callback) is shown by that same frame. Waiting for the next frame there (as this did
  before) counted one frame interval (~17 ms) more than the drawing took.

`updates` pairs them: an update starts when its first line message arrives and ends when the
frame showing its panel step (applied after its lines, scales and axes: messages are applied in
order) has been drawn. No timing is asserted anywhere: numbers go to docs/performance.md and the
benchmark (``benchmarks/browser_draw.py``).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from playwright.sync_api import Page

#: The goal: one update of 3 lines x 2000 points drawn within this many ms.
GOAL_MS = 50.0

INIT_JS = r"""
(() => {
  if (window.__jhwDraw) return;
  const log = (window.__jhwDraw = { msgs: [], marks: [] });
  const text = new TextDecoder();
  // Decode a kernel message as the WebSocket carries it: the v1 binary protocol
  // ("v1.kernel.websocket.jupyter.org": offsets, then channel, header, parent header,
  // metadata, content, buffers) or plain JSON.
  function decode(data) {
    if (typeof data === "string") {
      const msg = JSON.parse(data);
      return { msg, buffers: (msg.buffers || []).map((b) => (b.byteLength || 0)) };
    }
    const view = new DataView(data);
    const n = Number(view.getBigUint64(0, true));
    const offsets = [];
    for (let i = 0; i < n; i++) offsets.push(Number(view.getBigUint64(8 * (i + 1), true)));
    const part = (i) => new Uint8Array(data, offsets[i], (offsets[i + 1] ?? data.byteLength)
                                        - offsets[i]);
    const msg = {
      channel: text.decode(part(0)),
      header: JSON.parse(text.decode(part(1))),
      content: JSON.parse(text.decode(part(4))),
    };
    const buffers = [];
    for (let i = 5; i < n; i++) buffers.push(part(i).byteLength);
    return { msg, buffers };
  }
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (ev) => {
        try {
          if (!String(this.url).includes("/api/kernels/")) return;
          const { msg, buffers } = decode(ev.data);
          if (!msg.header || msg.header.msg_type !== "comm_msg") return;
          const data = msg.content.data || {};
          if (data.method !== "update") return;
          log.msgs.push({
            t: ev.timeStamp, h: performance.now(), comm: msg.content.comm_id,
            keys: Object.keys(data.state || {}), step: (data.state || {}).step,
            bytes: typeof ev.data === "string" ? ev.data.length : ev.data.byteLength,
            buffers,
          });
        } catch (e) { /* not a message we measure */ }
      });
    }
  };
  const ids = new Map();
  // The task after the rendering of the frame now running (or, outside a frame, of the next
  // one): its animation frame callbacks run, then style, layout and paint; a message posted
  // then is handled after that.
  const afterFrame = (done) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => done(performance.now());
    channel.port2.postMessage(null);
  };
  function record(records, inFrame) {
    const now = performance.now();
    const batch = [];
    for (const r of records) {
      const el = r.target;
      if (r.attributeName === "d" && el.matches && el.matches(".jhw-figure path.line")) {
        // Which line, and the newest step it now shows (bqplot's d3 data on its g.curve).
        if (!ids.has(el)) ids.set(el, ids.size);
        const values = (el.parentNode.__data__ || {}).values || [];
        const last = values.length ? Number(values[values.length - 1].x) : -1;
        batch.push({ kind: "d", t: now, path: ids.get(el), last });
      } else if (r.attributeName === "data-step" && el.classList.contains("jhw-step")) {
        batch.push({ kind: "step", t: now, step: Number(el.dataset.step) });
      }
    }
    if (!batch.length) return;
    log.marks.push(...batch);
    for (const m of batch) m.inFrame = inFrame;
    const mark = (done) => { for (const m of batch) m.drawn = done; };
    if (inFrame) afterFrame(mark);
    else nativeFrame(() => afterFrame(mark));
  }
  const observer = new MutationObserver((records) => record(records, false));
  // Changes made by an animation frame callback are taken right after it returns (before the
  // observer's own delivery), so they are known to be in the frame now running. Installed
  // before the page's scripts load: d3 keeps the function it finds at load.
  const nativeFrame = window.requestAnimationFrame.bind(window);
  window.requestAnimationFrame = (callback) => nativeFrame((time) => {
    try {
      return callback(time);
    } finally {
      const records = observer.takeRecords();
      if (records.length) record(records, true);
    }
  });
  const start = () => observer.observe(document.documentElement, {
    subtree: true, attributes: true, attributeFilter: ["d", "data-step"] });
  if (document.documentElement) start();
  else document.addEventListener("DOMContentLoaded", start);
})();
"""


@dataclass(frozen=True)
class Update:
    """One update as the page received and drew it."""

    step: int  # the panel's step it carried
    lines: int  # line messages in it
    points: int  # points per line (the largest y buffer / 8 bytes)
    bytes: int  # total size of its line messages on the WebSocket
    largest: int  # size of its largest message
    first: float  # ms (page clock): its first line message arrived
    last: float  # ms: its last message (the panel's step) arrived: the page had all of it
    drawn: float  # ms: every line shown up to its step (a frame) and the step in (the panel)

    @property
    def draw_ms(self) -> float:
        """From the page having the whole update to the frame that shows it."""
        return self.drawn - self.last

    @property
    def span_ms(self) -> float:
        """From its first line message to the frame that shows it (includes the kernel's time
        to send the rest)."""
        return self.drawn - self.first


def install(page: Page) -> None:
    """Record messages and drawing in every page loaded from now on (call before opening)."""
    page.add_init_script(INIT_JS)


def updates(page: Page, mark_ids: list[str], panel_id: str) -> list[Update]:
    """The updates of the LivePlot whose line marks and panel have these comm ids, in order.

    An update is drawn by the first frame in which every line shows its newest step (the
    panel's step of the update): bqplot sets a line's path in a d3 transition (even of duration
    0), so on the animation frame after the message was applied, and when updates come faster
    than frames one frame draws several of them.
    """
    log: dict[str, Any] = page.evaluate("() => window.__jhwDraw")
    marks = set(mark_ids)
    paths = sorted(
        (m for m in log["marks"] if m["kind"] == "d" and "drawn" in m), key=lambda m: m["t"]
    )
    # Frames (by their drawn time), each with the newest step every line shows from then on.
    frames: list[tuple[float, float]] = []  # (drawn, the smallest newest step over the lines)
    newest: dict[int, float] = {}
    for m in paths:
        newest[m["path"]] = m["last"]
        if len(newest) >= len(marks):
            frames.append((m["drawn"], min(newest.values())))
    found: list[Update] = []
    group: list[dict[str, Any]] = []
    for msg in log["msgs"]:
        if msg["comm"] in marks and "y" in msg["keys"]:
            group.append(msg)
        elif msg["comm"] == panel_id and msg.get("step") is not None and group:
            # The first frame after its lines came showing them up to its step. On a loaded
            # page that frame may come before the panel's message: the update is whole once
            # both are in (the last update has no later frame to show its step).
            lines_in = max(m["t"] for m in group)
            drawn = next((f for f, step in frames if step >= msg["step"] and f >= lines_in), None)
            if drawn is not None:
                drawn = max(drawn, msg["t"])
                found.append(
                    Update(
                        step=int(msg["step"]),
                        lines=len(group),
                        points=max(max(m["buffers"], default=0) for m in group) // 8,
                        bytes=sum(m["bytes"] for m in group),
                        largest=max(m["bytes"] for m in group),
                        first=min(m["t"] for m in group),
                        last=msg["t"],
                        drawn=drawn,
                    )
                )
            group = []
    return found


def summary(found: list[Update]) -> dict[str, float]:
    """Median and max draw time and span (ms), and the number of updates."""
    nan = float("nan")
    draw = [u.draw_ms for u in found]
    span = [u.span_ms for u in found]
    return {
        "n": len(found),
        "median": statistics.median(draw) if draw else nan,
        "max": max(draw, default=nan),
        "span_median": statistics.median(span) if span else nan,
        "span_max": max(span, default=nan),
    }


def main_thread_meter(page: Page) -> Callable[[], float]:
    """A function returning the time (ms) the page's main thread has spent in tasks since this
    call (Chromium's ``TaskDuration`` metric, through the DevTools protocol)."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("Performance.enable")

    def busy() -> float:
        metrics = cdp.send("Performance.getMetrics")["metrics"]
        return 1000.0 * next(m["value"] for m in metrics if m["name"] == "TaskDuration")

    start = busy()
    return lambda: busy() - start


def live_run_cells(lines: int, max_steps: int, n: int = 256, max_points: int = 2000) -> list[str]:
    """A notebook: a LivePlot (``max_points`` per line) of a compute-bound run (``tanh(A @ x)``,
    ``n`` x ``n``) recording ``lines`` scalar fields, printing the comm ids of its line marks and
    of its panel afterwards (``IDS <json>``)."""
    fields = ", ".join(f'"f{k}": jnp.sum(x[{k}::{lines}] ** 2)' for k in range(lines))
    return [
        "import json\n"
        "import jax\n"
        "import jax.numpy as jnp\n"
        "import jaxhist_widget as jhw\n"
        f"A = jax.random.normal(jax.random.key(0), ({n}, {n})) / {n}**0.5\n"
        "\n"
        "@jax.jit\n"
        "def spin(x0):\n"
        "    # Compute-bound (no Python in the step); every field keeps changing.\n"
        "    return jhw.while_loop(lambda x: True, lambda x: jnp.tanh(1.5 * A @ x), x0,\n"
        f"                          max_steps={max_steps}, record=lambda x: {{{fields}}})",
        f'live = jhw.LivePlot(title="draw time", max_points={max_points})\nlive',
        "with live:\n"
        f"    x, hist = spin(jnp.ones({n}))\n"
        "print('IDS', json.dumps({'marks': [m.model_id for f in live.figures for m in f.marks],\n"
        "                          'panel': live.panel.model_id}))",
    ]
