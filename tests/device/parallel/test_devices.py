"""Several devices and hosts: sharded jit (GSPMD), shard_map, pmap and jax.distributed.

The device count is fixed when JAX starts, so each case runs in a fresh Python process with 8
forced CPU devices (``--xla_force_host_platform_device_count=8``) and a timeout: a deadlock in a
collective (XLA aborts the process after 40 s) fails the test instead of hanging the suite.

Every case checks, for every call: one run per call, host rows == device rows for every lane of
every device, lanes in device order (lane ``i`` of the run is row ``i`` of the flattened lane
axes of the device `History`), and no warning from jaxhist_widget.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap

import pytest

from ...helpers import ROOT

# A fresh Python process per case: kept out of the quick subset (see pyproject.toml).
pytestmark = pytest.mark.slow

TIMEOUT = 150  # s; a deadlock aborts after ~40 s, a healthy case takes a few seconds

# Shared by every case: the checks, and a problem whose lanes end at different steps.
PRELUDE = """
import warnings
import jax, jax.numpy as jnp, numpy as np
from jax import lax
from jax.sharding import NamedSharding, PartitionSpec as P
import jaxhist_widget as jhw

warnings.simplefilter("always")
_caught = warnings.catch_warnings(record=True)
CAUGHT = _caught.__enter__()

# The largest chunk the host received, in bytes: > 100 KiB takes the cut-in-pieces path.
from jaxhist_widget._host import HUB

_receive, BIGGEST = HUB.receive_chunk, [0]


def _receive_chunk(layout, *args):
    BIGGEST[0] = max(BIGGEST[0], *(np.asarray(a).nbytes for a in args))
    return _receive(layout, *args)


HUB.receive_chunk = _receive_chunk


def check(run, hist, lanes, status=None):
    '''Host rows == device rows for every lane, in device order.'''
    length = np.asarray(hist.length)
    L = length.reshape(-1)
    assert run.lanes == lanes, (run.lanes, lanes)
    assert len(L) == (1 if lanes is None else lanes)
    host = run.history()
    host = [host] if lanes is None else host
    device = [np.asarray(v) for v in jax.tree_util.tree_leaves(hist.values)]
    assert run.counts == L.tolist(), (run.counts, L)
    for lane in range(len(L)):
        got = jax.tree_util.tree_leaves(host[lane])
        for d, g in zip(device, got, strict=True):
            want = d.reshape(len(L), *d.shape[length.ndim:])[lane, : L[lane]]
            np.testing.assert_array_equal(g, want)
    if status is not None:
        assert run.status == status, run.status
    ours = [str(w.message) for w in CAUGHT if "jaxhist_widget" in str(w.message)]
    assert not ours, ours


N = 128
A = jax.random.normal(jax.random.PRNGKey(0), (N, N), jnp.float32) / np.sqrt(N)


def solve(x0, max_steps=120, collective=None, **kw):
    '''tanh(A @ x) until a step count that depends on the lane's x0[0] (lanes differ).'''
    limit = 40 + (jnp.abs(x0[0]) * 60).astype(jnp.int32) if collective is None else 100

    def body(c):
        i, x = c
        x = jnp.tanh(A @ x)
        if collective is not None:  # a collective in every step
            x = x - 0.1 * lax.pmean(jnp.mean(x), collective)
        return i + 1, x

    return jhw.while_loop(
        lambda c: c[0] < limit, body, (jnp.int32(0), x0), max_steps=max_steps,
        record=lambda c: {"x": c[1], "norm": jnp.linalg.norm(c[1])}, **kw,
    )


def call(f, *args):
    # f(*args), waited for. With several devices dispatch is asynchronous even on the CPU:
    # the call returns before its loop (and its host calls) ended.
    out = jax.block_until_ready(f(*args))
    jax.effects_barrier()
    return out


def lanes_x(n):
    return jnp.asarray(np.linspace(-1, 1, n * N, dtype=np.float32).reshape(n, N))


assert jax.device_count() == 8
"""

CASES = {
    # GSPMD: the recorded leaf is sharded, the step has collectives (A @ x with A and x sharded
    # along rows gathers x; the norm all-reduces), and a chunk is > 100 KiB (cut in pieces).
    "gspmd_sharded_leaf": """
