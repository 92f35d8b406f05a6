"""The loops tests share.

`slow_counter` is the one slow loop: a counter whose step also takes host time (a stand-in for
heavy compute), jitted once per set of options, so tests that use the same one compile it once.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable

import jax
import jax.numpy as jnp

import jaxhist_widget as jhw


@functools.cache
def slow_counter(
    step_seconds: float = 0.01, max_steps: int = 100_000, steps: int | None = None
) -> Callable:
    """``solve(x0) -> (final, history)`` of a counter ``(i, x) -> (i + 1, x + 1)`` whose step
    sleeps ``step_seconds`` on the host; it runs ``steps`` steps, or until ``max_steps`` (that
    is, until stopped) when ``steps`` is None. Records ``(i, x)``; vmaps."""

    def sleep(x):
        time.sleep(step_seconds)
        return x

    def body(c):
        i, x = c
        x = jax.pure_callback(
            sleep, jax.ShapeDtypeStruct(x.shape, x.dtype), x, vmap_method="broadcast_all"
        )
        return i + 1, x + 1.0

    def cond(c):
        return c[0] >= 0 if steps is None else c[0] < steps

    @jax.jit
    def solve(x0):
        return jhw.while_loop(cond, body, (jnp.int32(0), x0), max_steps=max_steps)

    return solve


def failing_solve():
    def boom(x):
        if x > 3:
            raise ValueError("host step failed")
        return x

    def body(c):
        i, x = c
        x = jax.pure_callback(boom, jax.ShapeDtypeStruct((), jnp.float32), x + 1.0)
        return i + 1, x

    return jax.jit(
        lambda x: jhw.while_loop(lambda c: c[0] < 100, body, (0, x), max_steps=100, stream_every=1)
    )


def least_squares_sweep(steps: int) -> Callable:
    """``solve(lr) -> (final, history)``: gradient descent on ``(x**2 + x**4 / 2)`` from 2 for
    ``steps`` steps, recording ``loss = x**2``; vmapped over many rates, the largest diverge
    (a sweep as users run one)."""

    def solve(lr):
        def body(c):
            k, x = c
            return k + 1, x - lr * 2 * x * (1 + x**2)

        return jhw.while_loop(
            lambda c: c[0] < steps, body, (0, jnp.float32(2.0)), max_steps=steps,
            record=lambda c: {"loss": c[1] ** 2},
        )  # fmt: skip

    return solve
