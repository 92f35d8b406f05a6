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

    # A real optimizer step: pure XLA work, no Python in it. The kernel's main thread stays
    # inside one XLA call for the whole run, so no Python-level handler runs until it returns.
    A = jax.random.normal(jax.random.key(0), (384, 384)) / 20
    def xla_body(c):
        i, v = c
        return i + 1, jnp.tanh(A @ v)
    solve_xla = jax.jit(lambda x0: jhw.while_loop(
        lambda c: c[0] < {MAX}, xla_body, (0, jnp.full((384, 384), x0)), max_steps={MAX},
        record=lambda c: (c[0], jnp.mean(c[1]))))
    solve_xla.lower(jnp.float32(0)).compile()
    quick = jax.jit(lambda x0: jhw.while_loop(lambda c: c[0] < 200, lambda c: (c[0] + 1, c[1]),
                                              (0, x0), max_steps=500))

    def report(final, hist):
        rows = live.history()
        print("REPORT", json.dumps(dict(
            length=int(hist.length), streamed=len(rows[1]), final_i=int(final[0]),
            last_streamed_i=int(rows[0][-1]), status=live.panel.status,
        last_equal=bool(abs(float(rows[1][-1]) - float(hist.last()[1])) <= 1e-6),
        )))

    live = jhw.LivePlot(title="stop test")
    display(live)
    """
)


class Watcher:
    """Follows the panel's updates on iopub; acts once the run is clearly under way."""

    def __init__(self, panel_comm: str, act, after_step: int = 40, after_s: float = 1.0) -> None:
        self.panel_comm, self.act, self.after_step, self.after_s = (
            panel_comm,
            act,
            after_step,
            after_s,
        )
        self.acted_at: float | None = None
        self.first_at: float | None = None
        self.steps: list[int] = []

    def __call__(self, msg: dict) -> None:
        content = msg["content"]
        if msg["msg_type"] != "comm_msg" or content.get("comm_id") != self.panel_comm:
            return
        step = content["data"].get("state", {}).get("step")
        if step is None:
            return
        self.steps.append(step)
        now = time.monotonic()
        self.first_at = self.first_at or now
        # Well into the run: XLA may run the first chunks' callbacks on the main thread, where
        # a Python-level handler would still get a chance; later ones run on its workers.
        if self.acted_at is None and step >= self.after_step and now - self.first_at > self.after_s:
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
    assert report["status"] == "stopped", report
    assert 1 < report["length"] < MAX + 1
    assert report["length"] == report["streamed"]  # streamed rows == device rows
    assert report["final_i"] == report["length"] - 1 == report["last_streamed_i"]
    assert report["last_equal"]
    # it ended soon after the request (5 ms steps; generous for a loaded 2-core machine)
    assert run.reply_received - watcher.acted_at < 5.0
    return report


CLICKS: list[int] = []

CELLS = {
    "run_async": "final, hist = await live.run_async({solve}, jnp.float32(0))",
    "run": "final, hist = live.run({solve}, jnp.float32(0))",
    "with": "with live:\n    final, hist = {solve}(jnp.float32(0))",
}


@pytest.mark.parametrize("step", ["xla", "python"])
@pytest.mark.parametrize(
    ("how", "cell"),
    [
        ("stop_click", "run_async"),  # the Stop button reaches an awaiting cell
        ("interrupt", "run"),  # ■ during a plain call
        ("interrupt", "with"),
        ("interrupt", "run_async"),  # arrives as CancelledError in the awaiting task
    ],
)
def test_stop_ends_the_run_with_its_partial_history(session, how, cell, step):
    kernel, panel = session
    if how == "stop_click":  # the view counts clicks up; the same count again is no click
        CLICKS.append(1)
        act = lambda: kernel.send_comm_update(panel, {"stop_clicks": len(CLICKS)})  # noqa: E731
    else:
        act = kernel.interrupt
    watcher = Watcher(panel, act)
    solve = "solve_xla" if step == "xla" else "solve"
    code = CELLS[cell].format(solve=solve) + "\nreport(final, hist)"
    # Unstopped, either run takes minutes: the timeout fails a stop that never lands.
    run = kernel.execute(code, on_message=watcher, timeout=90)
    check_stopped(run, watcher)


def test_interrupt_on_ordinary_code_after_a_run_still_raises(session):
    """■ on a cell that runs no loop behaves as if the package were not there."""
    kernel, _ = session
    run = kernel.execute("with live:\n    final, hist = quick(jnp.float32(0))")
    assert not run.errors, run.errors
    started = []

    def interrupt_once(msg):
        if msg["msg_type"] == "stream" and "SLEEPING" in msg["content"]["text"] and not started:
            started.append(time.monotonic())
            kernel.interrupt()

    run = kernel.execute("print('SLEEPING', flush=True)\ntime.sleep(60)", on_message=interrupt_once)
    assert started, "the cell never started"
    assert run.reply["content"]["status"] == "error"
    assert run.reply["content"]["ename"] == "KeyboardInterrupt"
    assert run.reply_received - started[0] < 30


def test_a_run_after_a_stop_completes(session):
    kernel, _ = session
    run = kernel.execute("with live:\n    final, hist = quick(jnp.float32(0))\nreport(final, hist)")
    assert not run.errors, run.errors
    line = next(ln for ln in run.stdout.splitlines() if ln.startswith("REPORT "))
    report = json.loads(line.removeprefix("REPORT "))
    assert report == {
        "length": 201, "streamed": 201, "final_i": 200, "last_streamed_i": 200,
        "status": "converged", "last_equal": True,
    }  # fmt: skip
