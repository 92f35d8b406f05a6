"""Overhead of recording and streaming, measured side by side in one run.

    python benchmarks/overhead.py            # the full table (about a minute on 2 cores)
    python benchmarks/overhead.py --quick    # tiny sizes, to check the script runs

Variants, each jitted and timed after compilation (median of several runs):

- ``bare``:      ``lax.while_loop`` with no history at all (the baseline);
- ``jhw``:       ``jhw.while_loop`` with nothing attached (device history only);
- ``jhw+rec``:   ``jhw.while_loop`` with a `Recorder` attached (device history + streaming);
- ``per-step``:  the usual advice, ``jax.debug.callback`` appending to a host list every step.

Problems: (a) gradient descent on least squares (A 1000x100 f32, 10^4 steps, record loss + x);
(b) a cheap scalar step (10^5 steps); (c) (a)'s loop over 64 vmap lanes, counting host calls.
"""

from __future__ import annotations

import argparse
import statistics
import time

import jax
import jax.numpy as jnp

import jaxhist_widget as jhw
from jaxhist_widget import registry


def run_once(fn, *args):
    t = time.perf_counter()
    jax.block_until_ready(fn(*args))
    jax.effects_barrier()
    return time.perf_counter() - t


def timeit(fn, *args, repeat):
    run_once(fn, *args)  # compile
    return statistics.median(run_once(fn, *args) for _ in range(repeat))


def print_table(head, table):
    """A right-aligned markdown table (the README pastes it as printed)."""
    widths = [max(len(str(r[i])) for r in [head, *table]) for i in range(len(head))]

    def line(r):
        return "| " + " | ".join(str(c).rjust(w) for c, w in zip(r, widths, strict=True)) + " |"

    print(line(head))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in table:
        print(line(r))


def interleaved(cases, repeat):
    """Median time of each ``name -> (fn, args, sink)``, runs interleaved round-robin so that
    machine noise (a shared 2-core box) hits every variant alike."""
    times = {name: [] for name in cases}
    for r in range(repeat + 1):
        for name, (fn, args, sink) in cases.items():
            if sink is None:
                t = run_once(fn, *args)
            else:
                with sink:
                    t = run_once(fn, *args)
            if r:  # the first round compiles
                times[name].append(t)
    return {name: statistics.median(ts) for name, ts in times.items()}


def least_squares(steps):
    key_a, key_b = jax.random.split(jax.random.PRNGKey(0))
    a = jax.random.normal(key_a, (1000, 100), jnp.float32)
    b = jax.random.normal(key_b, (1000,), jnp.float32)
    lr = 1.0 / float(jnp.linalg.norm(a, 2) ** 2 / 1000)

    def cond(c):
        return c[0] < steps

    def body(c):
        i, x, _ = c
        r = a @ x - b
        loss = 0.5 * jnp.vdot(r, r) / 1000  # loss at the incoming x, from the same residual
        return i + 1, x - lr * (a.T @ r) / 1000, loss

    init = (jnp.int32(0), jnp.zeros(100, jnp.float32), jnp.float32(0))
    return cond, body, init, (lambda c: {"loss": c[2], "x": c[1]})


def scalar(steps):
    def cond(c):
        return c[0] < steps

    def body(c):
        i, x = c
        return i + 1, x * 0.999 + 0.001

    return cond, body, (jnp.int32(0), jnp.float32(1)), (lambda c: c[1])


def variants(cond, body, init, record, steps):
    host_rows = []

    def per_step_body(c):
        c = body(c)
        jax.debug.callback(lambda r: host_rows.append(r), record(c))
        return c

    out = {
        "bare": jax.jit(lambda c: jax.lax.while_loop(cond, body, c)),
        "jhw": jax.jit(lambda c: jhw.while_loop(cond, body, c, max_steps=steps, record=record)),
        "per-step": jax.jit(lambda c: jax.lax.while_loop(cond, per_step_body, c)),
    }
    return out, host_rows


