"""The panel's controls arrive as messages from its view; the panel sets its traits from them."""

from __future__ import annotations

from typing import Any

import pytest

from jaxhist_widget.ui.panel import LivePanel


def _send(panel: LivePanel, content: Any) -> None:
    # What ipywidgets calls for a custom message from a view (`model.send(content)` in JS).
    panel._handle_custom_msg(content, [])


def test_each_control_message_sets_its_trait() -> None:
    panel = LivePanel()
    _send(panel, {"jhw_control": "stop", "value": None})
    _send(panel, {"jhw_control": "stop", "value": None})
    _send(panel, {"jhw_control": "clear", "value": None})
    _send(panel, {"jhw_control": "log_y", "value": True})
    _send(panel, {"jhw_control": "keep_runs", "value": True})
    _send(panel, {"jhw_control": "plot_width", "value": 812})
    state = panel.get_state(["stop_clicks", "clear_clicks", "log_y", "keep_runs", "plot_width"])
    assert state == {
        "stop_clicks": 2,
        "clear_clicks": 1,
        "log_y": True,
        "keep_runs": True,
        "plot_width": 812,
    }


@pytest.mark.parametrize(
    "content",
    [
        {"jhw_control": "log_y", "value": "yes"},
        {"jhw_control": "plot_width", "value": -3},
        {"jhw_control": "plot_width", "value": 1.5},
        {"jhw_control": "status", "value": "converged"},  # not a control
        {"method": "anywidget-command"},  # anywidget's own
        ["stop"],
    ],
)
def test_other_messages_change_nothing(content: Any) -> None:
    panel = LivePanel()
    before = panel.get_state()
    _send(panel, content)
    assert panel.get_state() == before
