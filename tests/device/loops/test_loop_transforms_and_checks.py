"""The loop under transforms (jacfwd, batched cond), input checks, eager cache, zero-size
leaves, the memory warning under vmap, and drop-in behaviour of the carry and ``cond_fun``.

The steps are compute-bound (``x = tanh(A @ x)``) and stop on a data-dependent condition, so
vmap lanes run different numbers of steps.
"""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import jaxhist_widget as jhw

# Sweeps of dtypes, transforms and compiled programs: kept out of the quick subset.
pytestmark = pytest.mark.slow

DIM = 16
A = jax.random.normal(jax.random.key(0), (DIM, DIM), jnp.float32) * 0.9 / np.sqrt(DIM)
TOL = 0.05


def cond(c):
    return (c[0] < 40) & (jnp.linalg.norm(c[1]) > TOL)


def body(c):
    i, x = c
    return i + 1, jnp.tanh(A @ x)


def x_start(scale):
    return scale * jnp.linspace(-1.0, 1.0, DIM, dtype=jnp.float32)


def lax_final(x):
    return lax.while_loop(cond, body, (jnp.int32(0), x))[1]


def lax_rows(x):
    """The rows lax.while_loop goes through, as a (steps + 1, DIM) array (concrete x only)."""
    rows, c = [x], (jnp.int32(0), x)
    while bool(cond(c)):
        c = body(c)
        rows.append(c[1])
    return jnp.stack(rows)


def jhw_loop(x, **kw):
    kw.setdefault("max_steps", 60)
    return jhw.while_loop(cond, body, (jnp.int32(0), x), record=lambda c: c[1], **kw)


