"""What a new ``jax.jit`` of a loop costs before it runs: trace, lower and compile, against lax.

A notebook pays this at every new ``jit`` of a cell (a changed function, shape or static
argument). Each variant is a fresh function (nothing cached), timed stage by stage with JAX's
ahead-of-time API (``trace``, ``lower``, ``compile``); the variants are interleaved over the
rounds and each stage's median is printed, with what drives each stage: the equations of the
traced program (nested ones included: Python tracing and lowering) and the kernels XLA compiles
(its fusions: on CPU each is compiled to machine code of its own, most of a compile's time). Two
steps: a tiny 8-wide one, where the loop's own machinery is all there is to compile, and
``tanh(A @ x)`` with A 256x256. Times are the process's CPU time (tracing and XLA's compile
run on the calling thread): on a shared machine, wall time would count the others' work too.

The second table records a dict of N scalars: its goal is on the growth, not the ratio (the
fixed cost is the first table's): from 10 leaves to N, the recording loop's compile time grows
at most twice as much as lax's carrying the same dict. Run::

    python benchmarks/compile.py            # 7 rounds
    python benchmarks/compile.py --quick    # 2 rounds, to check the script runs
"""

from __future__ import annotations

import re
import statistics
import time
from collections.abc import Callable

import jax
import jax.numpy as jnp

# The scripts' shared helpers sit beside them (a script's own folder is on its path).
from _bench import arguments, machine, rounds
from jax import lax

import jaxhist_widget as jhw

#: The goal: what jhw adds to lax.while_loop's trace + lower + compile, per problem.
GOAL_MS = 100.0
MAX_STEPS = 1000
#: Leaf counts of the second table (``--quick``: the first two).
LEAVES = (10, 40, 100, 400)
#: Its goal (issue 55): from the first count to N leaves, the recording loop's compile time
#: grows at most this many times as much as lax's carrying the same leaves.
LEAF_GOAL = 2.0


def _steps() -> dict[str, tuple[Callable, jax.Array]]:
    a = jnp.full((256, 256), 1.0 / 256)
    return {
        "tiny (8-wide)": (lambda c: (c[0] + 1, jnp.tanh(c[1]) * 0.9), jnp.ones(8)),
        "256x256 matvec": (lambda c: (c[0] + 1, jnp.tanh(a @ c[1])), jnp.ones(256)),
    }


def _variants(step: Callable) -> dict[str, Callable[[], Callable]]:
    """Each variant as a maker of a *new* function, so that no cache is hit."""
    cond = lambda c: c[0] < 100  # noqa: E731
    return {
        "lax": lambda: lambda x: lax.while_loop(cond, step, (0, x)),
        "jhw": lambda: lambda x: jhw.while_loop(cond, step, (0, x), max_steps=MAX_STEPS),
        "jhw stream=False": lambda: (
            lambda x: jhw.while_loop(cond, step, (0, x), max_steps=MAX_STEPS, stream=False)
        ),
        "jhw vmap x8": lambda: jax.vmap(
            lambda x: jhw.while_loop(cond, step, (0, x), max_steps=MAX_STEPS)
        ),
    }


def _time(fn: Callable, x: jax.Array) -> tuple[float, float, float]:
    t0 = time.process_time()
    traced = jax.jit(fn).trace(x)
    t1 = time.process_time()
    lowered = traced.lower()
    t2 = time.process_time()
    lowered.compile()
    t3 = time.process_time()
    return 1e3 * (t1 - t0), 1e3 * (t2 - t1), 1e3 * (t3 - t2)


def _medians(times: dict[str, list[tuple[float, float, float]]]) -> dict[str, list[float]]:
    """Per variant, the median of each stage (trace, lower, compile) over the rounds."""
    return {
        name: [statistics.median(t[i] for t in ts) for i in range(3)] for name, ts in times.items()
    }


def _sizes(fn: Callable, x: jax.Array) -> tuple[int, int]:
    """Equations of the traced program (nested ones included) and fusions XLA compiled."""
    traced = jax.jit(fn).trace(x)
    hlo = traced.lower().compile().as_text()
    return _eqns(traced.jaxpr.jaxpr), len(re.findall(r"= \S+ fusion\(", hlo))


def _eqns(jaxpr) -> int:
    n = 0
    for eqn in jaxpr.eqns:
        n += 1
        for param in eqn.params.values():
            for sub in param if isinstance(param, (list, tuple)) else [param]:
                inner = getattr(sub, "jaxpr", sub)
                if hasattr(inner, "eqns"):
                    n += _eqns(inner)
    return n


