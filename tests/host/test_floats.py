"""Host code computes in IEEE arithmetic though XLA calls it with subnormals flushed to zero.

XLA's CPU runtime runs a host call with flush-to-zero and denormals-are-zero on, and a thread
started there keeps them. A sink's hooks (in the host call, or on a worker thread the host call
started) and a store first made in such a thread must still see 1e-310 as 1e-310.
"""

from __future__ import annotations

import sqlite3
import threading

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxhist_widget as jhw
from jaxhist_widget._host._floats import flushing, ieee
from jaxhist_widget._host.store import _schema as schema

TINY = 5e-324


def in_a_host_call(fun):
    """What ``fun()`` returns when XLA calls it from a compiled program (a user's callback)."""
    out = []

    @jax.jit
    def program(x):
        jax.debug.callback(lambda _: out.append(fun()), x)
        return x + 1

    program(jnp.zeros(())).block_until_ready()
    jax.effects_barrier()
    return out[0]


@pytest.fixture(scope="module")
def xla_flushes():
    if not in_a_host_call(flushing):
        pytest.skip("this platform's XLA runs host calls without flushing subnormals")


def sums() -> list[float]:
    """What arithmetic makes of the smallest subnormal here, and in a thread started here."""
    seen = [float(np.float64(TINY) * 2), float(np.ldexp(1.0, -1074))]
    thread = threading.Thread(target=lambda: seen.append(float(np.float64(TINY) * 2)))
    thread.start()
    thread.join()
    return seen


@pytest.mark.parametrize("rows_can_wait", [False, True], ids=["in the host call", "on the worker"])
def test_a_sinks_hooks_see_subnormals(xla_flushes, rows_can_wait):
    class Arithmetic(jhw.Sink):
        def __init__(self) -> None:
            super().__init__()
            self.rows_can_wait = rows_can_wait
            self.seen: list[float] = []

        def on_start(self, run):
            self.seen += sums()

        def on_rows(self, run, lanes):
            self.seen += sums()

        def on_end(self, run):
            self.seen += sums()

    @jax.jit
    def solve(x):
        def body(x):
            return x * 0.999 + 1e-310

        return jhw.while_loop(lambda x: x < 1.0, body, x, max_steps=3000, stream_every=100)

    sink = Arithmetic()
    with sink:
        final, _ = solve(jnp.float32(0.0))
        jax.block_until_ready(final)
    assert len(sink.seen) > 9
    assert sink.seen == [2 * TINY, TINY, 2 * TINY] * (len(sink.seen) // 3)


def test_ieee_lifts_the_modes_and_puts_them_back(xla_flushes):
    def inside():
        with ieee():
            lifted = flushing()
        return lifted, flushing()

    assert in_a_host_call(inside) == (False, True)
    assert not flushing()


def test_a_store_made_in_a_flushing_thread_decodes_small_float64s(xla_flushes, tmp_path):
    """The powers of two the ``history`` view decodes float64 with are exact whatever thread
    made the file (a thread XLA started computed 2**-1054 as 0, and the view read 1e-302 as 0)."""
    path = tmp_path / "runs.db"

    def make():
        with sqlite3.connect(path) as conn:
            schema.create(conn)

    in_a_host_call(make)
    with sqlite3.connect(path) as conn:
        got = dict(conn.execute("SELECT i, pow2 FROM _seq WHERE i BETWEEN 974 AND 1100"))
    assert got == {i: float(np.ldexp(1.0, i - 2048)) for i in range(974, 1101)}
