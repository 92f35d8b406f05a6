"""The user's carry inside the loop: ``body_fun`` traced once, and the leaves it never changes.

Layer 1 (pure JAX). `prepare` traces ``body_fun`` once on ``init_val`` (twice when a weakly
typed leaf takes another dtype, as ``lax.while_loop`` does), checks what it returns against
``init_val``, and finds the leaves that ``body_fun`` returns unchanged (the same value, not a
copy). Those *fixed* leaves (model parameters, constants carried along) leave the loop carry:
``cond_fun``, ``body_fun`` and ``record`` see them closed over, and the final carry gets them
back as they came in. So under ``jax.vmap`` an unbatched fixed leaf stays unbatched and is never
copied into every lane, as with ``lax.while_loop`` (which moves such leaves out of its carry
too; it keeps one that ``cond_fun`` reads, this loop needs not).

The loop then replays the traced functions (`Carry.step`, `Carry.cond`) instead of calling
``body_fun`` and ``cond_fun`` again: their Python runs once per trace, wherever the loop needs
them. Their effects are known before the loop is built (`Carry.lane_effects`): what a vmapped
loop can do with them is decided at trace time (`lanes.same_in_every_lane`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from jax import lax
from jax.extend.core import jaxpr_as_fun

from ..parallel import devices
from ..record import checks, written

__all__ = ["Carry", "Counted", "prepare"]


class Counted(NamedTuple):
    """A condition that counts: ``cond_fun`` is ``i < bound`` (or ``<=``), where ``i`` is a step
    counter (``body_fun`` returns it plus one) and ``bound`` does not change in the loop. Such
    a loop's steps left are known before it takes them (`Carry.steps_left`)."""

    counter: int  #: the counter's position among the moving leaves
    bound: Any  #: the bound's value (a constant, or a leaf ``body_fun`` never changes)
    inclusive: bool  #: ``i <= bound``