mesh = jax.make_mesh((8,), ("d",), axis_types=(jax.sharding.AxisType.Auto,))
M = 256
B = jax.random.normal(jax.random.PRNGKey(1), (M, M)) / 16
B = jax.device_put(B, NamedSharding(mesh, P("d", None)))
x0 = jax.device_put(jnp.linspace(-1, 1, M), NamedSharding(mesh, P("d")))

@jax.jit
def run(B, x0):
    def body(c):
        i, x = c
        x = jnp.tanh(B @ x)
        return i + 1, x / jnp.linalg.norm(x)
    return jhw.while_loop(lambda c: c[0] < 250, body, (jnp.int32(0), x0), max_steps=300,
                          record=lambda c: {"x": c[1], "s": jnp.sum(c[1])})

with jhw.Recorder() as rec:
    for k in range(2):
        _, hist = call(run, B, x0)
        assert len(rec.runs) == k + 1  # one run per call
        check(rec.runs[-1], hist, None, "converged")
assert BIGGEST[0] > 100 * 1024, BIGGEST  # the cut-in-pieces path ran
assert hist.values["x"].sharding.spec == P(None, "d"), hist.values["x"].sharding
assert int(hist.length) == 251
print("OK")
""",
    # GSPMD over a vmap whose batch is sharded: lanes arrive once, in batch order.
    "gspmd_vmap": """
mesh = jax.make_mesh((8,), ("d",), axis_types=(jax.sharding.AxisType.Auto,))
X = jax.device_put(lanes_x(16), NamedSharding(mesh, P("d")))
with jhw.Recorder() as rec:
    _, hist = call(jax.jit(jax.vmap(solve)), X)
assert len(rec.runs) == 1
assert len(set(np.asarray(hist.length).tolist())) > 1  # lanes really end at different steps
check(rec.runs[0], hist, 16, "converged")
print("OK")
""",
    # jax.make_mesh's default: explicit axes, under jax.set_mesh.
    "explicit_mesh": """
mesh = jax.make_mesh((8,), ("d",))
x0 = jax.device_put(jnp.linspace(-1, 1, 64), NamedSharding(mesh, P("d")))

def run(x0):
    body = lambda c: (c[0] + 1, jnp.tanh(0.9 * c[1] + 0.1 * jnp.mean(c[1])))
    return jhw.while_loop(lambda c: c[0] < 90, body, (jnp.int32(0), x0), max_steps=100,
                          record=lambda c: {"x": c[1], "m": jnp.mean(c[1])})

with jax.set_mesh(mesh), jhw.Recorder() as rec:
    _, hist = call(jax.jit(run), x0)
assert len(rec.runs) == 1
check(rec.runs[0], hist, None, "converged")
assert hist.values["x"].sharding.spec == P(None, "d")
print("OK")
""",
    # shard_map(vmap): 2 lanes per device, lanes end at different steps on different devices;
    # then a collective in every step. Chunks are > 100 KiB (16 lanes x 128 floats a row).
    "shard_map_vmap": """
mesh = jax.make_mesh((8,), ("d",), axis_types=(jax.sharding.AxisType.Auto,))
f = jax.jit(jax.shard_map(jax.vmap(solve), mesh=mesh, in_specs=P("d"), out_specs=P("d")))
g = jax.jit(jax.shard_map(jax.vmap(lambda x: solve(x, collective="d")), mesh=mesh,
                          in_specs=P("d"), out_specs=P("d")))
X = lanes_x(16)
with jhw.Recorder() as rec:
    _, hist = call(f, X)
    assert len(rec.runs) == 1
    assert len(set(np.asarray(hist.length).tolist())) > 1
    check(rec.runs[0], hist, 16, "converged")
    _, hist = call(f, X)
    assert len(rec.runs) == 2
    check(rec.runs[1], hist, 16, "converged")
    _, hist = call(g, X)
    assert len(rec.runs) == 3
    check(rec.runs[2], hist, 16, "converged")
