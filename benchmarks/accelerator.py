"""What recording and streaming cost where JAX's users run: an accelerator (a TPU, a GPU).

    python benchmarks/accelerator.py            # the table (about a minute on a TPU v5e)
    python benchmarks/accelerator.py --quick    # tiny sizes, to check the script runs

Four problems, each a jitted loop timed after compilation, variants interleaved round-robin in
one process (medians; a ratio's spread is its lowest-highest over the rounds):

- ``(m) MLP``: a training step of a 1024-2048-1024 MLP on a batch of 1024 (two 8 MB weight
  matrices in the carry), 1000 steps, recording the loss;
- ``(a) lstsq``: gradient descent on least squares (A 1000x100), 10^4 steps, loss + x;
- ``(b) scalar``: a step of a few scalar operations, 10^5 steps;
- ``(s) sweep``: (a)'s loop over 4096 ``vmap`` lanes (a rate each), 2000 steps, loss + x[:4].

Variants: ``bare`` (``lax.while_loop``), ``no stream`` (``stream=False``: the device history
only), ``nothing`` (streaming, nothing attached), ``Recorder`` (a `Recorder` attached, auto
streaming; the loop was run before, so it starts at the pace it settled on), ``jax-tqdm`` (the
peer: ``jax_tqdm``'s bar on the same step as a ``fori_loop``, where installed). ``calls`` is the
host calls a `Recorder` run made (the run's opening included), ``stall`` the time a call stops
the device beyond the host's own work, as auto streaming measured it.

After the table: streaming's cost against ``jax.device_get`` of the same bytes (the sweep's
history), and what a new ``jit`` of a tiny loop costs over ``lax.while_loop``'s. On a CPU the
numbers are printed too, but the targets are the accelerator's (docs/performance.md has both).
"""

from __future__ import annotations

import io
import statistics
import time

import jax
import jax.numpy as jnp
from _bench import arguments, machine, on_accelerator, print_table, rounds
from jax import lax

import jaxhist_widget as jhw
from jaxhist_widget._host import HUB
from jaxhist_widget._host.runtime import _pace

try:  # optional peer (pip install jax-tqdm)
    from jax_tqdm import loop_tqdm
except ImportError:  # pragma: no cover - depends on the environment
    loop_tqdm = None

#: The targets (issue 47), as ratios: variant over baseline, at most.
TARGETS = {
    "(m) MLP": ("Recorder", "bare", 1.03),
    "(a) lstsq": ("Recorder", "bare", 1.10),
    "(s) sweep": ("Recorder", "bare", 1.25),
    "(b) scalar": ("nothing", "no stream", 1.5),
}


def mlp(steps: int, small: bool):
    n, d, b = (64, 32, 16) if small else (2048, 1024, 1024)
    keys = jax.random.split(jax.random.key(0), 4)
    params = {
        "w1": jax.random.normal(keys[0], (d, n)) / jnp.sqrt(d),
        "w2": jax.random.normal(keys[1], (n, d)) / jnp.sqrt(n),
    }
    x, y = jax.random.normal(keys[2], (b, d)), jax.random.normal(keys[3], (b, d))

    def loss(p):
        return jnp.mean((jnp.tanh(x @ p["w1"]) @ p["w2"] - y) ** 2)

    def body(c):
        i, p, _ = c
        value, grad = jax.value_and_grad(loss)(p)
        return i + 1, jax.tree_util.tree_map(lambda w, g: w - 0.01 * g, p, grad), value

    return body, (jnp.int32(0), params, jnp.float32(0)), (lambda c: c[2])


def least_squares(steps: int, small: bool, lr_scale: jax.Array | float = 1.0):
    m, d = (64, 16) if small else (1000, 100)
    ka, kb = jax.random.split(jax.random.key(1))
    a, b = jax.random.normal(ka, (m, d)), jax.random.normal(kb, (m,))
    lr = lr_scale / (jnp.linalg.norm(a, 2) ** 2 / m)

    def body(c):
        i, x, _ = c
        r = a @ x - b
        return i + 1, x - lr * (a.T @ r) / m, 0.5 * jnp.vdot(r, r) / m

    return body, (jnp.int32(0), jnp.zeros(d), jnp.float32(0)), (lambda c: {"loss": c[2], "x": c[1]})


