"""Ctrl-C to a group of `jax.distributed` processes, as a terminal sends it (`_host/interrupts/`).

Every process runs the same SPMD program with a sink attached; the host calls run on process
0 only. One press must leave every process with the same outcome: all return the partial
result of the same stopped run, or all raise ``KeyboardInterrupt`` — never one of each, which
would send the programs separate ways.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from ...helpers import ROOT
from ...helpers.signals import press_group

pytestmark = pytest.mark.slow

CHILD = textwrap.dedent(
    """
    import faulthandler, sys
    faulthandler.dump_traceback_later(120, exit=True)
    import json, os, signal, time
    pid, port, mode = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    import jax
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(f"localhost:{port}", num_processes=2, process_id=pid,
                               initialization_timeout=60)
    import numpy as np, jax.numpy as jnp
    from jax.sharding import NamedSharding, PartitionSpec as P
    import jaxhist_widget as jhw

    mesh = jax.make_mesh((4,), ("d",), axis_types=(jax.sharding.AxisType.Auto,))
    N = 256
    A = jnp.asarray(np.random.default_rng(0).normal(size=(N, N)) / 20, jnp.float32)

    @jax.jit
    def solve(x0, limit):
        return jhw.while_loop(lambda c: c[0] < limit, lambda c: (c[0] + 1, jnp.tanh(A @ c[1])),
                              (jnp.int32(0), x0), max_steps=1_000_000,
                              record=lambda c: jnp.mean(c[1]))

    data = np.linspace(-1, 1, N, dtype=np.float32)
    x0 = jax.make_array_from_callback((N,), NamedSharding(mesh, P("d")), lambda i: data[i])
    jax.block_until_ready(solve(x0, 3))  # compiled before any press

    class Announce(jhw.Recorder):
        def on_rows(self, run, lanes):
            if max(run.counts) > 20 and not getattr(run, "said", False):
                run.said = True
                print("RUNNING", flush=True)

    rec = Announce()
    outcome, length, out = None, None, None
    try:
        with rec:
            if mode == "idle":
                print("RUNNING", flush=True)  # process 0 says when: both wait in the block
                time.sleep(20)
            out = solve(x0, 1_000_000)
            length = int(out[1].length)
            outcome = "returned"
            # The block lasts until every press was delivered: a press after it would be
            # the script's, wherever it is by then (documented), not this block's.
            sys.stdin.readline()
    except KeyboardInterrupt:
        outcome = "KeyboardInterrupt"
    # A KeyboardInterrupt may leave the block while the loop still runs (JAX's wait for a
    # multi-process array's value runs signal handlers). The press stopped it: it ends at its
    # next flush. Exiting before then aborts process 0 (JAX, not the package: a host callback
    # in flight at exit, "terminate called without an active exception"), and process 1,
    # waiting for its peer in the loop's collectives, hangs.
    deadline = time.monotonic() + 20
    while out is not None and not out[1].length.is_ready() and time.monotonic() < deadline:
        time.sleep(0.02)
    settled = out is None or out[1].length.is_ready()
    print("REPORT " + json.dumps(dict(pid=pid, outcome=outcome, length=length, settled=settled,
                                      runs=[r.status for r in rec.runs])), flush=True)
    if not settled:  # exiting would wait for the loop (or leave the other process hanging)
        os._exit(3)
    jax.distributed.shutdown()
    """
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def press_the_group(mode: str, gaps: tuple[float, ...]) -> list[dict]:
    """Start the two processes in a process group of their own; once process 0 says its run
    is under way, send SIGINT to the group, then again after each gap; then let a process whose
    run returned leave its block. Their reports.

    Each process stays in its block until every press was delivered to both: a stopped run
    may return within a millisecond of the first press, and a second press after the block is
    no longer the block's (it is the script's, wherever it has got to: documented). Left to
    chance, one process or both would leave first now and then.
    """
    port = str(_free_port())
    env = {
        **os.environ,
        "XLA_FLAGS": "--xla_force_host_platform_device_count=2",
        "JAX_PLATFORMS": "cpu",
        "PYTHONUNBUFFERED": "1",
    }
    procs: list[subprocess.Popen] = []
    for pid in (0, 1):
        procs.append(
            subprocess.Popen(
                [sys.executable, "-c", CHILD, str(pid), port, mode],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                cwd=ROOT,
                env=env,
                # one group, as a terminal's foreground job: the first process leads it
                process_group=0 if pid == 0 else procs[0].pid,
            )
        )
    killers = [threading.Timer(150, p.kill) for p in procs]
    for k in killers:
        k.start()
    reports: list[dict] = [{}, {}]
    errors = ["", ""]

    def read(pid: int) -> None:
        errors[pid] = procs[pid].stderr.read()  # type: ignore[union-attr]

    readers = [threading.Thread(target=read, args=(pid,), daemon=True) for pid in (0, 1)]
    for r in readers:
        r.start()
    try:
        for line in procs[0].stdout:  # type: ignore[union-attr]
            if line.strip() == "RUNNING":
                time.sleep(0.5)
                press_group(procs[0], procs)
                for gap in gaps:
                    time.sleep(gap)
                    press_group(procs[0], procs)
                # Delivered: the kernel gave each press to a thread, whose C handler writes
                # the wakeup byte at once (a margin for a thread preempted in between).
                time.sleep(0.2)
                for p in procs:
                    with contextlib.suppress(OSError, ValueError):  # gone already
                        p.stdin.write("PRESSED\n")  # type: ignore[union-attr]
                        p.stdin.flush()  # type: ignore[union-attr]
            elif line.startswith("REPORT "):
                reports[0] = json.loads(line.removeprefix("REPORT "))
        for p in procs:  # no press is coming (any more): nobody waits for one
            with contextlib.suppress(OSError):
                p.stdin.close()  # type: ignore[union-attr]
        for line in procs[1].stdout:  # type: ignore[union-attr]
            if line.startswith("REPORT "):
                reports[1] = json.loads(line.removeprefix("REPORT "))
        for p in procs:
            p.wait()
    finally:
        for k in killers:
            k.cancel()
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        for r in readers:
            r.join(5)
    for pid in (0, 1):
        assert reports[pid], f"process {pid}: rc={procs[pid].returncode}\n{errors[pid][-3000:]}"
    return reports


def test_one_press_stops_the_run_in_every_process_at_the_same_step():
    p0, p1 = press_the_group("run", ())
    assert p0["outcome"] == p1["outcome"] == "returned", (p0, p1)
    assert p0["length"] == p1["length"] < 1_000_000, (p0, p1)
    assert p0["runs"] == ["stopped"] and p1["runs"] == []  # the rows reach process 0 only


def test_two_quick_presses_interrupt_every_process():
    p0, p1 = press_the_group("run", (0.005,))
    assert p0["outcome"] == p1["outcome"] == "KeyboardInterrupt", (p0, p1)
    # The exception may leave the block before the loop has seen the stop; the loop must still
    # stop (the block's end abandoned the run and its stop request was lost: the loop ran on
    # towards max_steps, and the processes hung at exit until faulthandler ended them).
    assert p0["settled"] and p1["settled"], (p0, p1)


def test_a_press_while_no_run_is_in_flight_interrupts_every_process():
    p0, p1 = press_the_group("idle", ())
    assert p0["outcome"] == p1["outcome"] == "KeyboardInterrupt", (p0, p1)
    assert p0["length"] is None and p1["length"] is None