class Carry(NamedTuple):
    """``init_val`` split into the leaves the loop carries (*moving*) and the fixed ones."""

    treedef: Any  #: the structure of ``init_val``
    leaves: list[jax.Array]  #: ``init_val``'s leaves (weak types promoted as lax does)
    moving: tuple[int, ...]  #: indices of the leaves ``body_fun`` changes
    body: Any  #: ``body_fun`` as a closed jaxpr over all leaves
    cond_jaxpr: Any  #: ``cond_fun`` (its result checked: `checks.check_cond`), likewise
    #: Side effects of ``body_fun`` / ``cond_fun`` that must not happen for a finished vmap
    #: lane (IO callbacks, checkify checks), by name; empty if none.
    lane_effects: tuple[str, ...]
    #: The functions themselves, called instead of replaying their jaxprs under ``shard_map``:
    #: there the loop makes the carry vary per device (`devices.vary`), and a jaxpr traced on
    #: the unvarying ``init_val`` would not take it (JAX inserts the casts only when tracing).
    functions: tuple[Callable[[Any], Any], Callable[[Any], Any]] | None
    #: ``id`` of each fixed leaf (`is_fixed`)
    fixed_ids: frozenset[int] = frozenset()
    #: The leaves in the order ``body_fun`` writes the carry (`..record.written`): ``init_val``
    #: reaches a jitted loop rebuilt, its dicts' keys sorted.
    order: tuple[int, ...] = ()

    @property
    def body_writes(self) -> bool:
        """Whether ``body_fun`` writes to a Ref."""
        return any(_name(e) == "WriteEffect" for e in self.body.effects)

    @property
    def body_effects(self) -> bool:
        """Whether ``body_fun`` has effects other than debug prints and callbacks."""
        return any(_name(e) != "DebugEffect" for e in self.body.effects)

    def cond(self, moving: list[jax.Array]) -> jax.Array:
        """``cond_fun`` on the carry."""
        if self.functions is not None:
            return checks.check_cond(self.functions[0](self.full(moving)))
        (pred,) = jaxpr_as_fun(self.cond_jaxpr)(*self._all(moving))
        return jnp.asarray(pred)  # a constant condition comes back as a Python bool

    @property
    def counting(self) -> tuple[int, ...]:
        """The positions, among the moving leaves (`init`), of the step counters: integer
        scalars that ``body_fun`` returns plus one (``i + 1``)."""
        jaxpr = self.body.jaxpr
        made = {e.outvars[0]: e for e in jaxpr.eqns if len(e.outvars) == 1}
        out = []
        for j, i in enumerate(self.moving):
            x, out_var = jaxpr.invars[i], jaxpr.outvars[i]
            # A constant returned for the leaf (``lambda c: (c[0] + 1, 0.0)``) is a Literal,
            # no variable (and not hashable): never a counter.
            eqn = None if _is_literal(out_var) else made.get(out_var)
            if eqn is None or eqn.primitive.name != "add" or not _integer_scalar(x.aval):
                continue
            a, b = eqn.invars
            if (a is x and _is_one(b)) or (b is x and _is_one(a)):
                out.append(j)
        return tuple(out)

    @property
    def counted(self) -> Counted | None:
        """The condition as a `Counted`, when it is one (else None).

        Recognised in the traced ``cond_fun``: a single ``lt`` / ``le`` (``i > n`` is traced as
        ``n < i``...) of a step counter and a bound that is a constant, a value closed over,
        or a carry leaf ``body_fun`` returns unchanged (through integer conversions).
        """
        jaxpr = self.cond_jaxpr.jaxpr
        made = {e.outvars[0]: e for e in jaxpr.eqns if len(e.outvars) == 1}
        out = jaxpr.outvars[0]
        eqn = None if _is_literal(out) else made.get(out)
        if eqn is None or eqn.primitive.name not in ("lt", "le"):
            return None
        counter, bound = eqn.invars
        counters = {self.moving[j]: j for j in self.counting}
        if _is_literal(counter) or counter not in jaxpr.invars:
            return None
        position = counters.get(jaxpr.invars.index(counter))
        if position is None:
            return None
        value = self._invariant(bound, made)
        if value is None or not jnp.issubdtype(jnp.result_type(value), jnp.integer):
            return None
        return Counted(position, value, eqn.primitive.name == "le")

    def _invariant(self, v: Any, made: dict) -> Any:
        """The value of jaxpr atom ``v`` of ``cond_fun`` if it stays the same in the loop."""
        jaxpr = self.cond_jaxpr.jaxpr
        if _is_literal(v):
            return v.val
        if v in jaxpr.constvars:
            return self.cond_jaxpr.consts[jaxpr.constvars.index(v)]
        if v in jaxpr.invars:
            i = jaxpr.invars.index(v)
            return None if i in self.moving else self.leaves[i]
        eqn = made.get(v)
        if eqn is not None and eqn.primitive.name == "convert_element_type":
            inner = self._invariant(eqn.invars[0], made)
            return None if inner is None else lax.convert_element_type(inner, v.aval.dtype)
        return None

    def steps_left(self, moving: list[jax.Array], counted: Counted, cap: int) -> jax.Array:
        """Steps the loop has left before ``cond_fun`` is False (int32, at most ``cap``)."""
        i = moving[counted.counter]
        left = jnp.asarray(counted.bound, i.dtype) - i + (1 if counted.inclusive else 0)
        return jnp.clip(left, 0, cap).astype(jnp.int32)

    def is_fixed(self, x: Any) -> bool:
        """Whether ``x`` is one of the fixed leaves (the object itself, as `full` puts it)."""
        # By identity, from a set made once: asked once per recorded leaf, a scan of the
        # leaves each time cost seconds at a few hundred leaves.
        return id(x) in self.fixed_ids

    def init(self) -> list[jax.Array]:
        """The initial loop carry: the moving leaves."""
        return [self.leaves[i] for i in self.moving]

    def full(self, moving: list[jax.Array]) -> Any:
        """The user's carry: ``moving`` with the fixed leaves put back."""
        return self.treedef.unflatten(self._all(moving))

    def step(self, moving: list[jax.Array]) -> list[jax.Array]:
        """``body_fun`` on the carry, as the moving leaves it returns (types as they came in)."""
        if self.functions is not None:
            full = self.full(moving)
            out = jax.tree_util.tree_leaves(checks.check_carry(full, self.functions[1](full)))
        else:
            out = jaxpr_as_fun(self.body)(*self._all(moving))
        return [_like(out[i], x) for i, x in zip(self.moving, moving, strict=True)]

    def _all(self, moving: list[jax.Array]) -> list[jax.Array]:
        leaves = list(self.leaves)
        for i, x in zip(self.moving, moving, strict=True):
            leaves[i] = x
        return leaves


