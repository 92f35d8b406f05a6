"""Overhead of recording and streaming on several devices, measured side by side in one run.

    python benchmarks/devices.py            # the full table (about a minute on 2 cores)
    python benchmarks/devices.py --quick    # tiny sizes, to check the script runs

Runs on 8 CPU devices (``--xla_force_host_platform_device_count=8`` is set here unless XLA_FLAGS
already forces a count). Each configuration is timed in three variants, interleaved round-robin
after compilation (median of several runs):

- ``bare``:     ``lax.while_loop`` in the same configuration, no history (the baseline);
- ``jhw``:      ``jhw.while_loop`` with nothing attached (device history only);
- ``jhw+rec``:  ``jhw.while_loop`` with a `Recorder` attached (history + streaming).

Configurations: (a) ``jax.jit`` with GSPMD: ``x = tanh(A @ x)`` with ``A`` and ``x`` sharded by
rows over 8 devices, recording the sharded ``x``; (b) ``shard_map(vmap)`` with 4
lanes per device (32 lanes), a ``pmean`` in every step; (c) ``pmap`` over 8 devices.

On forced CPU devices the 8 "devices" share the machine's cores, so absolute times say little;
the ratio to the bare loop in the same configuration is the number to read.
"""

from __future__ import annotations

import os
import sys

if "jax" not in sys.modules and "xla_force_host_platform_device_count" not in os.environ.get(
    "XLA_FLAGS", ""
):
    os.environ["XLA_FLAGS"] = (
        os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"
    ).strip()


import jax
import jax.numpy as jnp
import numpy as np

# The scripts' shared helpers sit beside them (a script's own folder is on its path).
from _bench import arguments, machine, print_table, rounds
from jax import lax
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P
from overhead import interleaved  # the same timing as overhead.py

import jaxhist_widget as jhw


def loops(steps, record, body):
    """The bare and the recording loop for one ``body``, both ``x -> final``-shaped."""

    def cond(c):
        return c[0] < steps

    def bare(x):
        return lax.while_loop(cond, body, (jnp.int32(0), x))

    def rec(x):
        return jhw.while_loop(cond, body, (jnp.int32(0), x), max_steps=steps, record=record)

    return bare, rec


def gspmd(n, steps):
    mesh = jax.make_mesh((8,), ("d",), axis_types=(jax.sharding.AxisType.Auto,))
    a = jax.random.normal(jax.random.PRNGKey(0), (n, n), jnp.float32) / np.sqrt(n)
    a = jax.device_put(a, NamedSharding(mesh, P("d", None)))
    x = jax.device_put(jnp.linspace(-1, 1, n, dtype=jnp.float32), NamedSharding(mesh, P("d")))

    def body(c):
        return c[0] + 1, jnp.tanh(a @ c[1])

    # Only the sharded x: a recorded norm would add an all-reduce per step that bare lacks.
    bare, rec = loops(steps, lambda c: {"x": c[1]}, body)
    return jax.jit(bare), jax.jit(rec), (x,), steps


def shard_map_vmap(n, steps, per_device=4):
    mesh = jax.make_mesh((8,), ("d",), axis_types=(jax.sharding.AxisType.Auto,))
    a = jax.random.normal(jax.random.PRNGKey(0), (n, n), jnp.float32) / np.sqrt(n)
    xs = jax.random.normal(jax.random.PRNGKey(1), (8 * per_device, n), jnp.float32)

    def body(c):
        x = jnp.tanh(a @ c[1])
        return c[0] + 1, x - 0.1 * lax.pmean(jnp.mean(x), "d")

    bare, rec = loops(steps, lambda c: {"x": c[1], "norm": jnp.linalg.norm(c[1])}, body)

    def sm(f):
        return jax.jit(jax.shard_map(jax.vmap(f), mesh=mesh, in_specs=P("d"), out_specs=P("d")))

    return sm(bare), sm(rec), (xs,), steps


def pmap(n, steps):
    a = jax.random.normal(jax.random.PRNGKey(0), (n, n), jnp.float32) / np.sqrt(n)
    xs = jax.random.normal(jax.random.PRNGKey(1), (8, n), jnp.float32)

    def body(c):
        return c[0] + 1, jnp.tanh(a @ c[1])

    bare, rec = loops(steps, lambda c: {"x": c[1], "norm": jnp.linalg.norm(c[1])}, body)
    return jax.pmap(bare), jax.pmap(rec), (xs,), steps


def measure(name, make, repeat):
    bare, rec, args, steps = make()
    sink = jhw.Recorder()
    t = interleaved(
        {"bare": (bare, args, None), "jhw": (rec, args, None), "jhw+rec": (rec, args, sink)},
        repeat,
    )
    run = sink.runs[-1]
    lanes = 1 if run.lanes is None else run.lanes
    assert len(sink.runs) == repeat + 1, "one run per call"
    assert run.counts == [steps + 1] * lanes, "every row of every lane arrived"
    rows = []
    for k in ("bare", "jhw", "jhw+rec"):
        rows.append(
            (
                name,
                k,
                str(lanes),
                f"{t[k] * 1e3:9.2f}",
                f"{t[k] / steps * 1e6:8.2f}",
                f"{t[k] / t['bare']:7.2f}x",
            )
        )
    return rows, t


def main(argv=None):
    args = arguments(__doc__).parse_args(argv)
    n, steps = (64, 200) if args.quick else (512, 3000)
    repeat = 2 if args.quick else rounds(args.budget, 4.0, default=7)

    print(machine())
    if jax.device_count() != 8:
        raise SystemExit(
            "needs 8 devices: run with XLA_FLAGS=--xla_force_host_platform_device_count=8"
        )
    head = ("configuration", "variant", "lanes", "total ms", "µs/step", "vs bare")
    table, ratios = [], {}
    for name, make in (
        (f"(a) jit GSPMD {n}x{n}", lambda: gspmd(n, steps)),
        (f"(b) shard_map(vmap) n={n // 4}", lambda: shard_map_vmap(n // 4, steps)),
        (f"(c) pmap n={n // 4}", lambda: pmap(n // 4, steps)),
    ):
        rows, t = measure(name, make, repeat)
        table += rows
        ratios[name[:3]] = t["jhw+rec"] / t["bare"]
    print_table(head, table)
    print()
    print("recorded, streamed, one run per call, every row of every lane on the host")
    for k, r in ratios.items():
        print(f"{k} jhw+rec / bare = {r:.2f}x")
    return ratios


if __name__ == "__main__":
    main()
