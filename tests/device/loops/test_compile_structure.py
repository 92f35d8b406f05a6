"""What keeps a new ``jit`` of a recording loop cheap to compile: facts of its program's shape.

On CPU, XLA compiles each fusion (kernel) to machine code of its own, and that is most of the
time a new ``jit`` of a loop takes; Python tracing and lowering grow with the traced equations.
These tests pin the structure that keeps both down (``benchmarks/compile.py`` has the timings):
two host calls, two while loops, the host's answer kept as one array, windows handed to the host
as the buffers hold them, and a bounded number of kernels beyond ``lax.while_loop``'s.
"""

from __future__ import annotations

import functools
import re

import jax
import jax.numpy as jnp
from jax import lax

import jaxhist_widget as jhw
from jaxhist_widget._device.loops import steps

from ...helpers.backends import BACKEND, cpu_only, tpu_only

#: Kernels the tiny loop below may add to ``lax.while_loop``'s: its share of the compile time.
#: Per run: the open-run call's token, a history buffer per recorded leaf; per chunk: the step
#: limit, the lane words, the send decision, the status and the lane flags; per step: the row
#: count, the step's branch, the loop predicate and a row write per recorded leaf.
EXTRA_KERNELS = 12


def _step(c):
    return c[0] + 1, jnp.tanh(c[1]) * 0.9


def _cond(c):
    return c[0] < 100


def _jhw(x, **kw):
    return jhw.while_loop(_cond, _step, (0, x), max_steps=1000, **kw)


def _lax(x):
    return lax.while_loop(_cond, _step, (0, x))


def _eqns(jaxpr, name: str) -> int:
    """How many equations of primitive ``name`` ``jaxpr`` holds, nested ones included."""
    n = 0
    for eqn in jaxpr.eqns:
        n += eqn.primitive.name == name
        for param in eqn.params.values():
            for sub in param if isinstance(param, (list, tuple)) else [param]:
                inner = getattr(sub, "jaxpr", sub)
                if hasattr(inner, "eqns"):
                    n += _eqns(inner, name)
    return n


def _fusions(fn, x) -> int:
    return len(re.findall(r"= \S+ fusion\(", jax.jit(fn).lower(x).compile().as_text()))


def _lowered(fn, x) -> str:
    """The program XLA compiles for this platform (CPU): StableHLO as text."""
    return jax.jit(fn).lower(x).as_text()


def test_a_streaming_loop_is_two_host_calls_and_two_while_loops():
    jaxpr = jax.jit(_jhw).trace(jnp.ones(8)).jaxpr.jaxpr
    # open the run, then one flush per chunk: nothing else calls the host
    assert _eqns(jaxpr, "jaxhist_host_call") == 2
    # stream=False: no host call
    plain = jax.jit(lambda x: _jhw(x, stream=False)).trace(jnp.ones(8)).jaxpr.jaxpr
    assert _eqns(plain, "jaxhist_host_call") == 0
    if BACKEND == "cpu":
        # The chunk loop and the step loop inside it (the step's own branch is a cond); with
        # stream=False, one loop. A counting loop's blocks of steps are lowered only for an
        # accelerator (test_a_tpus_streamed_step_loop_is_nested_one_level_deep has a TPU's).
        assert _lowered(_jhw, jnp.ones(8)).count("stablehlo.while") == 2
        plain_text = _lowered(lambda x: _jhw(x, stream=False), jnp.ones(8))
        assert plain_text.count("stablehlo.while") == 1


@cpu_only
def test_host_call_arguments_need_no_packing_kernel():
    # 32-bit leaves whose window is their whole buffer reach the flush as the buffer itself
    # (a lane axis of one, not flattened), and the host's answer stays one array that the
    # loop reads word by word: no bitcast, no concatenation of a header, no slicing of the
    # answer into scalars.
    hlo = jax.jit(_jhw).lower(jnp.ones(8)).compile().as_text()
    calls = [line for line in hlo.splitlines() if "xla_ffi_python_cpu_callback" in line]
    assert len(calls) == 2
    flush = next(c for c in calls if "f32[1,1001,8]" in c)
    operands = flush.split("operand_layout_constraints={")[1].split("}}")[0]
    assert re.findall(r"[a-z]+\d+\[[\d,]*\]", operands) == [
        "s32[3]",
        "s32[4]",
        "s32[1,1001,1]",
        "f32[1,1001,8]",
    ]
    assert "bitcast-convert" not in hlo
    assert not re.search(r"\[1,1001(,1|,8)?\]\S* (copy|fusion)\(", hlo)  # no kernel makes them


