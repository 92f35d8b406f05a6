"""A loop keeps its rows in one buffer per dtype, not one per recorded leaf (issue 55, item 5).

Per buffer XLA compiles a fill, a row write each step and a window for the host: with a buffer
per leaf, a record of hundreds of leaves (a metrics dict, a tree of scalars) compiled many times
slower than the loop itself. What users touch is unchanged: ``values`` maps each name to one
array, and the helpers, lanes, ``to_numpy`` and the transformations see the same rows.
"""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import jaxhist_widget as jhw
from jaxhist_widget._device.record.history import SHARED_MOST

from ...helpers.backends import cpu_only, records_here

STEPS = 6


def _body(c):
    i, s = c
    return i + 1, {k: v * 0.5 + i for k, v in s.items()}


def _scalars(n: int) -> dict[str, jax.Array]:
    return {f"p{k:03d}": jnp.float32(k) for k in range(n)}


def _loop(x, **kw):
    return jhw.while_loop(lambda c: c[0] < STEPS, _body, (0, x), max_steps=STEPS + 2, **kw)


def test_a_record_of_many_scalars_is_one_buffer_per_dtype():
    (_, _), hist = jax.jit(_loop)(_scalars(50))
    # the step counter (int32) and the fifty float32 scalars: two buffers, and the length
    assert [b.shape for b in hist.buffers] == [(STEPS + 3, 1), (STEPS + 3, 50)]
    assert len(jax.tree_util.tree_leaves(hist)) == 3
    paths = [jax.tree_util.keystr(p) for p, _ in jax.tree_util.tree_leaves_with_path(hist)]
    assert paths == [".buffers[0]", ".buffers[1]", ".length"]
    rows = hist.to_numpy()
    for k in (0, 17, 49):
        want = [np.float32(k)]
        for i in range(STEPS):
            want.append(want[-1] * np.float32(0.5) + np.float32(i))
        np.testing.assert_allclose(rows[1][f"p{k:03d}"], want, rtol=1e-6)
    np.testing.assert_array_equal(rows[0], np.arange(STEPS + 1))


@cpu_only
def test_a_flush_carries_one_window_per_buffer():
    # One host-call argument per buffer: the loop's last answer, the lane words, then the int32
    # counter's window and one float32 window for all fifty scalars (a window per leaf: 52).
    hlo = jax.jit(_loop).lower(_scalars(50)).compile().as_text()
    flush = next(
        line
        for line in hlo.splitlines()
        if "xla_ffi_python_cpu_callback" in line and "f32[1," in line
    )
    operands = flush.split("operand_layout_constraints={")[1].split("}}")[0]
    assert len(re.findall(r"[a-z]+\d+\[[\d,]*\]", operands)) == 4, operands
    with jhw.Recorder() as rec:
        _, hist = jax.jit(_loop)(_scalars(50))
    np.testing.assert_equal(rec.history(), hist.to_numpy())


@pytest.mark.parametrize(
    "body",
    [_body, lambda c: (c[0] + 1, {k: v * 0.99 for k, v in c[1].items()})],
    ids=["affine", "scaled"],
)
def test_kernels_do_not_grow_with_the_recorded_leaves(body):
    # A leaf more adds lax's own kernel for its update, and nothing of the loop's: no fill, no
    # row write and no window per leaf (with a buffer per leaf: three kernels more a leaf), and
    # no second copy of its update in the row's write (a step run inline on CPU, a cheap
    # update, v * 0.99, was computed again there: a kernel and a copy more a leaf).
    def extra(n: int) -> int:
        x = _scalars(n)
        cond = lambda c: c[0] < STEPS  # noqa: E731
        loop = jax.jit(lambda x: jhw.while_loop(cond, body, (0, x), max_steps=STEPS + 2))
        bare = jax.jit(lambda x: lax.while_loop(cond, body, (0, x)))
        return _fusions(loop.lower(x).compile().as_text()) - _fusions(
            bare.lower(x).compile().as_text()
        )

    # (XLA splits a join of many operands once or twice, at a few dozen: then no more)
    assert extra(100) <= extra(40) + 1, (extra(40), extra(100))


def _fusions(hlo: str) -> int:
    return len(re.findall(r"= \S+ fusion\(", hlo))


def _mixed():
    """Leaves of every kind a buffer must keep apart or together: float32 scalars and a small
    vector (one buffer), int32, bool, bfloat16, a zero-size leaf (no buffer), a float8 NaN with
    its payload and a leaf too large to share."""
    nan8 = lax.bitcast_convert_type(jnp.uint8(0xFE), jnp.float8_e5m2)  # a negative NaN
    return {
        "a": jnp.float32(1.5),
        "v": jnp.arange(3, dtype=jnp.float32),
        "n": jnp.int32(7),
        "ok": jnp.bool_(True),
        "h": jnp.bfloat16(0.25),
        "empty": jnp.zeros((0, 2), jnp.float32),
        "nan8": jnp.full((2,), nan8),
        "big": jnp.linspace(0.0, 1.0, SHARED_MOST + 1, dtype=jnp.float32),
        "b": jnp.float32(-2.0),
    }


