"""A sweep's default view shows the bulk of its lanes: lanes that run away (diverge, or end
decades above the rest) leave the y range, which fits the others; each line leaving is marked
by an arrow at the edge, the legend counts the lanes that ran away, and a loss spanning decades
is offered a log axis. The static picture shows the same.

Before (issue 50), a 4096-rate sweep with 205 diverging lanes had a y axis to 1.5e38 (the lines
and the band followed the lanes on their way to inf) and the 3,891 lanes that converged were a
flat line at 0.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import jaxhist_widget as jhw
from jaxhist_widget.ui.look import AWAY_OPACITY, CHART_HEIGHT_PX, OTHER_OPACITY
from jaxhist_widget.ui.series import RunDrawing

from ...helpers.static import SVG, picture
from ...helpers.sweeps import STEPS, sweep
from ...helpers.synthetic import FakeLoop, feed, layout


def limits(figure) -> tuple[float, float]:
    scale = figure.axes[1].scale
    return float(scale.min), float(scale.max)


def arrows(figure, marker: str = "triangle-up") -> np.ndarray:
    marks = [m for m in figure.marks if getattr(m, "marker", None) == marker]
    return np.concatenate([np.asarray(m.x, float) for m in marks] or [np.zeros(0)])


@pytest.mark.parametrize(("lanes", "away"), [(4096, 205), (48, 5)])
def test_the_y_range_fits_the_lanes_that_did_not_run_away(lanes: int, away: int) -> None:
    values = sweep(lanes, away)
    live = jhw.LivePlot(log_y=False)  # (the fence on a linear axis)
    feed(live, {"loss": values}, lanes=lanes, max_steps=STEPS)
    lo, hi = limits(live.figure)
    bulk = np.concatenate(values[: lanes - away])
    # the bulk's spread fills most of the chart's height (before: 1e-36 of it)
    assert (bulk.max() - bulk.min()) / (hi - lo) > 0.8, (lo, hi)
    assert hi < 2.0
    # the lines that leave are marked where they leave, at the top, and counted in the legend
    assert len(arrows(live.figure)) > 0 and len(arrows(live.figure, "triangle-down")) == 0
    assert f"{away:,} lanes ran away above: left out of the y range" in live.legend.value
    # every value a pixel the page can parse: a runaway's 1e36 over an axis to 2 would be
    # ~1e38 px of a 300 px plot, at float32's limit (an invalid SVG path past it); it is drawn
    # far off the chart instead, leaving it the same way
    ys = [
        np.ravel(np.asarray(m.y, np.float64))
        for m in live.figure.marks
        if type(m).__name__ == "Lines"
    ]
    drawn = np.concatenate(ys)
    top = float(drawn[np.isfinite(drawn)].max())
    assert top > 100 * hi and (top - lo) / (hi - lo) * CHART_HEIGHT_PX < 1e30, top
    # the loss spans decades: a log axis is offered, by the chart's log button and a note
    (decades,) = live.panel.log_hints.values()
    assert list(live.panel.log_hints) == ["loss"] and decades >= 7
    assert f"loss spans {decades} decades" in live.legend.value


def test_the_static_picture_shows_the_bulk_the_arrows_and_the_count() -> None:
    live = jhw.LivePlot(log_y=False)
    feed(live, {"loss": sweep(4096, 205)}, lanes=4096, max_steps=STEPS)
    _, root = picture(live)
    labels = [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "y"]
    assert max(float(t.replace(",", "")) for t in labels) <= 2.0, labels  # no 1e36 tick
    (up,) = [g for g in root.iter(f"{SVG}g") if g.get("class") == "jhw-runaway-up"]
    assert len(up) > 0
    text = " ".join(t.text or "" for t in root.iter(f"{SVG}text"))
    assert "205 lanes ran away above" in text
    # (the live legend offers a log axis; the picture has no button to press: it says none)
    assert "loss spans 8 decades" in live.legend.value and "button" not in text
    # every coordinate of the picture stays near it: none of the runaway's 1e36
    numbers = [float(v) for v in _coordinates(live._repr_mimebundle_()["image/svg+xml"])]
    assert max(map(abs, numbers)) < 1e6


def _coordinates(svg: str) -> list[str]:
    import re

    paths = re.findall(r' d="([^"]+)"', svg)
    return [n for d in paths for n in re.findall(r"-?\d+(?:\.\d+)?(?:e[+-]?\d+)?", d)]


def test_on_a_log_axis_the_bulk_spans_its_decades_and_the_runaways_leave() -> None:
    live = jhw.LivePlot(log_y=True)
    feed(live, {"loss": sweep(4096, 205)}, lanes=4096, max_steps=STEPS)
    lo, hi = limits(live.figure)
    assert lo <= 1e-8 and hi < 10, (lo, hi)  # the converged lanes' decades, not 1e36
    assert "205 lanes ran away above" in live.legend.value
    assert live.panel.log_hints == {}  # on a log axis already


def test_a_lane_that_spiked_and_came_back_is_no_runaway() -> None:
    # A spike is left out by "ignore outliers", not by default: the lane ends with the rest.
    values = sweep(64, 0)
    values[7] = values[7].copy()
    values[7][20] = 1e4
    live = jhw.LivePlot(ignore_outliers=False, log_y=False)
    feed(live, {"loss": values}, lanes=64, max_steps=STEPS)
    assert limits(live.figure)[1] >= 1e4
    assert "ran away" not in live.legend.value
    live.ignore_outliers = True
    assert limits(live.figure)[1] < 2.0
    assert 20 in arrows(live.figure)  # it leaves the chart there: marked


def test_a_zoom_and_a_hidden_lane_keep_fitting_the_bulk() -> None:
    live = jhw.LivePlot(log_y=False)
    feed(live, {"loss": sweep(48, 5)}, lanes=48, max_steps=STEPS)
    # (its lanes' line, not the band's polygons nor its median)
    (line,) = [m for m in live.figure.marks if type(m).__name__ == "Lines" and len(m.labels) > 1]
    # the lanes that ran away are drawn faint: they cross the chart as often as not (past
    # 16 lanes, those drawn for no role fainter still)
    named = {ln.lane for ln in live.drawing().chart().lines if ln.role}
    faint = [1.0 if k in named else OTHER_OPACITY for k in range(48)]
    expected = [f * (AWAY_OPACITY if k >= 43 else 1.0) for k, f in enumerate(faint)]
    assert list(line.opacities) == pytest.approx(expected)
    live.step_range = (10, 40)
    _, hi = limits(live.figure)
    assert hi < 2.0 and "5 lanes ran away above" in live.legend.value
    live.step_range = None
    for lane in range(43, 48):  # every runaway hidden: none is left to count
        live.show_lane(-1, lane, visible=False)
    assert "ran away" not in live.legend.value and limits(live.figure)[1] < 2.0


def test_a_few_lanes_are_all_fitted() -> None:
    # Ten lanes are no bulk to leave one out of (each a colour of its own, named in the
    # legend, read one by one): the axis fits all of them.
    values = sweep(10, 1)
    live = jhw.LivePlot(ignore_outliers=False, log_y=False)  # (the fence's subject, not outliers)
    feed(live, {"loss": values}, lanes=10, max_steps=STEPS)
    top = max(v[np.isfinite(v)].max() for v in values)
    assert limits(live.figure)[1] >= top and not math.isinf(top)


def test_each_lanes_extent_is_numpys_whatever_the_lanes_lengths() -> None:
    values = [v[: 40 + k % 7] for k, v in enumerate(sweep(200, 10))]
    live = jhw.LivePlot()
    feed(live, {"loss": values}, lanes=200, max_steps=STEPS)
    d = RunDrawing(live.runs[0], 1)  # the run's series, as the plot reduces them
    assert d.start(None)
    d.ingest()
    (spread,) = d.lane_spreads.values()
    for k, v in enumerate(values):
        v = v.astype(np.float32).astype(np.float64)  # as recorded
        finite = v[np.isfinite(v)]
        assert (spread.lo[k], spread.hi[k]) == (finite.min(), finite.max())
        assert spread.last[k] == finite[-1] and spread.gone[k] == (len(finite) < len(v))


def test_a_value_drawn_far_off_the_axis_is_drawn_true_once_the_axis_reaches_it() -> None:
    # A loss about 1, then a jump to 1e8 that the axis follows (outliers kept): drawn at the
    # bound of the axis it arrived on (1e4 of its spans off it), the value is drawn again as
    # it is once the axis grew to it, not left at 1e4 inside a chart to 1e8.
    live = jhw.LivePlot(ignore_outliers=False, log_y=False)
    with live:
        loop = FakeLoop(layout(("loss",)))
        loop.send(loss=np.linspace(1.0, 0.5, 20))
        live.refresh()
        loop.send(loss=np.r_[np.full(5, 0.5), 1e8])
        live.refresh()
        assert limits(live.figure)[1] >= 1e8
        (line,) = [m for m in live.figure.marks if type(m).__name__ == "Lines"]
        assert float(np.nanmax(np.asarray(line.y, np.float64))) == pytest.approx(1e8)
        loop.end()
