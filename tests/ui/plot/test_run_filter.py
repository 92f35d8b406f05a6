"""Comparing runs as in TensorBoard: the run filter (a regex over the run names), show all / hide
all, and vmap lanes hidden one by one; each a control message from the view, a `LivePlot`
option or method from Python, and the static picture drawing the same.

Synthetic runs (no compiled loop): milliseconds per test.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import jaxhist_widget as jhw
from jaxhist_widget.ui.series import check_hidden_lanes, check_run_filter, hide_lanes, run_pattern

from ...helpers.static import SVG, picture
from ...helpers.synthetic import feed

NAMES = ("adam lr=0.1", "adam lr=0.01", "sgd lr=0.1", "Adagrad")


def control(live: jhw.LivePlot, name: str, value: object) -> None:
    """What the view sends (`sendControl` in js/panel/kernel.js)."""
    live.panel._on_view_message(None, {"jhw_control": name, "value": value}, [])


def four_runs(**options: object) -> jhw.LivePlot:
    live = jhw.LivePlot(keep_runs=True, **options)
    for k, name in enumerate(NAMES):
        with live.named(name):
            feed(live, {"loss": list(np.linspace(4 - k, 1, 20))})
    return live


def drawn_runs(live: jhw.LivePlot) -> list[str]:
    """The runs whose lines the live chart shows."""
    return live.drawing().chart("loss").runs()


def listed(live: jhw.LivePlot) -> list[str]:
    """The runs the panel's run list shows (the view leaves the filtered ones out)."""
    return [r["name"] for r in live.panel.runs if not r["filtered"]]


def pictured_runs(live: jhw.LivePlot) -> tuple[list[str], int]:
    """The runs the static picture lists, and its lines."""
    _, root = picture(live)
    names = [g.get("data-name") for g in root.iter(f"{SVG}g") if g.get("class") == "jhw-run"]
    lines = [p for p in root.iter(f"{SVG}path") if p.get("class") == "jhw-line"]
    return names, len(lines)


# ---------------------------------------------------------------------------- the filter
def test_a_pattern_is_searched_case_insensitively_and_an_invalid_one_is_no_filter() -> None:
    pattern = run_pattern("^ADAM")
    assert pattern is not None
    assert [n for n in NAMES if pattern.search(n)] == ["adam lr=0.1", "adam lr=0.01"]
    assert run_pattern("") is None
    assert run_pattern("adam(") is None  # half typed: not applied
    assert run_pattern("x" * 2000) is None


def test_python_is_told_what_a_bad_filter_is() -> None:
    assert check_run_filter(None) == ""
    with pytest.raises(ValueError, match=r"no regular expression .*re\.escape"):
        check_run_filter("lr=(0.1")
    with pytest.raises(TypeError, match="run_filter must be a str"):
        check_run_filter(3)
    with pytest.raises(ValueError, match="run_filter"):
        jhw.LivePlot(run_filter="[adam")
    live = jhw.LivePlot()
    with pytest.raises(ValueError, match="run_filter"):
        live.run_filter = "*"
    assert live.run_filter == ""


def test_the_filter_control_draws_and_lists_only_the_matching_runs() -> None:
    live = four_runs()
    control(live, "run_hidden", [1, True])  # a toggle the filter must not touch
    control(live, "run_filter", "^AD")
    assert live.run_filter == "^AD"
    assert listed(live) == ["adam lr=0.1", "adam lr=0.01", "Adagrad"]
    assert drawn_runs(live) == ["adam lr=0.01", "Adagrad"]  # run 1 stays hidden by its toggle
    assert [r["hidden"] for r in live.panel.runs] == [True, False, False, False]
    names, lines = pictured_runs(live)
    assert names == ["adam lr=0.1", "adam lr=0.01", "Adagrad"]
    assert lines == 2
    control(live, "run_filter", "")
    assert drawn_runs(live) == list(NAMES[1:])
    assert listed(live) == list(NAMES)


