"""How often a run flushes under ``stream_every="auto"`` (`jaxhist_widget._host._pace.Pace`):
sized by the device's rate and by what a chunk costs the host, measured, not assumed."""

from __future__ import annotations

import pytest

from jaxhist_widget._host import _pace
from jaxhist_widget._host._pace import Pace

from ..helpers.hub import LAYOUT

AUTO = LAYOUT.__class__(**{**LAYOUT.__dict__, "every": None, "chunk": 100_000})


def run(
    pace: Pace, rows_per_s: float, host_s: float, flushes: int, first_s: float | None = None
) -> list[int]:
    """Intervals asked for over ``flushes`` flushes of a loop making ``rows_per_s`` rows a second
    of its own time, each chunk costing the host ``host_s`` seconds (the first ``first_s``)."""
    clock, rows, out = 0.0, 1, []
    pace.t_end = 0.0
    interval = 1
    for k in range(flushes):
        clock += interval / rows_per_s  # the device makes the rows
        rows += interval
        interval = pace.interval(AUTO, rows, clock)
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
    assert share <= _pace.HOST_SHARE * 1.05, (out[-5:], share)


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
