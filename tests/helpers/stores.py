"""What the store tests share: a loop recording a scalar and a vector leaf, the dtypes, a bit-for-
bit comparison, child processes."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import jaxhist_widget as jhw

A = jnp.asarray(np.random.default_rng(0).normal(size=(16, 16)) / 6, jnp.float32)

#: Every dtype the package records, narrowest first.
NARROW = ["float4_e2m1fn", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn",
          "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
          "int2", "uint2", "int4", "uint4"]  # fmt: skip
PLAIN = ["bool", "int8", "uint8", "int16", "uint16", "bfloat16", "float16", "int32", "uint32",
         "float32"]  # fmt: skip
DTYPES = [d for d in NARROW + PLAIN if hasattr(jnp, d) or d == "bool"]


def tanh_loop(x0, max_steps=40, **kw):
    """``x = tanh(A @ x)`` until the step is small, recording a scalar and a vector leaf."""

    def body(c):
        x, _ = c
        y = jnp.tanh(A @ x)
        return y, jnp.linalg.norm(y - x)

    return jhw.while_loop(
        lambda c: c[1] > 1e-3,
        body,
        (x0, jnp.float32(1.0)),
        max_steps=max_steps,
        record=lambda c: {"x": c[0], "step": c[1]},
        **kw,
    )


def starts(lanes):
    return jnp.asarray(np.random.default_rng(lanes).normal(size=(lanes, 16)), jnp.float32)


def same_bits(a, b):
    """Equal bit for bit (NaN payloads and -0 included), with the same dtype and shape."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
    # contiguous first: a device array may come back in another layout (a TPU's lanes)
    np.testing.assert_array_equal(
        np.ascontiguousarray(a).view(np.uint8), np.ascontiguousarray(b).view(np.uint8)
    )


def child(code: str) -> list[str]:
    """The command line of a fresh Python running ``code``."""
    return [sys.executable, "-c", textwrap.dedent(code)]


#: The environment of a child process: the package this process imports (before what this
#: process's path holds: a machine's own JAX may be there, as on a TPU), on the CPU.
CHILD_ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join(
        [
            str(Path(jhw.__file__).resolve().parents[1]),
            *filter(None, [os.environ.get("PYTHONPATH")]),
        ]
    ),
    "JAX_PLATFORMS": "cpu",
}


# ------------------------------------------------------------------- synthetic streams
def record_layout(names, dtypes, shapes=None, max_steps=10_000, step_counters=()):
    """A `Layout` of leaves ``names`` (a flat tuple record) of any dtypes and shapes."""
    from jaxhist_widget import _wire

    shapes = tuple(tuple(s) for s in shapes) if shapes is not None else ((),) * len(names)
    tree = jax.tree_util.tree_structure(tuple(0 for _ in names))
    return _wire.Layout(tuple(names), shapes, tuple(dtypes), tree, max_steps, 64, None,
                        tuple(step_counters))  # fmt: skip


def _words(x: np.ndarray) -> np.ndarray:
    """``x`` as the device packs a leaf's window: uint32 words (see `_wire.words`)."""
    if x.dtype == np.bool_:
        return x.astype(np.uint32).reshape(-1)
    if x.dtype.itemsize < 4:
        return x.view(f"u{x.dtype.itemsize}").astype(np.uint32).reshape(-1)
    return np.ascontiguousarray(x).reshape(-1).view(np.uint32)


class Stream:
    """One run of ``layout`` sent through the hub, as a compiled loop's host calls send it, to
    the sinks attached now (``lanes``: None unbatched): no compile, any dtype and leaf count."""

    def __init__(self, layout, lanes: int | None = None) -> None:
        from jaxhist_widget._host import HUB

        self.hub, self.layout, self.lanes = HUB, layout, lanes
        self.id = int(HUB.open_run(layout)[0])
        self.rows = np.zeros(1 if lanes is None else lanes, np.int64)

    def send(self, leaves, counts=None, status=None) -> None:
        """Send one flush: ``leaves[i]`` of shape ``(lanes or 1, k, *shape)``, lane ``j``'s
        first ``counts[j]`` rows new (all ``k`` by default); ``status`` per lane (codes)."""
        b = len(self.rows)
        k = leaves[0].shape[1] if leaves else 0
        counts = np.full(b, k) if counts is None else np.asarray(counts)
        status = np.zeros(b, np.int64) if status is None else np.asarray(status)
        head = [self.id, -1 if self.lanes is None else self.lanes, max(k, 1)]
        for lane in range(b):
            head += [int(self.rows[lane]), int(counts[lane]), int(self.rows[lane]),
                     int(status[lane])]  # fmt: skip
        self.rows += counts
        windows = []
        for x, shape in zip(leaves, self.layout.shapes, strict=True):
            if np.prod(shape, dtype=np.int64) == 0:
                continue
            if k == 0:
                x = np.zeros((b, 1, *shape), x.dtype)
            windows.append(_words(x))
        return self.hub.receive_chunk(
            self.layout, np.array(head, np.int32).view(np.uint32), *windows
        )

    def end(self, code: int = 1) -> None:
        """End every lane with status ``code`` (1: converged), sending no new rows."""
        b = len(self.rows)
        empty = [np.zeros((b, 0, *s), np.dtype(d))
                 for s, d in zip(self.layout.shapes, self.layout.dtypes, strict=True)]  # fmt: skip
        self.send(empty, counts=np.zeros(b, np.int64), status=np.full(b, code))