@cpu_only
def test_windows_are_sliced_not_flattened():
    # Under vmap a window is a slice of every lane's rows. Flattened for the host call, XLA
    # fused the reshape into the slice, which then computed an index per element (several
    # times slower than copying each lane's rows): the slice reaches the call in its own shape.
    def run(x):
        return jhw.while_loop(_cond, _step, (0, x), max_steps=1000, stream_every=50)

    hlo = jax.jit(jax.vmap(run)).lower(jnp.ones((4, 8))).compile().as_text()
    flush = next(c for c in hlo.splitlines() if "xla_ffi_python_cpu_callback" in c and "f32[4" in c)
    operands = flush.split("operand_layout_constraints={")[1].split("}}")[0]
    assert "f32[4,50,8]" in operands, operands
    assert not re.search(r"f32\[1600\]", hlo)


def test_a_vmapped_step_copies_no_carry():
    # Under vmap each step keeps the finished lanes' carry (a select) and writes the row. Taken
    # from the body's result instead of the kept carry, the row made XLA copy the carry every
    # step; that copy cost more than the row write (docs/performance.md).
    a = jnp.linspace(-1.0, 1.0, 64 * 16).reshape(64, 16)

    def run(lr, **kw):
        def body(c):
            i, x, _ = c
            r = a @ x - 1.0
            return i + 1, x - lr * (a.T @ r), jnp.vdot(r, r)

        init = (0, jnp.zeros(16), 0.0)
        record = lambda c: {"loss": c[2], "x": c[1][:4]}  # noqa: E731
        return jhw.while_loop(lambda c: c[0] < 50, body, init, max_steps=50, record=record, **kw)

    for kw in ({"stream": False}, {}):
        hlo = jax.jit(jax.vmap(lambda lr, kw=kw: run(lr, **kw))).lower(jnp.ones(8)).compile()
        copies = re.findall(r"= (\w+\[[\d,]+\])\S* copy\(", hlo.as_text())
        assert "f32[8,16]" not in copies, copies


def test_kernels_beyond_lax_while_loop_stay_few():
    x = jnp.ones(8)
    extra = _fusions(_jhw, x) - _fusions(_lax, x)
    assert extra <= EXTRA_KERNELS, extra


def test_tracing_does_not_grow_a_custom_rule_per_recorded_leaf():
    """A parameter tree or metrics dict records hundreds of leaves: each leaf's row write as a
    ``custom_jvp`` / ``custom_vmap`` call of its own traced ~2.5 ms a leaf (400 leaves: 2.5 s
    of tracing); the step writes every leaf's row in one call (``benchmarks/compile.py`` times
    it by leaf count)."""

    def rules(leaves: int) -> tuple[int, int]:
        def body(c):
            return c[0] + 1, {k: v * 0.9 for k, v in c[1].items()}

        def scanned(c, _):
            return body(c), None

        x = {f"p{i}": jnp.float32(i) for i in range(leaves)}
        loop = lambda x: jhw.while_loop(_cond, body, (0, x), max_steps=200, record=lambda c: c[1])  # noqa: E731
        scan = lambda x: jhw.scan(scanned, (0, x), length=200, record=lambda c, y: c[1])  # noqa: E731
        jaxprs = [jax.make_jaxpr(f)(x).jaxpr for f in (loop, scan)]
        return [(_eqns(j, "custom_jvp_call"), _eqns(j, "custom_vmap_call")) for j in jaxprs]

    # (a step of at most 8 carry leaves runs in a conditional of its own on CPU, one rule more)
    assert rules(30) == rules(10)