def test_an_invalid_filter_from_the_view_is_kept_as_typed_and_not_applied() -> None:
    live = four_runs()
    control(live, "run_filter", "sgd")
    assert drawn_runs(live) == ["sgd lr=0.1"]
    control(live, "run_filter", "sgd|(")  # on its way to "sgd|(adam)"
    assert live.panel.run_filter == "sgd|("  # the view shows what was typed, marked invalid
    assert drawn_runs(live) == list(NAMES)
    assert listed(live) == list(NAMES)
    control(live, "run_filter", 42)  # no filter: ignored
    assert live.panel.run_filter == "sgd|("


def test_the_option_and_property_set_the_same_filter_and_new_runs_follow_it() -> None:
    live = four_runs(run_filter="lr=0\\.1$")
    assert live.panel.run_filter == "lr=0\\.1$"
    assert drawn_runs(live) == ["adam lr=0.1", "sgd lr=0.1"]
    names, lines = pictured_runs(live)
    assert (names, lines) == (["adam lr=0.1", "sgd lr=0.1"], 2)
    _, root = picture(live)
    says = [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "jhw-runs-filter"]
    assert says == ["filter 'lr=0\\\\.1$': 2 of 4 runs"]
    live.run_filter = re.escape("Adagrad")
    assert drawn_runs(live) == ["Adagrad"]
    with live.named("adagrad lr=1"):  # a run started under the filter is filtered too
        feed(live, {"loss": [2.0, 1.0]})
    assert drawn_runs(live) == ["Adagrad", "adagrad lr=1"]
    with live.named("rmsprop"):
        feed(live, {"loss": [2.0, 1.0]})
    assert "rmsprop" not in drawn_runs(live)
    assert [r["filtered"] for r in live.panel.runs][-1] is True


def test_the_y_axis_fits_the_runs_the_filter_shows() -> None:
    live = four_runs()
    assert live.drawing().chart("loss").y_range[1] >= 4.0
    control(live, "run_filter", "Adagrad")  # its loss goes 1 .. 1: the others reach 4
    assert live.drawing().chart("loss").y_range[1] < 3.0


# ------------------------------------------------------------------- show all / hide all
def test_hide_all_and_show_all_act_on_the_runs_the_filter_shows() -> None:
    live = four_runs()
    control(live, "run_filter", "adam")
    control(live, "runs_hidden", True)
    assert sorted(live.panel.hidden_runs) == [1, 2]
    assert drawn_runs(live) == []
    control(live, "run_filter", "")
    assert drawn_runs(live) == ["sgd lr=0.1", "Adagrad"]  # the others' toggles kept
    control(live, "runs_hidden", False)
    assert live.panel.hidden_runs == []
    assert drawn_runs(live) == list(NAMES)
    control(live, "runs_hidden", "yes")  # no such value: ignored
    assert live.panel.hidden_runs == []


# ------------------------------------------------------------------------- single lanes
def sweep(live: jhw.LivePlot, lanes: int = 3) -> None:
    values = [np.linspace(3 + k, 1 + k, 30) for k in range(lanes)]
    feed(live, {"loss": values}, lanes=lanes, status=["converged"] * lanes)


def lane_shown(live: jhw.LivePlot, smoothed: bool = False) -> list[bool]:
    """Whether each lane of the (one) batched run's line (or its smoothed twin) is drawn: a
    hidden one is transparent (its points stay: bqplot cannot place a line without one)."""
    lines = [ln for ln in live.drawing().chart("loss").lines if ln.smoothed == smoothed]
    assert [ln.lane for ln in lines] == [0, 1, 2] and all(len(ln.y) for ln in lines)
    return [ln.opacity > 0 for ln in lines]


