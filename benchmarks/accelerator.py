"""What recording and streaming cost where JAX's users run: an accelerator (a TPU, a GPU).

    python benchmarks/accelerator.py            # the table (about a minute on a TPU v5e)
    python benchmarks/accelerator.py --quick    # tiny sizes, to check the script runs
    python benchmarks/accelerator.py --stall 2  # on a CPU: each host call stops 2 ms (+1 ms/MB)

Five problems, each a jitted loop timed after compilation, variants interleaved round-robin in
one process (medians; a ratio's spread is its lowest-highest over the rounds):

- ``(m) MLP``: a training step of a 1024-2048-1024 MLP on a batch of 1024 (two 8 MB weight
  matrices in the carry), 1000 steps, recording the loss;
- ``(a) lstsq``: gradient descent on least squares (A 1000x100), 10^4 steps, loss + x;
- ``(b) scalar``: a step of a few scalar operations, 10^5 steps;
- ``(s) sweep``: (a)'s loop over 4096 ``vmap`` lanes (a rate each), 2000 steps, loss + x[:4];
- ``(s64) sweep``: the same over 64 lanes.

On a CPU the MLP is 256-128-256 on a batch of 64 (500 steps) and the sweeps' A 64x16 (1024 and
64 lanes): sizes a 2-core machine runs in seconds. ``--quick``: tiny sizes, to check it runs.

Variants: ``bare`` (``lax.while_loop``), ``no stream`` (``stream=False``: the device history
only), ``nothing`` (streaming, nothing attached), ``Recorder`` (a `Recorder` attached, auto
streaming; the loop was run before, so it starts at the pace it settled on), ``LivePlot`` (a
`LivePlot` attached, headless, as ``%%jaxhist`` attaches one; where the widget stack is
installed), ``jax-tqdm`` (the peer: ``jax_tqdm``'s bar on the same step as a ``fori_loop``,
where installed), and for the MLP ``nested lax`` (plain JAX in the streamed loop's shape, a
loop of chunks around a loop of steps writing a row each: the floor of its copies, which XLA
inserts for that shape alone). ``calls`` is the host calls a sink's run made (the run's
opening included), ``stall`` the time a call stops the device beyond the host's own work, as
auto streaming measured it.

Then where streaming with nothing attached spends its time over ``stream=False``: the run's
opening host call (timed as a run of no step, each way), the outer loop's iterations (how many
the opening answer asks for) and what is left per iteration; and each program's structure, read
off XLA's compiled text (``_hlo.py``): while loops (their nesting), conditionals, copies (those
run at every step, and their bytes), host calls and kernels. A CPU runs its host calls inline,
with no stall: ``--stall MS`` makes every host call sleep that long (plus 1 ms a MB of its
arguments), as a chip's calls stop it (docs/performance.md), so that a CPU shows what a chip
pays for them.

After the tables: streaming's cost against ``jax.device_get`` of the same bytes (the sweep's
history), and what a new ``jit`` of a tiny loop costs over ``lax.while_loop``'s. On a CPU the
numbers are printed too, but the targets are the accelerator's (docs/performance.md has both).
"""

from __future__ import annotations

import functools
import io
import statistics
import time
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from _bench import arguments, machine, on_accelerator, print_table, rounds
from _hlo import Structure, structure
from jax import lax

import jaxhist_widget as jhw
from jaxhist_widget import _wire
from jaxhist_widget._host import HUB
from jaxhist_widget._host.runtime import _pace

try:  # the widget stack is optional here (a GPU machine may lack it)
    from jaxhist_widget.ui import LivePlot
except ImportError:  # pragma: no cover - depends on the environment
    LivePlot = None

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
#: Issue 55: a `LivePlot` (what ``%%jaxhist`` attaches) over nothing attached, at most.
PLOT_MOST = {"(m) MLP": 1.05, "(a) lstsq": 1.15, "(s64) sweep": 1.5, "(s) sweep": 1.5}
#: Issue 55: streaming with nothing attached over ``stream=False``, the opening call apart.
NOTHING_MOST = 1.10
#: and an MLP whose weights are the carry, nothing attached, over the bare loop.
MLP_NOTHING_MOST = 1.03