def test_body_fun_is_in_the_program_once():
    # XLA compiles, and lowering grows with, every copy of a (possibly large) body_fun: one
    # copy, as in lax.while_loop, whatever the platform choice around the step. Where an
    # accelerator may compile it, the traced program holds a second one for a counting
    # condition (its blocks of steps, `steps._blocks`), which lowering for CPU leaves out; with
    # only a CPU, none is traced either (a trace of the step less); any other condition, one.
    def run(x, cond=lambda c: c[0] < 100, **kw):
        return jhw.while_loop(cond, lambda c: (c[0] + 1, jnp.sin(c[1])), (0, x), max_steps=10, **kw)

    not_counting = lambda c: (c[0] < 100) & (c[1][0] < 2)  # noqa: E731
    for kw in ({}, {"stream": False}):
        if BACKEND == "cpu":  # an accelerator lowers the blocks too
            lowered = _lowered(lambda x, kw=kw: run(x, **kw), jnp.ones(8))
            assert lowered.count("stablehlo.sine") == 1
        traced = jax.jit(lambda x, kw=kw: run(x, **kw)).trace(jnp.ones(8)).jaxpr.jaxpr
        assert _eqns(traced, "sin") == (1 if BACKEND == "cpu" else 2)
        other = jax.jit(lambda x, kw=kw: run(x, not_counting, **kw)).trace(jnp.ones(8))
        assert _eqns(other.jaxpr.jaxpr, "sin") == 1
    vmapped = jax.jit(jax.vmap(run)).lower(jnp.ones((3, 8))).as_text()
    assert vmapped.count("stablehlo.sine") == 1


def _loop_depth(hlo: str) -> int:
    """How deep while loops nest in a compiled program (HLO text): 1 for one loop, 2 for a
    loop in a loop, through the computations each instruction calls."""
    comps: dict[str, list[str]] = {}
    entry = name = None
    for line in hlo.splitlines():
        if line[:1] not in (" ", "", "}") and "{" in line:
            m = re.match(r"(ENTRY )?%?([\w.\-]+)", line)
            name = m.group(2)
            comps[name] = []
            entry = name if m.group(1) else entry
        elif name is not None and line.startswith(" "):
            comps[name].append(line)

    @functools.cache
    def depth(comp: str) -> int:
        most = 0
        for line in comps.get(comp, ()):
            refs = re.findall(r"(body|condition|calls|to_apply)=%([\w.\-]+)", line)
            for group in re.findall(r"branch_computations=\{([^}]*)\}", line):
                refs += [("branch", b.strip().lstrip("%")) for b in group.split(",")]
            for kind, ref in refs:
                most = max(most, depth(ref) + (kind == "body"))
        return most

    return depth(entry)


@tpu_only
def test_a_tpus_streamed_step_loop_nests_one_level_deep_but_a_small_carry_s_stages():
    # On a TPU v5e an MLP step streamed with nothing attached cost +25% over stream=False: the
    # step loop's blocks nested in the chunk loop made three loop levels, and XLA then fetched
    # the 16 MB of weights into the chip's fast memory and wrote them back every step
    # (docs/performance.md). Read off the TPU's programs: the old one nests 3 deep, a chunk
    # loop over a step loop 2 (now +2%). stream=False keeps its blocks (a scalar step 3.5x
    # faster): blocks in a loop, 2 deep. A small carry's streamed loop writes its rows to
    # stages (`steps.stage_rows`), its steps one by one in each: chunks, stages, steps, 3 deep.
    def loop(x, stream):
        return jhw.while_loop(
            lambda c: c[0] < 1000, _step, (jnp.int32(0), x), max_steps=1000, stream=stream
        )

    def depth(x, stream):
        return _loop_depth(jax.jit(lambda x: loop(x, stream)).lower(x).compile().as_text())

    small, large = jnp.ones(8), jnp.ones(steps.STAGE_CARRY_BYTES // 4 + 1)
    got = {
        (carry, stream): depth(x, stream)
        for carry, x in (("small", small), ("large", large))
        for stream in (False, True)
    }
    want = {("small", False): 2, ("small", True): 3, ("large", False): 2, ("large", True): 2}
    assert got == want
