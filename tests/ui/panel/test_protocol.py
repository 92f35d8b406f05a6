"""The protocol table of ``docs/how-it-works.md`` (the panel's traits, the controls its view
sends, the messages Python answers with) is held to the code: every synced trait of
`LivePanel` is a row, its direction says whether the view reads it, every control the
JavaScript sends is a row and changes the trait its row names (or is a request Python serves),
and every answer Python sends is a row the view reads.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

import jaxhist_widget as jhw
from jaxhist_widget.ui.panel import LivePanel

from ...helpers import ROOT

DOC = ROOT / "docs" / "how-it-works.md"
HEADING = "## The panel's protocol (Python ↔ JavaScript)"
#: The view's JavaScript, not its tests. bqplot_adapter.js reads bqplot's models, not the panel.
JS = [
    p
    for p in sorted((ROOT / "js").rglob("*.js"))
    if p.name != "bqplot_adapter.js" and ".test." not in p.name
]
#: The key of a control in a message from the view (`LivePanel._on_view_message`).
CONTROL_KEY = "jhw_control"
#: A control the view sends: ``sendControl(model, "name", value)`` (``js/panel/kernel.js``).
SEND = r'sendControl\(\s*\w+,\s*"(\w+)"'

#: A valid value of each control that sets a trait; the test sends it and reads which trait
#: changed. (A control that is a request has none: its handler answers it.)
SAMPLES: dict[str, Any] = {
    "stop": None,
    "clear": None,
    "log_y": True,
    "log_x": True,
    "keep_runs": True,
    "ignore_outliers": True,
    "all_lanes": True,
    "x_axis": "wall",
    "smoothing": 0.5,
    "last_steps": 100,
    "run_filter": "adam",
    "step_range": [10, 20],
    "chart_log": ["loss", True],
    "run_hidden": [1, True],
    "runs_hidden": True,
    "lane_hidden": [1, 0, True],
    "params_field": "acc",
    "params_best": "max",
    "plot_width": 812,
}


def _rows() -> list[dict[str, Any]]:
    """The table's rows: each one's names (the backticked words of its first cell), kind,
    direction and what it changes or means (its last cell)."""
    text = DOC.read_text(encoding="utf-8")
    assert HEADING in text, f"{DOC.name} lost its section {HEADING!r}"
    section = text.split(HEADING, 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("| `") or len(cells) != 6:
            continue
        names = re.findall(r"`(\w+)`", cells[0])
        rows.append({"names": names, "kind": cells[1], "direction": cells[2], "last": cells[5]})
    return rows


def _named(kind: str, direction: str | None = None) -> set[str]:
    return {
        name
        for row in _rows()
        if row["kind"] == kind and direction in (None, row["direction"])
        for name in row["names"]
    }


def _js(pattern: str) -> set[str]:
    return {m for p in JS for m in re.findall(pattern, p.read_text(encoding="utf-8"))}


def test_the_table_has_a_row_per_kind_and_no_name_twice() -> None:
    rows = _rows()
    assert {row["kind"] for row in rows} == {"trait", "control", "message"}
    for kind in ("trait", "control", "message"):
        names = [n for row in rows if row["kind"] == kind for n in row["names"]]
        assert len(names) == len(set(names)), (kind, names)


def test_every_synced_trait_of_the_panel_is_in_the_table() -> None:
    traits = set(LivePanel.class_own_traits(sync=True))
    assert _named("trait") == traits, {
        "not in the table": sorted(traits - _named("trait")),
        "no trait": sorted(_named("trait") - traits),
    }


def test_the_traits_the_view_reads_are_those_the_table_sends_to_it() -> None:
    read = _js(r'(?<![.\w])(?:model\.get|get)\("(\w+)"\)')
    assert read <= set(LivePanel.class_own_traits(sync=True)), "the view reads no such trait"
    assert _named("trait", "Python → view") == read
    assert _named("trait", "Python only") == _named("trait") - read


def test_every_control_the_view_sends_is_in_the_table() -> None:
    sent = _js(SEND)
    assert sent, "no sendControl call found in js/: the pattern is stale"
    assert _named("control") == sent, {
        "not in the table": sorted(sent - _named("control")),
        "never sent": sorted(_named("control") - sent),
    }


def _changes() -> dict[str, str | None]:
    """Per control, the trait its row says it changes; None for a request."""
    traits = set(LivePanel.class_own_traits(sync=True))
    out: dict[str, str | None] = {}
    for row in _rows():
        if row["kind"] != "control":
            continue
        if row["last"].startswith("a request"):
            out.update(dict.fromkeys(row["names"]))
            continue
        if "the trait of the same name" in row["last"]:
            out.update({name: name for name in row["names"]})
            continue
        # one trait for all the row's controls, or one each, in order
        named = [t for t in re.findall(r"`(\w+)`", row["last"]) if t in traits]
        assert len(named) in (1, len(row["names"])), row
        targets = named if len(named) == len(row["names"]) else named * len(row["names"])
        out.update(zip(row["names"], targets, strict=True))
    return out


@pytest.mark.parametrize("control", sorted(_js(SEND)))
def test_each_control_is_handled_as_its_row_says(control: str) -> None:
    changes = _changes()
    assert control in changes, f"no row for the control {control!r}"
    trait = changes[control]
    if trait is None:  # a request: a LivePlot's panel serves it
        live = jhw.LivePlot()
        assert control in live.panel.__dict__["_requests"], f"nothing serves {control!r}"
        return
    panel = LivePanel(runs=[{"number": 1, "name": "run 1"}])
    before = panel.get_state()
    # what ipywidgets calls for a custom message from the view (`model.send` in JS)
    panel._handle_custom_msg({CONTROL_KEY: control, "value": SAMPLES[control]}, [])
    after = panel.get_state()
    assert {k for k in after if after[k] != before[k]} == {trait}


def test_every_control_that_sets_a_trait_has_a_sample() -> None:
    assert set(SAMPLES) == {c for c, trait in _changes().items() if trait is not None}


def test_every_answer_python_sends_is_in_the_table_and_read_by_the_view() -> None:
    package = ROOT / "jaxhist_widget"
    sent = {
        key
        for p in package.rglob("*.py")
        for key in re.findall(r'\{"(jhw_\w+)":', p.read_text(encoding="utf-8"))
    } - {CONTROL_KEY}
    read = _js(r"\b(jhw_\w+)\b") - {CONTROL_KEY}
    assert sent == read, {"sent": sorted(sent), "read": sorted(read)}
    assert _named("message", "Python → view") == sent
