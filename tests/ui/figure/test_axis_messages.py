"""What the kernel sends a view's axes: a tick format before the tick values that need it.

bqplot's axis view redraws its ticks on a `tick_values` change through a d3 transition that
runs a frame later with the format it had *then*; a `tick_format` change redraws at once. When
one message carried both and the view applied the values first (the order of a message's keys
is not fixed), the late transition drew the new ticks in the old format and kept them so: "1e-6"
set by the kernel, "0.000001" on the page, clipped by a margin made for "1e-6". So the format
goes in a message of its own, before the values.
"""

from __future__ import annotations

from typing import Any

import bqplot
import ipywidgets
import numpy as np
import pytest

import jaxhist_widget as jhw

from ...helpers.synthetic import feed


@pytest.fixture
def axis_messages(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict[str, Any]]]:
    """Every state update sent to an axis view, as (model id, state), in order."""
    sent: list[tuple[str, dict[str, Any]]] = []
    send = ipywidgets.Widget._send

    def record(self: ipywidgets.Widget, msg: dict[str, Any], buffers: Any = None) -> None:
        if isinstance(self, bqplot.Axis) and msg.get("method") == "update":
            sent.append((self.model_id, dict(msg["state"])))
        send(self, msg, buffers=buffers)

    monkeypatch.setattr(ipywidgets.Widget, "_send", record)
    return sent


@pytest.mark.parametrize("log_y", [False, True])
def test_a_tick_format_is_sent_before_the_tick_values_that_need_it(
    axis_messages: list[tuple[str, dict[str, Any]]], log_y: bool
) -> None:
    live = jhw.LivePlot(log_y=log_y, fields=["loss", "lr"])
    # Values over many decades and a long run: the y and x formats change as rows arrive.
    steps = np.arange(3000)
    feed(live, {"loss": 10.0 ** (-steps / 400.0), "lr": 1e-6 * (1 + steps % 7)})
    assert any("tick_values" in s for _, s in axis_messages), "no ticks were sent"
    assert sum("tick_format" in s for _, s in axis_messages) >= 2, "no format changed"
    for _, state in axis_messages:
        assert not ("tick_values" in state and "tick_format" in state), sorted(state)
    # Each axis's last format message holds the format it has now.
    axes = {a.model_id: a for a in _axes(live)}
    for model_id, axis in axes.items():
        formats = [
            s["tick_format"] for m, s in axis_messages if m == model_id and "tick_format" in s
        ]
        if formats:
            assert formats[-1] == axis.tick_format


def _axes(live: jhw.LivePlot) -> list[bqplot.Axis]:
    found = []
    stack: list[Any] = [live.widget]
    while stack:
        w = stack.pop()
        if isinstance(w, bqplot.Figure):
            found += list(w.axes)
        stack += list(getattr(w, "children", ()))
    return found


def test_a_zero_tick_reads_0_in_a_scientific_format() -> None:
    # A learning-rate warm-up from 0 to 1e-4: d3's ".0e" writes the zero tick "0e+0".
    live = jhw.LivePlot(fields=["lr"])
    feed(live, {"lr": np.linspace(0.0, 1e-4, 200)})
    (axis,) = [a for a in _axes(live) if a.orientation == "vertical"]
    assert "e" in axis.tick_format and 0.0 in list(axis.tick_values)
    assert axis.tick_labels == {"0": "0"}
    svg = live._repr_mimebundle_()["image/svg+xml"]
    assert ">0e+0<" not in svg and ">1e-4<" in svg
