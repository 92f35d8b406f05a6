"""`jhw.log` in notebook cells, in a real kernel: a ``%%jaxhist`` or auto-mode cell whose only
loop is a Python ``for`` over a jitted step gets its plot, which moves while the cell runs; ■
ends the loop with its rows kept, the run reads stopped and the cell ends with one line."""

from __future__ import annotations

import textwrap
import time
from typing import Any

import pytest

from ..helpers.kernels import KernelDriver, check_ok, message_time, printed

pytestmark = pytest.mark.kernel

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
#: About 3 s of steps: the plot's throttle may space its updates out after a slow one (the first
#: one makes the marks), so a shorter loop can end between two updates on a loaded machine.
STEPS = 6_000

SETUP = textwrap.dedent(
    """
    import json
    import jax, jax.numpy as jnp, numpy as np
    import jaxhist_widget as jhw
    %load_ext jaxhist_widget

    A = jax.random.normal(jax.random.key(0), (256, 256)) / 16.0

    @jax.jit
    def step(x):  # pure XLA work, as a training step is (~0.5 ms here)
        x = jax.lax.fori_loop(0, 8, lambda _, x: jnp.tanh(A @ x), x)
        return x, jnp.linalg.norm(x)

    def train(steps):
        global done
        x, done = jnp.ones((256, 32)), 0
        for _ in range(steps):
            x, norm = step(x)
            jhw.log(norm=norm)
            done += 1

    def report(plot, tag="REPORT"):
        print(tag, json.dumps(dict(
            rows=len(plot.history()["norm"]), done=done, status=plot.runs[-1].status,
            runs=len(plot.runs))), flush=True)
    """
)


def widget_views(run: Any) -> list[str]:
    return [
        m["content"]["data"][WIDGET_VIEW]["model_id"]
        for _, m in run.messages
        if m["msg_type"] == "display_data" and WIDGET_VIEW in m["content"].get("data", {})
    ]


def panel_steps(run: Any) -> list[tuple[float, int]]:
    """(kernel time, step) of every panel update the cell sent."""
    return [
        (message_time(m), m["content"]["data"]["state"]["step"])
        for _, m in run.messages
        if m["msg_type"] == "comm_msg" and "step" in m["content"]["data"].get("state", {})
    ]


@pytest.fixture(scope="module")
def session(module_kernel: KernelDriver) -> KernelDriver:
    check_ok(module_kernel.execute(SETUP))
    return module_kernel


@pytest.mark.parametrize("where", ["magic", "auto"])
def test_a_cell_that_only_logs_gets_its_plot_and_it_moves(session: KernelDriver, where) -> None:
    cell = f"train({STEPS})\nprint('END', flush=True)"
    if where == "magic":
        cell = "%%jaxhist -o plot\n" + cell
    else:
        check_ok(session.execute("%jaxhist on -o plot"))
    try:
        run = session.execute(cell)
    finally:
        if where == "auto":
            session.execute("%jaxhist off")
    check_ok(run)
    assert len(widget_views(run)) == 1, "the cell shows one plot"
    (end_at,) = [
        message_time(m)
        for _, m in run.messages
        if m["msg_type"] == "stream" and "END" in m["content"]["text"]
    ]
    during = {s for t, s in panel_steps(run) if t < end_at and 0 < s < STEPS - 1}
    assert len(during) >= 3, f"the plot moved {len(during)} times while the loop ran"
    report = session.execute("report(plot)")
    check_ok(report)
    assert printed(report, "REPORT") == dict(rows=STEPS, done=STEPS, status="converged", runs=1)


def test_an_interrupt_ends_the_loop_with_its_rows_and_the_cell_with_one_line(
    session: KernelDriver,
) -> None:
    pressed: dict[str, float] = {}

    def press_when_under_way(msg: dict[str, Any]) -> None:
        state = msg["content"].get("data", {}).get("state", {})
        if msg["msg_type"] == "comm_msg" and state.get("step", 0) >= 500 and not pressed:
            pressed["at"] = time.monotonic()
            session.interrupt()  # the notebook's ■

    # Without a working stop the loop runs for minutes: the timeout fails the test.
    run = session.execute(
        "%%jaxhist -o plot\ntrain(10**7)", on_message=press_when_under_way, timeout=90
    )
    assert pressed, "the loop never got under way"
    content = run.reply["content"]
    assert content["status"] == "error" and content["ename"] == "Stopped", content
    assert [e.count("\n") for e in run.errors] == [0], run.errors  # one line, no traceback
    report = session.execute("report(plot)")
    check_ok(report)
    got = printed(report, "REPORT")
    assert got["status"] == "stopped" and 500 <= got["done"] < 10**7
    assert got["rows"] == got["done"] + 1  # every row logged, the stopping call's included
    assert run.reply_received - pressed["at"] < 30
