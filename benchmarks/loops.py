"""What watching the loops JAX users run costs, each against its own baseline in one run.

    python benchmarks/loops.py            # the full tables (a few minutes on 2 cores)
    python benchmarks/loops.py --quick    # tiny sizes, to check the script runs

Every variant is compiled first, then the variants of a problem run round-robin (``--repeat``
rounds), so machine noise hits them alike; a table shows the median wall-clock time, the median
and the spread (lowest-highest) of the per-round ratios to the baseline, and the median ratio of
CPU time (all threads of the process), which the load of other processes moves far less.

(a) ``jhw.scan``: a training-like step (a 2-layer MLP, one SGD step on a minibatch per scan
    step, ~1 ms) under ``lax.scan`` (baseline), ``jhw.scan`` with nothing attached, and
    ``jhw.scan`` with a ``Recorder``; then ``jax.grad`` through 20 unrolled steps of it (a
    meta-gradient through the training loop): lax, lax with one host call in the program (what
    any host call costs XLA's CPU runtime there), ``jhw.scan(stream=False)`` and ``jhw.scan``
    with a ``Recorder``.
(b) The adapters, each on a problem of >= 1 ms a step, against the library's own solve with
    its default adjoint (optimistix BFGS, diffrax Tsit5 with a PID controller, jaxopt L-BFGS);
    the watched solves stream to a ``Recorder``.
(c) ``jhw.log``: a Python ``for`` loop over a jitted step of ~1 ms, bare (baseline), with
    ``jhw.log(loss=loss)`` and a ``Recorder``, and, for comparison, with ``float(loss)`` each
    step (what a loop that prints or keeps its losses usually does).
(d) ``jhw.log`` per call on a small step (an 8-wide update, ~10 µs on a CPU): what each call
    adds to the loop, in µs, against the bare loop measured in the same rounds: wall-clock (the
    caller's own Python and any contention with the worker thread that delivers the rows) and
    the caller thread's CPU time. Target: <= 10 µs a call with a ``Recorder``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import jaxhist_widget as jhw


def run_once(fn: Callable[[], Any]) -> tuple[float, float]:
    """Wall-clock and CPU seconds (every thread of the process) of one call."""
    t, c = time.perf_counter(), time.process_time()
    jax.block_until_ready(fn())
    jax.effects_barrier()
    return time.perf_counter() - t, time.process_time() - c


def interleaved(cases: dict[str, tuple[Callable[[], Any], Any]], repeat: int):
    """Median wall-clock seconds of each ``name -> (fn, sink)`` (``sink`` attached around the
    call, or None), and its ratios to the first case: the median and the spread
    (lowest-highest) of the per-round wall-clock ratios (the cases of a round run back to back,
    so a round's ratio shares its noise; the median stands up to a load that drifts), and the
    median ratio of CPU seconds (all threads: what the variant costs the machine, which other
    processes' load moves far less than the wall clock). Round 0 compiles."""
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
    for r in range(repeat + 1):
        for name, (fn, sink) in cases.items():
            if sink is None:
                t = run_once(fn)
            else:
                with sink:
                    t = run_once(fn)
            if r:
                times[name].append(t)
    base = next(iter(times.values()))
    summary = {}
    for name, ts in times.items():
        wall = [a[0] / b[0] for a, b in zip(ts, base, strict=True)]
        # a TPU's loop can cost the host no CPU time at all that process_time sees
        cpu = [a[1] / b[1] if b[1] > 0 else float("nan") for a, b in zip(ts, base, strict=True)]
        summary[name] = (
            statistics.median(wall),
            f"{min(wall):.3f}-{max(wall):.3f}",
            statistics.median(cpu),
        )
    return {name: statistics.median(t[0] for t in ts) for name, ts in times.items()}, summary


def print_table(title: str, t: dict[str, float], ratios: dict[str, tuple], steps: int) -> None:
    head = ("variant", "ms", "ms / step", "ratio", "ratio spread", "CPU-time ratio")
    rows = [
        (
            k,
            f"{v * 1e3:.1f}",
            f"{v / steps * 1e3:.3f}",
            f"{ratios[k][0]:.3f}x",
            ratios[k][1],
            f"{ratios[k][2]:.3f}x",
        )
        for k, v in t.items()
    ]
    widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(len(head))]

    def line(r):
        return "| " + " | ".join(str(c).rjust(w) for c, w in zip(r, widths, strict=True)) + " |"

    print(f"\n{title}")
    print(line(head))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        print(line(r))


# ------------------------------------------------------------------------------ (a) scan
def mlp_problem(steps: int, width: int, batch: int):
    keys = jax.random.split(jax.random.key(0), 4)
    params = {
        "w1": jax.random.normal(keys[0], (32, width)) / 6,
        "w2": jax.random.normal(keys[1], (width, 1)) / jnp.sqrt(width),
    }
    xs = jax.random.normal(keys[2], (steps, batch, 32))
    ys = jnp.sin(xs.sum(-1, keepdims=True)) + 0.1 * jax.random.normal(keys[3], (steps, batch, 1))

    def loss(p, x, y):
        return jnp.mean((jnp.tanh(x @ p["w1"]) @ p["w2"] - y) ** 2)

    def step(lr, p, xy):
        value, grad = jax.value_and_grad(loss)(p, *xy)
        return jax.tree_util.tree_map(lambda w, g: w - lr * g, p, grad), value

    return params, (xs, ys), step


def bench_scan(steps: int, width: int, batch: int, repeat: int) -> None:
    params, data, step = mlp_problem(steps, width, batch)
    f = lambda p, xy: step(0.05, p, xy)  # noqa: E731
    bare = jax.jit(lambda p, d: lax.scan(f, p, d))
    watched = jax.jit(lambda p, d: jhw.scan(f, p, d))
    rec = jhw.Recorder()
    t, spread = interleaved(
        {
            "lax.scan": (lambda: bare(params, data), None),
            "jhw.scan": (lambda: watched(params, data), None),
            "jhw.scan + Recorder": (lambda: watched(params, data), rec),
        },
        repeat,
    )
    assert all(r.counts == [steps + 1] for r in rec.runs), "a row went missing"
    print_table(
        f"(a) training-like scan: MLP 32-{width}-1, batch {batch}, {steps} steps", t, spread, steps
    )

    # grad through the training loop (a meta-gradient w.r.t. the learning rate), 20 steps
    short = jax.tree_util.tree_map(lambda x: x[:20], data)

    def meta(lr, scan):
        (_, losses), *_ = scan(lambda p, xy: step(lr, p, xy), params, short)
        return losses.sum()

    def lax_scan(*args):
        return (lax.scan(*args),)

    grads = {
        "grad through lax.scan": lax_scan,
        "grad through lax.scan + one host call": lambda f, p, xs: (
            lax.scan(f, p, (xs[0] * _host_one(xs[0][0, 0, 0]), xs[1])),
        ),
        "grad through jhw.scan, stream=False": lambda *a: jhw.scan(*a, stream=False),
        "grad through jhw.scan + Recorder": jhw.scan,
    }
    jitted = {k: jax.jit(jax.grad(lambda lr, scan=v: meta(lr, scan))) for k, v in grads.items()}
    t, spread = interleaved(
        {
            k: (lambda g=g: g(0.05), rec if k.endswith("Recorder") else None)
            for k, g in jitted.items()
        },
        repeat,
    )
    print_table("(a') jax.grad through 20 steps of it (forward + backward)", t, spread, 20)


def _host_one(x: jax.Array) -> jax.Array:
    """1.0, from a host call (a pure callback the program needs)."""
    return jax.pure_callback(lambda x: np.float32(1), jax.ShapeDtypeStruct((), jnp.float32), x)


# ------------------------------------------------------------------------------ (b) adapters
def heavy_map(n: int, depth: int):
    """A smooth map of R^(n x 8) doing ``depth`` n x n matmuls: the cost of a solver step."""
    m = jax.random.normal(jax.random.key(1), (n, n)) / jnp.sqrt(n)

    def apply(y):
        return lax.fori_loop(0, depth, lambda _, z: jnp.tanh(m @ z), y)

    return apply


def bench_adapters(n: int, depth: int, repeat: int) -> None:
    import diffrax
    import optimistix as optx

    import jaxhist_widget.diffrax as jhw_diffrax
    import jaxhist_widget.optimistix as jhw_optx

    apply = heavy_map(n, depth)
    y0 = jnp.ones((n, 8)) / n
    rec = jhw.Recorder()

    def loss(y, args=None):
        return jnp.sum((apply(y) - 0.5) ** 2) + 1e-2 * jnp.sum(y**2)

    # optimistix: BFGS (every step a value and a gradient, and a line-search trial)
    solver = optx.BFGS(rtol=1e-7, atol=1e-7)

    def optimistix_solve(adjoint):
        return jax.jit(lambda y: optx.minimise(loss, solver, y, adjoint=adjoint, throw=False))

    own, ours = optimistix_solve(optx.ImplicitAdjoint()), optimistix_solve(jhw_optx.adjoint())
    steps = int(own(y0).stats["num_steps"])
    t, spread = interleaved(
        {
            "optx.minimise (ImplicitAdjoint)": (lambda: own(y0).value, None),
            "jhw_optx.adjoint() + Recorder": (lambda: ours(y0).value, rec),
        },
        repeat,
    )
    print_table(f"(b1) optimistix BFGS, {n}x8 unknowns, {steps} steps", t, spread, steps)

    # diffrax: Tsit5 with a PID controller
    term = diffrax.ODETerm(lambda t, y, args: apply(y) - y + jnp.sin(3 * t))

    def diffrax_solve(adjoint):
        return jax.jit(
            lambda y: diffrax.diffeqsolve(
                term,
                diffrax.Tsit5(),
                0.0,
                20.0,
                0.01,
                y,
                adjoint=adjoint,
                stepsize_controller=diffrax.PIDController(rtol=1e-6, atol=1e-6),
            )
        )

    own = diffrax_solve(diffrax.RecursiveCheckpointAdjoint())
    forward = diffrax_solve(diffrax.ForwardMode())
    ours = diffrax_solve(jhw_diffrax.adjoint())
    steps = int(own(y0).stats["num_steps"])
    t, spread = interleaved(
        {
            "diffeqsolve (RecursiveCheckpointAdjoint)": (lambda: own(y0).ys, None),
            "diffeqsolve (ForwardMode)": (lambda: forward(y0).ys, None),
            "jhw_diffrax.adjoint() + Recorder": (lambda: ours(y0).ys, rec),
        },
        repeat,
    )
    print_table(f"(b2) diffrax Tsit5 + PID, {n}x8 state, {steps} steps", t, spread, steps)

    # jaxopt: L-BFGS with its zoom line search
    try:
        import jaxopt

        import jaxhist_widget.jaxopt as jhw_jaxopt
    except ImportError:
        print("\n(b3) skipped: jaxopt is not installed (pip install jaxopt)")
        return
    lbfgs = jaxopt.LBFGS(fun=loss, tol=1e-6, maxiter=200)
    own = jax.jit(lambda y: lbfgs.run(y))
    ours = jax.jit(lambda y: jhw_jaxopt.run(lbfgs, y))
    steps = int(own(y0).state.iter_num)
    t, spread = interleaved(
        {
            "LBFGS.run": (lambda: own(y0).params, None),
            "jhw_jaxopt.run + Recorder": (lambda: ours(y0).params, rec),
        },
        repeat,
    )
    print_table(f"(b3) jaxopt L-BFGS, {n}x8 unknowns, {steps} iterations", t, spread, steps)
    print("\neach watched solve: one run of its steps (line searches and RK stages included)")


# ------------------------------------------------------------------------------ (c) jhw.log
def bench_log(steps: int, n: int, depth: int, repeat: int) -> None:
    apply = heavy_map(n, depth)

    @jax.jit
    def train_step(y):
        y = apply(y)
        return y, jnp.sum(y**2)

    y0 = jnp.ones((n, 8)) / n

    def bare():
        y = y0
        for _ in range(steps):
            y, _ = train_step(y)
        return y

    def logged():
        y = y0
        for _ in range(steps):
            y, loss = train_step(y)
            jhw.log(loss=loss)
        return y

    def floats():
        y, kept = y0, []
        for _ in range(steps):
            y, loss = train_step(y)
            kept.append(float(loss))
        return y

    rec = jhw.Recorder()
    t, spread = interleaved(
        {
            "bare Python loop": (bare, None),
            "jhw.log + Recorder": (logged, rec),
            "float(loss) each step": (floats, None),
        },
        repeat,
    )
    assert all(r.counts == [steps] for r in rec.runs), "a row went missing"
    print_table(
        f"(c) a Python loop over a jitted step ({n}x{n} matmuls x{depth}), {steps} steps",
        t,
        spread,
        steps,
    )


# ------------------------------------------------------------------ (d) jhw.log per call
def bench_log_per_call(steps: int, repeat: int) -> None:
    @jax.jit
    def small_step(w):
        return w * 0.99 + 0.01, jnp.sum(w**2)

    w0 = jnp.ones(8)

    def bare():
        w = w0
        for _ in range(steps):
            w, _ = small_step(w)
        return w

    def logged():
        w = w0
        for _ in range(steps):
            w, loss = small_step(w)
            jhw.log(loss=loss)
        return w

    def logged_both():
        w = w0
        for _ in range(steps):
            w, loss = small_step(w)
            jhw.log(loss=loss, w=w)
        return w

    def floats():
        w, kept = w0, []
        for _ in range(steps):
            w, loss = small_step(w)
            kept.append(float(loss))
        return w

    rec = jhw.Recorder()
    cases = {
        "bare Python loop": (bare, None),
        "jhw.log(loss=loss) + Recorder": (logged, rec),
        "jhw.log(loss=loss, w=w) + Recorder": (logged_both, rec),
        "float(loss) each step": (floats, None),
    }
    wall: dict[str, list[float]] = {k: [] for k in cases}
    cpu: dict[str, list[float]] = {k: [] for k in cases}
    for r in range(repeat + 1):  # round 0 compiles
        for name, (fn, sink) in cases.items():
            with sink if sink is not None else _nothing():
                t, c = time.perf_counter(), time.thread_time()
                jax.block_until_ready(fn())
                t, c = time.perf_counter() - t, time.thread_time() - c
            if r:
                wall[name].append(t / steps * 1e6)
                cpu[name].append(c / steps * 1e6)
    assert all(run.counts == [steps] for run in rec.runs), "a row went missing"
    base_wall, base_cpu = wall["bare Python loop"], cpu["bare Python loop"]
    head = ("variant", "µs / step", "added µs / call", "spread", "caller CPU µs / call", "ratio")
    rows = []
    for name in cases:
        added = [a - b for a, b in zip(wall[name], base_wall, strict=True)]
        added_cpu = [a - b for a, b in zip(cpu[name], base_cpu, strict=True)]
        ratio = [a / b for a, b in zip(wall[name], base_wall, strict=True)]
        rows.append(
            (
                name,
                f"{statistics.median(wall[name]):.2f}",
                f"{statistics.median(added):.2f}",
                f"{min(added):.2f} to {max(added):.2f}",
                f"{statistics.median(added_cpu):.2f}",
                f"{statistics.median(ratio):.2f}x",
            )
        )
    _markdown(
        f"(d) jhw.log per call on a small step (8-wide update), {steps} steps, {repeat} rounds",
        head,
        rows,
    )
    added = statistics.median(
        a - b for a, b in zip(wall["jhw.log(loss=loss) + Recorder"], base_wall, strict=True)
    )
    print(f"\njhw.log + Recorder: {added:.2f} µs a call on the caller's thread (target <= 10 µs)")


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def _markdown(title: str, head: tuple[str, ...], rows: list[tuple[str, ...]]) -> None:
    widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(len(head))]

    def line(r):
        return "| " + " | ".join(str(c).rjust(w) for c, w in zip(r, widths, strict=True)) + " |"

    print(f"\n{title}")
    print(line(head))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        print(line(r))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes: check that it runs")
    parser.add_argument("--repeat", type=int, default=None, help="rounds per problem")
    parser.add_argument("--part", choices=("a", "b", "c", "d"), action="append", help="only these")
    args = parser.parse_args()
    quick = args.quick
    repeat = args.repeat or (1 if quick else 9)
    print(f"jax {jax.__version__}, {jax.devices()[0].platform}, {repeat} rounds")
    parts = args.part or ["a", "b", "c", "d"]
    if "a" in parts:
        if quick:
            bench_scan(steps=20, width=16, batch=8, repeat=repeat)
        else:
            bench_scan(steps=300, width=1024, batch=512, repeat=repeat)
    if "b" in parts:
        bench_adapters(n=16, depth=2, repeat=repeat) if quick else bench_adapters(256, 16, repeat)
    if "c" in parts:
        if quick:
            bench_log(steps=20, n=16, depth=2, repeat=repeat)
        else:
            bench_log(steps=1000, n=512, depth=24, repeat=repeat)
    if "d" in parts:
        bench_log_per_call(steps=500 if quick else 20_000, repeat=repeat)
    print("\nratios are against the first row of each table, measured in the same run")


if __name__ == "__main__":
    main()
