"""Every panel control acts while a normal cell runs a compute-bound loop, in a real kernel.

JupyterLab (>= 4.4, its default setting) sends widget messages on a kernel subshell; the
panel keeps its control messages there (``jaxhist_widget/ui/panel/_subshell.py``), so the
kernel applies them while the main shell is inside one XLA call. Here the clicks are the exact
messages a view sends (``js/panel/kernel.js``), sent on a subshell as JupyterLab sends them, while a
``with live:`` cell runs a loop of pure XLA work (no Python in its steps). The last click is
Stop, as a message: the cell ends only if it, too, is served mid-run.
"""

from __future__ import annotations

import json
import textwrap
import time
from typing import Any

import pytest

from ..helpers.kernels import KernelDriver, check_ok, printed

pytestmark = pytest.mark.kernel

MAX = 200_000  # a minute of steps or more: the Stop message ends the cell long before

SETUP = textwrap.dedent(
    f"""
    import json
    import jax, jax.numpy as jnp
    import jaxhist_widget as jhw

    A = jax.random.normal(jax.random.key(0), (128, 128)) / 10
    def body(c):
        i, v = c
        return i + 1, jnp.tanh(A @ v)

    solve = jax.jit(lambda v0: jhw.while_loop(
        lambda c: c[0] < {MAX}, body, (0, v0), max_steps={MAX},
        record=lambda c: {{"value": jnp.mean(c[1] ** 2) + 1.0}}))
    solve.lower(jnp.ones((128, 128))).compile()
    live = jhw.LivePlot(title="mid-run")
    display(live)
    print("ID", json.dumps(live.panel.model_id))
    """
)

RUN = textwrap.dedent(
    """
    with live:
        final, hist = solve(jnp.ones((128, 128)))
        jax.block_until_ready(final)
    p = live.panel
    print("STATE", json.dumps(dict(
        status=live.runs[-1].status, smoothing=p.smoothing, log_y=p.log_y, log_x=p.log_x,
        log_charts=list(p.log_charts), last_steps=p.last_steps, step_range=list(p.step_range),
        ignore_outliers=p.ignore_outliers, hidden_runs=list(p.hidden_runs),
        keep_runs=p.keep_runs, plot_width=p.plot_width, x_axis=p.x_axis,
        run_filter=p.run_filter, hidden_lanes=[list(x) for x in p.hidden_lanes])))
    """
)

#: The clicks, in order, and the trait each one changes (what the kernel sends back).
CLICKS: list[tuple[str, Any, str]] = [
    ("smoothing", 0.6, "smoothing"),
    ("chart_log", ["value", True], "log_charts"),
    ("log_y", True, "log_y"),
    ("log_x", True, "log_x"),
    ("x_axis", "relative", "x_axis"),
    ("last_steps", 500, "last_steps"),
    ("step_range", [10, 400], "step_range"),
    ("ignore_outliers", False, "ignore_outliers"),  # (on by default: the click turns it off)
    ("run_hidden", [1, True], "hidden_runs"),
    ("runs_hidden", True, "hidden_runs"),
    ("run_filter", ".", "run_filter"),
    ("lane_hidden", [1, 0, True], "hidden_lanes"),
    ("keep_runs", True, "keep_runs"),
    ("plot_width", 777, "plot_width"),
]


