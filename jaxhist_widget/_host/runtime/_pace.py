"""`Pace`: how many rows a run's loop takes before its next flush (``stream_every="auto"``).

Two costs pull apart. A flush every few steps shows the newest rows at once but spends time on
calls; a flush every many steps costs little but leaves a watcher looking at old rows. So the
interval is sized from what is measured on the host, per run:

- the device's rate: rows per second of the loop's own time, from the end of one host call to
  the start of the next, less the call's *stall* (below): time spent on the host is not the
  loop's, and counting it would shrink chunks whenever a sink is slow, making it slower still;
- what a chunk costs: the host's work for it (the call's Python, and the work deferred to the
  worker: filing, sinks' updates, which competes with the loop for the processor), plus the
  stall: the time the device waits for a call beyond the host's Python, moving the chunk's
  window out and the answer back. On a CPU that is nothing; on a TPU v5e ~1.1 ms a call plus
  ~0.4 ms a MiB (docs/performance.md), more than a cheap step's whole chunk costs. The host
  never sees the stall directly: it sits inside the gap between two calls, beside the rows'
  own time, so it is the intercept of a line fitted through (rows, gap) of the run's chunks,
  whose sizes vary as the interval grows (`_fit`).

The interval is the rows the loop makes in `TARGET_INTERVAL` (about 20 updates a second), or in
as long as keeps a chunk's cost under `HOST_SHARE` of the loop's time, whichever is longer, but
never longer than `MAX_INTERVAL` (a loop that runs for seconds updates its plot at least 5
times a second); never more than a window carries (`Layout.window`), and whole blocks where a
loop steps in blocks (`Layout.block`). It grows at most `GROWTH`-fold from one flush to the
next: the first estimates rest on a row or two, where a call's own overheads dominate, and a
short run still shows its first rows as they come.

A loop on an accelerator run again (the same `Layout`: a jitted function called once more, a
notebook cell run again) starts where its last run ended (`Pace.first`): its first flush comes
after the interval the last run settled on, not after one row, and with what was measured of
the stall. A short loop then makes one or two calls, not the ten of a ramp from one row.

Work that paces itself is no chunk's cost (`unpaced`): a `LivePlot` spaces its updates by
their own cost, whatever the chunks; counted, each update (a few ms) lengthened the next
chunks as if every chunk cost that much: a plot watching a 10^6-step loop on a CPU got rows
14 times a second where a `Recorder` got them 22 times (now 18).
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from ..._wire import Layout, whole_blocks

__all__ = [
    "GROWTH",
    "HOST_SHARE",
    "MAX_INTERVAL",
    "TARGET_INTERVAL",
    "Pace",
    "paced_clock",
    "unpaced",
]

#: Adaptive streaming aims to deliver rows this often (seconds)...
TARGET_INTERVAL = 0.05
#: ...unless a chunk's cost (the host's work and the device's stall) would then take more than
#: this share of the loop's time: the interval grows instead (fewer, larger chunks)... On a TPU
#: v5e a call's stall of ~1.1 ms then spaces flushes ~75 ms apart: an MLP step's loop stays
#: within a few percent of its bare time, with ~13 updates a second.
HOST_SHARE = 0.015
#: ...up to this long (seconds): a loop that runs on still shows new rows 5 times a second.
MAX_INTERVAL = 0.2
#: The interval grows at most this many times from one flush to the next.
GROWTH = 4
#: Chunks a run keeps to fit its stall (the newest).
_POINTS = 8
#: Loops whose pace is remembered for their next run (the least recent are forgotten).
_REMEMBERED = 64


#: Per thread: seconds of work done inside `unpaced` so far.
_unpaced = threading.local()


@contextmanager
def unpaced() -> Iterator[None]:
    """Work done inside is not counted as the cost of the chunk whose hook does it: work that
    is spaced out by a clock of its own (a plot's updates), which larger chunks would not make
    rarer. Time the pace counts with `paced_clock`."""
    start = time.perf_counter()
    try:
        yield
    finally:
        _unpaced.seconds = _seconds_unpaced() + time.perf_counter() - start


def paced_clock() -> float:
    """`time.perf_counter`, stopped while this thread works inside `unpaced`: what a chunk's
    host work is timed with."""
    return time.perf_counter() - _seconds_unpaced()


def _seconds_unpaced() -> float:
    return getattr(_unpaced, "seconds", 0.0)


class Pace:
    """One run's flush clock: the device's rate, the host's cost and the stall per chunk."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # a leaf: the hub's call and the worker both report
        self.t_end = time.perf_counter()  # when the last host call ended
        # rows=1: row 0 (the initial value) is no work done, so it must not count for the rate
        self.rows = 1
        self.rate = 0.0  # rows per second of the device's time (smoothed)
        self.cost = 0.0  # seconds of host work per chunk (smoothed)
        self.stall = 0.0  # seconds the device waits per call beyond the host's work (fitted)
        self._chunk_cost = 0.0  # host work of the current chunk so far
        self._last = 1  # the interval asked for last
        self._calls = 0  # host calls ended so far
        self._points: collections.deque[tuple[int, float]] = collections.deque(maxlen=_POINTS)
        self._layout: Layout | None = None
        self.longest_gap = 0.0  # seconds of the device's time between two flushes, at most

    def first(self, layout: Layout) -> int:
        """Rows until a new run's first flush: one (a watcher sees the run start at once),
        or, for a loop run before, the interval its last run settled on."""
        if layout.every is not None:
            return min(layout.every, layout.chunk)
        with self._lock:
            self._layout = layout
            # Only a device loop on an accelerator skips its ramp: there each call of it costs
            # the device a millisecond. On a CPU a call costs microseconds, and a Python loop's
            # rows (`jaxhist_widget.log`) cost none until handed over.
            known = _MEMORY.recall(layout) if _remembers(layout) else None
            if known is None:
                return 1
            self.rate, self.cost, self.stall, self._last = known
            return min(self._last, layout.chunk)

    def interval(self, layout: Layout, rows: int, arrived: float) -> int:
        """Rows until the next flush, for a flush that ``arrived`` with ``rows`` rows filed."""
        with self._lock:
            self.longest_gap = max(self.longest_gap, arrived - self.t_end)
        if layout.every is not None:
            return min(layout.every, layout.chunk)
        with self._lock:
            self._layout = layout
            dt, drows = arrived - self.t_end, rows - self.rows
            self.rows = rows
            if dt > 0 and drows > 0:
                if layout.accelerated:  # on a CPU a call runs inline: nothing stalls unseen
                    self._points.append((drows, dt))
                    self.stall = _fit(self._points, self.stall)
                rate = drows / max(dt - self.stall, 0.1 * dt)
                # Smooth, but let a sudden slowdown win at once so latency stays bounded.
                slower = self.rate == 0 or rate < self.rate
                self.rate = rate if slower else 0.5 * (self.rate + rate)
            wait = min(max(TARGET_INTERVAL, (self.cost + self.stall) / HOST_SHARE), MAX_INTERVAL)
            due = min(self.rate * wait, self._last * GROWTH, layout.chunk)
            self._last = whole_blocks(int(max(due, 1)), layout.block)
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
            if self._layout is not None and self.rate > 0 and _remembers(self._layout):
                _MEMORY.keep(self._layout, (self.rate, self.cost, self.stall, self._last))


def _remembers(layout: Layout) -> bool:
    """Whether a loop's pace is kept for its next run (see `Pace.first`)."""
    return layout.accelerated and not layout.ends_itself


def _fit(points: collections.deque[tuple[int, float]], stall: float) -> float:
    """The stall per call: the intercept of ``gap = stall + rows / rate`` through the run's
    chunks (``(rows, gap)``), where their sizes differ enough to tell the two apart; else
    ``stall`` as it was. Never negative, never more than the shortest gap.

    >>> import collections
    >>> stall, row = 1.1e-3, 1e-5  # a millisecond a call, 10 µs a row
    >>> pts = collections.deque([(n, stall + n * row) for n in (1, 4, 16)])
    >>> round(_fit(pts, 0.0) * 1e3, 3)  # ms
    1.1
    """
    # A least-squares line through a few points, in plain Python: it runs in the loop's host
    # call, where numpy's polyfit cost ~0.2 ms a call.
    n = len(points)
    if n < 2:
        return stall
    rows = [float(p[0]) for p in points]
    gaps = [p[1] for p in points]
    if max(rows) < 2 * min(rows):
        return stall
    mean_r, mean_g = sum(rows) / n, sum(gaps) / n
    spread = sum((r - mean_r) ** 2 for r in rows)
    slope = sum((r - mean_r) * (g - mean_g) for r, g in zip(rows, gaps, strict=True)) / spread
    if slope <= 0:  # the gaps do not follow the rows: no line to read a stall from
        return stall
    return min(max(mean_g - slope * mean_r, 0.0), min(gaps))


class _Memory:
    """The pace each loop (its `Layout`) ended its last run with, for its next run."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # a leaf
        self._kept: collections.OrderedDict[Layout, tuple] = collections.OrderedDict()

    def recall(self, layout: Layout) -> tuple | None:
        with self._lock:
            return self._kept.get(layout)

    def keep(self, layout: Layout, pace: tuple) -> None:
        with self._lock:
            self._kept[layout] = pace
            self._kept.move_to_end(layout)
            while len(self._kept) > _REMEMBERED:
                self._kept.popitem(last=False)


_MEMORY = _Memory()
