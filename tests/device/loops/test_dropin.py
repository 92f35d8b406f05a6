"""`jhw.while_loop` as a drop-in for `lax.while_loop`: what lax does under vmap, with JAX's
debugging aids (checks, key reuse), with any legal pytree, and the errors it gives."""

from __future__ import annotations

import contextlib

import jax
import jax.extend
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax
from jax.experimental import checkify, io_callback

import jaxhist_widget as jhw

# Each case compiles loops of its own under jit and vmap: kept out of the quick subset.
pytestmark = pytest.mark.slow


def loop(cond, body, init, **kw):
    return jhw.while_loop(cond, body, init, max_steps=kw.pop("max_steps", 20), **kw)


@contextlib.contextmanager
def config(name, value):
    old = getattr(jax.config, name)
    jax.config.update(name, value)
    try:
        yield
    finally:
        jax.config.update(name, old)


def while_carries(jaxpr) -> list[tuple]:
    """The carry shapes of every ``while`` in ``jaxpr``, nested ones included."""
    found = []
    for eqn in jaxpr.eqns:
        if eqn.primitive is lax.while_p:
            n = eqn.params["cond_nconsts"] + eqn.params["body_nconsts"]
            found += [tuple(v.aval.shape) for v in eqn.invars[n:]]
        for sub in jax.extend.core.jaxprs_in_params(eqn.params):
            found += while_carries(sub)
    return found


# ------------------------------------------------------------------ vmap: what stays unbatched
def halve_by(c):
    return {"x": c["x"] / c["p"].mean(), "p": c["p"], "i": c["i"] + 1}


def run_halve(x, p, **kw):
    return loop(lambda c: c["x"] > 1.0, halve_by, {"x": x, "p": p, "i": 0}, **kw)


@pytest.mark.parametrize("stream", [True, False])
def test_vmap_keeps_a_leaf_the_body_never_changes_unbatched(stream):
    # `p` (e.g. model parameters) is unbatched and returned unchanged: as with lax, vmap may
    # return it unbatched (out_axes=None), and the loop never copies it into every lane.
    p = jnp.full((32, 32), 2.0)
    f = jax.vmap(lambda x: run_halve(x, p, stream=stream)[0], out_axes={"x": 0, "p": None, "i": 0})
    final = jax.jit(f)(jnp.array([10.0, 3.0]))
    np.testing.assert_allclose(final["x"], [0.625, 0.75])
    np.testing.assert_array_equal(final["i"], [4, 2])
    assert final["p"].shape == (32, 32)
    carries = while_carries(jax.make_jaxpr(f)(jnp.array([10.0, 3.0])).jaxpr)
    assert carries and (2, 32, 32) not in carries and (32, 32) not in carries
    # nor is its history (the default record keeps it): every row is row 0
    assert (2, 21, 32, 32) not in carries
    lax_final = jax.vmap(
        lambda x: lax.while_loop(lambda c: c["x"] > 1.0, halve_by, {"x": x, "p": p, "i": 0}),
        out_axes={"x": 0, "p": None, "i": 0},
    )(jnp.array([10.0, 3.0]))
    np.testing.assert_array_equal(lax_final["i"], final["i"])


def test_vmap_keeps_a_counter_unbatched_when_the_condition_is():
    # The condition reads only an unbatched counter: lax's fixpoint keeps the counter
    # unbatched (only what the batched leaf touches is batched), and so does this loop.
    def run(x):
        return loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 2.0), (0, x))

    final, hist = jax.jit(jax.vmap(run, out_axes=((None, 0), 0)))(jnp.arange(3.0))
    assert int(final[0]) == 5
    np.testing.assert_array_equal(final[1], [0.0, 32.0, 64.0])
    assert [len(h[0]) for h in hist.to_numpy()] == [6, 6, 6]
    np.testing.assert_array_equal(hist.to_numpy()[2][1], [2.0, 4.0, 8.0, 16.0, 32.0, 64.0])


# ------------------------------------------------------------------ jax_enable_checks
def test_enable_checks_vmap_of_a_staged_loop():
    def halve(x):
        return loop(lambda x: x > 1.0, lambda x: x / 2, x, max_steps=10)

    def nested(x):  # a streaming loop inside a loop
        return lax.fori_loop(0, 2, lambda i, x: halve(x * 4.0)[0], x)

    with config("jax_enable_checks", True):
        _, hist = jax.vmap(jax.jit(halve))(jnp.array([10.0, 3.0]))
        out = jax.vmap(jax.jit(nested))(jnp.array([10.0, 3.0]))
    assert [len(h) for h in hist.to_numpy()] == [5, 3]
    np.testing.assert_allclose(out, [0.625, 0.75])