def test_every_control_is_applied_while_a_normal_cell_runs(kernel: KernelDriver) -> None:
    setup = kernel.execute(SETUP)
    check_ok(setup)
    comm_id = printed(setup, "ID")
    subshell = kernel.create_subshell()

    sent: dict[str, float] = {}
    echoed: dict[str, float] = {}

    def on_message(msg: dict[str, Any]) -> None:
        if msg["msg_type"] != "comm_msg" or msg["content"]["comm_id"] != comm_id:
            return
        state = msg["content"]["data"].get("state", {})
        if not sent and state.get("status") == "running":
            for name, value, _ in CLICKS:
                kernel.send_control(comm_id, name, value, subshell=subshell)
            sent["clicks"] = time.monotonic()
        if sent:
            for key in state:
                echoed.setdefault(key, time.monotonic())
        wanted = {trait for _, _, trait in CLICKS}
        if sent and wanted <= echoed.keys() and "stop" not in sent:
            kernel.send_control(comm_id, "stop", subshell=subshell)
            sent["stop"] = time.monotonic()

    run = kernel.execute(RUN, timeout=240, on_message=on_message)
    check_ok(run)
    assert "stop" in sent, f"not every click came back mid-run: {sorted(echoed)}"
    # Every change came back while the cell ran (the kernel applied it then), not at its end.
    for _, _, trait in CLICKS:
        assert echoed[trait] < run.reply_received, trait
    state = printed(run, "STATE")
    assert state["status"] == "stopped"
    assert state == {
        "status": "stopped",
        "smoothing": 0.6,
        "log_y": True,
        "log_x": True,
        "log_charts": ["value"],
        "last_steps": 500,
        "step_range": [10, 400],
        "ignore_outliers": False,
        "hidden_runs": [1],
        "keep_runs": True,
        "plot_width": 777,
        "x_axis": "relative",
        "run_filter": ".",
        "hidden_lanes": [[1, 0]],
    }, json.dumps(state)


def test_without_a_subshell_the_controls_wait_for_the_cell(kernel: KernelDriver) -> None:
    # The main shell's messages stay in order behind the running cell (as before subshells).
    setup = kernel.execute(SETUP.replace(f"{MAX}", "10_000"))
    check_ok(setup)
    comm_id = printed(setup, "ID")
    sent: list[float] = []
    echoed: list[float] = []

    def on_message(msg: dict[str, Any]) -> None:
        if msg["msg_type"] != "comm_msg" or msg["content"]["comm_id"] != comm_id:
            return
        state = msg["content"]["data"].get("state", {})
        if not sent and state.get("status") == "running":
            kernel.send_control(comm_id, "smoothing", 0.6)
            sent.append(time.monotonic())
        if "smoothing" in state:
            echoed.append(time.monotonic())

    run = kernel.execute(RUN, timeout=240, on_message=on_message)
    check_ok(run)
    assert sent and not echoed, "a main-shell message was handled while the cell ran"
    assert printed(run, "STATE")["smoothing"] == 0.0
    after = kernel.execute('print("S", json.dumps(live.smoothing))')
    assert printed(after, "S") == 0.6  # applied once the cell ended


def test_the_kernel_reads_busy_again_after_a_control_served_mid_run(kernel: KernelDriver) -> None:
    """Issue 50 (jupyterlab#10701): a control served on a subshell ends with an "idle" status,
    which JupyterLab shows as the whole kernel's: its indicator read "idle" while the cell ran
    on. The kernel now says "busy" for the running cell right after."""
    setup = kernel.execute(SETUP)
    check_ok(setup)
    comm_id = printed(setup, "ID")
    subshell = kernel.create_subshell()
    statuses: list[tuple[str, str]] = []  # (state, the type of the request it is for)
    sent: dict[str, float] = {}

    def on_message(msg: dict[str, Any]) -> None:
        if msg["msg_type"] == "status" and "stop" not in sent:
            state = msg["content"]["execution_state"]
            statuses.append((state, msg["parent_header"].get("msg_type", "")))
        if msg["msg_type"] != "comm_msg" or msg["content"]["comm_id"] != comm_id:
            # a second on, every status of the control is in: Stop
            since = time.monotonic() - sent.get("smoothing", time.monotonic())
            if since > 1.0 and "stop" not in sent:
                sent["stop"] = time.monotonic()
                kernel.send_control(comm_id, "stop", subshell=subshell)
            return
        state = msg["content"]["data"].get("state", {})
        if "smoothing" not in sent and state.get("status") == "running":
            kernel.send_control(comm_id, "smoothing", 0.6, subshell=subshell)
            sent["smoothing"] = time.monotonic()

    run = kernel.execute(RUN, timeout=240, on_message=on_message)
    check_ok(run)
    assert "stop" in sent
    served = [i for i, (state, kind) in enumerate(statuses) if kind == "comm_msg"]
    assert [statuses[i][0] for i in served] == ["busy", "idle"], statuses
    # after the control's "idle", the kernel said "busy" for the cell: the last status read
    assert statuses[-1] == ("busy", "execute_request"), statuses[served[-1] :]