assert BIGGEST[0] > 100 * 1024, BIGGEST
assert hist.values["x"].sharding.spec == P("d"), hist.values["x"].sharding
print("OK")
""",
    # pmap: one run per call with the 8 devices as lanes, in device order; pmap(vmap) too.
    "pmap": """
X = lanes_x(16)
with jhw.Recorder() as rec:
    _, hist = call(jax.pmap(solve), X[:8])
    assert len(rec.runs) == 1
    assert len(set(np.asarray(hist.length).tolist())) == 8
    check(rec.runs[0], hist, 8, "converged")
    _, hist = call(jax.pmap(jax.vmap(solve)), X.reshape(8, 2, N))
    assert len(rec.runs) == 2
    check(rec.runs[1], hist, 16, "converged")
print("OK")
""",
    # A stop request (from a sink) reaches every device: all lanes stop, all rows arrive.
    "shard_map_stop": """
class StopSoon(jhw.Sink):
    def on_rows(self, run, lanes):
        if max(run.counts) >= 10:
            self.stop()

mesh = jax.make_mesh((8,), ("d",), axis_types=(jax.sharding.AxisType.Auto,))
# Fixed chunks: auto streaming sizes them by the step rate (~50 ms of steps), and these steps
# are so fast that a stop would only be seen after the lanes converged.
f = jax.jit(jax.shard_map(jax.vmap(lambda x: solve(x, 5000, stream_every=4)), mesh=mesh,
                          in_specs=P("d"), out_specs=P("d")))
sink, rec = StopSoon(), jhw.Recorder()
with sink, rec:
    _, hist = call(f, lanes_x(16))
assert int(np.max(hist.length)) < 40, hist.length  # stopped before any lane converged
check(rec.runs[0], hist, 16, "stopped")
assert set(rec.runs[0].statuses) == {"stopped"}
print("OK")
""",
    # shard_map leaving an axis automatic: JAX allows no host callback there. Streaming is
    # refused at trace time, naming the fix; stream=False records on the device.
    "partial_manual": """
