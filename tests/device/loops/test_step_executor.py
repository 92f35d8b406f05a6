"""The step runs in a computation of its own on CPU.

XLA's CPU runtime runs a computation of more than 8 operations that do not form a chain with a
dependency-graph executor (~1 µs a run); a cheap step that ``lax.while_loop`` runs in order
crossed that line once the loop's row writes joined it (~10% on `benchmarks/overhead.py`'s
problem (a)). `while_loop` therefore keeps ``body_fun`` in a conditional of its own on CPU.
These tests pin that structure (no timing: the speed is in the benchmark) and that the
behaviour stayed that of ``lax.while_loop``: the body runs once per step, rows and step counts
are exact under early exit, the cap, vmap lanes ending at different steps and an outer loop.
"""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import jaxhist_widget as jhw

from ...helpers.backends import cpu_only

# Sweeps of dtypes, transforms and compiled programs: kept out of the quick subset.
pytestmark = pytest.mark.slow

DIM = 32
A = jax.random.normal(jax.random.key(3), (DIM, DIM), jnp.float32) * 0.6 / np.sqrt(DIM)


def cond(c):
    return (c[0] < 50) & (jnp.linalg.norm(c[1]) > 0.05)


def body(c):
    i, x = c
    return i + 1, jnp.tanh(A @ x)


def start(scale):
    return (jnp.int32(0), scale * jnp.linspace(-1.0, 1.0, DIM, dtype=jnp.float32))


def lax_rows(init, max_steps):
    """The rows ``lax.while_loop`` goes through, capped at ``max_steps`` steps, on the host."""
    rows, c = [np.asarray(init[1])], init
    while bool(cond(c)) and len(rows) <= max_steps:
        c = body(c)
        rows.append(np.asarray(c[1]))
    return np.stack(rows)


def _computations(hlo: str) -> dict[str, str]:
    """HLO text split into its computations, by name."""
    parts = re.split(r"^(?=%|ENTRY )", hlo, flags=re.M)
    out = {}
    for part in parts:
        m = re.match(r"(?:ENTRY )?%?([\w.\-]+) ", part)
        if m:
            out[m.group(1)] = part
    return out


@cpu_only
@pytest.mark.parametrize("stream", [False, True])
def test_the_step_runs_in_a_branch_of_its_own_on_cpu(stream):
    fn = jax.jit(lambda c: jhw.while_loop(cond, body, c, max_steps=60, stream=stream))
    comps = _computations(fn.lower(start(1.0)).compile().as_text())
    # the loop body that writes the rows (calls a fusion holding a dynamic-update-slice)
    writes = {
        name for name, text in comps.items() if "dynamic-update-slice(" in text and "fused" in name
    }
    steps = [
        name
        for name, text in comps.items()
        if " while(" not in text and any(f"calls=%{w}" in text for w in writes)
    ]
    assert steps, "no loop body writing rows found"
    for name in steps:
        text = comps[name]
        assert " conditional(" in text, f"{name}: the step is not in a conditional"
        assert " dot(" not in text, f"{name}: the user's matmul runs inline with the row writes"
        branches = re.search(r"branch_computations=\{([^}]*)\}", text).group(1)
        assert any(" dot(" in comps[b.strip().lstrip("%")] for b in branches.split(","))


@pytest.mark.parametrize(
    "kw", [dict(stream=False), dict(stream=True), dict(stream=True, stream_every=3)]
)
@pytest.mark.parametrize("lanes", [None, 4])
def test_body_runs_once_per_step_like_lax(kw, lanes):
    calls = []

    def counting_body(c):
        jax.debug.callback(lambda: calls.append(1))
        return body(c)

    inits = [start(s) for s in (0.2, 1.0, 2.0, 4.0)]
    if lanes is None:
        init = inits[1]
        run_lax = jax.jit(lambda c: lax.while_loop(cond, counting_body, c))
        run_jhw = jax.jit(lambda c: jhw.while_loop(cond, counting_body, c, max_steps=60, **kw))
    else:
        init = jax.tree_util.tree_map(lambda *x: jnp.stack(x), *inits)
        run_lax = jax.jit(jax.vmap(lambda c: lax.while_loop(cond, counting_body, c)))
        run_jhw = jax.jit(
            jax.vmap(lambda c: jhw.while_loop(cond, counting_body, c, max_steps=60, **kw))
        )
    final = run_lax(init)
    jax.effects_barrier()
    lax_calls, calls[:] = len(calls), []
    with jhw.Recorder():
        out, hist = run_jhw(init)
    jax.effects_barrier()
    assert len(calls) == lax_calls > 0
    np.testing.assert_array_equal(out[0], final[0])
    if lanes is not None:  # the lanes really ended at different steps
        assert len(set(np.asarray(hist.length).tolist())) > 1


@pytest.mark.parametrize("max_steps", [5, 7, 9, 60])
def test_rows_and_steps_exact_under_early_exit_cap_and_lanes(max_steps):
    scales = (0.2, 1.0, 2.0, 4.0)
    init = jax.tree_util.tree_map(lambda *x: jnp.stack(x), *[start(s) for s in scales])
    run = jax.jit(
        jax.vmap(
            lambda c: jhw.while_loop(
                cond, body, c, max_steps=max_steps, record=lambda c: c[1], stream_every=3
            )
        )
    )
    with jhw.Recorder() as rec:
        (steps, _), hist = run(init)
    streamed = rec.history()
    for lane, scale in enumerate(scales):
        want = lax_rows(start(scale), max_steps)
        assert int(hist.length[lane]) == len(want) == int(steps[lane]) + 1
        np.testing.assert_allclose(hist[lane].to_numpy(), want, rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(streamed[lane], hist[lane].to_numpy())
    assert rec.runs[-1].statuses.count("max_steps") == sum(
        len(lax_rows(start(s), 10**6)) > max_steps + 1 for s in scales
    )


def test_stop_request_mid_chunk_keeps_every_row_taken():
    class StopAt(jhw.Recorder):
        def _should_stop(self, run):
            return max(run.counts) >= 5

    fn = jax.jit(lambda c: jhw.while_loop(cond, body, c, max_steps=60, stream_every=4))
    with StopAt() as rec:
        (i, _), hist = fn(start(4.0))
    n = int(hist.length)
    assert 5 <= n < len(lax_rows(start(4.0), 60))  # stopped early, at a chunk boundary
    assert int(i) == n - 1
    assert rec.runs[-1].status == "stopped"
    np.testing.assert_array_equal(rec.history()[1], hist.to_numpy()[1])


def test_inside_an_outer_scan_and_under_jvp():
    def solve(scale):
        (_, x), hist = jhw.while_loop(cond, body, start(scale), max_steps=60, stream=False)
        return x, hist.length

    scales = jnp.array([0.5, 2.0, 3.0])
    _, (xs, lengths) = lax.scan(lambda c, s: (c, solve(s)), None, scales)
    for s, x, n in zip(scales, xs, lengths, strict=True):
        want = lax_rows(start(float(s)), 60)
        assert int(n) == len(want)
        np.testing.assert_allclose(x, want[-1], rtol=1e-5, atol=1e-6)
    # forward mode through the branch: matches finite differences of the final state
    f = lambda s: solve(s)[0].sum()  # noqa: E731
    _, tangent = jax.jvp(f, (jnp.float32(1.0),), (jnp.float32(1.0),))
    eps = 1e-3
    fd = (f(jnp.float32(1.0 + eps)) - f(jnp.float32(1.0 - eps))) / (2 * eps)
    np.testing.assert_allclose(tangent, fd, rtol=2e-2)
