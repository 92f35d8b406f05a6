"""Past 16 lanes a sweep is read by what leads it: the band of every lane (quartiles and
min–max), the lanes' median drawn as a line over it, and the lanes named best, median, worst
and diverged; the other lanes' lines are faint (``all_lanes=True``, or the panel's toggle:
every line as the rest). The band's entries read the same on every chart, named once.

Before (issue 57) a sweep of 17 to 64 lanes drew 62-64 lines at full strength and no band, a
solid block mid-run; past 64 the stride lanes were as strong as the named ones.
"""

from __future__ import annotations

import jax
import numpy as np
import pytest

import jaxhist_widget as jhw
from jaxhist_widget.ui.look import AWAY_OPACITY, OTHER_OPACITY

from ...helpers.loops import training_sweep

STEPS = 120


def sweep(lanes: int, **options: object) -> jhw.LivePlot:
    """A vmap of a ``jhw.scan`` training loop over ``lanes`` rates (the largest diverge)."""
    rates = np.logspace(-3, 0, lanes).astype(np.float32)
    live = jhw.LivePlot(lane_values={"lr": rates}, **options)  # type: ignore[arg-type]
    with live:
        jax.jit(jax.vmap(training_sweep("scan", STEPS)))(rates)
    return live


def strengths(live: jhw.LivePlot) -> dict[str, set[float]]:
    """The opacities of the loss chart's lines, those of lanes named for a role apart, with
    the fading of a lane that ran away taken out."""
    out: dict[str, set[float]] = {"named": set(), "other": set()}
    for ln in live.drawing().chart("loss").lines:
        alpha = ln.opacity / AWAY_OPACITY if ln.opacity < 1 and ln.role else ln.opacity
        if ln.opacity in (AWAY_OPACITY, AWAY_OPACITY * OTHER_OPACITY):
            alpha = ln.opacity / AWAY_OPACITY
        out["named" if ln.role else "other"].add(round(alpha, 6))
    return out


@pytest.mark.parametrize("lanes", [48, 256])
def test_past_16_lanes_the_band_its_median_and_the_named_lanes_lead(lanes: int) -> None:
    live = sweep(lanes)
    drawing = live.drawing()
    for title in ("loss", "accuracy"):
        (band,) = drawing.chart(title).bands
        assert band.median is not None and np.isfinite(band.median[1]).sum() > STEPS // 2
        # the band's entries are not repeated under each chart: the grid's row names them
        assert not any(entry.startswith("lanes") for entry in drawing.chart(title).legend)
    assert [e for e in drawing.legend if e.startswith("lanes")] == [
        "lanes' median",
        "lanes 25–75 %",
        "lanes min–max",
    ]
    assert strengths(live) == {"named": {1.0}, "other": {OTHER_OPACITY}}
    # the toggle back: every lane as strong as the named ones (as the view sends it)
    live.panel._on_view_message(live.panel, {"jhw_control": "all_lanes", "value": True}, [])
    assert live.all_lanes and strengths(live) == {"named": {1.0}, "other": {1.0}}
    live.all_lanes = False
    assert strengths(live)["other"] == {OTHER_OPACITY}


def test_a_few_lanes_are_all_drawn_as_strong_without_a_band() -> None:
    live = sweep(12)
    chart = live.drawing().chart("loss")
    assert chart.bands == () and strengths(live)["other"] <= {1.0}
    assert {ln.role for ln in chart.lines} >= {"best", "worst"}  # still named


def test_all_lanes_is_an_option_checked_naming_the_fix() -> None:
    assert sweep(48, all_lanes=True).all_lanes
    with pytest.raises(TypeError, match="all_lanes must be True or False"):
        jhw.LivePlot(all_lanes="yes")