# ------------------------------------------------------------------ pytrees
class Keyed:
    """A legal custom pytree whose `flatten_with_keys` aux data differs from `flatten`'s."""

    def __init__(self, a, b):
        self.a, self.b = a, b


jax.tree_util.register_pytree_with_keys(
    Keyed,
    lambda k: (((jax.tree_util.GetAttrKey("a"), k.a), (jax.tree_util.GetAttrKey("b"), k.b)), "k"),
    lambda aux, children: Keyed(*children),
    lambda k: ((k.a, k.b), None),
)


@pytest.mark.parametrize("mode", ["eager", "jit", "vmap"])
def test_custom_pytree_with_its_own_key_aux_data(mode):
    def run(a):
        return loop(lambda k: k.a < 4, lambda k: Keyed(k.a + 1, k.b * 2), Keyed(a, jnp.float32(1)))

    f = {"eager": run, "jit": jax.jit(run), "vmap": jax.vmap(run)}[mode]
    a = jnp.int32(0) if mode != "vmap" else jnp.array([0, 2], jnp.int32)
    final, _ = f(a)
    assert isinstance(final, Keyed)
    expect = [16.0] if mode != "vmap" else [16.0, 4.0]
    np.testing.assert_array_equal(jnp.atleast_1d(final.b), expect)


# ------------------------------------------------------------------ errors as lax gives them
@pytest.mark.parametrize(
    ("cond", "says"),
    [
        (lambda x: None, "returned None"),  # a missing `return`
        (lambda x: (x > 1, x > 2), "got pytree PyTreeDef((*, *))"),
        (lambda x: [x > 1], "got pytree PyTreeDef([*])"),
    ],
)
@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_cond_fun_returning_no_scalar(cond, says, mode):
    f = lambda x: loop(cond, lambda x: x / 2, x)  # noqa: E731
    with pytest.raises(TypeError, match="cond_fun must return a boolean scalar") as info:
        (jax.jit(f) if mode == "jit" else f)(jnp.float32(4.0))
    assert says in str(info.value)


@pytest.mark.parametrize("mode", ["eager", "jit", "vmap"])
def test_empty_carry_runs_as_in_lax(mode):
    # lax accepts (); there is nothing to record or stream, the History holds its length.
    def run(n):
        final, hist = loop(lambda c: False, lambda c: c, ())
        counted = loop(lambda c: c[0] < n, lambda c: (c[0] + 1,), (0,), record=lambda c: ())
        return final, hist.length, counted[0][0], counted[1].length

    f = {"eager": run, "jit": jax.jit(run), "vmap": jax.vmap(run)}[mode]
    with jhw.Recorder() as rec:
        final, length, count, counted_length = f(3 if mode != "vmap" else jnp.array([3, 1]))
    assert final == () and rec.runs == []
    np.testing.assert_array_equal(length, 1 if mode != "vmap" else [1, 1])
    np.testing.assert_array_equal(count, 3 if mode != "vmap" else [3, 1])
    np.testing.assert_array_equal(counted_length, 4 if mode != "vmap" else [4, 2])


# ------------------------------------------------------------------ jax_debug_key_reuse
def split_draw(c):
    key, sub = jax.random.split(c[0])
    return key, c[1] + jax.random.normal(sub), c[2] + 1


@pytest.mark.parametrize("mode", ["eager", "jit", "vmap"])
def test_key_reuse_checker_accepts_a_key_carry(mode):
    def run(key):
        return loop(lambda c: c[2] < 3, split_draw, (key, 0.0, 0))

    def reference(key):
        return lax.while_loop(lambda c: c[2] < 3, split_draw, (key, 0.0, 0))

    keys = jax.random.split(jax.random.key(0), 2)
    key = keys if mode == "vmap" else keys[0]
    wrap = {"eager": lambda f: f, "jit": jax.jit, "vmap": jax.vmap}[mode]
    with config("jax_debug_key_reuse", True):
        (final_key, total, _), hist = wrap(run)(key)
    want_key, want_total, _ = wrap(reference)(key)
    np.testing.assert_array_equal(total, want_total)
    np.testing.assert_array_equal(jax.random.key_data(final_key), jax.random.key_data(want_key))
    assert np.asarray(hist.values[0]).dtype == np.uint32  # recorded as key data