def prepare(cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any], init_val: Any) -> Carry:
    """Trace ``body_fun`` and ``cond_fun`` on ``init_val``; raise what ``lax.while_loop`` would
    if ``body_fun`` does not return a carry of ``init_val``'s structure, shapes and dtypes or
    ``cond_fun`` no boolean scalar, and refuse what this loop cannot do as lax does it."""
    leaves, treedef = jax.tree_util.tree_flatten(init_val)
    leaves = [x if isinstance(x, jax.Array) else jnp.asarray(x) for x in leaves]
    body, out, order = _trace(body_fun, treedef, leaves)
    promoted = [
        lax.convert_element_type(x, jnp.result_type(x, o.dtype))
        if jax.typeof(x).weak_type and x.dtype != o.dtype
        else x
        for x, o in zip(leaves, out, strict=True)
    ]
    if any(p is not x for p, x in zip(promoted, leaves, strict=True)):
        # A weakly typed leaf (a Python scalar) takes the dtype body_fun gives it: trace again
        # with it, as lax.while_loop does.
        leaves = promoted
        body, out, order = _trace(body_fun, treedef, leaves)
    jaxpr = body.jaxpr
    moving = tuple(
        i for i, (o, v) in enumerate(zip(jaxpr.outvars, jaxpr.invars, strict=True)) if o is not v
    )
    cond = jax.make_jaxpr(
        lambda *xs: checks.check_cond(cond_fun(jax.tree_util.tree_unflatten(treedef, xs)))
    )(*leaves)
    if any(_name(e) == "WriteEffect" for e in cond.effects):
        # lax.while_loop applies cond_fun's Ref writes once per step (not for the evaluation
        # that ends the loop); this loop evaluates cond_fun as it runs, and would not match.
        raise NotImplementedError(
            "jaxhist_widget.while_loop: cond_fun writes to a Ref. Write it in body_fun "
            "instead (cond_fun runs once more than body_fun), or carry the value in the loop."
        )
    lane_effects = tuple(sorted({_name(e) for e in (*body.effects, *cond.effects)} & _PER_LANE))
    functions = (cond_fun, body_fun) if devices.manual_axes() else None
    kept = set(moving)
    fixed = frozenset(id(x) for i, x in enumerate(leaves) if i not in kept)
    return Carry(treedef, leaves, moving, body, cond, lane_effects, functions, fixed, order)


#: Effects that act per lane, and so must not happen for a vmap lane that already finished: IO
#: callbacks and checkify checks (lax's vmapped loop refuses both where the predicate differs
#: per lane). Every other effect may: debug prints and callbacks (lax runs them for every lane
#: too), Ref reads, Ref writes in ``body_fun`` (left to lax to mask per lane,
#: `steps._body_masked`; in ``cond_fun`` they are refused), and named-axis queries such as
#: ``lax.axis_index``, which only read which lane they are in.
_PER_LANE = frozenset({"IOEffect", "OrderedIOEffect", "ErrorEffect"})


def _integer_scalar(aval: Any) -> bool:
    return aval.shape == () and jnp.issubdtype(aval.dtype, jnp.integer)


def _is_literal(v: Any) -> bool:
    """Whether jaxpr atom ``v`` is a Literal (a constant), not a variable."""
    return type(v).__name__ == "Literal"


def _is_one(v: Any) -> bool:
    """Whether jaxpr operand ``v`` is the literal 1 (a variable has no ``val``)."""
    val = getattr(v, "val", None)
    return val is not None and getattr(val, "shape", ()) == () and val == 1


def _name(effect: Any) -> str:
    # Effect classes live in JAX internals (jax._src.callback, .state.types, .checkify); their
    # names are what this module needs, and do not tie it to where they are defined.
    return type(effect).__name__


def _trace(body_fun: Callable, treedef: Any, leaves: list[jax.Array]):
    """``body_fun`` over the leaves as a closed jaxpr, its output leaves' types, and the order
    it writes them in (`..record.written`).

    Raises (at trace time, naming each leaf) if ``body_fun`` returns another structure,
    shapes or dtypes (`checks.check_carry`).
    """
    carry = treedef.unflatten(leaves)
    order: list[tuple[int, ...]] = [()]

    def flat(*leaves):
        returned = body_fun(treedef.unflatten(leaves))
        order[0] = written.written_order(returned)  # (checked, it is rebuilt: keys sorted)
        return jax.tree_util.tree_leaves(checks.check_carry(carry, returned))

    body, out = jax.make_jaxpr(flat, return_shape=True)(*leaves)
    return body, out, order[0]


def _like(x: jax.Array, old: jax.Array) -> jax.Array:
    """``x`` with ``old``'s type: a weakly typed result (a Python scalar) made strong."""
    if jax.typeof(x).weak_type and not jax.typeof(old).weak_type:
        return lax.convert_element_type(x, old.dtype)
    return x
