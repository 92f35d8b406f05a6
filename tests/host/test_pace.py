"""How often a run flushes under ``stream_every="auto"`` (`jaxhist_widget._host._pace.Pace`):
sized by the device's rate and by what a chunk costs the host, measured, not assumed."""

from __future__ import annotations

import pytest

from jaxhist_widget._host import _pace
from jaxhist_widget._host._pace import Pace

from ..helpers.hub import LAYOUT

AUTO = LAYOUT.__class__(**{**LAYOUT.__dict__, "every": None, "chunk": 100_000})


def run(pace: Pace, rows_per_s: float, host_s: float, flushes: int) -> list[int]:
    """Intervals asked for over ``flushes`` flushes of a loop making ``rows_per_s`` rows a second
    of its own time, each chunk costing the host ``host_s`` seconds."""
    clock, rows, out = 0.0, 1, []
    pace.t_end = 0.0
    interval = 1
    for _ in range(flushes):
        clock += interval / rows_per_s  # the device makes the rows
        rows += interval
        interval = pace.interval(AUTO, rows, clock)
        out.append(interval)
        pace.host_work(host_s)
        clock += host_s
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
