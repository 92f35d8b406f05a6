"""How often a run flushes under ``stream_every="auto"`` (`_host/runtime/_pace.py`):
sized by the device's rate and by what a chunk costs the host, measured, not assumed."""

from __future__ import annotations

import itertools

import pytest

from jaxhist_widget._host.runtime import _pace
from jaxhist_widget._host.runtime._pace import Pace

from ...helpers.hub import LAYOUT

AUTO = LAYOUT.__class__(**{**LAYOUT.__dict__, "every": None, "chunk": 100_000})
_loops = itertools.count()


def fresh_layout(accelerated: bool = True):
    """A loop no earlier run has paced (the pace of a loop run before on an accelerator is
    remembered)."""
    name = (f"loop {next(_loops)}",)
    return AUTO.__class__(**{**AUTO.__dict__, "names": name, "accelerated": accelerated})


def run(
    pace: Pace,
    rows_per_s: float,
    host_s: float,
    flushes: int,
    first_s: float | None = None,
    stall_s: float = 0.0,
    layout=None,
) -> list[int]:
    """Intervals asked for over ``flushes`` flushes of a loop making ``rows_per_s`` rows a second
    of its own time, each chunk costing the host ``host_s`` seconds (the first ``first_s``) and
    the device ``stall_s`` more, unseen by the host (moving the window out, the answer back)."""
    layout = fresh_layout() if layout is None else layout
    clock, rows, out = 0.0, 1, []
    pace.t_end = 0.0
    interval = pace.first(layout)
    for k in range(flushes):
        clock += interval / rows_per_s + stall_s  # the device makes the rows, then waits
        rows += interval
        interval = pace.interval(layout, rows, clock)
        out.append(interval)
        cost = first_s if k == 0 and first_s is not None else host_s
        pace.host_work(cost)
        clock += cost
        pace.call_ended(now=clock)
    return out


def test_a_cheap_host_gets_updates_about_twenty_times_a_second():
    out = run(Pace(), rows_per_s=100_000, host_s=1e-4, flushes=20)
    assert out[-1] == pytest.approx(100_000 * _pace.TARGET_INTERVAL, rel=0.01)


def test_a_costly_host_gets_longer_chunks_keeping_its_share_small():
    # Issue 38: at 4096 lanes a chunk cost the host ~5.5 ms and auto streaming flushed every
    # ~12 steps regardless, 133 calls a second. The interval now grows with the host's cost.
    host_s = 0.005
    out = run(Pace(), rows_per_s=100_000, host_s=host_s, flushes=30)
    share = host_s / (out[-1] / 100_000 + host_s)
    # ... up to the longest interval, which keeps the plot moving 5 times a second
    most = max(_pace.HOST_SHARE, host_s / (_pace.MAX_INTERVAL + host_s))
    assert share <= most * 1.05, (out[-5:], share)


def test_the_interval_grows_gradually_from_the_first_rows():
    out = run(Pace(), rows_per_s=1e7, host_s=1e-5, flushes=8)
    assert all(b <= a * _pace.GROWTH for a, b in zip([1, *out], out, strict=False))
    assert out[0] <= _pace.GROWTH


def test_the_first_chunks_setup_does_not_space_the_flushes_out():
    # The first chunk's sinks set up their view once (a plot makes its marks: on a loaded CI
    # machine a fraction of a second). Counted as a chunk's cost it made the next intervals
    # grow as far as the growth allows (1, 4, 16, ... 4096 rows): a loop of a few seconds
    # flushed a handful of times and its plot barely moved.
    plain = run(Pace(), rows_per_s=2_000, host_s=2e-3, flushes=12)
    slow_start = run(Pace(), rows_per_s=2_000, host_s=2e-3, flushes=12, first_s=0.5)
    assert slow_start == plain
    assert max(plain) <= 2_000 * 0.2  # updates at least about 5 times a second


def test_a_device_stall_per_call_is_measured_and_keeps_calls_a_few_percent():
    # Issue 47: on a TPU a host call stops the device ~1.1 ms whatever the host does; the host
    # sees that only inside the gaps between calls. Counted as the loop's own time it made the
    # rows look slow, the chunks short: 22 calls in a 22 ms loop (3.1x). The stall is the
    # intercept of the gaps against the rows, and counts as a chunk's cost.
    stall, rate = 1.1e-3, 450_000  # a least-squares step of 2.2 µs
    pace = Pace()
    out = run(pace, rows_per_s=rate, host_s=5e-5, flushes=12, stall_s=stall, layout=fresh_layout())
    assert pace.stall == pytest.approx(stall, rel=0.05)
    assert pace.rate == pytest.approx(rate, rel=0.05)
    chunk_s = out[-1] / rate
    share = (stall + 5e-5) / (chunk_s + stall + 5e-5)
    assert share <= _pace.HOST_SHARE * 1.05, (out, share)


def test_no_stall_is_read_from_gaps_that_only_follow_the_rows():
    pace = Pace()
    run(pace, rows_per_s=100_000, host_s=1e-4, flushes=12, layout=fresh_layout())
    assert pace.stall == pytest.approx(0.0, abs=1e-6)


def test_a_loop_run_again_starts_at_the_pace_its_last_run_ended_with():
    # A short loop on a TPU spent most of its calls on the ramp from one row (1, 4, 16, ...);
    # run again, it now starts where the last run settled: one call for its whole 22 ms.
    layout = fresh_layout()
    first = run(Pace(), rows_per_s=450_000, host_s=5e-5, flushes=12, stall_s=1.1e-3, layout=layout)
    again = Pace()
    assert again.first(layout) == first[-1]
    assert again.stall == pytest.approx(1.1e-3, rel=0.05)
    assert Pace().first(fresh_layout()) == 1  # a loop never run shows its start at once
    on_cpu = fresh_layout(accelerated=False)  # a call costs microseconds there: no memory
    run(Pace(), rows_per_s=450_000, host_s=5e-5, flushes=12, layout=on_cpu)
    assert Pace().first(on_cpu) == 1


def test_a_costly_host_still_updates_five_times_a_second():
    out = run(Pace(), rows_per_s=10_000, host_s=0.02, flushes=30, layout=fresh_layout())
    assert out[-1] / 10_000 <= _pace.MAX_INTERVAL * 1.001
