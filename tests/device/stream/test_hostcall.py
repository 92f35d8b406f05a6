"""`hostcall.call`: a pure host call that hands the host numpy arrays (no ``device_put``)."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxhist_widget as jhw
from jaxhist_widget._device.stream import hostcall

I32 = jax.ShapeDtypeStruct((2,), jnp.int32)


def host(seen, x):
    seen.append(type(x))
    return np.array([x.size, int(np.sum(x))], np.int32)


@pytest.fixture(params=["fast", "public"])
def path(request, monkeypatch):
    """Both ways `call` works: the primitive, and `jax.pure_callback` (other JAX versions)."""
    if request.param == "public":
        monkeypatch.setattr(hostcall, "_host_call_p", None)
    return request.param


def test_the_host_gets_numpy_arrays_and_the_answer_comes_back(path):
    seen = []
    f = jax.jit(lambda x: hostcall.call(functools.partial(host, seen), I32, x * 2))
    out = f(jnp.arange(1000, dtype=jnp.int32))
    np.testing.assert_array_equal(out, [1000, 999 * 1000])
    # the fast path skips JAX's conversion to jax.Array (most of a call's cost in a loop)
    assert seen == [np.ndarray if path == "fast" else type(jnp.zeros(1))]


def test_a_call_inside_a_loop_runs_every_iteration_and_feeds_it(path):
    seen = []

    def body(c):
        i, acc = c
        answer = hostcall.call(functools.partial(host, seen), I32, jnp.full(3, i))
        return i + 1, acc + answer[1]

    _, acc = jax.jit(lambda: jax.lax.while_loop(lambda c: c[0] < 5, body, (0, 0)))()
    assert int(acc) == 3 * (0 + 1 + 2 + 3 + 4) and len(seen) == 5


def test_under_vmap_one_call_per_lane_in_order(path):
    seen = []
    f = jax.vmap(lambda x: hostcall.call(functools.partial(host, seen), I32, x))
    out = jax.jit(f)(jnp.arange(12, dtype=jnp.int32).reshape(4, 3))
    np.testing.assert_array_equal(out[:, 1], [3, 12, 21, 30])
    assert len(seen) == 4


def test_streaming_is_unchanged_on_the_public_path(path):
    # The whole loop on either path: every row arrives and the run ends converged.
    with jhw.Recorder() as rec:
        _, hist = jax.jit(
            lambda x: jhw.while_loop(lambda x: x > 1e-3, lambda x: x / 2, x, max_steps=50)
        )(1.0)
    np.testing.assert_array_equal(rec.history(), hist.to_numpy())
    assert rec.runs[-1].status == "converged"