def scalar(steps: int, small: bool):
    body = lambda c: (c[0] + 1, c[1] * 0.999 + 0.001)  # noqa: E731
    return body, (jnp.int32(0), jnp.float32(1)), (lambda c: c[1])


class Calls:
    """Counts the host calls of the runs made inside it (openings and flushes)."""

    def __enter__(self) -> Calls:
        self.n = 0
        self._open, self._receive = HUB.open_run, HUB.receive_chunk

        def opening(*args):
            self.n += 1
            return self._open(*args)

        def receiving(*args):
            self.n += 1
            return self._receive(*args)

        HUB.open_run, HUB.receive_chunk = opening, receiving
        return self

    def __exit__(self, *exc: object) -> None:
        HUB.open_run, HUB.receive_chunk = self._open, self._receive


def variants(problem, steps: int, small: bool, lanes: int) -> dict:
    """``name -> (jitted fn, argument, sink class or None)`` for one problem."""
    cond = lambda c: c[0] < steps  # noqa: E731
    if lanes:
        rates = jnp.logspace(-3, 0, lanes)

        def loop(rate, **kw):
            body, init, _ = least_squares(steps, small, rate)
            return jhw.while_loop(
                cond,
                body,
                init,
                max_steps=steps,
                record=lambda c: {"loss": c[2], "x": c[1][:4]},
                **kw,
            )

        def bare(rate):
            body, init, _ = least_squares(steps, small, rate)
            return lax.while_loop(cond, body, init)

        streamed = jax.jit(jax.vmap(loop))
        return {
            "bare": (jax.jit(jax.vmap(bare)), rates, None),
            "no stream": (jax.jit(jax.vmap(lambda r: loop(r, stream=False))), rates, None),
            "nothing": (streamed, rates, None),
            "Recorder": (streamed, rates, jhw.Recorder),
        }
    body, init, record = problem(steps, small)
    streamed = jax.jit(lambda c: jhw.while_loop(cond, body, c, max_steps=steps, record=record))
    out = {
        "bare": (jax.jit(lambda c: lax.while_loop(cond, body, c)), init, None),
        "no stream": (
            jax.jit(
                lambda c: jhw.while_loop(
                    cond, body, c, max_steps=steps, record=record, stream=False
                )
            ),
            init,
            None,
        ),
        "nothing": (streamed, init, None),
        "Recorder": (streamed, init, jhw.Recorder),
    }
    if loop_tqdm is not None:
        bar = loop_tqdm(steps, file=io.StringIO())(lambda i, c: body(c))
        out["jax-tqdm"] = (jax.jit(lambda c: lax.fori_loop(0, steps, bar, c)), init, None)
    return out


def run_once(fn, arg, sink_type) -> tuple[float, int, object]:
    with Calls() as calls:
        t = time.perf_counter()
        if sink_type is None:
            out = jax.block_until_ready(fn(arg))
            sink = None
        else:
            with sink_type() as sink:
                out = fn(arg)
            jax.block_until_ready(out)  # the block waited for the device already
        elapsed = time.perf_counter() - t
    return elapsed, calls.n, (out, sink)


def measure(name: str, cases: dict, repeat: int) -> tuple[list, dict, object]:
    times = {k: [] for k in cases}
    calls = {}
    for r in range(repeat + 1):  # the first round compiles (and paces the loop once)
        for k, (fn, arg, sink_type) in cases.items():
            t, n, (out, sink) = run_once(fn, arg, sink_type)
            if r:
                times[k].append(t)
            if sink is not None:
                calls[k] = n
                run = sink.runs[-1]
                last_out = out
    base = times["bare"]
    med = {k: statistics.median(v) for k, v in times.items()}
    known = _pace._MEMORY.recall(run.layout)
    stall = f"{known[2] * 1e3:.2f} ms" if known else "-"
    rows = []
    for k, v in times.items():
        ratios = [a / b for a, b in zip(v, base, strict=True)]
        rows.append(
            (
                name,
                k,
                f"{med[k] * 1e3:.2f}",
                f"{med[k] / med['bare']:.3f}x",
                f"{min(ratios):.2f}-{max(ratios):.2f}",
                calls.get(k, "-"),
                stall if k == "Recorder" else "-",
            )
        )
    return rows, med, (last_out, run)


