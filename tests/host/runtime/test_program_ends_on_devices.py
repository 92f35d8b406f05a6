"""Where dispatch is asynchronous (issue 56: 4 forced CPU devices here, as on a TPU or a GPU, a
jitted call returns before its loop has run): a block waits for the loops called inside it
whether or not their results are kept, a run whose program died ends ``failed``, a block opened
in a sink's hook does not wait for the loop that runs the hook, and Python's exit waits for the
rows on their way.

The device count is fixed when JAX starts, so each case runs in a fresh Python process, with a
timeout: a deadlock fails the test instead of hanging the suite.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ...helpers import ROOT

pytestmark = pytest.mark.slow  # fresh Python processes: kept out of the quick subset

TIMEOUT = 120  # s; each case takes a few seconds where nothing deadlocks

PRELUDE = """
import sys, threading, time
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P
import jaxhist_widget as jhw
from jaxhist_widget._host import HUB

assert jax.device_count() == 4
mesh = jax.make_mesh((4,), ("d",), axis_types=(jax.sharding.AxisType.Auto,))
M = 256
B = jax.device_put(jax.random.normal(jax.random.PRNGKey(1), (M, M)) / 16,
                   NamedSharding(mesh, P("d", None)))
x0 = jax.device_put(jnp.linspace(-1, 1, M), NamedSharding(mesh, P("d")))
N = 12_000  # steps of a loop that outlives the line that called it (a second or so)


def step(c):
    i, x = c
    x = jnp.tanh(B @ x)
    return i + 1, x / jnp.linalg.norm(x)


@jax.jit
def run(x0, n):
    return jhw.while_loop(lambda c: c[0] < n, step, (jnp.int32(0), x0), max_steps=N,
                          record=lambda c: jnp.sum(c[1]))


def fail_at_300(i):
    if (i >= 300).any():
        raise ValueError("host step failed")
    return np.zeros(i.shape, np.float32)


def dies_at_300(x0):
    def body(c):
        i, x = c
        dx = jax.pure_callback(fail_at_300, jax.ShapeDtypeStruct((), jnp.float32), i,
                               vmap_method="broadcast_all")
        return i + 1, jnp.tanh(0.9 * x) + dx
    return jhw.while_loop(lambda c: c[0] < N, body, (jnp.int32(0), x0), max_steps=N,
                          record=lambda c: jnp.sum(c[1]))


# Two lanes a device, no collective: a program over several devices whose host step raises
# there fails as a whole (one with collectives would leave the other devices waiting in them,
# and XLA ends the process).
dying = jax.jit(jax.shard_map(jax.vmap(dies_at_300), mesh=mesh, in_specs=P("d"),
                              out_specs=P("d")))
X = jnp.ones((8, 16))


def died_at_300(run):
    return run.status == "failed" and len(set(run.counts)) == 1 and 0 < run.counts[0] <= 301


def ended_soon(run, seconds=5.0):
    deadline = time.monotonic() + seconds
    while run.status == "running" and time.monotonic() < deadline:
        time.sleep(0.02)
    return run.status != "running"


run(x0, 10)  # compiled outside any block
"""

CASES = {
    # A block waits for the loops called inside it whether or not their results are kept: a
    # result dropped unread lost its run (it opened after the block had ended) or had it given
    # up as failed while it ran.
    "results_dropped": """
with jhw.Recorder() as rec:
    run(x0, N)  # the result dropped unread
    run(x0 * 0.5, N)
assert [r.status for r in rec.runs] == ["converged"] * 2, rec.runs
assert [r.counts for r in rec.runs] == [[N + 1]] * 2, rec.runs
# ... and one that dies on the device ends failed with the block, its rows kept
with jhw.Recorder() as rec:
    dying(X)
assert len(rec.runs) == 1 and died_at_300(rec.runs[0]), rec.runs
print("OK")
""",
    # A run whose program dies while its block stays open ends failed then, not with the block
    # (nothing looked at it while a sink of it was attached).
    "dies_in_an_open_block": """
