"""Runs as first-class things: named where they start (one name for every sink), told apart by
colour, listed in the panel with a show/hide toggle, and the static picture following.

Synthetic runs (`FakeLoop` through the hub, as the traced loop's host calls): milliseconds.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest

import jaxhist_widget as jhw
from jaxhist_widget._host.runtime._naming import MAX_CALL_CHARS, call_name
from jaxhist_widget.ui import look as legend

from ...helpers.synthetic import FakeLoop, feed, layout

SVG = "{http://www.w3.org/2000/svg}"


def one_run(values=(3.0, 2.0, 1.0)) -> None:
    """A run started now (to whatever is attached), as a jitted loop's host calls make it."""
    loop = FakeLoop(layout(("loss",)))
    loop.send(loss=list(values))
    loop.end()


def descend(x0, lr=0.1):  # a runner's function: its name and arguments name the run
    one_run([x0, x0 * (1 - lr)])
    return x0


# ------------------------------------------------------------------------ naming
def test_a_run_is_named_where_it_starts() -> None:
    rec = jhw.Recorder()
    with rec.named("adam"):
        one_run()
    rec.run(descend, 3.0, lr=1e-3)  # after the call
    rec.run(descend, 3.0, name="sgd")  # given: not passed to the function
    with rec:
        one_run()  # nothing names it
    rec.name = "default"
    with rec:
        one_run()
    with rec.named("inner"):  # a block names its runs over the sink's own name
        one_run()
    assert [(r.name, r.name_given) for r in rec.runs] == [
        ("adam", True),
        ("descend(3, lr=0.001)", False),
        ("sgd", True),
        (None, False),
        ("default", True),
        ("inner", True),
    ]


def test_every_sink_of_a_run_sees_one_name(tmp_path) -> None:
    path = tmp_path / "runs.db"
    live, store = jhw.LivePlot(keep_runs=True), jhw.Store(path, name="store default")
    with store, live.named("adam"):  # the plot's block names the run the store files too
        one_run()
    with store, live:  # the store's own name names it for the plot too
        one_run()
    live.run(descend, 2.0)
    assert [r.name for r in jhw.load_runs(path)] == ["adam", "store default"]
    assert [r["name"] for r in live.panel.runs] == ["adam", "store default", "descend(2)"]
    # a LivePlot(store=...) files the runs it draws under the names it shows
    filed = tmp_path / "filed.db"
    plot = jhw.LivePlot(store=filed)
    plot.run(descend, 5.0)
    with plot.named("given"):
        one_run()
    assert [r.name for r in jhw.load_runs(filed)] == ["descend(5)", "given"]


def test_names_are_checked() -> None:
    rec = jhw.Recorder()
    with pytest.raises(TypeError, match="a run's name is a str"):
        rec.run(descend, 1.0, name=3)
    with pytest.raises(ValueError, match="must not be empty"), rec.named("  "):
        pass
    assert not rec.attached


def test_a_call_is_named_in_a_few_characters() -> None:
    import jax.numpy as jnp

    def solve(*args, **kwargs):
        return None

    assert call_name(solve, [jnp.float32(3.0), jnp.zeros((8, 2))], {}) == "solve(3, f32[8,2])"
    assert call_name(solve, [lambda x: x, "adam", True], {"n": 5}) == "solve(λ, 'adam', True, n=5)"
    long = call_name(solve, [np.arange(3)] * 20, {})
    assert len(long) == MAX_CALL_CHARS and long.endswith("…)")


# ------------------------------------------------------------------- plot: names, colours
def test_kept_runs_are_named_coloured_and_listed() -> None:
    live = jhw.LivePlot(keep_runs=True)
    for name in ("adam", "adam", None):
        if name:
            with live.named(name):
                one_run([3.0, 2.0, 1.5])
        else:
            feed(live, {"loss": [4.0, 1.0]}, status="max_steps", max_steps=10)
    runs = live.panel.runs
    assert [r["name"] for r in runs] == ["adam", "adam (2)", "run 3"]  # told apart
    assert [r["color"] for r in runs] == list(legend.PALETTE[:3])
    assert [m.colors for m in live.figure.marks] == [[c] for c in legend.PALETTE[:3]]
    assert [m.labels for m in live.figure.marks] == [
        ["loss · adam"],
        ["loss · adam (2)"],
        ["loss · run 3"],
    ]
    last = runs[-1]
    assert (last["status"], last["step"], last["max_steps"], last["latest"]) == (
        "max_steps",
        1,
        10,
        {"loss": 1.0},
    )
    assert [r["hidden"] for r in runs] == [False] * 3 and runs[0]["elapsed"] >= 0
    live.clear()  # the colours are free again: the next run is blue
    one = jhw.LivePlot()
    for _ in range(3):  # without keep_runs every run is the one drawn, in blue
        feed(one, {"loss": [1.0, 0.5]})
    assert one.figure.marks[0].colors == [legend.PALETTE[0]]
    assert [r["name"] for r in one.panel.runs] == ["run 3"]


def test_a_stored_run_keeps_its_stored_name(tmp_path) -> None:
    path = tmp_path / "runs.db"
    with jhw.Store(path, name="baseline"):
        one_run()
    live = jhw.LivePlot()
    live.add_run(jhw.load_runs(path)[0])
    live.run(descend, 1.0)
    assert [r["name"] for r in live.panel.runs] == ["baseline", "descend(1)"]
    assert live.figure.marks[0].labels == ["loss · baseline"]


