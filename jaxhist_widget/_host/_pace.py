"""`Pace`: how many rows a run's loop takes before its next flush (``stream_every="auto"``).

Two costs pull apart. A flush every few steps shows the newest rows at once but spends the
host's time on calls (a fixed cost per call, plus decoding and filing the chunk's bytes); a
flush every many steps costs little but leaves a watcher looking at old rows. So the interval
is sized from two measurements made on the host, per run:

- the device's rate: rows per second of the loop's own time, from the end of one host call to
  the start of the next (time spent on the host is not the loop's, and counting it would shrink
  chunks whenever a sink is slow, making it slower still);
- the host's cost per chunk: the host call itself plus the work deferred to the worker for it
  (filing, sinks' updates), which competes with the loop for the processor.

The interval is the rows the loop makes in `TARGET_INTERVAL` (about 20 updates a second), or in
as long as keeps the host's share of the time under `HOST_SHARE`, whichever is longer; never
more than a window carries (`Layout.window`), and whole blocks where a loop steps in blocks
(`Layout.block`). It grows at most `GROWTH`-fold from one flush to
the next: the first estimates rest on a row or two, where a call's own overheads dominate, and a
short run still shows its first rows as they come.
"""

from __future__ import annotations

import threading
import time

from .._wire import Layout, whole_blocks

__all__ = ["GROWTH", "HOST_SHARE", "TARGET_INTERVAL", "Pace"]

#: Adaptive streaming aims to deliver rows this often (seconds)...
TARGET_INTERVAL = 0.05
#: ...unless the host's work for a chunk would then take more than this share of the loop's
#: time: the interval grows instead (fewer, larger chunks).
HOST_SHARE = 0.03
#: The interval grows at most this many times from one flush to the next.
GROWTH = 4


class Pace:
    """One run's flush clock: the device's rate and the host's cost per chunk."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # a leaf: the hub's call and the worker both report
        self.t_end = time.perf_counter()  # when the last host call ended
        # rows=1: row 0 (the initial value) is no work done, so it must not count for the rate
        self.rows = 1
        self.rate = 0.0  # rows per second of the device's time (smoothed)
        self.cost = 0.0  # seconds of host work per chunk (smoothed)
        self._chunk_cost = 0.0  # host work of the current chunk so far
        self._last = 1  # the interval asked for last
        self._calls = 0  # host calls ended so far
        self.longest_gap = 0.0  # seconds of the device's time between two flushes, at most

    def interval(self, layout: Layout, rows: int, arrived: float) -> int:
        """Rows until the next flush, for a flush that ``arrived`` with ``rows`` rows filed."""
        with self._lock:
            self.longest_gap = max(self.longest_gap, arrived - self.t_end)
        if layout.every is not None:
            return min(layout.every, layout.chunk)
        with self._lock:
            dt, drows = arrived - self.t_end, rows - self.rows
            self.rows = rows
            self.longest_gap = max(self.longest_gap, dt)
            if dt > 0 and drows > 0:
                rate = drows / dt
                # Smooth, but let a sudden slowdown win at once so latency stays bounded.
                slower = self.rate == 0 or rate < self.rate
                self.rate = rate if slower else 0.5 * (self.rate + rate)
            wait = max(TARGET_INTERVAL, self.cost / HOST_SHARE)
            rows = min(self.rate * wait, self._last * GROWTH, layout.chunk)
            self._last = whole_blocks(int(max(rows, 1)), layout.block)
            return self._last

    def host_work(self, seconds: float) -> None:
        """Count ``seconds`` of host work for the current chunk (any thread)."""
        with self._lock:
            self._chunk_cost += seconds

    def call_ended(self, now: float | None = None) -> None:
        """The host call of a flush returned (at ``now``, `time.perf_counter`'s clock): its
        chunk's cost so far joins the estimate."""
        with self._lock:
            self.t_end = time.perf_counter() if now is None else now
            cost, self._chunk_cost = self._chunk_cost, 0.0
            self._calls += 1
            if self._calls == 1:
                # The first chunk's sinks set up their view of the run (a plot makes its
                # marks, a store its table): work done once, which counted would space the
                # flushes out for many chunks (the cost falls slowly) on a slow machine.
                return
            # A rise counts at once (the host must not fall behind), a fall slowly.
            self.cost = cost if cost > self.cost else 0.8 * self.cost + 0.2 * cost