#: The MLP's sizes (hidden, input, batch): tiny (--quick), a CPU's, a chip's.
MLP_SIZES = {"tiny": (64, 32, 16), "cpu": (256, 128, 64), "chip": (2048, 1024, 1024)}


def mlp(steps: int, size: str):
    n, d, b = MLP_SIZES[size]
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


@functools.lru_cache
def _lstsq_data(small: bool) -> tuple[jax.Array, jax.Array, float]:
    """A, b and the step size of the least-squares problem, made once, outside any trace: the
    programs compared hold them as constants, not the random draws and the SVD making them."""
    m, d = (64, 16) if small else (1000, 100)
    with jax.ensure_compile_time_eval():  # first asked for inside a vmapped loop's trace
        ka, kb = jax.random.split(jax.random.key(1))
        a, b = jax.random.normal(ka, (m, d)), jax.random.normal(kb, (m,))
        return a, b, float(m / jnp.linalg.norm(a, 2) ** 2)


def least_squares(steps: int, small: bool, lr_scale: jax.Array | float = 1.0):
    a, b, lr = _lstsq_data(small)
    m, d = a.shape
    lr = lr_scale * lr

    def body(c):
        i, x, _ = c
        r = a @ x - b
        return i + 1, x - lr * (a.T @ r) / m, 0.5 * jnp.vdot(r, r) / m

    return body, (jnp.int32(0), jnp.zeros(d), jnp.float32(0)), (lambda c: {"loss": c[2], "x": c[1]})


def scalar(steps: int, small: bool):
    body = lambda c: (c[0] + 1, c[1] * 0.999 + 0.001)  # noqa: E731
    return body, (jnp.int32(0), jnp.float32(1)), (lambda c: c[1])


class Calls:
    """Counts the host calls of the runs made inside it (openings and flushes), and keeps the
    last opening's answer: ``[run id, rows until the first flush]`` (`_wire.NEVER`: nobody
    listens). With a ``stall`` (seconds), every call first sleeps that long, plus 1 ms a MB of
    its arguments: on a CPU, whose host calls run inline, a chip's stall (tpu.md)."""

    def __init__(self, stall: float = 0.0) -> None:
        self.stall = stall

    def __enter__(self) -> Calls:
        self.n = 0
        self.opened = None
        self._open, self._receive = HUB.open_run, HUB.receive_chunk

        def pause(args) -> None:
            if self.stall:
                nbytes = sum(np.asarray(a).nbytes for a in args if hasattr(a, "nbytes"))
                time.sleep(self.stall + 1e-3 * nbytes / 1e6)

        def opening(*args):
            self.n += 1
            pause(args)
            self.opened = self._open(*args)
            return self.opened

        def receiving(*args):
            self.n += 1
            pause(args)
            return self._receive(*args)

        HUB.open_run, HUB.receive_chunk = opening, receiving
        return self

    def __exit__(self, *exc: object) -> None:
        HUB.open_run, HUB.receive_chunk = self._open, self._receive


#: Variants timed with the others, for the opening call, that the main table leaves out: the
#: same programs on a run of no step (``cond_fun`` False at once).
OPENING = ("no stream, no step", "nothing, no step")


def _plot_variant(fn, arg) -> dict:
    """A `LivePlot` attached (headless, as ``%%jaxhist`` attaches one), where it imports."""
    return {} if LivePlot is None else {"LivePlot": (fn, arg, LivePlot)}


#: The MLP's floor variant: plain JAX in the streamed loop's shape (`nested_lax`).
NESTED = "nested lax"