def _mixed_body(c):
    i, s = c
    return i + 1, {
        **s,
        "a": s["a"] + 1,
        "v": s["v"] * 2,
        "n": s["n"] - 1,
        "ok": ~s["ok"],
        "h": s["h"] * 2,
        "big": s["big"] + 1,
        "b": s["b"] * s["a"],
    }


def _expected_rows(x: dict, steps: int) -> dict:
    rows = {k: [np.asarray(v)] for k, v in x.items()}
    c = (0, x)
    for _ in range(steps):
        c = _mixed_body(c)
        for k, v in c[1].items():
            rows[k].append(np.asarray(v))
    return {k: np.stack(v) for k, v in rows.items()}


@pytest.mark.skipif(not records_here("float8_e5m2"), reason="this chip has no float8")
def test_every_leaf_reads_back_as_recorded_through_every_helper():
    x = _mixed()
    steps = 3
    (_, _), hist = jax.jit(
        lambda x: jhw.while_loop(lambda c: c[0] < steps, _mixed_body, (0, x), max_steps=5)
    )(x)
    want = _expected_rows(x, steps)
    # float32 (a, v, b), int32 (the counter, n), bool, bfloat16, float8, the large leaf alone
    assert len(hist.buffers) == 6
    got = hist.to_numpy()[1]
    for k, rows in want.items():
        assert got[k].dtype == rows.dtype and got[k].shape == rows.shape, k
        np.testing.assert_array_equal(
            np.atleast_1d(got[k]).view(np.uint8), np.atleast_1d(rows).view(np.uint8), err_msg=k
        )
    values = hist.values[1]
    assert values["empty"].shape == (6, 0, 2) and values["big"].shape == (6, SHARED_MOST + 1)
    last = hist.last()[1]
    mean = hist.mean()[1]
    for k, rows in want.items():
        np.testing.assert_array_equal(
            np.atleast_1d(np.asarray(last[k])).view(np.uint8),
            np.atleast_1d(rows[-1]).view(np.uint8),
            err_msg=k,
        )
        if k not in ("ok", "nan8", "empty"):
            np.testing.assert_allclose(mean[k], rows.astype(np.float64).mean(0), rtol=1e-2)
    tail, valid = hist.tail(2)
    np.testing.assert_array_equal(tail[1]["v"], want["v"][-2:])
    assert valid.tolist() == [True, True] and tail[1]["empty"].shape == (2, 0, 2)
    assert hist.argmax()[1]["a"] == steps and hist.min()[1]["n"] == 7 - steps


def test_lanes_transforms_and_conditionals_see_the_same_rows():
    x = {"a": jnp.float32(1.0), "v": jnp.ones(3), "n": jnp.int32(2)}

    def run(scale):
        def body(c):
            i, s = c
            return i + 1, {"a": s["a"] * scale, "v": s["v"] * scale, "n": s["n"]}

        return jhw.while_loop(lambda c: c[0] < 3, body, (0, x), max_steps=4)

    _, hist = jax.jit(jax.vmap(run))(jnp.array([1.0, 2.0, 3.0]))
    lane = hist[2]
    np.testing.assert_allclose(lane.to_numpy()[1]["a"], [1, 3, 9, 27])
    np.testing.assert_allclose(jax.tree_util.tree_map(lambda b: b[2], hist).values[1]["v"][3], 27)
    # a History through lax.cond: the same structure from both branches
    flip = lambda h: jax.tree_util.tree_map(lambda b: b[::-1], h)  # noqa: E731
    pick = jax.jit(lambda p, h: lax.cond(p, lambda h: h, flip, h))
    np.testing.assert_allclose(pick(False, hist).to_numpy()[0][1]["a"], [1, 3, 9, 27])
    assert pick(True, hist).to_numpy()[0][1]["n"].tolist() == [2, 2, 2, 2]
    # forward-mode autodiff through the loop and its History
    tangent = jax.jvp(lambda s: run(s)[1].values[1]["a"], (2.0,), (1.0,))[1]
    np.testing.assert_allclose(tangent[:4], [0, 1, 4, 12])


def test_a_history_made_by_hand_packs_its_values_the_same_way():
    values = {"loss": jnp.arange(4.0), "x": jnp.ones((4, 2)), "i": jnp.arange(4)}
    h = jhw.History(values, jnp.int32(3))
    # leaves in flatten order: "i" (int32), then "loss" and "x" (float32, 1 + 2 columns)
    assert [b.shape for b in h.buffers] == [(4, 1), (4, 3)]
    np.testing.assert_array_equal(h.values["x"], values["x"])
    g = jax.grad(lambda t: jhw.History({"y": (values["loss"] - t) ** 2}, 3).mean()["y"])(1.0)
    assert float(g) == pytest.approx(-2 * np.mean(np.arange(3.0) - 1))
    with pytest.raises(ValueError, match="row axis"):
        jhw.History({"x": jnp.ones(3)}, jnp.ones(2, jnp.int32))


def test_a_history_pickles_and_copies():
    import copy
    import pickle

    (_, _), hist = jax.jit(_loop)(_scalars(3))
    for other in (pickle.loads(pickle.dumps(hist)), copy.deepcopy(hist), copy.copy(hist)):
        np.testing.assert_equal(other.to_numpy(), hist.to_numpy())
    with pytest.raises(AttributeError, match="immutable"):
        hist.length = 0
