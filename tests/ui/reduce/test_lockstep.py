"""A sweep's drawn lanes extended all at once (`extend_lines`) end exactly as lines extended one
by one: the same buckets, points, counts of work, extents and ends, through merges, lanes that
part ways (a constant lane merges later), NaN values and lanes of other lengths (one by one).

Before, each of a sweep's 64 drawn lanes per series was extended on its own (~90 µs each, most
of a 2048-lane sweep plot's decimation time).
"""

from __future__ import annotations

import numpy as np
import pytest

from jaxhist_widget.ui.reduce import LaneSeries, PathSeries, _lines, extend_lines


def _state(s: LaneSeries) -> tuple:
    line = s._line
    x, y, extent = s.points(3)
    return (
        line.n,
        line.size,
        line.work,
        line._buckets.tolist(),
        line._partial.tolist(),
        repr(line._first),
        repr(line._last),
        x.tolist(),
        np.nan_to_num(y, nan=1e300).tolist(),
        extent,
        s.end,
        repr(s.last),
        s.diverged,
    )


def _chunks(rng: np.random.Generator, total: int) -> list[int]:
    out = []
    while total > 0:
        out.append(int(min(total, rng.integers(1, 40))))
        total -= out[-1]
    return out


@pytest.mark.parametrize("seed", range(40))
def test_lines_extended_at_once_end_as_lines_extended_one_by_one(seed):
    rng = np.random.default_rng(seed)
    lanes, budget = int(rng.integers(2, 12)), int(rng.integers(5, 60))
    rows = int(rng.integers(1, 600))
    values = rng.standard_normal((lanes, rows)) * 10 ** rng.uniform(-3, 3, (lanes, 1))
    kind = seed % 5
    if kind == 1:  # a constant lane: its buckets draw one point each, so it merges later
        values[0] = 2.5
    elif kind == 2:  # a lane diverges at a random row: from there on, one by one
        values[-1, rng.integers(0, rows) :] = np.nan if seed % 2 else np.inf
    elif kind == 3:  # positive values (a loss), for the log axis' smallest positive
        values = np.abs(values) + 1e-6
    elif kind == 4:  # every lane the same values: alike to the last bit
        values[:] = values[0]
    together = [LaneSeries(budget) for _ in range(lanes)]
    alone = [LaneSeries(budget) for _ in range(lanes)]
    at = 0
    for n in _chunks(rng, rows):
        extend_lines(together, values[:, at : at + n])
        for s, row in zip(alone, values[:, at : at + n], strict=True):
            s.extend(row)
        at += n
        for a, b in zip(together, alone, strict=True):
            assert _state(a) == _state(b)


def test_lockstep_lines_are_extended_in_one_pass(monkeypatch):
    """The fast path is taken for alike lanes (a check that cannot pass one by one) and not for
    lanes of other lengths, NaN values or paths."""
    calls = []
    monkeypatch.setattr(LaneSeries, "extend", lambda self, v: calls.append(len(v)))
    lines = [LaneSeries(50) for _ in range(4)]
    extend_lines(lines, np.arange(40.0).reshape(4, 10))
    assert calls == [] and [s.size for s in lines] == [10] * 4
    rows = np.ones((4, 3))
    rows[2:, 0] = np.nan  # NaN: one by one; the two finite lanes together
    extend_lines(lines, rows)
    assert calls == [3] * 2 and [s.size for s in lines[:2]] == [13] * 2
    paths = [PathSeries(50) for _ in range(2)]
    seen = []
    monkeypatch.setattr(PathSeries, "extend", lambda self, v: seen.append(v.shape))
    extend_lines(paths, np.zeros((2, 5, 2)))
    assert seen == [(5, 2)] * 2


def test_the_lines_alike_go_together_and_the_others_alone():
    lines = [LaneSeries(50) for _ in range(5)]
    lines[0].extend(np.ones(3))  # a lane of another length
    lines[4].extend(np.array([np.nan]))  # a lane with a gap: alone from then on
    for s in lines[1:4]:
        s.extend(np.zeros(1))
    values = np.ones((5, 4))
    values[3, 2] = np.inf  # a lane diverging now
    assert _lines._alike(lines, values) == [1, 2]