with jhw.Recorder() as rec:
    out = dying(X)  # kept, not waited for
    while not rec.runs:
        time.sleep(0.01)
    assert ended_soon(rec.runs[0]), "a run whose program died read running"
    assert died_at_300(rec.runs[0]), rec.runs
    try:
        out[1].length.block_until_ready()
    except Exception as e:  # the computation's own error, where its result is used
        assert "host step failed" in str(e), e
    else:
        raise AssertionError("the computation did not fail")
print("OK")
""",
    # A block opened in a sink's hook (in the loop's host call, or on the worker once the
    # sink's updates proved slow) waited for every program dispatched, the one running the
    # hook included: it never returned.
    "blocks_in_hooks": """
small = jax.jit(lambda x: jhw.while_loop(lambda c: c[0] < 50, lambda c: (c[0] + 1, c[1] * 0.9),
                                         (0, x), max_steps=50))
small(jnp.float32(1.0))


class Phases(jhw.Recorder):
    def __init__(self, on_worker):
        super().__init__()
        self.on_worker, self.seen = on_worker, []

    def on_rows(self, run, lanes):
        if run is not self.runs[0] or self.seen:
            return
        if self.on_worker and not HUB.worker.on_worker_thread():
            time.sleep(0.06)  # slow: its updates go to the worker from now on
            return
        with self.named("phase 2"):
            pass
        with jhw.Recorder() as inner:
            small(jnp.float32(1.0))
        runner = jhw.Recorder()
        runner.run(small, jnp.float32(2.0))
        self.seen = [inner.runs, runner.runs, threading.current_thread().name]


for on_worker in (False, True):
    with Phases(on_worker) as phases:
        out = run(x0, 4_000)  # kept: the block waits for it as it always did
    assert phases.runs[0].status == "converged" and phases.runs[0].counts == [4_001]
    inner, ran, where = phases.seen
    assert [(r.status, r.counts) for r in inner + ran] == [("converged", [51])] * 2, (inner, ran)
    assert where.startswith("jaxhist-worker") == on_worker, where
print("OK")
""",
}

#: Python's exit waits for the rows on their way: a block whose result was dropped as the
#: script ends, and a store attached (never detached) whose loop still runs as it ends.
EXIT = """
with jhw.Store(sys.argv[1]):
    run(x0, N)  # dropped, and the script ends with the block
store = jhw.Store(sys.argv[2])
store.attach()
run(x0 * 0.5, N)
print("OK")
"""


def _run(code: str, *args: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "XLA_FLAGS": "--xla_force_host_platform_device_count=4",
        "JAX_PLATFORMS": "cpu",
    }
    return subprocess.run(
        [sys.executable, "-c", PRELUDE + textwrap.dedent(code), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=TIMEOUT,
    )


def _tail(out: subprocess.CompletedProcess) -> str:
    lines = [ln for ln in out.stderr.splitlines() if not ln.startswith("    @")]
    return f"rc={out.returncode}\nstdout: {out.stdout[-2000:]}\nstderr: " + "\n".join(lines[-30:])


@pytest.mark.parametrize("case", list(CASES))
def test_asynchronous_dispatch(case: str) -> None:
    out = _run(CASES[case])
    assert out.returncode == 0 and "OK" in out.stdout, _tail(out)


def test_python_s_exit_waits_for_the_rows_on_their_way(tmp_path: Path) -> None:
    import jaxhist_widget as jhw

    paths = [tmp_path / "block.db", tmp_path / "attached.db"]
    out = _run(EXIT, *map(str, paths))
    assert out.returncode == 0 and "OK" in out.stdout, _tail(out)
    for path in paths:
        runs = jhw.load_runs(path)
        assert [(r.status, r.counts) for r in runs] == [("converged", [12_001])], (path, runs)