def measure(name, problem, steps, repeat, per_step_steps):
    cond, body, init, record = problem(steps)
    fns, _ = variants(cond, body, init, record, steps)
    rec = jhw.Recorder()
    t = interleaved(
        {
            "bare": (fns["bare"], (init,), None),
            "jhw": (fns["jhw"], (init,), None),
            "jhw+rec": (fns["jhw"], (init,), rec),
        },
        repeat,
    )
    assert len(jax.tree_util.tree_leaves(rec.history())[0]) == steps + 1  # every row arrived
    # The per-step callback is ~100 µs a step: time it on fewer steps, report per step.
    cond_s, body_s, init_s, record_s = problem(per_step_steps)
    fns_s, host_rows = variants(cond_s, body_s, init_s, record_s, per_step_steps)
    t["per-step"] = timeit(fns_s["per-step"], init_s, repeat=1) * steps / per_step_steps
    host_rows.clear()
    bare = t["bare"]
    rows = []
    for k in ("bare", "jhw", "jhw+rec", "per-step"):
        rows.append(
            (
                name,
                k,
                f"{t[k] * 1e3:9.2f}",
                f"{t[k] / steps * 1e6:8.3f}",
                f"{(t[k] - bare) / steps * 1e6:8.3f}",
                f"{t[k] / bare:7.2f}x",
            )
        )
    return rows, t


def count_vmap_calls(steps, lanes, repeat):
    cond, body, init, record = least_squares(steps)
    calls = {"n": 0}
    real = registry.receive_chunk

    def counting(*args):
        calls["n"] += 1
        return real(*args)

    registry.receive_chunk = counting
    try:
        batched = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (lanes, *x.shape)), init)
        fn = jax.jit(
            jax.vmap(
                lambda c: jhw.while_loop(
                    cond, body, c, max_steps=steps, record=record, stream_every=64
                )
            )
        )
        bare = jax.jit(jax.vmap(lambda c: jax.lax.while_loop(cond, body, c)))
        t_bare = timeit(bare, batched, repeat=repeat)
        with jhw.Recorder() as rec:
            jax.block_until_ready(fn(batched))  # compile + one run
            calls["n"] = 0
            t = time.perf_counter()
            jax.block_until_ready(fn(batched))
            t_rec = time.perf_counter() - t
        assert len(rec.history()) == lanes
    finally:
        registry.receive_chunk = real
    chunks = -(-(steps + 1) // 64)
    return calls["n"], chunks, t_bare, t_rec


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="tiny sizes: check that it runs")
    args = p.parse_args(argv)
    n_a, n_b, repeat, lanes = (200, 2000, 2, 4) if args.quick else (10_000, 100_000, 9, 64)

    print(f"jax {jax.__version__}, backend {jax.default_backend()}, {jax.device_count()} device(s)")
    head = ("problem", "variant", "total ms", "µs/step", "+µs/step", "vs bare")
    table, ta = measure("(a) lstsq 1000x100", least_squares, n_a, repeat, max(100, n_a // 20))
    tb_rows, tb = measure("(b) scalar", scalar, n_b, repeat, max(100, n_b // 100))
    table += tb_rows
    print_table(head, table)

    calls, chunks, t_bare, t_rec = count_vmap_calls(n_a if args.quick else 2000, lanes, repeat)
    print(
        f"\n(c) vmap, {lanes} lanes, stream_every=64: {calls} host calls for {chunks} chunks "
        f"(+1 forced flush at the end) -> {calls / chunks:.2f} calls per chunk; "
        f"recorded {t_rec * 1e3:.1f} ms vs bare {t_bare * 1e3:.1f} ms"
    )

    checks = {
        "(a) attached <= 1.10x bare": ta["jhw+rec"] <= 1.10 * ta["bare"],
        "(a) attached >= 10x faster than per-step callback": ta["per-step"] >= 10 * ta["jhw+rec"],
        "(b) attached overhead <= 1 µs/step": (tb["jhw+rec"] - tb["bare"]) / n_b <= 1e-6,
        "(c) one host call per chunk for all lanes": calls <= chunks + 1,
    }
    print()
    for k, ok in checks.items():
        print(f"{'PASS' if ok else 'MISS'}  {k}")
    return checks


if __name__ == "__main__":
    main()
