"""The pure-JAX core through the public API: rows, modes (eager / jit / vmap), errors, History."""

from __future__ import annotations

import functools
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxhist_widget as jhw


def halve(x0, tol=1.0, max_steps=5, **kw):
    return jhw.while_loop(lambda x: x > tol, lambda x: x / 2, x0, max_steps=max_steps, **kw)


MODES = {
    "eager": halve,
    "jit": jax.jit(halve, static_argnames=("max_steps",)),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("x0", "rows"),
    [
        (10.0, [10.0, 5.0, 2.5, 1.25, 0.625]),  # the seed's example, initial value included
        (0.5, [0.5]),  # starts converged: one row, never NaNs
        (1e9, [1e9 / 2**i for i in range(6)]),  # capped: max_steps + 1 rows
    ],
)
def test_seed_cases(mode, x0, rows):
    final, hist = MODES[mode](jnp.float32(x0))
    jax.effects_barrier()
    np.testing.assert_allclose(hist.to_numpy(), rows, rtol=1e-6)
    assert int(hist.length) == len(rows)
    assert hist.values.shape == (6,)
    assert (np.asarray(hist.values)[len(rows) :] == np.float32(x0)).all()  # padding = row 0
    assert float(final) == pytest.approx(rows[-1])


@pytest.mark.slow  # compiles several loops: kept out of the quick subset
def test_vmap_lanes_are_their_own_series():
    x0 = jnp.array([10.0, 0.5, 3.0, 1e9])
    _final, hist = jax.jit(jax.vmap(halve))(x0)
    lanes = hist.to_numpy()
    assert [len(v) for v in lanes] == [5, 1, 3, 6]
    for lane, x in zip(lanes, x0, strict=True):
        _, single = halve(x)
        np.testing.assert_array_equal(lane, single.to_numpy())
    np.testing.assert_array_equal(hist[2].to_numpy(), lanes[2])
    assert len(hist) == 4


def test_pytree_carry_record_and_dtype():
    def body(c):
        return {"x": c["x"] * 0.5, "i": c["i"] + 1}

    init = {"x": jnp.ones(3), "i": jnp.int32(0)}
    final, hist = jax.jit(
        lambda c: jhw.while_loop(
            lambda c: c["i"] < 4,
            body,
            c,
            max_steps=10,
            record=lambda c: {"norm": jnp.linalg.norm(c["x"]), "i": c["i"]},
            dtype=jnp.bfloat16,
        )
    )(init)
    out = hist.to_numpy()
    assert out["norm"].dtype == jnp.bfloat16 and out["i"].dtype == np.int32
    np.testing.assert_array_equal(out["i"], [0, 1, 2, 3, 4])
    np.testing.assert_allclose(
        out["norm"].astype(float), np.sqrt(3) * 0.5 ** np.arange(5), rtol=1e-2
    )
    # rows past length repeat row 0 (here 0), ints included
    assert (np.asarray(hist.values["i"])[5:] == 0).all()
    assert int(final["i"]) == 4


def test_no_recompilation_when_only_data_changes():
    traces = []

    @functools.partial(jax.jit, static_argnames=("max_steps",))
    def solve(x0, tol, max_steps):
        traces.append(1)
        return jhw.while_loop(lambda x: x > tol, lambda x: x / 2, x0, max_steps=max_steps)

    with jhw.Recorder() as rec:
        for x0 in (10.0, 3.0, 7.0, 0.1):
            solve(x0, 1.0, max_steps=5)
        assert len(traces) == 1
        solve(10.0, 1.0, max_steps=6)  # a new static value is a new program
        assert len(traces) == 2
    assert [len(r.history()) for r in rec.runs] == [5, 3, 4, 1, 5]


# ------------------------------------------------------------------------------ errors
def test_traced_max_steps_names_the_fix():
    with pytest.raises(TypeError, match="static_argnames"):
        jax.jit(lambda x, n: halve(x, max_steps=n))(10.0, 5)


@pytest.mark.parametrize("bad", [0, -3])
def test_non_positive_max_steps(bad):
    with pytest.raises(ValueError, match="max_steps must be > 0"):
        halve(10.0, max_steps=bad)


def test_bad_arguments_get_clear_errors():
    with pytest.raises(TypeError, match="Python int"):
        halve(10.0, max_steps=2.5)
    with pytest.raises(ValueError, match="stream_every"):
        halve(10.0, stream_every="often")
    with pytest.raises(ValueError, match="stream_every"):
        halve(10.0, stream_every=0)
    with pytest.raises(TypeError, match="boolean scalar"):
        jhw.while_loop(lambda x: x > 1, lambda x: x / 2, jnp.ones(3), max_steps=3)
    with pytest.raises(TypeError, match="record must be a callable"):
        halve(10.0, record="x")
    with pytest.raises(TypeError, match="complex"):
        jhw.while_loop(lambda x: jnp.abs(x) > 1, lambda x: x / 2, jnp.complex64(4), max_steps=3)


