"""Stopping a LivePlot run in a real kernel: the Stop button (async cell) and the interrupt (■).

A real ipykernel through `jupyter_client`; the Stop click is the exact comm message a view sends
when the button is pressed, the interrupt is `KernelManager.interrupt_kernel()` (SIGINT), as
JupyterLab's ■ does. The tests share one kernel and run in order, like cells of a notebook.
"""

from __future__ import annotations

import json
import textwrap
import time

import pytest

pytestmark = pytest.mark.kernel

MAX = 100_000  # 5 ms steps: ~8 minutes unless stopped

SETUP = textwrap.dedent(
    f"""
    import json, time
    import jax, jax.numpy as jnp
    import jaxhist_widget as jhw
    from IPython.display import display

    def slow(v):
        time.sleep(0.005)
        return v

    def body(c):
        i, v = c
        v = jax.pure_callback(slow, jax.ShapeDtypeStruct((), jnp.float32), v + 1,
                              vmap_method="broadcast_all")
        return i + 1, v

    solve = jax.jit(lambda x0: jhw.while_loop(lambda c: c[0] < {MAX}, body, (0, x0),
                                              max_steps={MAX}))
    quick = jax.jit(lambda x0: jhw.while_loop(lambda c: c[0] < 200, lambda c: (c[0] + 1, c[1]),
                                              (0, x0), max_steps=500))

    def report(final, hist):
        rows = live.history()
        print("REPORT", json.dumps(dict(
            length=int(hist.length), streamed=len(rows[1]), final_i=int(final[0]),
            last_streamed_i=int(rows[0][-1]), status=live.panel.status,
        )))

    live = jhw.LivePlot(title="stop test")
    display(live)
    """
)


class Watcher:
    """Follows the panel's updates on iopub; acts once the run is clearly under way."""

    def __init__(self, panel_comm: str, act, after_step: int = 40) -> None:
        self.panel_comm, self.act, self.after_step = panel_comm, act, after_step
        self.acted_at: float | None = None
        self.steps: list[int] = []

    def __call__(self, msg: dict) -> None:
        content = msg["content"]
        if msg["msg_type"] != "comm_msg" or content.get("comm_id") != self.panel_comm:
            return
        step = content["data"].get("state", {}).get("step")
        if step is None:
            return
        self.steps.append(step)
        if self.acted_at is None and step >= self.after_step:
            self.acted_at = time.monotonic()
            self.act()


@pytest.fixture(scope="module")
def session(module_kernel):
    setup = module_kernel.execute(SETUP)
    assert not setup.errors, setup.errors
    panel = [
        m["content"]["comm_id"]
        for _, m in setup.messages
        if m["msg_type"] == "comm_open" and "stop_clicks" in m["content"]["data"].get("state", {})
    ]
    assert panel, "the LivePanel was not displayed"
    return module_kernel, panel[0]


def check_stopped(run, watcher) -> dict:
    assert run.reply["content"]["status"] == "ok", run.reply["content"]
    assert not run.errors, "the cell showed a traceback:\n" + "\n".join(run.errors)
    assert watcher.acted_at is not None, f"the run never got under way: steps {watcher.steps}"
    line = next(ln for ln in run.stdout.splitlines() if ln.startswith("REPORT "))
    report = json.loads(line.removeprefix("REPORT "))
    assert report["status"] == "stopped"
    assert 1 < report["length"] < MAX + 1
    assert report["length"] == report["streamed"]  # streamed rows == device rows
    assert report["final_i"] == report["length"] - 1 == report["last_streamed_i"]
    # it ended soon after the request (5 ms steps; generous for a loaded 2-core machine)
    assert run.reply_received - watcher.acted_at < 5.0
    return report


CELLS = {
    "run_async": "final, hist = await live.run_async(solve, jnp.float32(0))",
    "run": "final, hist = live.run(solve, jnp.float32(0))",
    "with": "with live:\n    final, hist = solve(jnp.float32(0))",
}


@pytest.mark.parametrize(
    ("how", "cell"),
    [
        ("stop_click", "run_async"),  # the Stop button reaches an awaiting cell
        ("interrupt", "run"),  # ■ during a plain call
        ("interrupt", "with"),
        ("interrupt", "run_async"),  # arrives as CancelledError in the awaiting task
    ],
)
def test_stop_ends_the_run_with_its_partial_history(session, how, cell):
    kernel, panel = session
    if how == "stop_click":
        act = lambda: kernel.send_comm_update(panel, {"stop_clicks": 1})  # noqa: E731
    else:
        act = kernel.interrupt
    watcher = Watcher(panel, act)
    run = kernel.execute(f"{CELLS[cell]}\nreport(final, hist)", on_message=watcher, timeout=60)
    check_stopped(run, watcher)


def test_a_run_after_a_stop_completes(session):
    kernel, _ = session
    run = kernel.execute("with live:\n    final, hist = quick(jnp.float32(0))\nreport(final, hist)")
    assert not run.errors, run.errors
    line = next(ln for ln in run.stdout.splitlines() if ln.startswith("REPORT "))
    report = json.loads(line.removeprefix("REPORT "))
    assert report == {
        "length": 201, "streamed": 201, "final_i": 200, "last_streamed_i": 200,
        "status": "converged",
    }  # fmt: skip
