"""A training sweep by ``jhw.scan`` (``jax.vmap`` of a scan over learning rates, some of which
diverge) is told exactly as the same sweep by ``jhw.while_loop``: the same y range fitted to
the lanes that did not run away, the same count of diverged lanes in the band's legend (the
header's), the same arrows and the same lanes named.

Before (issue 57), a scan's row 0 (a stand-in for the ``y`` no step has made yet, NaN) counted
as a divergence in every lane: the band said "256 diverged lanes left out" where the header
said 10, and with every lane "gone" no fence held, so the loss chart's y axis ran to 2e36 (the
246 healthy lanes a flat line on 0), with no runaway arrows.
"""

from __future__ import annotations

import jax
import numpy as np
import pytest

import jaxhist_widget as jhw

from ...helpers.loops import training_sweep

LANES, STEPS = 256, 200
RATES = np.logspace(-3, 0, LANES).astype(np.float32)  # those above ~0.7 diverge


@pytest.fixture(scope="module")
def plots() -> dict[str, tuple[jhw.LivePlot, np.ndarray]]:
    out = {}
    for kind in ("scan", "while"):
        live = jhw.LivePlot()
        with live:
            hist = jax.jit(jax.vmap(training_sweep(kind, STEPS)))(RATES)
        out[kind] = live, np.asarray(hist.values["loss"][:, -1])
    return out


def test_the_scan_sweep_fits_the_bulk_as_the_while_loop_sweep_does(plots) -> None:
    scan, loop = (plots[k][0].drawing() for k in ("scan", "while"))
    assert list(scan.charts) == list(loop.charts)
    for title, chart in scan.charts.items():
        other = loop.charts[title]
        assert chart.y_range == other.y_range, title
        assert chart.legend == other.legend, title
        # the same lanes drawn, for the same roles
        assert [(ln.lane, ln.role) for ln in chart.lines] == [
            (ln.lane, ln.role) for ln in other.lines
        ], title
    loss = scan.chart("loss")
    assert loss.y_range[1] < 10  # the bulk (a loss from ~3 down), not the runaways' 1e36
    assert any("ran away above" in entry for entry in loss.legend)
    assert scan.notes == loop.notes


def test_the_band_leaves_out_the_lanes_the_header_counts_as_diverged(plots) -> None:
    live, last = plots["scan"]
    diverged = int((~np.isfinite(last)).sum())
    assert 0 < diverged < LANES // 10
    assert live.panel.lane_statuses["diverged"] == diverged
    (band,) = live.drawing().chart("loss").bands
    assert band.left_out == diverged  # before: every lane (row 0's stand-in)