# ------------------------------------------------------------------ effects, checkify, Refs
def test_io_callback_in_the_body_under_vmap_in_lockstep():
    # Every lane steps together (cond_fun is unbatched): as with lax, the callback runs for
    # each step of each lane, never past the end.
    seen = {"lax": [], "jhw": []}

    def run(which, x):
        def body(c):
            shape = jax.ShapeDtypeStruct((), jnp.float32)
            x = io_callback(lambda x: seen[which].append(float(x)) or x, shape, c[1])
            return c[0] + 1, x * 2.0

        if which == "lax":
            return lax.while_loop(lambda c: c[0] < 3, body, (0, x))[1]
        return loop(lambda c: c[0] < 3, body, (0, x))[0][1]

    for which in seen:
        out = jax.vmap(lambda x, w=which: run(w, x))(jnp.array([1.0, 2.0]))
        np.testing.assert_array_equal(out, [8.0, 16.0])
    jax.effects_barrier()
    assert sorted(seen["jhw"]) == sorted(seen["lax"]) and len(seen["jhw"]) == 6


@pytest.mark.parametrize("effect", ["io_callback", "checkify"])
def test_effects_under_vmap_with_lanes_ending_apart_are_refused(effect):
    # A finished lane would still run the step's effect (lax refuses both there too).
    def body(x):
        if effect == "io_callback":
            return io_callback(lambda x: x, jax.ShapeDtypeStruct((), jnp.float32), x / 2)
        checkify.check(x > 0.5, "x too small")
        return x / 2

    f = jax.vmap(lambda x: loop(lambda x: x > 1.0, body, x)[0])
    if effect == "checkify":
        f = checkify.checkify(f)
    with pytest.raises(NotImplementedError, match="finished"):
        f(jnp.array([8.0, 2.0]))
    jax.effects_barrier()


@pytest.mark.parametrize("mode", ["vmap", "jit(vmap)"])
def test_ref_written_in_the_body_under_vmap_counts_per_lane(mode):
    # Lanes that end apart: each lane's Ref counts its own steps, as with lax (8 takes 3
    # halvings to reach 1, 2 takes 1), never the steps run for lanes already finished.
    def run(while_loop, x):
        r = jax.new_ref(0.0)

        def body(x):
            r[...] += 1.0
            return x / 2

        return while_loop(lambda x: x > 1.0, body, x), r[...]

    ours = jax.vmap(lambda x: run(lambda *a: loop(*a)[0], x))
    theirs = jax.vmap(lambda x: run(lax.while_loop, x))
    if mode != "vmap":
        ours = jax.jit(ours)
    x = jnp.array([8.0, 2.0])
    np.testing.assert_array_equal(ours(x)[1], theirs(x)[1])
    np.testing.assert_array_equal(ours(x)[1], [3.0, 1.0])


@pytest.mark.parametrize("mode", ["vmap", "jit(vmap)"])
def test_ref_written_in_the_body_under_vmap_in_lockstep(mode):
    # On CPU the step ran in a conditional of its own, which JAX does not batch with a Ref
    # write in it; lanes that step together need no masking, and count as lax counts.
    def run(while_loop, x):
        r = jax.new_ref(0.0)

        def body(c):
            r[...] += c[1]
            return c[0] + 1, c[1] * 2.0

        return while_loop(lambda c: c[0] < 3, body, (0, x))[1], r[...]

    ours = jax.vmap(lambda x: run(lambda *a: loop(*a)[0], x))
    theirs = jax.vmap(lambda x: run(lax.while_loop, x))
    if mode != "vmap":
        ours = jax.jit(ours)
    x = jnp.array([1.0, 2.0])
    np.testing.assert_array_equal(ours(x)[1], theirs(x)[1])
    np.testing.assert_array_equal(ours(x)[1], [7.0, 14.0])


@pytest.mark.parametrize("also_body", [False, True])
def test_ref_written_in_cond_fun_is_refused(also_body):
    def run(x):
        r = jax.new_ref(0.0)

        def cond(x):
            r[...] += 1.0
            return x > 1.0

        def body(x):
            if also_body:
                r[...] += 1.0
            return x / 2

        return loop(cond, body, x)[0], r[...]

    with pytest.raises(NotImplementedError, match="cond_fun writes to a Ref"):
        jax.jit(run)(jnp.float32(8.0))