mesh = jax.make_mesh((2, 4), ("a", "b"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
X = lanes_x(16)

def sm(**kw):
    return jax.jit(jax.shard_map(jax.vmap(lambda x: solve(x) if not kw else jhw.while_loop(
        lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 0.5), (jnp.int32(0), x), max_steps=9,
        **kw)), mesh=mesh, in_specs=P("a"), out_specs=P("a"), axis_names={"a"}))

try:
    sm()(X)
except NotImplementedError as e:
    assert "stream=False" in str(e) and "axis_names" in str(e), e
else:
    raise AssertionError("no error")
_, hist = sm(stream=False)(X)
assert np.asarray(hist.length).tolist() == [6] * 16
print("OK")
""",
    # Issue 47: with several devices (as on a TPU or a GPU) a jitted call returns before its
    # loop has run. A block that ended then lost the run (read back: failed, no rows), or gave
    # it to the next block's sinks. Each block now waits for the device as it ends; nothing
    # here waits for a result inside a block.
    "block_ends_before_the_device": """
mesh = jax.make_mesh((8,), ("d",), axis_types=(jax.sharding.AxisType.Auto,))
M = 256
B = jax.device_put(jax.random.normal(jax.random.PRNGKey(1), (M, M)) / 16,
                   NamedSharding(mesh, P("d", None)))
x0 = jax.device_put(jnp.linspace(-1, 1, M), NamedSharding(mesh, P("d")))
MAX = 16_000

@jax.jit
def run(B, x0, n):
    def body(c):
        i, x = c
        x = jnp.tanh(B @ x)
        return i + 1, x / jnp.linalg.norm(x)
    return jhw.while_loop(lambda c: c[0] < n, body, (jnp.int32(0), x0), max_steps=MAX,
                          record=lambda c: jnp.sum(c[1]))

call(run, B, x0, 10)  # compiled, outside any block
# The case needs a call that returns while its loop still runs. On a loaded machine a short
# loop may be over before the next line looks: then look again with a loop 8x longer. (Some
# JAX versions, 0.12 among them, return from such a call only once it has run: then the
# rows are still checked, and the test says it saw nothing asynchronous.)
for n in (2_000, MAX):
    with jhw.Recorder() as a:
        _, first = run(B, x0, n)
        early = not first.length.is_ready()  # the call returned before its loop ended
        with jhw.Recorder() as b:
            _, second = run(B, x0 * 0.5, n)
    if early:
        break
check(b.runs[-1], second, None, "converged")
assert len(b.runs) == 1 and len(a.runs) == 2, (a.runs, b.runs)
check(a.runs[0], first, None, "converged")
check(a.runs[1], second, None, "converged")
rec = jhw.Recorder()
_, third = rec.run(run, B, x0, 2_000)  # a runner: the same
check(rec.runs[-1], third, None, "converged")
# A name set in a block names the loops called after it, not those called before that have
# not started yet (they were named by the last name set: all three "third").
# (Results kept: on CPU devices a block waits for the arrays a loop makes, not its program.)
with jhw.Recorder() as named:
    named.name = "first"
    outs = [run(B, x0, n)]
    named.name = "second"
    outs.append(run(B, x0 * 0.5, n))
    with named.named("third"):
        outs.append(run(B, x0, n))
    outs.append(run(B, x0, n))
assert [r.name for r in named.runs] == ["first", "second", "third", "second"], named.runs
# ... but not from a hook: the loop waits on that very thread for the rows (a sink with an
# on_rows), so the name is set at once, as before (waiting there never returned).
class Renaming(jhw.Recorder):
    def on_rows(self, run, lanes):
        self.name = f"after {run.counts[0]} rows"
with Renaming() as renaming:
    _, renamed = run(B, x0, n)
    _, again = run(B, x0, n)
assert renaming.runs[-1].name.startswith("after"), renaming.runs
check(renaming.runs[0], renamed, None, "converged")
print("SYNCHRONOUS" if not early else "ASYNCHRONOUS")
print("OK")
""",
}


def _run(code: str, env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "XLA_FLAGS": "--xla_force_host_platform_device_count=8",
        "JAX_PLATFORMS": "cpu",
        **(env_extra or {}),
    }
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=TIMEOUT,
    )


@pytest.mark.parametrize("case", list(CASES))
def test_several_devices(case):
    out = _run(PRELUDE + textwrap.dedent(CASES[case]))
    assert out.returncode == 0 and "OK" in out.stdout, _tail(out)
    if "SYNCHRONOUS" in out.stdout.split():
        pytest.skip(
            f"jax {_jax_version()} returned each call once its loop had run: no asynchronous "
            "dispatch here for the block to wait on (every run's rows were still checked)"
        )


#: A TPU's streamed loop writes its rows to stages (`steps.stage_rows`): on these CPU devices
#: too, forced, with stages of 8 rows and blocks of steps inside them.
STAGES = """
from jaxhist_widget._device.loops import steps
steps._CPU_STAGES, steps._CPU_BLOCKS, steps.STAGE_ROWS = True, True, 8
"""


@pytest.mark.parametrize("case", ["gspmd_vmap", "shard_map_vmap", "pmap", "shard_map_stop"])
def test_several_devices_with_rows_staged(case):
    out = _run(PRELUDE + STAGES + textwrap.dedent(CASES[case]))
    assert out.returncode == 0 and "OK" in out.stdout, _tail(out)


def _jax_version() -> str:
    from importlib.metadata import version

    return version("jax")


# ---------------------------------------------------------------------------- two hosts
DISTRIBUTED = """
import os, sys
pid, port = int(sys.argv[1]), int(sys.argv[2])
import jax
jax.config.update("jax_cpu_collectives_implementation", "gloo")
jax.distributed.initialize(f"localhost:{port}", num_processes=2, process_id=pid,
                           initialization_timeout=60)
import numpy as np, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
from jax.experimental import multihost_utils
import jaxhist_widget as jhw

assert jax.device_count() == 4 and jax.local_device_count() == 2
mesh = jax.make_mesh((4,), ("d",), axis_types=(jax.sharding.AxisType.Auto,))
N = 64
A = jnp.asarray(np.random.default_rng(0).normal(size=(N, N)) / 8, jnp.float32)

def solve(x0):
    limit = 40 + (jnp.abs(x0[0]) * 60).astype(jnp.int32)
    return jhw.while_loop(lambda c: c[0] < limit, lambda c: (c[0] + 1, jnp.tanh(A @ c[1])),
                          (jnp.int32(0), x0), max_steps=120,
                          record=lambda c: {"x": c[1], "n": jnp.sum(c[1] ** 2)})

def global_array(shape, spec):
    data = np.linspace(-1, 1, int(np.prod(shape)), dtype=np.float32).reshape(shape)
    return jax.make_array_from_callback(shape, NamedSharding(mesh, spec), lambda i: data[i])

gspmd = jax.jit(solve)
smap = jax.jit(jax.shard_map(jax.vmap(solve), mesh=mesh, in_specs=P("d"), out_specs=P("d")))
rec = jhw.Recorder()  # attached in every process, as a notebook on each host would
with rec:
    _, h1 = jax.block_until_ready(gspmd(global_array((N,), P("d"))))
    _, h2 = jax.block_until_ready(smap(global_array((8, N), P("d"))))
    jax.effects_barrier()
h1, h2 = (multihost_utils.process_allgather(h, tiled=True) for h in (h1, h2))
if pid == 0:  # every row reaches process 0, once: one run per call
    assert len(rec.runs) == 2, rec.runs
    for run, hist, lanes in ((rec.runs[0], h1, None), (rec.runs[1], h2, 8)):
        L = np.asarray(hist.length).reshape(-1)
        host = run.history() if lanes else [run.history()]
        for lane in range(len(L)):
            for key in ("x", "n"):
                want = np.asarray(hist.values[key]).reshape(len(L), 121, -1)[lane, : L[lane]]
                got = np.asarray(host[lane][key]).reshape(L[lane], -1)
                np.testing.assert_array_equal(got, want)
        assert run.status == "converged"
else:  # the other process makes no host call at all
    assert rec.runs == [], rec.runs
print("OK", pid, flush=True)
jax.distributed.shutdown()
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def test_two_processes_distributed():
    port = str(_free_port())
    env = {
        **os.environ,
        "XLA_FLAGS": "--xla_force_host_platform_device_count=2",
        "JAX_PLATFORMS": "cpu",
    }
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", DISTRIBUTED, str(pid), port],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env=env,
        )
        for pid in (0, 1)
    ]
    outs = []
    try:
        for p in procs:
            stdout, stderr = p.communicate(timeout=TIMEOUT)
            outs.append((p.returncode, stdout, stderr))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.communicate()
    for pid, (rc, stdout, stderr) in enumerate(outs):
        assert rc == 0 and f"OK {pid}" in stdout, f"process {pid}: rc={rc}\n{stderr[-4000:]}"