# ------------------------------------------------------------------ 6: forward-mode autodiff
@pytest.mark.parametrize(
    "kw", [dict(stream=False), dict(stream=True), dict(stream=True, stream_every=1)]
)
def test_jacfwd_and_jvp_through_the_loop_match_lax(kw):
    x0 = x_start(0.8)

    def final(x):  # the final x, and the History as aux
        (_, x), hist = jhw_loop(x, **kw)
        return x, hist

    with jhw.Recorder() as rec:
        jac, jac_hist = jax.jacfwd(final, has_aux=True)(x0)
    np.testing.assert_allclose(jac, jax.jacfwd(lax_final)(x0), rtol=1e-5, atol=1e-6)

    tangent = jnp.cos(jnp.arange(DIM, dtype=jnp.float32))
    (_, hist), (_, d_hist) = jax.jvp(lambda x: jhw_loop(x, **kw), (x0,), (tangent,))
    n = int(hist.length)
    want_rows = lax_rows(x0)
    assert n == len(want_rows) > 3
    # The History's tangent rows are the tangents of the rows lax goes through.
    unrolled = lambda x: jnp.stack(  # noqa: E731
        [x] + [x := jnp.tanh(A @ x) for _ in range(n - 1)]
    )
    _, d_rows = jax.jvp(unrolled, (x0,), (tangent,))
    np.testing.assert_allclose(d_hist.values[:n], d_rows, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(hist.values[:n], want_rows, rtol=1e-5, atol=1e-6)

    if kw["stream"]:  # the primal rows streamed, once, under jacfwd
        assert len(rec.runs) == 1
        # Exactly the rows of that run's device History; the rows of a plain call only to
        # rounding (XLA may compute the primal A @ x together with the tangents' products).
        np.testing.assert_array_equal(rec.history(), jac_hist.to_numpy())
        np.testing.assert_allclose(rec.history(), want_rows, rtol=1e-5, atol=1e-6)
    else:
        assert rec.runs == []


@pytest.mark.parametrize("stream", [False, True])
def test_jacfwd_with_vmap_lanes_of_different_lengths(stream):
    xs = jnp.stack([x_start(s) for s in (0.3, 0.8, 2.0, 0.01)])
    final = lambda x: jhw_loop(x, stream=stream)[0][1]  # noqa: E731
    want = jax.vmap(jax.jacfwd(lax_final))(xs)
    with jhw.Recorder() as rec:
        got_outer = jax.jit(jax.vmap(jax.jacfwd(final)))(xs)
        got_inner = jax.jacfwd(lambda xs: jax.vmap(final)(xs))(xs)
    np.testing.assert_allclose(got_outer, want, rtol=1e-5, atol=1e-6)
    # jacfwd of the batched function: d final[b] / d xs[c] is zero across lanes
    np.testing.assert_allclose(jnp.einsum("bibj->bij", got_inner), want, rtol=1e-5, atol=1e-6)
    if stream:
        lengths = [len(lax_rows(x)) for x in xs]
        assert len(set(lengths)) > 1
        for run in rec.runs:
            assert run.counts == lengths


@pytest.mark.parametrize("stream", [False, True])
def test_second_and_third_derivatives_through_the_loop_match_lax(stream):
    # jax.jacfwd(jax.jacfwd(f)) crashed: "Cannot lower jaxpr with verifier errors" (stream=False)
    # or "slice slice_sizes must be <= operand shape" (streaming). The row write's jvp rule
    # wrote with the bare custom_vmap, so the second jvp took JAX's generic JVP of it, whose
    # batching rule called ours with flags that did not match the arrays (an int row, batched
    # twice). Integer and bool leaves are recorded too: those were the rows that broke.
    def scalar(x, loop):  # the final x and a row of the History (the lax one unrolled)
        if loop == "lax":
            rows = [x] + [x := jnp.tanh(A @ x) for _ in range(3)]
            return jnp.sum(lax_final(rows[0]) ** 3) + jnp.sum(rows[3] ** 2)
        (_, final), hist = jhw.while_loop(
            cond,
            body,
            (jnp.int32(0), x),
            max_steps=60,
            record=lambda c: {"x": c[1], "i": c[0], "up": c[1][0] > 0},
            stream=stream,
        )
        return jnp.sum(final**3) + jnp.sum(hist.values["x"][3] ** 2)

    x0 = x_start(0.8)
    derivatives = {}  # order -> the jitted derivative, of either loop
    with jhw.Recorder() as rec:
        for order in (2, 3):
            f = scalar
            for _ in range(order):
                f = jax.jacfwd(f)
            derivatives[order] = jax.jit(f, static_argnums=1)
            got, want = derivatives[order](x0, "jhw"), derivatives[order](x0, "lax")
            assert got.shape == (DIM,) * order
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
        # vmap lanes that run different numbers of steps, each lane's Hessian its own
        xs = jnp.stack([x_start(s) for s in (0.3, 0.8, 2.0)])
        hessians = jax.vmap(jax.jacfwd(jax.jacfwd(scalar)), in_axes=(0, None))
        want = np.stack([derivatives[2](x, "lax") for x in xs])
        np.testing.assert_allclose(hessians(xs, "jhw"), want, rtol=1e-4, atol=1e-5)
    if stream:  # the primal rows streamed, each call once, exactly lax's
        assert [run.lanes for run in rec.runs] == [None, None, 3]
        np.testing.assert_allclose(rec.runs[0].history()["x"], lax_rows(x0), rtol=1e-5)
    else:
        assert rec.runs == []
    if stream:
        return
    # Reverse mode (jax.hessian, jax.jacrev of jax.jacfwd) is refused as lax.while_loop's is:
    # a ValueError naming reverse mode (JAX 0.10.0's own lax.while_loop fails jax.hessian with
    # a TypeError instead, and so does ours, which runs on it).
    for transform in (jax.hessian, lambda f: jax.jacrev(jax.jacfwd(f))):
        with pytest.raises((ValueError, TypeError)) as lax_refusal:
            transform(lambda x: scalar(x, "lax"))(x0)
        refused, said = type(lax_refusal.value), str(lax_refusal.value).splitlines()[0]
        if refused is ValueError:
            assert "Reverse-mode differentiation does not work" in said, said
        with pytest.raises(refused) as ours:
            transform(lambda x: scalar(x, "jhw"))(x0)
        assert str(ours.value).splitlines()[0] == said


# ------------------------------------------------------- 7: a batched cond / switch predicate
def test_streaming_loop_inside_cond_and_switch_with_a_batched_predicate():
    def solve(x):
        (_, final), hist = jhw_loop(x, stream_every=4)
        return final, hist.values, hist.length

    def skip(x):
        return x, jnp.zeros((61, DIM), jnp.float32), jnp.int32(0)

    xs = jnp.stack([x_start(s) for s in (0.5, 3.0, 0.02, 1.5, 0.9)])
    pred = jnp.array([True, False, True, True, False])
    with jhw.Recorder() as rec:
        final, values, length = jax.vmap(lambda p, x: lax.cond(p, solve, skip, x))(pred, xs)
    (run,) = rec.runs
    streamed = rec.history()
    for lane, (p, x) in enumerate(zip(pred, xs, strict=True)):
        want = lax_rows(x)
        # A batched predicate makes vmap run both branches on every lane (a select), so the
        # loop runs, and streams, in every lane; the host rows are exactly that lane's rows.
        np.testing.assert_allclose(streamed[lane], want, rtol=1e-5, atol=1e-6)
        if p:
            assert int(length[lane]) == len(want)
            np.testing.assert_array_equal(streamed[lane], values[lane, : len(want)])
            np.testing.assert_allclose(final[lane], want[-1], rtol=1e-5, atol=1e-6)
        else:
            np.testing.assert_array_equal(final[lane], x)
    assert run.status == "converged"

    index = jnp.array([0, 1, 2, 1])
    branches = [solve, skip, lambda x: solve(2.0 * x)]
    with jhw.Recorder() as rec:
        _, values, length = jax.jit(jax.vmap(lambda i, x: lax.switch(i, branches, x)))(
            index, xs[:4]
        )
    assert len(rec.runs) == 2  # two streaming branches, each run once for all lanes
    for lane, i in enumerate(index.tolist()):
        if i == 1:
            continue
        n = int(length[lane])
        # XLA may run the two streaming branches in either order: the lane's rows are in the
        # run of its branch, whichever came first
        rows = [r.lane_rows(lane)[0] for r in rec.runs]
        assert any(np.array_equal(r, values[lane, :n]) for r in rows), (lane, i)


# --------------------------------------------------------------------- 13: input checks
@pytest.mark.parametrize(
    ("kw", "error", "match"),
    [
        (dict(max_steps=True), TypeError, "max_steps must be a Python int"),
        (dict(stream_every=True), TypeError, "stream_every must be 'auto' or an int"),
        (dict(stream=None), TypeError, "stream must be True or False"),
        (dict(stream=1), TypeError, "stream must be True or False"),
        (dict(warn_bytes="x"), TypeError, "warn_bytes must be a number of bytes"),
        (dict(warn_bytes=True), TypeError, "warn_bytes must be a number of bytes"),
        (dict(warn_bytes=-1), ValueError, "warn_bytes must be >= 0"),
    ],
)
def test_bad_static_options_are_refused_clearly(kw, error, match):
    kw = {"max_steps": 5, **kw}
    with pytest.raises(error, match=match):
        jhw.while_loop(lambda x: x > 1, lambda x: x / 2, 10.0, **kw)


@pytest.mark.parametrize("bad_cond", [lambda x: x - 1.0, lambda x: jnp.int32(1), lambda x: 1.0])
@pytest.mark.parametrize("jit", [False, True])
def test_non_boolean_condition_is_a_type_error_like_lax(bad_cond, jit):
    with pytest.raises(TypeError, match="boolean scalar"):
        lax.while_loop(bad_cond, lambda x: x / 2, 10.0)
    run = lambda x: jhw.while_loop(bad_cond, lambda x: x / 2, x, max_steps=5)  # noqa: E731
    with pytest.raises(TypeError, match=r"cond_fun must return a boolean scalar, got (float|int)"):
        (jax.jit(run) if jit else run)(10.0)


def test_accepted_options_still_work():
    _, hist = jhw.while_loop(
        lambda x: x > 1, lambda x: x / 2, 10.0, max_steps=np.int64(5), warn_bytes=1e9
    )
    assert hist.to_numpy().tolist() == [10.0, 5.0, 2.5, 1.25, 0.625]
    _, hist = jhw.while_loop(lambda x: x > 1, lambda x: x / 2, 10.0, max_steps=5, stream=np.True_)
    assert int(hist.length) == 5


# -------------------------------------------------------------------- 16: eager cache
def test_eager_calls_reuse_one_compilation_and_stream_to_each_calls_sinks():
    traces = []

    def counted_body(c):
        traces.append(1)
        return body(c)

    def solve(scale, max_steps=60):
        return jhw.while_loop(
            cond, counted_body, (jnp.int32(0), x_start(scale)), max_steps=max_steps
        )

    with jhw.Recorder() as first:
        _, h1 = solve(0.5)
    n_traces = len(traces)
    with jhw.Recorder() as second:
        _, h2 = solve(2.0)
    solve(1.0)  # nothing attached: nothing recorded anywhere
    assert len(traces) == n_traces  # the second and third eager calls hit the cache
    assert [len(r.history()[0]) for r in first.runs] == [int(h1.length)]
    assert [len(r.history()[0]) for r in second.runs] == [int(h2.length)]
    np.testing.assert_array_equal(second.history()[1], h2.to_numpy()[1])
    np.testing.assert_allclose(h2.to_numpy()[1], lax_rows(x_start(2.0)), rtol=1e-5, atol=1e-6)
    assert int(h1.length) != int(h2.length)

    solve(0.5, max_steps=61)  # a new static option: a new program
    assert len(traces) > n_traces


def test_eager_cache_is_not_used_inside_transformations():
    scales = jnp.array([0.5, 2.0])

    def run(a):  # the same functions, closing over a tracer of the enclosing vmap via init
        return jhw.while_loop(cond, body, (jnp.int32(0), a * x_start(1.0)), max_steps=60)[0][1]

    got = jax.vmap(run)(scales)
    np.testing.assert_allclose(got[1], lax_final(x_start(2.0)), rtol=1e-5, atol=1e-6)
    got = jax.jit(run)(3.0)  # and again, traced under jit after vmap: no stale tracers
    np.testing.assert_allclose(got, lax_final(x_start(3.0)), rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- 17: zero-size leaves
def _while_carries(jaxpr):
    """The avals of every while loop's operands, in ``jaxpr`` and the jaxprs nested in it."""
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == "while":
            yield from (v.aval for v in eqn.invars)
        for param in eqn.params.values():
            for sub in param if isinstance(param, (tuple, list)) else [param]:
                inner = getattr(sub, "jaxpr", sub)  # a ClosedJaxpr or a Jaxpr
                if hasattr(inner, "eqns"):
                    yield from _while_carries(inner)


@pytest.mark.parametrize("stream", [False, True])
def test_zero_size_leaves_get_no_history_buffer_but_keep_their_shape(stream):
    max_steps = 10_000
    init = (jnp.int32(0), x_start(1.0), jnp.zeros((0, 3)))

    def step(c):
        return (*body(c[:2]), c[2])

    def run(c):
        return jhw.while_loop(lambda c: cond(c[:2]), step, c, max_steps=max_steps, stream=stream)

    carries = list(_while_carries(jax.make_jaxpr(run)(init).jaxpr))
    assert carries, "no while loop found"
    # XLA's compile time for a (max_rows, 0, ...) buffer grows with max_rows; none may exist.
    assert not [a for a in carries if a.shape[:1] == (max_steps + 1,) and a.size == 0]

    with jhw.Recorder() as rec:
        _, hist = jax.jit(run)(init)
    n = len(lax_rows(x_start(1.0)))
    assert hist.values[2].shape == (max_steps + 1, 0, 3)
    device = hist.to_numpy()
    assert device[2].shape == (n, 0, 3)
    if stream:
        streamed = rec.history()
        assert streamed[2].shape == (n, 0, 3)
        np.testing.assert_array_equal(streamed[1], device[1])

    # a record of only zero-size leaves still counts its rows, on the device and on the host
    with jhw.Recorder() as rec:
        _, hist = jax.vmap(
            lambda c: jhw.while_loop(
                lambda c: cond(c[:2]), step, c, max_steps=60, record=lambda c: c[2], stream=stream
            )
        )((jnp.zeros(2, jnp.int32), jnp.stack([x_start(0.5), x_start(2.0)]), jnp.zeros((2, 0, 3))))
    lengths = [len(lax_rows(x_start(s))) for s in (0.5, 2.0)]
    assert hist.length.tolist() == lengths and hist.values.shape == (2, 61, 0, 3)
    if stream:
        assert rec.runs[-1].counts == lengths


# ------------------------------------------------------------- 18: memory warning and vmap
def test_memory_warning_counts_vmap_lanes():
    def run(x):  # 1000 rows x 10 floats = 40,000 bytes per lane
        return jhw.while_loop(
            lambda c: c[0] > 0, lambda c: c, x, max_steps=999, warn_bytes=100_000, stream=False
        )

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        jax.eval_shape(run, jnp.ones(10))  # one lane: under the threshold
        jax.eval_shape(jax.vmap(run), jnp.ones((2, 10)))  # 80,000 bytes: still under
    big = r"320,000 bytes .*8 vmap lanes of 40,000 bytes"
    with pytest.warns(jhw.HistorySizeWarning, match=big):
        jax.eval_shape(jax.vmap(run), jnp.ones((8, 10)))
    with pytest.warns(jhw.HistorySizeWarning, match=r"8 vmap lanes of 40,000 bytes"):
        jax.eval_shape(jax.vmap(jax.vmap(run)), jnp.ones((4, 2, 10)))  # inner 2: 80,000
    with pytest.warns(jhw.HistorySizeWarning, match=r"8 vmap lanes"):
        jax.eval_shape(jax.vmap(jax.jit(run)), jnp.ones((8, 10)))


# --------------------------------------------------- 19: the carry and cond_fun, like lax
def test_python_scalar_init_is_converted_before_cond_and_record():
    def loop(x0):
        return jhw.while_loop(
            lambda x: x.astype(jnp.float32) > 1.0,  # methods of an array, not of a float
            lambda x: x / 2,
            x0,
            max_steps=10,
            record=lambda x: x.astype(jnp.float16),
        )

    # eagerly, with a traced init, and with a literal init inside jit (not an argument)
    for final, hist in (loop(10.0), jax.jit(loop)(10.0), jax.jit(lambda: loop(10.0))()):
        assert float(final) == 0.625
        assert hist.to_numpy().tolist() == [10.0, 5.0, 2.5, 1.25, 0.625]


@pytest.mark.parametrize("jit", [False, True])
def test_weakly_typed_int_init_with_a_float_body_is_promoted_like_lax(jit):
    def run(x0):
        return jhw.while_loop(lambda x: x < 10, lambda x: x * 1.5, x0, max_steps=20)

    want = lax.while_loop(lambda x: x < 10, lambda x: x * 1.5, 1)
    final, hist = (jax.jit(run) if jit else run)(1)
    assert final.dtype == want.dtype == jnp.float32
    assert float(final) == float(want)
    np.testing.assert_allclose(hist.to_numpy(), 1.5 ** np.arange(7), rtol=1e-6)


@pytest.mark.parametrize(
    ("bad_body", "match"),
    [
        (lambda c: (c[0] + 1, c[1][:2]), r"init_val\[1\] is float32\[3\] but body_fun returned "),
        (lambda c: (c[0] + 1, c[1].astype(jnp.int32)), r"init_val\[1\] is float32\[3\] .*int32"),
        (lambda c: (c[0] + 1, c[1], c[1]), "structure of init_val"),
        (lambda c: c[1], "structure of init_val"),
    ],
)
def test_carry_mismatch_names_the_leaf(bad_body, match):
    with pytest.raises(TypeError, match=match):
        jhw.while_loop(lambda c: c[0] < 3, bad_body, (0, jnp.ones(3)), max_steps=5)
    with pytest.raises(TypeError, match=match):
        jax.vmap(lambda x: jhw.while_loop(lambda c: c[0] < 3, bad_body, (0, x), max_steps=5))(
            jnp.ones((2, 3))
        )


@pytest.mark.parametrize(
    "kw", [dict(stream=False), dict(stream=True, stream_every=1), dict(stream=True)]
)
def test_cond_fun_runs_once_per_step_like_lax(kw):
    calls = []

    def counting_cond(c):
        jax.debug.callback(lambda: calls.append(1))
        return cond(c)

    init = (jnp.int32(0), x_start(1.0))
    lax.while_loop(counting_cond, body, init)
    jax.effects_barrier()
    lax_calls, calls[:] = len(calls), []
    _, hist = jax.jit(lambda c: jhw.while_loop(counting_cond, body, c, max_steps=60, **kw))(init)
    jax.effects_barrier()
    assert lax_calls == int(hist.length) == len(lax_rows(x_start(1.0)))
    assert len(calls) == lax_calls
