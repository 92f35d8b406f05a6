"""One goal for the whole plot: the field it ranks and whether its best is the lowest or the
highest (``params_field`` / ``params_best``; by default a loss-like field, lowest best, and an
accuracy-like one highest best), which every "best", "median" and "worst" follows: the lanes
named in the legend and drawn for a role, the legend's ``best = lowest loss: lr=...`` and the
hyperparameter chart; the best lane named at any lane count.

Before (issue 57), JAX's sorted keys made ``accuracy`` the first field of a ``{"loss",
"accuracy"}`` record, ranked lowest-is-best: the legend called a diverged lane best and the
dashed "accuracy best (lowest)" line plotted each lane's worst accuracy; choosing ``loss`` for
the hyperparameter chart did not re-rank the lanes named; below 64 lanes none was named.
"""

from __future__ import annotations

import jax
import numpy as np
import pytest

import jaxhist_widget as jhw
from jaxhist_widget.ui.series import Goal, best_of, default_field

from ...helpers.loops import training_sweep

STEPS = 150


@pytest.fixture(scope="module", params=[8, 256], ids=["8 lanes", "256 lanes"])
def sweep(request) -> tuple[jhw.LivePlot, np.ndarray, dict[str, np.ndarray]]:
    """A vmap of a ``jhw.scan`` training loop writing ``{"loss", "accuracy"}``, over rates
    (ascending) of which the largest diverge; each lane's rows of each metric (row 0, the
    scan's stand-in, left out)."""
    rates = np.logspace(-3, 0, request.param).astype(np.float32)
    live = jhw.LivePlot(lane_values={"lr": rates})
    with live:
        hist = jax.jit(jax.vmap(training_sweep("scan", STEPS)))(rates)
    rows = {k: np.asarray(v[:, 1:], np.float64) for k, v in hist.values.items()}
    return live, rates, rows


def roles(live: jhw.LivePlot) -> dict[str, int]:
    """The lane each role names, read off the lines of every step chart (the same on all)."""
    named: dict[str, set[int]] = {}
    for chart in live.drawing().charts.values():
        for ln in chart.lines:
            if ln.lane is None:  # (a hyperparameter chart's star: the same lane, elsewhere)
                continue
            for role in filter(None, ln.role.split(", ")):
                named.setdefault(role, set()).add(ln.lane)
    assert all(len(lanes) == 1 for lanes in named.values()), named
    return {role: lanes.pop() for role, lanes in named.items()}


def expected(rows: dict[str, np.ndarray], field: str, best: str) -> tuple[int, int]:
    """The best and the worst lane by the last value of ``field`` among those no metric of
    which diverged."""
    last = {k: v[:, -1] for k, v in rows.items()}
    ok = np.isfinite(last["loss"]) & np.isfinite(last["accuracy"])
    lanes = np.flatnonzero(ok)
    values = last[field][ok] * (1 if best == "min" else -1)
    return int(lanes[np.argmin(values)]), int(lanes[np.argmax(values)])


def test_by_default_the_loss_ranks_lowest_best_at_any_lane_count(sweep) -> None:
    live, rates, rows = sweep
    last = rows["loss"][:, -1]
    assert (~np.isfinite(last)).any()  # some lanes diverged
    best, worst = expected(rows, "loss", "min")
    named = roles(live)
    assert (named["best"], named["worst"]) == (best, worst)
    assert np.isfinite(last[named["median"]])  # never a diverged lane
    assert not np.isfinite(last[named["diverged"]])
    drawing = live.drawing()
    assert drawing.legend[0].startswith(f"best = lowest loss: lr={rates[best]:.4g}"), drawing.legend
    # the hyperparameter chart ranks the same field, each lane's best its lowest
    chart = drawing.chart("loss vs lr")
    assert "loss best (lowest)" in chart.legend
    assert "accuracy vs lr" not in drawing.charts


def test_a_goal_named_re_ranks_every_best(sweep) -> None:
    live, rates, rows = sweep
    live.params_field = "accuracy"  # its best is its highest, by its name
    try:
        best, worst = expected(rows, "accuracy", "max")
        named = roles(live)
        assert (named["best"], named["worst"]) == (best, worst)
        drawing = live.drawing()
        assert drawing.legend[0].startswith(f"best = highest accuracy: lr={rates[best]:.4g}")
        chart = drawing.chart("accuracy vs lr")
        assert "accuracy best (highest)" in chart.legend
        # each lane's best accuracy is its highest (before: its lowest), lanes in rate order
        np.testing.assert_array_equal(chart.line("accuracy best").y, rows["accuracy"].max(1))
    finally:
        live.params_field = None


def test_the_default_goal_is_read_from_the_fields_names() -> None:
    assert default_field(["accuracy", "train_loss", "val_loss"]) == "val_loss"
    assert default_field(["grad_norm", "accuracy"]) == "accuracy"
    assert [best_of(n) for n in ("val_acc", "loss", "top1_err", "reward")] == [
        "max",
        "min",
        "min",
        "max",
    ]
    assert Goal(None, None).text("val_loss", "min") == "best = lowest val_loss"
