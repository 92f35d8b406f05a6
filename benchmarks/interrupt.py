"""How fast Ctrl-C (SIGINT) stops a compute-bound loop, against the time of one step.

The step is pure XLA work (``x = tanh(A @ x)``, no Python in it), run under ``with rec:`` in the
main thread, as in a notebook cell; another thread sends this process SIGINT, as the kernel's ■
does, once the loop is well under way. Latency is from the signal to the call returning with
its partial history. Run::

    python benchmarks/interrupt.py            # 384x384, 5 runs
    python benchmarks/interrupt.py --quick    # smaller and fewer, to check the script runs
"""

from __future__ import annotations

import os
import signal
import threading
import time

import jax
import jax.numpy as jnp
import numpy as np

# The scripts' shared helpers sit beside them (a script's own folder is on its path).
from _bench import arguments, machine, rounds

import jaxhist_widget as jhw


def main() -> None:
    args = arguments(__doc__).parse_args()
    n, runs, delay = (128, 2, 0.3) if args.quick else (384, rounds(args.budget, 3.0, 5), 1.0)
    print(machine())
    max_steps = 1_000_000

    a = jax.random.normal(jax.random.key(0), (n, n)) / (1.2 * np.sqrt(n))
    solve = jax.jit(
        lambda x: jhw.while_loop(
            lambda c: c[0] < max_steps,
            lambda c: (c[0] + 1, jnp.tanh(a @ c[1])),
            (jnp.int32(0), x),
            max_steps=max_steps,
            record=lambda c: (c[0], jnp.mean(c[1])),
        )
    )
    x0 = jnp.ones((n, n))
    solve.lower(x0).compile()
    bare = jax.jit(lambda x: jax.lax.fori_loop(0, 200, lambda i, x: jnp.tanh(a @ x), x))
    jax.block_until_ready(bare(x0))
    t0 = time.perf_counter()
    jax.block_until_ready(bare(x0))
    step_ms = (time.perf_counter() - t0) / 200 * 1e3

    print(f"compute-bound step: tanh(A @ x), {n}x{n}, {step_ms:.3f} ms a step (bare loop)")
    print(f"| {'run':>3} | {'steps done':>10} | {'latency ms':>10} | {'status':>8} |")
    print(f"|{'-' * 5}|{'-' * 12}|{'-' * 12}|{'-' * 10}|")
    latencies = []
    for i in range(runs):
        sent: list[float] = []

        def interrupt(sent: list[float] = sent) -> None:
            time.sleep(delay)
            sent.append(time.perf_counter())
            os.kill(os.getpid(), signal.SIGINT)

        rec = jhw.Recorder()
        threading.Thread(target=interrupt, daemon=True).start()
        with rec:
            _, hist = solve(x0)
        latency = (time.perf_counter() - sent[0]) * 1e3
        latencies.append(latency)
        status = rec.runs[-1].status
        print(f"| {i:>3} | {int(hist.length) - 1:>10,} | {latency:>10.1f} | {status:>8} |")
        assert status == "stopped" and rec.runs[-1].counts[0] == int(hist.length)
    median = float(np.median(latencies))
    print(f"median latency {median:.1f} ms = {median / step_ms:.1f} steps of {step_ms:.3f} ms")
    print("every interrupt stopped its run with all its rows")


if __name__ == "__main__":
    main()
