"""The panel's comm keeps its control messages on the subshell the page sent them on, and
leaves every other message to ipykernel's routing (the mid-run behaviour itself is tested in a
real kernel: ``tests/kernel/test_kernel_midrun.py``)."""

from __future__ import annotations

import pytest

from jaxhist_widget.ui.panel._subshell import serve_controls_at_once

CONTROL = {"method": "custom", "content": {"jhw_control": "smoothing", "value": 0.5}}
UPDATE = {"method": "update", "state": {"smoothing": 0.5}, "buffer_paths": []}
OTHER_CUSTOM = {"method": "custom", "content": {"type": "anywidget-command"}}


def _comm_published_from_the_main_shell() -> object:
    comm_module = pytest.importorskip("ipykernel.comm.comm")
    comm = comm_module.BaseComm(target_name="jhw-test", primary=False)
    if not hasattr(comm, "_reply_subshell_for"):
        pytest.skip("this ipykernel routes no comm messages by subshell")
    comm._reply_subshell_id = None  # what publishing from the main shell's cell leaves
    return comm


def test_controls_stay_on_the_page_subshell_other_messages_do_not() -> None:
    comm = _comm_published_from_the_main_shell()
    assert comm._reply_subshell_for(CONTROL, "sub") is None  # ipykernel alone: main shell
    assert serve_controls_at_once(comm)
    assert serve_controls_at_once(comm)  # twice is once
    assert comm._reply_subshell_for(CONTROL, "sub") == "sub"
    assert comm._reply_subshell_for(UPDATE, "sub") is None
    assert comm._reply_subshell_for(OTHER_CUSTOM, "sub") is None
    assert comm._reply_subshell_for(None, "sub") is None


def test_a_kernel_without_the_hook_is_left_as_it_is() -> None:
    class Plain:
        pass

    comm = Plain()
    assert not serve_controls_at_once(comm)
    assert not hasattr(comm, "_reply_subshell_for")