@pytest.mark.slow  # compiles several loops: kept out of the quick subset
def test_nested_vmap_streaming_is_refused_clearly_and_works_without_streaming():
    x0 = jnp.array([[10.0, 100.0], [3.0, 1000.0]])
    with pytest.raises(NotImplementedError, match=r"one level of jax\.vmap"):
        jax.vmap(jax.vmap(halve))(x0)
    _, hist = jax.vmap(jax.vmap(lambda x: halve(x, max_steps=20, stream=False)))(x0)
    np.testing.assert_array_equal(hist.length, [[5, 8], [3, 11]])


def test_to_numpy_on_tracers_is_a_clear_error():
    @jax.jit
    def f(x):
        _, hist = halve(x)
        return hist.to_numpy()

    with pytest.raises(TypeError, match="concrete values"):
        f(10.0)


def test_large_history_warns_with_bytes_and_hint():
    hint = r"4,000,000 bytes.*record=.*dtype=jnp.bfloat16"
    with pytest.warns(jhw.HistorySizeWarning, match=hint):
        jax.eval_shape(
            lambda x: jhw.while_loop(
                lambda c: c[0] > 0, lambda c: c, x, max_steps=999, warn_bytes=1000, stream=False
            ),
            jnp.ones(1000),
        )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        jax.eval_shape(lambda x: halve(x, warn_bytes=1000), 1.0)  # 24 bytes: silent


# ------------------------------------------------------------------- History in jit
def _masked_reference(values, length):
    v = np.asarray(values)[:length]
    return dict(
        sum=v.sum(0),
        mean=v.mean(0),
        var=v.var(0),
        min=v.min(0),
        max=v.max(0),
        argmin=v.argmin(0),
        argmax=v.argmax(0),
        last=v[-1],
    )


@pytest.mark.parametrize("length", [1, 4, 7])
def test_masked_reductions_match_numpy(length):
    rng = np.random.default_rng(length)
    values = rng.normal(size=(7, 3)).astype(np.float32)
    values[length:] = np.nan
    hist = jhw.History(jnp.asarray(values), jnp.int32(length))

    @jax.jit
    def stats(h):
        return dict(
            sum=h.sum(),
            mean=h.mean(),
            var=h.var(),
            min=h.min(),
            max=h.max(),
            argmin=h.argmin(),
            argmax=h.argmax(),
            last=h.last(),
        )

    got = stats(hist)
    want = _masked_reference(values, length)
    for key in want:
        np.testing.assert_allclose(got[key], want[key], rtol=1e-5, atol=1e-6, err_msg=key)
    np.testing.assert_array_equal(hist.mask, np.arange(7) < length)
    assert int(hist.steps) == length - 1


@pytest.mark.slow  # compiles several loops: kept out of the quick subset
def test_masked_reductions_are_differentiable():
    values = jnp.array([1.0, 2.0, 4.0, jnp.nan, jnp.nan])

    def loss(v):
        h = jhw.History(v, jnp.int32(3))
        return h.mean() + h.var() + h.min()

    g = jax.grad(loss)(values)
    v = np.array([1.0, 2.0, 4.0])
    mu = v.mean()
    want = np.r_[1 / 3 + 2 * (v - mu) / 3 + np.array([1, 0, 0]), 0, 0]
    np.testing.assert_allclose(g, want, rtol=1e-6)
    assert np.isfinite(np.asarray(g)).all()


@pytest.mark.slow  # compiles several loops: kept out of the quick subset
def test_tail_window_and_batched_helpers():
    _, hist = jax.vmap(halve)(jnp.array([10.0, 0.5]))
    rows, valid = hist.tail(3)
    np.testing.assert_allclose(rows[0], [2.5, 1.25, 0.625])
    np.testing.assert_array_equal(valid, [[True, True, True], [True, False, False]])
    np.testing.assert_allclose(hist.last(), [0.625, 0.5])
    np.testing.assert_allclose(hist.mean(), [np.mean([10, 5, 2.5, 1.25, 0.625]), 0.5])
    with pytest.raises(ValueError, match="tail"):
        hist.tail(7)


def test_restart_decision_inside_jit():
    """The valid prefix feeds further computation inside jit (the point of the device history)."""

    @jax.jit
    def solve_and_rate(x0):
        _, hist = halve(x0, tol=1e-3, max_steps=50)
        rows, valid = hist.tail(2)
        rate = jnp.where(valid.all(), rows[1] / rows[0], jnp.nan)
        return rate, hist.min()

    rate, best = solve_and_rate(10.0)
    assert float(rate) == pytest.approx(0.5)
    assert float(best) < 1e-3


@pytest.mark.slow  # a fresh Python process
def test_the_size_warning_is_shown_by_default():
    # Python's default filters hide ResourceWarning; this warning must reach the user.
    import os
    import subprocess
    import sys

    code = (
        "import jax, jax.numpy as jnp, jaxhist_widget as jhw\n"
        "jax.eval_shape(lambda x: jhw.while_loop(lambda c: c.sum() > 0, lambda c: c, x,"
        " max_steps=999, warn_bytes=1000), jnp.ones(1000))\n"
    )
    # on the CPU: the parent may hold a TPU, which one program at a time can open
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env
    )
    assert out.returncode == 0, out.stderr
    assert "HistorySizeWarning" in out.stderr and "warn_bytes" in out.stderr