# ------------------------------------------------------------------------ hiding runs
def hide(live: jhw.LivePlot, number: int, hidden: bool = True) -> None:
    """What a run's toggle in the run list sends."""
    live.panel._on_view_message(None, {"jhw_control": "run_hidden", "value": [number, hidden]}, [])


def test_a_hidden_run_leaves_every_chart_and_its_axes() -> None:
    live = jhw.LivePlot(keep_runs=True)
    feed(live, {"loss": np.linspace(100, 50, 40), "lr": np.full(40, 1e-3)})
    feed(live, {"loss": np.linspace(2, 1, 20), "lr": np.full(20, 2e-3)})
    y_before = [(f.marks[0].scales["y"].min, f.marks[0].scales["y"].max) for f in live.figures]
    hide(live, 1)
    assert live.panel.hidden_runs == [1]
    for figure in live.figures:
        first, second = figure.marks
        assert first.visible is False and second.visible is True
    loss_y = live.figures[0].marks[1].scales["y"]
    assert loss_y.max <= 2.5, "a hidden run still stretches the y axis"
    assert live.figures[0].axes[0].scale.max < 40, "a hidden run still stretches the steps"
    assert [r["hidden"] for r in live.panel.runs] == [True, False]
    hide(live, 1, False)
    y_after = [(f.marks[0].scales["y"].min, f.marks[0].scales["y"].max) for f in live.figures]
    assert y_after == y_before and all(m.visible for f in live.figures for m in f.marks)
    live.show_run("run 2", visible=False)  # the same from Python, by name or index
    assert live.panel.hidden_runs == [2]
    live.show_run(-1)
    assert live.panel.hidden_runs == []
    with pytest.raises(LookupError, match=r"no run named 'nope'.*'run 1', 'run 2'"):
        live.show_run("nope")


def test_show_run_says_which_runs_there_are_and_takes_no_bool() -> None:
    live = jhw.LivePlot(keep_runs=True)
    with pytest.raises(IndexError, match=r"no run with index 0: this plot draws none yet"):
        live.show_run(0)
    feed(live, {"loss": np.linspace(3, 1, 10)})
    feed(live, {"loss": np.linspace(2, 1, 10)})
    with pytest.raises(IndexError, match=r"no run 5 .* 2 runs: 0 .. 1 \(-1 the latest\).*'run 1'"):
        live.show_run(5)
    with pytest.raises(IndexError, match=r"no run -3 "):
        live.show_run(-3)
    for bad in (True, False, None, 1.0):  # True would hide run 1 (the second)
        with pytest.raises(TypeError, match=r"a run's index \(int\) or name \(str\).*visible="):
            live.show_run(bad, visible=False)
    assert live.panel.hidden_runs == []
    live.show_run(np.int64(0), visible=False)  # a numpy integer is an index
    assert live.panel.hidden_runs == [1]


def test_the_static_picture_shows_names_colours_and_hidden_runs() -> None:
    live = jhw.LivePlot(keep_runs=True, title="compare")
    with live.named("adam"):
        one_run([3.0, 2.0, 1.0])
    with live.named("sgd"):
        one_run([3.0, 2.5, 2.0])
    hide(live, 1)
    root = ET.fromstring(live._repr_mimebundle_()["image/svg+xml"])
    rows = [g for g in root.iter(f"{SVG}g") if g.get("class") == "jhw-run"]
    assert [(g.get("data-name"), g.get("data-hidden")) for g in rows] == [
        ("adam", "true"),
        ("sgd", "false"),
    ]
    swatches = [g.find(f"{SVG}rect").get("fill") for g in rows]
    assert swatches == list(legend.PALETTE[:2])
    row_text = ["".join(t.text or "" for t in g.iter(f"{SVG}text")) for g in rows]
    assert row_text[0].startswith("adamfinished2 / 1,000 steps") and "hidden" in row_text[0]
    lines = [p for p in root.iter(f"{SVG}path") if p.get("class") == "jhw-line"]
    assert [(p.get("data-label"), p.get("stroke")) for p in lines] == [
        ("loss · sgd", legend.PALETTE[1])
    ]  # the hidden run's line is not drawn


def test_kept_vmap_runs_take_their_colour_and_one_alone_colours_its_lanes() -> None:
    live = jhw.LivePlot(keep_runs=True, lane_labels=["a", "b"])
    curves = np.stack([np.linspace(3, 1, 20), np.linspace(2, 1, 20)])
    feed(live, {"loss": curves}, lanes=2)
    (mark,) = live.figure.marks
    assert mark.colors == list(legend.PALETTE[:2])  # one run alone: a colour per lane
    assert 'class="jhw-legend-lane"' in live.legend.value
    feed(live, {"loss": curves / 2}, lanes=2)
    first, second = live.figure.marks
    # two runs: each run's lanes in its colour (the hover names the lane), none faded
    assert first.colors == [legend.PALETTE[0]] and second.colors == [legend.PALETTE[1]]
    assert list(first.opacities) == list(second.opacities) == [1.0, 1.0]
    assert live.legend.value == ""
    hide(live, 1)  # hiding a run recolours nothing (and the legend stays true to the colours)
    assert second.colors == [legend.PALETTE[1]] and "jhw-legend-lane" not in live.legend.value