def variants(problem, steps: int, size: str, lanes: int) -> dict:
    """``name -> (jitted fn, argument, sink class or None)`` for one problem."""
    cond = lambda c: c[0] < steps  # noqa: E731
    never = lambda c: c[0] < 0  # noqa: E731
    small = size != "chip"
    if lanes:
        rates = jnp.logspace(-3, 0, lanes)

        def loop(rate, cond=cond, **kw):
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
            **_plot_variant(streamed, rates),
            OPENING[0]: (jax.jit(jax.vmap(lambda r: loop(r, never, stream=False))), rates, None),
            OPENING[1]: (jax.jit(jax.vmap(lambda r: loop(r, never))), rates, None),
        }
    # (a)'s A is 1000x100 on a CPU too (a step of ~10 us there): small only for --quick
    body, init, record = problem(steps, size if problem is mlp else size == "tiny")

    def loop(c, cond=cond, **kw):
        return jhw.while_loop(cond, body, c, max_steps=steps, record=record, **kw)

    streamed = jax.jit(loop)
    out = {
        "bare": (jax.jit(lambda c: lax.while_loop(cond, body, c)), init, None),
        "no stream": (jax.jit(lambda c: loop(c, stream=False)), init, None),
        "nothing": (streamed, init, None),
        "Recorder": (streamed, init, jhw.Recorder),
        **_plot_variant(streamed, init),
        OPENING[0]: (jax.jit(lambda c: loop(c, never, stream=False)), init, None),
        OPENING[1]: (jax.jit(lambda c: loop(c, never)), init, None),
    }
    if problem is mlp:
        out[NESTED] = (jax.jit(nested_lax(body, cond, steps, record)), init, None)
    if loop_tqdm is not None:
        bar = loop_tqdm(steps, file=io.StringIO())(lambda i, c: body(c))
        out["jax-tqdm"] = (jax.jit(lambda c: lax.fori_loop(0, steps, bar, c)), init, None)
    return out


def nested_lax(body, cond, steps: int, record):
    """Plain JAX in the streamed loop's shape, with nothing of the package: an outer loop whose
    iterations (chunks) each run an inner loop of steps up to a limit, one row written a step.

    What XLA makes of that shape alone is the floor of what a streamed loop can be: on a TPU
    v5e, XLA's copy insertion copies an MLP's second weight matrix (8 MiB) at every inner step
    here, where the same loop unnested copies nothing (docs/performance.md).
    """

    def run(c):
        def buffer(r):
            return jnp.zeros((steps + 1, *jnp.shape(r)), jnp.result_type(r)).at[0].set(r)

        def step(s):
            c, bufs, n, limit = s
            c, n = body(c), n + 1
            rows = record(c)
            bufs = jax.tree_util.tree_map(
                lambda b, r: lax.dynamic_update_index_in_dim(b, r, n, 0), bufs, rows
            )
            return c, bufs, n, limit

        def chunk(s):
            c, bufs, n, _ = s
            limit = jnp.minimum(n + steps, steps)  # one chunk, as when nothing is attached
            return lax.while_loop(lambda s: cond(s[0]) & (s[2] < s[3]), step, (c, bufs, n, limit))

        bufs = jax.tree_util.tree_map(buffer, record(c))
        s = (c, bufs, jnp.int32(0), jnp.int32(0))
        return lax.while_loop(lambda s: cond(s[0]) & (s[2] < steps), chunk, s)[:2]

    return run


def run_once(fn, arg, sink_type, stall: float = 0.0) -> tuple[float, Calls, object]:
    # (a sink is made before the clock starts: a plot's widgets are made once per cell)
    sink = None if sink_type is None else sink_type()
    with Calls(stall) as calls:
        t = time.perf_counter()
        if sink is None:
            out = jax.block_until_ready(fn(arg))
        else:
            with sink:
                out = fn(arg)
            jax.block_until_ready(out)  # the block waited for the device already
        elapsed = time.perf_counter() - t
    return elapsed, calls, (out, sink)


class Measured(NamedTuple):
    """One problem's timings (`measure`)."""

    rows: list  #: the main table's rows
    med: dict[str, float]  #: median seconds per variant
    last: tuple  #: the last Recorder run's (output, run)
    opened: Any  #: the opening answer a run with nothing attached got


