"""The loops tests share.

`slow_counter` is the one slow loop: a counter whose step also takes host time (a stand-in for
heavy compute), jitted once per set of options, so tests that use the same one compile it once.
`bit_pattern_loop` records every bit pattern of a dtype (the streaming and store round trips).
`counting_step` and `counting_rows`: a counting loop's step and the rows lax's loop gives it
(the blocks and the stages of steps, checked against them).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import jaxhist_widget as jhw
from jaxhist_widget._wire import itemsize_bits


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


def bit_patterns(dtype) -> tuple:
    """The unsigned type of ``dtype``'s width, and how many of its bit patterns a row holds:
    every one up to 8 bits (NaNs, -0, inf included), 256 of them past that."""
    bits = itemsize_bits(jnp.dtype(dtype))
    unsigned = {2: jnp.uint2, 4: jnp.uint4, 8: jnp.uint8, 16: jnp.uint16, 32: jnp.uint32}[bits]
    return unsigned, min(2**bits, 256)


def bit_pattern_loop(dtype, base: int = 0) -> Callable:
    """``loop(offset) -> (final, history)``: 9 steps recording ``{"v": vector, "s": scalar}``
    of ``dtype``, each row the bit patterns of `bit_patterns` from ``base`` on, rotated by the
    step and ``offset`` (a bool: 0 and 1). Streams every 4 rows; vmaps over ``offset``."""
    dtype = jnp.dtype(dtype)
    unsigned, width = (None, 2) if dtype == jnp.bool_ else bit_patterns(dtype)

    def record(c):
        i, offset = c
        codes = (offset + i * 7 + jnp.arange(width)) % width
        if unsigned is None:
            return {"v": codes.astype(jnp.bool_), "s": (i % 2).astype(jnp.bool_)}
        pattern = (codes + base).astype(unsigned)
        # a vector leaf and a scalar leaf (a scalar int4 used to fail at trace time)
        return {"v": lax.bitcast_convert_type(pattern, dtype),
                "s": lax.bitcast_convert_type(pattern[0], dtype)}  # fmt: skip

    def loop(offset):
        return jhw.while_loop(
            lambda c: c[0] < 9,
            lambda c: (c[0] + 1, c[1]),
            (jnp.int32(0), offset),
            max_steps=12,
            record=record,
            stream_every=4,
        )

    return loop


def training_sweep(kind: str, steps: int, metrics: tuple[str, ...] = ("loss", "accuracy")):
    """``train(lr) -> history``: gradient descent on a small least-squares model for ``steps``
    steps, by ``jhw.scan`` (``kind="scan"``: its ``y``, the metrics after the step) or by
    ``jhw.while_loop`` (``"while"``: the same metrics recorded of its carry), recording
    ``metrics`` (in that order, as a user writes the dict: ``loss``, ``accuracy``,
    ``grad_norm``, ``val_loss``) of the weights after each step. A compute-bound step, no
    Python in it; vmapped over rates, those above ~0.7 diverge (to inf, then NaN)."""
    key = jax.random.PRNGKey(0)
    x = jax.random.normal(key, (64, 8))
    y = x @ jnp.linspace(-1.0, 1.0, 8)
    x_val = jax.random.normal(jax.random.PRNGKey(1), (32, 8))
    y_val = x_val @ jnp.linspace(-1.0, 1.0, 8)

    def loss(w, a, b):
        return jnp.mean((a @ w - b) ** 2)

    def record(w):
        grad = jax.grad(loss)(w, x, y)
        every = {
            "loss": loss(w, x, y),
            "accuracy": jnp.mean(jnp.abs(x @ w - y) < 0.5),
            "grad_norm": jnp.linalg.norm(grad),
            "val_loss": loss(w, x_val, y_val),
        }
        return {name: every[name] for name in metrics}

    def train(lr):
        def update(w):
            return w - lr * jax.grad(loss)(w, x, y)

        w0 = jnp.zeros(8)
        if kind == "scan":

            def step(w, _):
                w = update(w)
                return w, record(w)

            _, hist = jhw.scan(step, w0, None, length=steps)
            return hist
        _, hist = jhw.while_loop(
            lambda c: c[0] < steps,
            lambda c: (c[0] + 1, update(c[1])),
            (0, w0),
            max_steps=steps,
            record=lambda c: record(c[1]),
        )
        return hist

    return train


def grid_sweep(steps: int):
    """``train(lr, wd) -> history``: a compute-bound ``jhw.scan`` of gradient descent with
    weight decay on a noisy least-squares model, recording ``{"train_loss", "val_loss"}`` (in
    that order) after each step: vmapped over a grid of (lr, wd), the largest rates diverge
    and a middling weight decay fits the held-out data best."""
    x = jax.random.normal(jax.random.PRNGKey(0), (64, 8))
    w_true = jnp.linspace(-1.0, 1.0, 8)
    y = x @ w_true + 0.5 * jax.random.normal(jax.random.PRNGKey(1), (64,))
    x_val = jax.random.normal(jax.random.PRNGKey(2), (64, 8))
    y_val = x_val @ w_true

    def train(lr, wd):
        def step(w, _):
            grad = jax.grad(lambda w: jnp.mean((x @ w - y) ** 2) + wd * jnp.sum(w**2))(w)
            w = w - lr * grad
            return w, {
                "train_loss": jnp.mean((x @ w - y) ** 2),
                "val_loss": jnp.mean((x_val @ w - y_val) ** 2),
            }

        _, hist = jhw.scan(step, jnp.zeros(8), None, length=steps)
        return hist

    return train


def counting_step(c):
    """A step of ``(i, x)`` counting ``i``: the counting loops' (`steps.Counted`) test body."""
    return c[0] + 1, c[1] * 0.9 + jnp.sin(jnp.asarray(c[0], jnp.float32))


def counting_rows(n: int, max_steps: int = 200) -> np.ndarray:
    """The ``x`` rows of `counting_step` from ``(0, 1.0)`` while ``i < n``, as a loop of at
    most ``max_steps`` steps records them (row 0 the initial value)."""
    c, rows = (0, np.float32(1.0)), [np.float32(1.0)]
    while c[0] < n and len(rows) <= max_steps:
        c = counting_step(c)
        rows.append(np.float32(c[1]))
    return np.array(rows)