def test_a_lane_hidden_from_the_view_leaves_its_line_and_the_picture() -> None:
    live = jhw.LivePlot(lane_labels=["lr=1", "lr=2", "lr=3"])
    sweep(live)
    assert lane_shown(live) == [True, True, True]
    control(live, "lane_hidden", [1, 2, True])
    assert live.panel.hidden_lanes == [[1, 2]]
    assert lane_shown(live) == [True, True, False]
    assert live.drawing().chart("loss").y_range[1] < 5.0  # lane 2 reached 5
    assert live.panel.runs[0]["drawn"] == [
        [0, "lr=1", False],
        [1, "lr=2", False],
        [2, "lr=3", True],
    ]
    legend = live.legend.value
    assert 'data-run="1" data-lane="2" data-hidden="true"' in legend
    assert 'data-run="1" data-lane="0" data-hidden="false"' in legend
    _, root = picture(live)
    lines = [p for p in root.iter(f"{SVG}path") if p.get("class") == "jhw-line"]
    assert len(lines) == 2
    legend_texts = [t.text for t in root.iter(f"{SVG}text")]
    assert "lr=3 (worst) (hidden)" in legend_texts  # (the goal names it: lowest loss best)
    control(live, "lane_hidden", [1, 2, False])
    assert live.panel.hidden_lanes == []
    assert lane_shown(live) == [True, True, True]
    control(live, "lane_hidden", [1, True])  # not a lane: ignored
    assert live.panel.hidden_lanes == []


def test_ignoring_outliers_the_y_axis_fits_the_lanes_shown() -> None:
    # Lane 2 runs from 5 to 3: a third of the points, not outliers. Hidden, it leaves the axis
    # whether or not outliers are ignored; shown again, it is back in it.
    live = jhw.LivePlot(lane_labels=["lr=1", "lr=2", "lr=3"], ignore_outliers=True)
    sweep(live)
    y_max = lambda: live.drawing().chart("loss").y_range[1]  # noqa: E731
    assert y_max() >= 5.0
    control(live, "lane_hidden", [1, 2, True])
    assert y_max() < 5.0  # lanes 0 and 1 reach 4
    live.ignore_outliers = False
    assert y_max() < 5.0
    live.ignore_outliers = True
    assert y_max() < 5.0
    control(live, "lane_hidden", [1, 2, False])
    assert y_max() >= 5.0
    live.show_lane(-1, 0, visible=False)
    live.show_lane(-1, 1, visible=False)
    live.show_lane(-1, 2, visible=False)  # every lane hidden: the axis keeps its range
    assert y_max() >= 5.0
    live.ignore_outliers = False  # as it does when every run is hidden
    assert y_max() >= 5.0


def test_show_lane_from_python_and_smoothing_and_the_window_keep_it_hidden() -> None:
    live = jhw.LivePlot(keep_runs=True)
    sweep(live)
    live.show_lane(-1, 0, visible=False)
    assert live.panel.hidden_lanes == [[1, 0]]
    live.smoothing = 0.6
    assert lane_shown(live, smoothed=True) == [False, True, True]
    assert lane_shown(live) == [False, True, True]
    live.last_steps = 10
    assert lane_shown(live) == [False, True, True]
    assert live.drawing().chart("loss").y_range[0] > 1.5  # lane 0 ends at 1, the others 2
    with pytest.raises(TypeError, match="lane must be"):
        live.show_lane(-1, True)
    with pytest.raises(LookupError):
        live.show_lane("nope", 0)
    live.keep_runs = False
    with live:
        pass
    live.clear()  # the run is gone, and its hidden lanes with it
    assert live.panel.hidden_lanes == []


def test_hidden_lanes_are_checked_and_hiding_keeps_the_lanes_in_place() -> None:
    assert check_hidden_lanes([(2, 3), [1, 0], [2, 3]]) == [[1, 0], [2, 3]]
    with pytest.raises(TypeError, match="hidden lanes"):
        check_hidden_lanes([[1, -1]])
    x = np.arange(4)
    lines = [([x, x, x], [x * 1.0, x + 10.0, x - 5.0], (-5.0, 13.0, 1.0))]
    ((xs, ys, extent),) = hide_lanes(lines, drawn=(0, 4, 7), hidden={4})
    assert [len(y) for y in ys] == [4, 4, 4] and len(xs) == 3  # drawn transparent
    assert extent == (-5.0, 3.0, 1.0)
    assert hide_lanes(lines, drawn=(0, 4, 7), hidden={5}) is lines