def main() -> None:
    args = arguments(__doc__).parse_args()
    n_rounds = 2 if args.quick else rounds(args.budget, 4.0, default=7)
    print(machine())

    header = (
        f"| {'problem':>15} | {'variant':>16} | trace ms | lower ms | compile ms | total ms |"
        " + over lax | eqns | fusions |"
    )
    print(header)
    print("|" + "|".join("-" * len(c) for c in header.split("|")[1:-1]) + "|")
    verdicts = []
    for problem, (step, x) in _steps().items():
        variants = _variants(step)
        times: dict[str, list[tuple[float, float, float]]] = {v: [] for v in variants}
        sizes = {}
        for name, make in variants.items():  # warm-up: JAX's own first-use costs
            _time(make(), _input(name, x))
            sizes[name] = _sizes(make(), _input(name, x))
        for _ in range(n_rounds):
            for name, make in variants.items():
                times[name].append(_time(make(), _input(name, x)))
        med = _medians(times)
        base = sum(med["lax"])
        for name, (tr, lo, co) in med.items():
            total = tr + lo + co
            extra = "-" if name == "lax" else f"{total - base:+.0f}"
            eqns, fusions = sizes[name]
            print(
                f"| {problem:>15} | {name:>16} | {tr:8.1f} | {lo:8.1f} | {co:10.1f} | "
                f"{total:8.1f} | {extra:>11} | {eqns:4d} | {fusions:7d} |"
            )
        added = sum(med["jhw"]) - base
        verdicts.append((problem, added))
    print()
    for problem, added in verdicts:
        mark = "PASS" if added <= GOAL_MS else "MISS"
        goal = f"(goal <= {GOAL_MS:.0f})"
        print(f"{mark}  compile: jhw adds {added:.0f} ms over lax on {problem} {goal}")
    print()
    growth = _by_leaves(n_rounds, LEAVES[:2] if args.quick else LEAVES)
    print()
    for n, ratio in growth:
        mark = "PASS" if ratio <= LEAF_GOAL else "MISS"
        print(
            f"{mark}  compile: from {LEAVES[0]} to {n} recorded leaves, jhw grows "
            f"{ratio:.1f}x as much as lax (goal <= {LEAF_GOAL})"
        )


def _leaf_variants() -> dict[str, Callable[[], Callable]]:
    """A dict of scalars carried, each scaled per step, recorded whole (jhw) or not (lax)."""

    def step(c):
        return c[0] + 1, {k: v * 0.99 for k, v in c[1].items()}

    cond = lambda c: c[0] < 100  # noqa: E731
    record = lambda c: c[1]  # noqa: E731
    return {
        "lax": lambda: lambda x: lax.while_loop(cond, step, (0, x)),
        "jhw": lambda: (
            lambda x: jhw.while_loop(cond, step, (0, x), max_steps=MAX_STEPS, record=record)
        ),
        "jhw stream=False": lambda: (
            lambda x: jhw.while_loop(
                cond, step, (0, x), max_steps=MAX_STEPS, record=record, stream=False
            )
        ),
    }


def _by_leaves(n_rounds: int, counts: tuple[int, ...]) -> list[tuple[int, float]]:
    """The second table: trace + lower + compile by recorded leaf count; per count after the
    first, (N, how much jhw's total grew from the first count over how much lax's did)."""
    header = (
        f"| {'leaves':>6} | {'variant':>16} | trace ms | lower ms | compile ms | total ms | x lax |"
        " growth vs lax |"
    )
    print(header)
    print("|" + "|".join("-" * len(c) for c in header.split("|")[1:-1]) + "|")
    totals: dict[tuple[int, str], float] = {}
    growth = []
    for n in counts:
        x = {f"p{i}": jnp.float32(i) for i in range(n)}
        variants = _leaf_variants()
        times: dict[str, list[tuple[float, float, float]]] = {v: [] for v in variants}
        for _ in range(max(2, n_rounds // 2)):  # the big counts take seconds a round
            for name, make in variants.items():
                times[name].append(_time(make(), x))
        for name, stages in _medians(times).items():
            totals[n, name] = sum(stages)
            total, grew = totals[n, name], "-"
            if n != counts[0] and name != "lax":
                lax_grew = totals[n, "lax"] - totals[counts[0], "lax"]
                grew = f"{(total - totals[counts[0], name]) / lax_grew:.1f}"
            tr, lo, co = stages
            print(
                f"| {n:6d} | {name:>16} | {tr:8.1f} | {lo:8.1f} | {co:10.1f} | "
                f"{total:8.1f} | {total / totals[n, 'lax']:5.1f} | {grew:>13} |"
            )
        if n != counts[0]:
            lax_grew = totals[n, "lax"] - totals[counts[0], "lax"]
            growth.append((n, (totals[n, "jhw"] - totals[counts[0], "jhw"]) / lax_grew))
    return growth


def _input(variant: str, x: jax.Array) -> jax.Array:
    return jnp.broadcast_to(x, (8, *x.shape)) if "vmap" in variant else x


if __name__ == "__main__":
    main()
