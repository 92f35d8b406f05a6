"""Ctrl-C (SIGINT) in a plain script stops a compute-bound loop and keeps its partial history.

Each case runs a fresh ``python`` subprocess, as a user's script would run, and sends it a real
SIGINT from outside once rows are arriving. The step is pure XLA work (``tanh(A @ x)``, no
Python in it; 384x384 is large enough that XLA runs it, and the callbacks, on its worker
threads), so the main thread sits inside one XLA call for the whole run: the stop must come
through the wakeup fd polled by the chunk callback (see `jaxhist_widget.interrupts`), not through
a Python-level handler, which runs only once the call returned.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

# A fresh Python process per case: kept out of the quick subset (see pyproject.toml).
pytestmark = pytest.mark.slow

CHILD = textwrap.dedent(
    """
    import json, os, signal, sys, threading, time
    import jax, jax.numpy as jnp
    import jaxhist_widget as jhw

    HOW, STEP, MAX = sys.argv[1], sys.argv[2], int(sys.argv[3])
    START = signal.getsignal(signal.SIGINT)  # as this process was started
    IGNORED = START is signal.SIG_IGN

    def python_step(x):  # a step that calls Python (where a signal handler gets to run)
        time.sleep(0.002)
        return x

    A = jax.random.normal(jax.random.key(0), (384, 384)) / 20

    def body(c):
        i, x = c
        x = jnp.tanh(A @ x)  # pure XLA work: the main thread never leaves XLA
        if STEP == "python":
            x = jax.pure_callback(python_step, jax.ShapeDtypeStruct(x.shape, x.dtype), x)
        return i + 1, x

    solve = jax.jit(lambda x: jhw.while_loop(
        lambda c: c[0] < MAX, body, (jnp.int32(0), x), max_steps=MAX,
        record=lambda c: (c[0], jnp.mean(c[1]))))

    class Announce(jhw.Recorder):
        def on_rows(self, run, lanes):
            if max(run.counts) > 20 and not getattr(self, "said", False):
                self.said = True
                self.handler_in_run = signal.getsignal(signal.SIGINT)
                print("RUNNING", flush=True)

    x0 = jnp.ones((384, 384))
    jax.block_until_ready(jax.jit(lambda x: jnp.tanh(A @ x))(x0))
    solve.lower(x0).compile()  # compile first: an interrupt while compiling raises, as always
    previous_fd = -1
    if HOW == "asyncio":  # an event loop that owns the wakeup fd, like asyncio scripts have
        import asyncio
        loop = asyncio.new_event_loop()
        loop.add_signal_handler(signal.SIGTERM, lambda: None)
        previous_fd = signal.set_wakeup_fd(-1)
        signal.set_wakeup_fd(previous_fd)
    rec = Announce()
    t0 = time.monotonic()
    if HOW == "run":
        final, hist = rec.run(solve, x0)
    elif HOW == "thread-attached":  # attached in the main thread, run called from a worker
        with rec:
            out = {}
            worker = threading.Thread(target=lambda: out.update(r=solve(x0)))
            worker.start()
            while worker.is_alive():
                worker.join(0.05)
            final, hist = out["r"]
    else:
        with rec:
            final, hist = solve(x0)
    ended_at = time.monotonic()
    seconds = ended_at - t0
    rows = rec.history()
    report = dict(
        status=rec.runs[-1].status,
        length=int(hist.length),
        streamed=len(rows[0]),
        rows_equal=bool((rows[0] == hist.to_numpy()[0]).all()
                        and (rows[1] == hist.to_numpy()[1]).all()),
        final_step=int(final[0]),
        seconds=seconds,
        ended_at=ended_at,
        handler_in_run_is_start=rec.handler_in_run is START,
        handler_restored=signal.getsignal(signal.SIGINT) is START,
        wakeup_fd_restored=signal.set_wakeup_fd(previous_fd) == previous_fd,
    )
    # the next run starts fresh and completes
    with jhw.Recorder() as again:
        _, h2 = jhw.while_loop(lambda i: i < 30, lambda i: i + 1, jnp.int32(0), max_steps=50)
    report["next_run"] = [again.runs[-1].status, int(h2.length)]
    print("REPORT " + json.dumps(report), flush=True)
    # outside a run, Ctrl-C is a KeyboardInterrupt again (and nothing where it is ignored)
    print("IDLE", flush=True)
    try:
        time.sleep(3 if IGNORED else 60)
        print("NO-INTERRUPT", flush=True)
    except KeyboardInterrupt:
        print("KEYBOARD-INTERRUPT", flush=True)
    """
)


def run_child(
    how: str, step: str, max_steps: int = 100_000, ignored: bool = False, timeout: float = 120
) -> tuple[dict, list[str]]:
    """Run the script; press Ctrl-C once its run is under way and once it is idle. With
    ``ignored`` it starts with SIGINT ignored, as a job started in the background of a shell
    without job control does (``cmd &`` in a script)."""
    env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONUNBUFFERED="1")
    command = [sys.executable, "-c", CHILD, how, step, str(max_steps)]
    if ignored:  # the shell ignores SIGINT, and the script inherits that through exec
        command = ["sh", "-c", 'trap "" INT; exec "$@"', "sh", *command]
    proc = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    lines: list[str] = []
    report: dict = {}
    killer = threading.Timer(timeout, proc.kill)  # a run that never stops fails, not hangs
    killer.start()
    try:
        for line in proc.stdout:  # type: ignore[union-attr]
            lines.append(line.rstrip())
            if line.startswith("RUNNING"):
                time.sleep(0.5)  # well into the run
                report["sent_at"] = time.monotonic()
                proc.send_signal(signal.SIGINT)
            elif line.startswith("REPORT "):
                report.update(json.loads(line.removeprefix("REPORT ")))
                report["reported_at"] = time.monotonic()
            elif line.startswith("IDLE"):
                time.sleep(0.3)
                proc.send_signal(signal.SIGINT)
        proc.wait()
    finally:
        killer.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = proc.stderr.read() if proc.stderr else ""  # type: ignore[union-attr]
    assert "REPORT" in "\n".join(lines), f"no report; stdout={lines}\nstderr={err[-3000:]}"
    return report, lines


@pytest.mark.parametrize(
    ("how", "step"),
    [
        ("with", "xla"),  # the case that hung: pure XLA step, `with sink:`
        ("run", "xla"),
        ("asyncio", "xla"),  # another library owns the wakeup fd: it gets it back
        ("thread-attached", "xla"),  # the loop runs on a worker, the sink armed in main
        ("with", "python"),  # a step that calls Python (the Python-level handler acts first)
    ],
)
def test_ctrl_c_stops_a_running_script_and_keeps_its_history(how, step):
    report, lines = run_child(how, step)
    assert report["status"] == "stopped", report
    assert 20 < report["length"] < 100_001
    assert report["streamed"] == report["length"] and report["rows_equal"]
    assert report["final_step"] == report["length"] - 1  # the carry of the last completed step
    # Unstopped, the run takes minutes. The stop lands at the next chunk flush (~50 ms here);
    # generous bounds for a loaded 2-core machine (latency is measured in benchmarks/).
    assert report["reported_at"] - report["sent_at"] < 10, report
    assert report["handler_restored"] and report["wakeup_fd_restored"], report
    assert report["next_run"] == ["converged", 31], report
    assert "KEYBOARD-INTERRUPT" in lines, lines  # ordinary code: Ctrl-C raises as before


def test_ctrl_c_does_nothing_where_the_script_ignores_it():
    # A script started in the background of a shell without job control inherits SIGINT
    # ignored, so that Ctrl-C at the terminal (meant for the foreground command) leaves it
    # alone: with the package too, the press neither stops the run nor raises.
    report, lines = run_child("with", "xla", max_steps=6_000, ignored=True)
    assert report["sent_at"] < report["ended_at"], "pressed after the run: the test shows nothing"
    assert report["status"] == "converged" and report["length"] == 6_001, report
    assert report["streamed"] == report["length"] and report["rows_equal"]
    assert report["handler_in_run_is_start"], "the package replaced the ignored handler"
    assert report["handler_restored"] and report["wakeup_fd_restored"], report
    assert report["next_run"] == ["converged", 31], report
    assert "NO-INTERRUPT" in lines, lines