def measure(name: str, cases: dict, repeat: int, stall: float = 0.0) -> Measured:
    times: dict[str, list[float]] = {k: [] for k in cases}
    calls, opened = {}, None
    for r in range(repeat + 1):  # the first round compiles (and paces the loop once)
        for k, (fn, arg, sink_type) in cases.items():
            t, made, (out, sink) = run_once(fn, arg, sink_type, stall)
            if r:
                times[k].append(t)
            if sink is not None:
                calls[k] = made.n
            if k == "Recorder":
                run = sink.runs[-1]
                last_out = out
            elif k == "nothing":
                opened = made.opened
    base = times["bare"]
    med = {k: statistics.median(v) for k, v in times.items()}
    known = _pace._MEMORY.recall(run.layout)
    stall_seen = f"{known[2] * 1e3:.2f} ms" if known else "-"
    rows = []
    for k, v in times.items():
        if k in OPENING:
            continue
        ratios = [a / b for a, b in zip(v, base, strict=True)]
        rows.append(
            (
                name,
                k,
                f"{med[k] * 1e3:.2f}",
                f"{med[k] / med['bare']:.3f}x",
                f"{min(ratios):.2f}-{max(ratios):.2f}",
                calls.get(k, "-"),
                stall_seen if k == "Recorder" else "-",
            )
        )
    return Measured(rows, med, (last_out, run), opened)


