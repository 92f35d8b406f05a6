"""Why a TPU's streamed loop writes its rows to stages: each row's write, timed four ways.

    python benchmarks/stages.py             # about a minute on a TPU v5e, two on a 2-core CPU
    python benchmarks/stages.py --quick     # tiny sizes, to check the script runs

Once a host call reads a loop's history, a TPU keeps the buffers in its main memory and each
row written there is a transfer of its own (docs/performance.md, "Rows written to a stage").
Two problems (a scalar step, 10^5 steps; least squares, A 1000x100, 10^4 steps), in plain JAX:
``lax`` (no rows), ``rows`` (one loop writing a row a step, no host call), ``chunked`` (the
package's shape: an outer loop whose conditional holds a host call reading the buffers, around
a loop of steps writing a row each; nobody listens, so one chunk takes every step) and
``staged B`` (the same, its steps writing to a stage of B rows copied to the buffers in one
piece). Then the package itself: ``stream=False``, and streaming with nothing attached with its
rows written to the buffers and to stages (`steps.stage_rows`; a CPU stages nothing, forced on
here to compare). Variants interleaved round-robin in one process, medians.
"""

from __future__ import annotations

import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np
from _bench import arguments, machine, on_accelerator, print_table, rounds
from jax import lax

import jaxhist_widget as jhw
from jaxhist_widget._device.loops import steps


def _nobody():
    return jax.pure_callback(lambda: np.int32(0), jax.ShapeDtypeStruct((), jnp.int32))


def _flush(buf, answer):
    # skipped when nobody listens, as the package's flush is; the call reads the buffer
    call = lambda: jax.pure_callback(  # noqa: E731
        lambda b: np.int32(0), jax.ShapeDtypeStruct((), jnp.int32), buf
    )
    return lax.cond(answer > 0, call, lambda: answer)


def plain(step, row, n, variant, stage=0):
    """A plain-JAX loop of ``n`` steps, as the module's docstring says."""
    rows = n + 1

    def lax_loop(c):
        return lax.while_loop(lambda s: s[0] < n, lambda s: (s[0] + 1, step(s[1])), (0, c))[1]

    def write(s):
        i, c, buf = s
        c = step(c)
        return i + 1, c, buf.at[i + 1].set(row(c))

    def rows_loop(c):
        buf = jnp.zeros(rows, jnp.float32).at[0].set(row(c))
        return lax.while_loop(lambda s: s[0] < n, write, (0, c, buf))[1:]

    def steps_into_buffers(s):
        return lax.while_loop(lambda s: s[0] < n, write, s)

    def steps_into_stages(s):
        def one_stage(s):
            i, c, buf = s
            base = jnp.minimum(i + 1, rows - stage)
            end = jnp.minimum(base + stage - 1, n)

            def body(t):
                i, c, part = t
                c = step(c)
                return i + 1, c, part.at[i + 1 - base].set(row(c))

            part = lax.dynamic_slice(buf, (base,), (stage,))
            i, c, part = lax.while_loop(lambda t: t[0] < end, body, (i, c, part))
            return i, c, lax.dynamic_update_slice(buf, part, (base,))

        return lax.while_loop(lambda s: s[0] < n, one_stage, s)

    inner = steps_into_stages if stage else steps_into_buffers

    def chunked(c):
        buf = jnp.zeros(rows, jnp.float32).at[0].set(row(c))

        def chunk(s):
            i, c, buf, answer = s
            i, c, buf = inner((i, c, buf))
            return i, c, buf, _flush(buf, answer)

        return lax.while_loop(lambda s: s[0] < n, chunk, (0, c, buf, _nobody()))[1:3]

    return jax.jit({"lax": lax_loop, "rows": rows_loop, "chunked": chunked}[variant])


def package(step, row, c0, n, stream, staged):
    """The package's loop of ``n`` steps recording ``row``, compiled for ``c0``; streamed rows
    staged or not (the settings are read when it is traced)."""
    saved = steps._CPU_STAGES, steps.STAGE_ROWS
    steps._CPU_STAGES, steps.STAGE_ROWS = True, (saved[1] if staged else 0)
    try:
        fn = jax.jit(
            lambda c: jhw.while_loop(
                lambda s: s[0] < n,
                lambda s: (s[0] + 1, step(s[1])),
                (0, c),
                max_steps=n,
                record=lambda s: row(s[1]),
                stream=stream,
            )
        )
        return fn.lower(c0).compile()
    finally:
        steps._CPU_STAGES, steps.STAGE_ROWS = saved


def scalar(n):
    return (lambda c: c * 0.9999 + 1e-4), (lambda c: c), jnp.float32(0.5), n


def least_squares(n):
    a = jax.random.normal(jax.random.PRNGKey(0), (1000, 100)) / 30
    b = jax.random.normal(jax.random.PRNGKey(1), (1000,))

    def step(c):
        x, _ = c
        r = a @ x - b
        return x - 0.1 * (a.T @ r), jnp.sum(r * r)

    return step, (lambda c: c[1]), (jnp.zeros(100), jnp.float32(0)), n


def main(argv=None) -> None:
    args = arguments(__doc__).parse_args(argv)
    print(machine())
    sizes = (
        {"scalar": 2000, "least squares": 200}
        if args.quick
        else {"scalar": 100_000, "least squares": 10_000}
    )
    repeat = 1 if args.quick else rounds(args.budget, 2.0, default=15)
    table = []
    for name, problem in (("scalar", scalar), ("least squares", least_squares)):
        step, row, c0, n = problem(sizes[name])
        stage = min(128, n)
        cases = {
            "lax": plain(step, row, n, "lax"),
            "rows, no host call": plain(step, row, n, "rows"),
            "chunked": plain(step, row, n, "chunked"),
            "chunked, staged 16": plain(step, row, n, "chunked", 16),
            f"chunked, staged {stage}": plain(step, row, n, "chunked", stage),
            "jhw stream=False": package(step, row, c0, n, stream=False, staged=False),
            "jhw nothing attached": package(step, row, c0, n, stream=True, staged=False),
            "jhw nothing attached, staged": package(step, row, c0, n, stream=True, staged=True),
        }
        for fn in cases.values():  # compiled and warm before any is timed
            jax.block_until_ready(fn(c0))
        times = {k: [] for k in cases}
        for _ in range(max(repeat, 1)):
            for k, fn in cases.items():
                t = time.perf_counter()
                jax.block_until_ready(fn(c0))
                times[k].append(time.perf_counter() - t)
        med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
        for k, ms in med.items():
            table.append((name, k, f"{ms:.2f}", f"{ms / med['lax']:.2f}x"))
        # the staged rows are the unstaged ones
        want = np.asarray(cases["rows, no host call"](c0)[1])
        got = np.asarray(cases[f"chunked, staged {stage}"](c0)[1])
        assert np.array_equal(want, got), "a staged loop's rows differ"
        staged = med["jhw nothing attached, staged"] / med["jhw nothing attached"]
        table.append((name, "jhw: staged over unstaged", "", f"{staged:.2f}x"))
    print_table(("problem", "loop", "ms", "vs lax"), table)
    where = "this accelerator" if on_accelerator() else "a CPU (which stages nothing)"
    print(f"rows staged or not, on {where}: every staged row equals the unstaged loop's")


if __name__ == "__main__":
    main()