def _tail(out: subprocess.CompletedProcess) -> str:
    # XLA's stack dumps are long; the Python error or the abort line is what matters
    lines = [ln for ln in out.stderr.splitlines() if not ln.startswith("    @")]
    return f"rc={out.returncode}\nstdout: {out.stdout[-2000:]}\nstderr: " + "\n".join(lines[-40:])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_host_call_pieces_stay_under_the_inline_copy_size(monkeypatch, dtype):
    # With several CPU devices each host-call argument must stay under the size the CPU client
    # copies asynchronously (the deadlock `devices._pieces` explains), counted in bytes: a
    # float64 window travels as it is, two words an element. Pieces join back to the window.
    import jax
    import numpy as np

    from jaxhist_widget._device.parallel import devices

    monkeypatch.setattr(devices, "_several_cpu_devices", lambda: True)
    with jax.enable_x64(True):
        window = jax.numpy.arange(3 * 40 * 500, dtype=dtype).reshape(3, 40, 500)
        pieces = devices._pieces(window)
        assert len(pieces) > 1
        assert all(p.nbytes <= devices._PIECE_WORDS * 4 for p in pieces)
        joined = np.concatenate([np.asarray(p) for p in pieces])
        np.testing.assert_array_equal(joined, np.asarray(window).reshape(-1))