def device_get_seconds(values, repeat: int) -> float:
    """``jax.device_get`` of ``values``, freshly computed each time (nothing cached)."""
    ts = []
    for _ in range(max(3, repeat)):
        fresh = jax.block_until_ready(jax.tree_util.tree_map(lambda x: x + 0, values))
        t = time.perf_counter()
        got = jax.device_get(fresh)
        if not on_accelerator():  # a CPU hands out its buffer: a host keeping rows copies it
            jax.tree_util.tree_map(lambda x: x.copy(), got)
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def compile_ms(make, x, repeat: int) -> float:
    """Median ms of trace + lower + compile of a fresh function (nothing cached)."""
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        jax.jit(make()).trace(x).lower().compile()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e3


def main(argv=None) -> dict:
    args = arguments(__doc__).parse_args(argv)
    small = args.quick
    if small:
        sizes = {"(m) MLP": 10, "(a) lstsq": 200, "(b) scalar": 2000, "(s) sweep": (32, 50)}
        repeat = 1
    else:
        sizes = {
            "(m) MLP": 1000,
            "(a) lstsq": 10_000,
            "(b) scalar": 100_000,
            "(s) sweep": (4096, 2000),
        }
        repeat = rounds(args.budget, 6.0, default=5)
    print(machine())
    problems = {"(m) MLP": mlp, "(a) lstsq": least_squares, "(b) scalar": scalar}
    table, meds = [], {}
    for name, problem in problems.items():
        rows, med, _ = measure(name, variants(problem, sizes[name], small, 0), repeat)
        table += rows
        meds[name] = med
    lanes, steps = sizes["(s) sweep"]
    rows, med, ((_, hist), _) = measure("(s) sweep", variants(None, steps, small, lanes), repeat)
    table += rows
    meds["(s) sweep"] = med
    head = ("problem", "variant", "ms", "vs bare", "spread", "calls", "stall")
    print_table(head, table)

    # Streaming against the copy of its bytes: the sweep's whole history, fetched at once.
    nbytes = sum(x.nbytes for x in jax.tree_util.tree_leaves(hist.values))
    copy = device_get_seconds(hist.values, repeat)
    streaming = meds["(s) sweep"]["Recorder"] - meds["(s) sweep"]["nothing"]
    print(
        f"\n(s) streaming {nbytes / 1e6:.1f} MB of rows costs {streaming * 1e3:.1f} ms over the "
        f"loop with nothing attached; jax.device_get of the same bytes: {copy * 1e3:.1f} ms "
        f"-> {streaming / copy:.2f}x the copy"
    )

    # A new jit: what the package adds to lax.while_loop's trace + lower + compile.
    x = jnp.ones(8)
    cond = lambda c: c[0] < 100  # noqa: E731
    step = lambda c: (c[0] + 1, jnp.tanh(c[1]) * 0.9)  # noqa: E731
    n = 2 if small else 5
    lax_ms = compile_ms(lambda: lambda x: lax.while_loop(cond, step, (0, x)), x, n)
    jhw_ms = compile_ms(lambda: lambda x: jhw.while_loop(cond, step, (0, x), max_steps=1000), x, n)
    added = jhw_ms - lax_ms
    print(f"new jit of a tiny loop: lax {lax_ms:.0f} ms, jhw {jhw_ms:.0f} ms (+{added:.0f} ms)")

    checks = {}
    for name, (variant, base, most) in TARGETS.items():
        ratio = meds[name][variant] / meds[name][base]
        checks[f"{name} {variant} <= {most}x {base} ({ratio:.3f}x)"] = ratio <= most
    checks[f"(s) streaming <= 2x a device_get of its bytes ({streaming / copy:.2f}x)"] = (
        streaming <= 2 * copy
    )
    for name, med in meds.items():
        if "jax-tqdm" in med:
            checks[f"{name} Recorder cheaper than jax-tqdm's bar"] = (
                med["Recorder"] < med["jax-tqdm"]
            )
    checks[f"a new jit <= +150 ms over lax (+{added:.0f} ms)"] = added <= 150
    print()
    for k, ok in checks.items():
        print(f"{'PASS' if ok else 'MISS'}  {k}")
    if loop_tqdm is None:
        print("SKIP  jax-tqdm rows and targets: jax-tqdm is not installed (pip install jax-tqdm)")
    if not on_accelerator():
        print("(a CPU backend: the targets are an accelerator's; docs/performance.md)")
    return checks


if __name__ == "__main__":
    main()
