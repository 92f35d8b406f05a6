"""`each`: a sweep's band series reduced side by side, as a loop over them would reduce them.

The bands over every lane are a sweep plot's heaviest host work (a sort of every step's lanes
per series); each series now sorts on a thread of its own. What must hold: the same result per
series as in order (no series reads or writes another's state), every item done before the call
returns or raises, and a forked child that makes threads of its own.
"""

from __future__ import annotations

import os
import threading
import time

import numpy as np
import pytest

import jaxhist_widget as jhw
from jaxhist_widget.ui.reduce import _parallel, each

from ...helpers.synthetic import feed

BIG = _parallel.PARALLEL_MIN_VALUES
several_cores = pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: no helpers")


def test_results_come_in_item_order():
    assert each(lambda x: x * 10, range(6), values=BIG) == [0, 10, 20, 30, 40, 50]
    assert each(str, [], values=BIG) == []


@several_cores
def test_large_work_goes_to_helper_threads_and_small_work_stays():
    def where(_):
        time.sleep(0.02)  # long enough that the caller cannot take every item itself
        return threading.get_ident()

    me = threading.get_ident()
    assert set(each(where, range(4), values=BIG - 1)) == {me}
    spread = each(where, range(4), values=BIG)
    assert spread[0] == me and set(spread[1:]) - {me}


@several_cores
def test_a_failing_item_waits_for_the_others_and_raises_the_first_error():
    done = []

    def work(k):
        if k == 0:
            raise ValueError("item 0")
        time.sleep(0.05)
        if k == 2:
            raise KeyError("item 2")
        done.append(k)

    with pytest.raises(ValueError, match="item 0"):
        each(work, range(4), values=BIG)
    assert sorted(done) == [1, 3]  # both finished before the call raised


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
@pytest.mark.filterwarnings("ignore:os.fork:RuntimeWarning")  # (the child runs no JAX)
@several_cores
def test_a_forked_child_makes_threads_of_its_own():
    each(lambda x: x, range(3), values=BIG)  # the parent's threads exist
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its parent's helper threads are gone
        try:
            out = each(lambda x: x + 1, range(3), values=BIG)
            os.write(write, bytes(out))
        finally:
            os._exit(0)
    os.close(write)
    deadline = time.monotonic() + 20
    while os.waitpid(pid, os.WNOHANG) == (0, 0):
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            pytest.fail("the forked child hung on its parent's threads")
        time.sleep(0.01)
    assert os.read(read, 16) == bytes([1, 2, 3])


def test_every_series_band_of_a_large_sweep_is_its_own_quantiles():
    """Five series of 600 lanes (one scalar and four components, of different spreads) cross
    the line past which they are reduced side by side; lanes of two lengths take the ragged
    path. Each series' band equals numpy's percentiles of its own values."""
    lanes, steps = 600, 120
    rng = np.random.default_rng(7)
    loss = [rng.random(steps - k % 2) + 10 for k in range(lanes)]
    x = [rng.standard_normal((steps - k % 2, 4)) * [1, 10, 100, 1000] for k in range(lanes)]
    live = jhw.LivePlot()
    feed(live, {"loss": loss, "x": x}, lanes=lanes, shapes=[(), (4,)])
    charts = live.drawing().charts.values()
    bands = sorted((b for c in charts for b in c.bands), key=lambda b: b.field)  # loss, x[0..3]
    assert steps * lanes * len(bands) >= BIG  # reduced side by side
    # per series, a step's values side by side (NaN: a lane without that step)
    tables = np.full((5, steps, lanes), np.nan)
    for k in range(lanes):
        n = len(loss[k])
        tables[0, :n, k] = loss[k].astype(np.float32)  # as the loop recorded them
        tables[1:, :n, k] = x[k].astype(np.float32).T
    assert [b.field for b in bands] == ["loss", "x[0]", "x[1]", "x[2]", "x[3]"]
    for band, table in zip(bands, tables, strict=True):
        expect = np.nanpercentile(table, [0, 25, 75, 100], axis=1)
        polygons = (band.outer, band.inner)
        for (xs, ys), (lower, upper) in zip(polygons, ((0, 3), (1, 2)), strict=True):
            half = len(xs) // 2
            np.testing.assert_array_equal(xs[:half], np.arange(steps))  # one point a step
            np.testing.assert_allclose(ys[:half], expect[lower], rtol=1e-12)
            np.testing.assert_allclose(ys[half:][::-1], expect[upper], rtol=1e-12)