def where_it_goes(name: str, m: Measured, steps: int) -> tuple[tuple, bool]:
    """A row of the table of where nothing attached's time goes over ``stream=False``, and
    whether it meets `NOTHING_MOST` (the opening call apart)."""
    med = m.med
    opening = max(0.0, med[OPENING[1]] - med[OPENING[0]])
    every = int(np.asarray(m.opened)[1]) if m.opened is not None else 0
    # rows until the first flush: `NEVER` when nobody listens, so one chunk runs every step
    iterations = 1 if every >= _wire.NEVER or every <= 0 else -(-(steps + 1) // every)
    extra = med["nothing"] - med["no stream"]
    rest = (extra - opening) / iterations
    ok = med["nothing"] <= NOTHING_MOST * med["no stream"] + opening
    row = (
        name,
        f"{med['no stream'] * 1e3:.2f}",
        f"{med['nothing'] * 1e3:.2f}",
        f"{med['nothing'] / med['no stream']:.3f}x",
        f"{opening * 1e3:.3f}",
        iterations,
        f"{rest * 1e3:+.3f}",
        f"{(med['nothing'] - opening) / med['no stream']:.3f}x",
    )
    return row, ok


def structure_rows(name: str, cases: dict) -> tuple[list[tuple], dict[str, Structure]]:
    """The compiled programs of ``bare``, ``no stream`` and ``nothing`` (`_hlo.structure`)."""
    rows, out = [], {}
    for k in ("bare", NESTED, "no stream", "nothing"):
        if k not in cases:
            continue
        fn, arg, _ = cases[k]
        st = out[k] = structure(fn.lower(arg).compile().as_text())
        rows.append(
            (
                name,
                k,
                f"{st.whiles} ({st.depth} deep)",
                st.conditionals,
                st.copies,
                f"{st.step_copies}: {_size(st.step_copy_bytes)}",
                st.host_calls,
                st.kernels,
            )
        )
    return rows, out


def _size(nbytes: int) -> str:
    return f"{nbytes / 2**20:.1f} MiB" if nbytes >= 2**20 else f"{nbytes} B"


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


def _sizes(quick: bool, chip: bool) -> tuple[str, dict]:
    """The MLP's size and each problem's steps (a sweep's: lanes and steps)."""
    if quick:
        return "tiny", {
            "(m) MLP": 10,
            "(a) lstsq": 200,
            "(b) scalar": 2000,
            "(s64) sweep": (8, 50),
            "(s) sweep": (32, 50),
        }
    lanes = 4096 if chip else 1024
    return ("chip" if chip else "cpu"), {
        "(m) MLP": 1000 if chip else 500,
        "(a) lstsq": 10_000,
        "(b) scalar": 100_000,
        "(s64) sweep": (64, 2000),
        "(s) sweep": (lanes, 2000),
    }


def main(argv=None) -> dict:
    parser = arguments(__doc__)
    parser.add_argument(
        "--stall",
        type=float,
        default=0.0,
        metavar="MS",
        help="each host call sleeps MS ms (+1 ms a MB): a chip's stall, on a CPU",
    )
    args = parser.parse_args(argv)
    size, sizes = _sizes(args.quick, on_accelerator())
    repeat = 1 if args.quick else rounds(args.budget, 6.0, default=5)
    stall = args.stall / 1e3
    print(machine())
    if stall:
        print(f"(every host call stops the loop {args.stall:g} ms + 1 ms a MB: --stall)")
    problems = {"(m) MLP": mlp, "(a) lstsq": least_squares, "(b) scalar": scalar}
    table, meds, gone, shapes, verdicts, programs = [], {}, [], [], {}, {}
    for name in sizes:
        if name in problems:
            cases = variants(problems[name], sizes[name], size, 0)
            steps = sizes[name]
        else:
            lanes, steps = sizes[name]
            cases = variants(None, steps, size, lanes)
        m = measure(name, cases, repeat, stall)
        table += m.rows
        meds[name] = m.med
        row, ok = where_it_goes(name, m, steps)
        gone.append(row)
        verdicts[name] = ok
        rows, programs[name] = structure_rows(name, cases)
        shapes += rows
        if name == "(s) sweep":
            (_, hist), _ = m.last
    head = ("problem", "variant", "ms", "vs bare", "spread", "calls", "stall")
    print_table(head, table)

    # Where nothing attached spends its time over stream=False.
    print()
    head = (
        "problem",
        "no stream ms",
        "nothing ms",
        "ratio",
        "opening call ms",
        "outer iterations",
        "rest ms / iteration",
        "ratio, opening apart",
    )
    print_table(head, gone)
    print()
    head = ("problem", "variant", "whiles", "conds", "copies", "per step: copies", "host calls")
    print_table((*head, "kernels"), shapes)

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
    n = 2 if args.quick else 5
    lax_ms = compile_ms(lambda: lambda x: lax.while_loop(cond, step, (0, x)), x, n)
    jhw_ms = compile_ms(lambda: lambda x: jhw.while_loop(cond, step, (0, x), max_steps=1000), x, n)
    added = jhw_ms - lax_ms
    print(f"new jit of a tiny loop: lax {lax_ms:.0f} ms, jhw {jhw_ms:.0f} ms (+{added:.0f} ms)")

    checks = {}
    for name, ok in verdicts.items():
        checks[f"{name} nothing attached <= {NOTHING_MOST}x stream=False + its opening call"] = ok
    ratio = meds["(m) MLP"]["nothing"] / meds["(m) MLP"]["bare"]
    checks[f"(m) MLP nothing attached <= {MLP_NOTHING_MOST}x bare ({ratio:.3f}x)"] = (
        ratio <= MLP_NOTHING_MOST
    )
    # The loop's own bookkeeping copies a scalar or two a step; a weight matrix is kilobytes.
    extra = (
        programs["(m) MLP"]["nothing"].step_copy_bytes - programs["(m) MLP"]["bare"].step_copy_bytes
    )
    checks[f"(m) MLP no per-step copy beyond the bare loop's but scalars (+{extra} B)"] = (
        extra <= 64
    )
    # The floor of that target: what XLA copies a step in plain JAX of the streamed loop's shape.
    mlp_programs = programs["(m) MLP"]
    nested = mlp_programs[NESTED].step_copy_bytes - mlp_programs["bare"].step_copy_bytes
    nested_ratio = meds["(m) MLP"][NESTED] / meds["(m) MLP"]["bare"]
    print(
        f"FLOOR (m) MLP: plain JAX, a loop nested in another writing a row a step, copies "
        f"+{_size(nested)} a step over the bare loop (XLA's copy insertion) at "
        f"{nested_ratio:.3f}x its time; the streamed loop +{_size(extra)}"
    )
    for name, (variant, base, most) in TARGETS.items():
        ratio = meds[name][variant] / meds[name][base]
        checks[f"{name} {variant} <= {most}x {base} ({ratio:.3f}x)"] = ratio <= most
    for name, most in PLOT_MOST.items():
        if name in meds and "LivePlot" in meds[name]:
            ratio = meds[name]["LivePlot"] / meds[name]["nothing"]
            checks[f"{name} LivePlot <= {most}x nothing attached ({ratio:.3f}x)"] = ratio <= most
    checks[f"(s) streaming <= 2x a device_get of its bytes ({streaming / copy:.2f}x)"] = (
        streaming <= 2 * copy
    )
    for name, med in meds.items():
        if "jax-tqdm" in med:
            checks[f"{name} Recorder cheaper than jax-tqdm's bar"] = (
                med["Recorder"] < med["jax-tqdm"]
            )
    checks[f"a new jit <= +100 ms over lax (+{added:.0f} ms)"] = added <= 100
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