# ---------------------------------------------------- bodies lax accepts that once crashed
@pytest.mark.parametrize(
    "make",
    [lambda: 0.0, lambda: False, lambda: jnp.float32(0)],
    ids=["python-float", "python-bool", "jnp-scalar-made-in-the-body"],
)
@pytest.mark.parametrize("mode", ["eager", "jit", "vmap"])
def test_a_body_returning_a_constant_for_a_carry_leaf_runs_as_in_lax(make, mode):
    # Solver bodies (optimistix, jaxopt) return literals for some leaves; in the traced body
    # such a leaf is a jaxpr Literal, not a variable.
    constant = make()
    init_leaf = jnp.asarray(constant).dtype.type(1)

    def run(limit, lib):
        body = lambda c: (c[0] + 1, make())  # noqa: E731
        cond = lambda c: c[0] < limit  # noqa: E731
        init = (0, init_leaf)
        if lib is lax:
            return lax.while_loop(cond, body, init), None
        return loop(cond, body, init, max_steps=8)

    limits = jnp.array([2, 5, 3])
    if mode == "eager":
        out, hist = run(3, jhw)
        want, _ = run(3, lax)
    elif mode == "jit":
        out, hist = jax.jit(lambda n: run(n, jhw))(3)
        want, _ = jax.jit(lambda n: run(n, lax))(3)
    else:
        out, hist = jax.vmap(lambda n: run(n, jhw))(limits)
        want, _ = jax.vmap(lambda n: run(n, lax))(limits)
    for got, exp in zip(*map(jax.tree_util.tree_leaves, (out, want)), strict=True):
        np.testing.assert_array_equal(got, exp)
    counter, leaf = hist.to_numpy() if mode != "vmap" else hist.to_numpy()[1]
    assert counter.tolist() == list(range(len(counter)))
    assert leaf[0] == init_leaf and (leaf[1:] == constant).all()


@pytest.mark.parametrize("stream", [True, False])
def test_axis_index_under_vmap_with_lanes_ending_apart_runs_as_in_lax(stream):
    # `lax.axis_index` has an effect (NamedAxisEffect) that only reads which lane it is in:
    # nothing happens per lane, so it is no reason to refuse lanes that end apart.
    def run(n, lib):
        body = lambda c: (c[0] + 1, c[1] + lax.axis_index("i"))  # noqa: E731
        cond = lambda c: c[0] < n  # noqa: E731
        if lib is lax:
            return lax.while_loop(cond, body, (0, 0))
        return loop(cond, body, (0, 0), stream=stream)[0]

    n = jnp.array([1, 4, 2])
    got = jax.vmap(lambda n: run(n, jhw), axis_name="i")(n)
    want = jax.vmap(lambda n: run(n, lax), axis_name="i")(n)
    assert [x.tolist() for x in got] == [x.tolist() for x in want] == [[1, 4, 2], [0, 4, 4]]


@pytest.mark.parametrize("how", ["eager", "jit"])
def test_reverse_mode_says_what_lax_says_and_forward_mode_works(how):
    """`jax.grad` through the loop fails with lax's own message for a while loop (so libraries
    that wrap it, e.g. diffrax's adjoints, can say theirs), and `jax.jvp` matches lax's."""

    def power(k, loop):
        out = loop(lambda c: c[1] < 5, lambda c: (c[0] * k, c[1] + 1), (jnp.float32(1.0), 0))
        return (out[0] if loop is jhw_loop else out)[0]

    def jhw_loop(cond, body, init):
        return jhw.while_loop(cond, body, init, max_steps=10)

    wrap = jax.jit if how == "jit" else (lambda f: f)
    with pytest.raises(ValueError) as lax_error:
        wrap(jax.grad(lambda k: power(k, lax.while_loop)))(1.0)
    with pytest.raises(ValueError) as ours:
        wrap(jax.grad(lambda k: power(k, jhw_loop)))(1.0)
    assert "Reverse-mode differentiation does not work" in str(ours.value)
    assert str(ours.value) == str(lax_error.value)
    got = jax.jvp(lambda k: power(k, jhw_loop), (2.0,), (1.0,))
    assert got == jax.jvp(lambda k: power(k, lax.while_loop), (2.0,), (1.0,))
