"""How `jhw.log` keeps the values of its calls until the worker sends them: checked against the
run's leaves and copied at the call, gathered in columns, fetched together.

Host runtime. A row must hold each value as it was at its call, whatever the caller does after:

- a numpy array is copied into the batch's column at once (an accumulator updated in place
  afterwards keeps its old value in the row);
- a small jax.Array (up to `HOST_COPY_BYTES`) that is computed already and lives in host
  memory (the CPU backend; a small step is done by the time it returns) is copied into the
  column at once: a memcpy;
- any other jax.Array (its step still running, or its memory on an accelerator) is copied on
  its device by one small jitted copy, dispatched after the step that makes it and before any
  later one. A later step that donates the value (``donate_argnums``, the Flax/optax idiom)
  deletes the original, never that copy, which the worker fetches with the batch (one
  ``jax.device_get``, waiting for the device there, not in the loop).

A run's leaves, their shapes and dtypes, are those of its first call (`Leaves`). A later value
must have the same shape, and a dtype its leaf holds without changing what it is: of the same
kind or a narrower one (bool < integer < float < complex: an int where the run logs floats is
taken, a float where it logs ints is refused, as ``0.5`` would become ``0``), with a float
narrowed as the device narrows it (float64 to float32 rounds). An integer is taken where it
fits the leaf's integer dtype and refused where it does not, whatever carries it (a Python int,
a numpy or a jax integer of a wider dtype: ``np.int64(2**40)`` in an int32 leaf would wrap to
0, ``-1`` in a uint8 one to 255); a jax integer of a dtype whose range the leaf's does not hold
is waited for at the call to be checked. Widening the leaf instead is no option: a run's layout
is fixed at its start (its sinks, stores and plots hold its rows in it), and rows already sent
keep it. Values that are not numbers (a dict, None, a str) are refused at the call, each with
what to do instead.

Per call the caller's thread does only checks and copies (~1 µs a leaf, plus one jitted copy
dispatch for a value not computed yet); gathering and packing rows happens per batch on the
worker.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..._wire import np_dtype

__all__ = ["STEP", "Batch", "Leaves"]

#: The name of the leaf ``step=`` fills.
STEP = "step"

#: A batch's columns hold at most about this many bytes of rows (and at least one row): rows
#: of large arrays go to the worker in smaller batches rather than in one huge allocation.
BATCH_BYTES = 8 << 20
#: A computed CPU array of up to this many bytes is copied in the call (a memcpy, cheaper than
#: a dispatch); a larger one is copied by XLA's threads (one jitted copy), not the loop's.
HOST_COPY_BYTES = 1 << 16

# The kinds of numbers, narrowest first: a value may go into a leaf of its kind or a wider one.
_BOOL, _INT, _FLOAT, _COMPLEX = range(4)
_KIND_NAMES = ("bool", "an integer", "a float", "a complex number")
_PY_KINDS = {bool: _BOOL, int: _INT, float: _FLOAT, complex: _COMPLEX}
# How a leaf takes the values of a dtype: as they are, refused, or each integer checked to fit.
_HOLDS, _REFUSED, _CHECK = range(3)
#: jax.Array's concrete classes met so far (learnt from the values: making an array here would
#: start a backend at import): a type test quicker than ``isinstance(x, jax.Array)``.
_ARRAYS: set[type] = set()


def _kind(dtype: np.dtype) -> int | None:
    """The kind of number of ``dtype`` (ml_dtypes' bfloat16, float8, int4 included); None for
    what is not a number (object, str, bytes, datetime, structured)."""
    if dtype == np.bool_:
        return _BOOL
    if dtype.kind in "OSUMmV" and not _ml_number(dtype):
        return None
    if jnp.issubdtype(dtype, jnp.complexfloating):
        return _COMPLEX
    if jnp.issubdtype(dtype, jnp.floating):
        return _FLOAT
    if jnp.issubdtype(dtype, jnp.integer):
        return _INT
    return None


def _ml_number(dtype: np.dtype) -> bool:
    try:
        return jnp.issubdtype(dtype, jnp.number)
    except TypeError:
        return False


@jax.jit
def _device_copy(x: jax.Array) -> jax.Array:
    # A new buffer on the value's own device(s): XLA never lets an output alias an argument
    # that is not donated, so the copy outlives a later donation of ``x``.
    return jnp.copy(x)


class _Leaf:
    """One leaf of a run: its name, shape, dtype, and how its values are taken."""

    __slots__ = ("dtype", "host", "kind", "name", "scalar", "shape", "taken")

    def __init__(self, name: str, shape: tuple[int, ...], dtype: np.dtype, host: bool) -> None:
        self.name, self.shape, self.dtype = name, shape, dtype
        self.scalar = shape == ()
        kind = _kind(dtype)
        assert kind is not None  # `Leaves` refuses what is not a number first
        self.kind = kind
        # Its arrays live in host memory and are small: computed ones are copied in the call.
        self.host = host and math.prod(shape) * dtype.itemsize <= HOST_COPY_BYTES
        self.taken: dict[np.dtype, int] = {dtype: _HOLDS}  # how it takes each dtype seen

    def check_dtype(self, dtype: np.dtype) -> bool:
        """Raise if a value of ``dtype`` would change in this leaf (see the module docstring);
        whether its integers must be checked one by one (`fitting`): its range is wider."""
        how = self.taken.get(dtype)
        if how is None:
            how = self.taken[dtype] = self._how(dtype)
        if how == _REFUSED:
            raise self._refused(dtype)
        return how == _CHECK

    def _how(self, dtype: np.dtype) -> int:
        kind = _kind(dtype)
        if kind is None or kind > self.kind:
            return _REFUSED
        if kind == _INT and self.kind == _INT:
            # numpy casts an integer array to a narrower integer dtype by wrapping, silently
            got, holds = jnp.iinfo(dtype), jnp.iinfo(self.dtype)
            if got.min < holds.min or got.max > holds.max:
                return _CHECK
        return _HOLDS

    def fitting(self, a: np.ndarray) -> np.ndarray:
        """``a`` (integers of a dtype `check_dtype` said to check), or a ValueError naming the
        first value this leaf's dtype cannot hold."""
        if a.size:
            holds = jnp.iinfo(self.dtype)
            for v in (int(a.min()), int(a.max())):
                if not holds.min <= v <= holds.max:
                    raise self.does_not_fit(v)
        return a

    def does_not_fit(self, value: int) -> ValueError:
        """The error for an integer ``value`` this leaf's dtype cannot hold."""
        return ValueError(
            f"jhw.log: {self.name} = {value} does not fit {self.dtype}, its dtype on this run's "
            f"first call (kept as {self.dtype} it would wrap around). Make its first value of "
            f"a dtype that holds every value it logs (e.g. np.int64({self.name}) every call); "
            "a new block starts a new run."
        )

    def check_shape(self, shape: tuple[int, ...]) -> None:
        if shape != self.shape:
            raise ValueError(
                f"jhw.log: {self.name} has shape {shape}, but {self.shape} on this run's "
                "first call; log the same shapes every call."
            )

    def _refused(self, dtype: np.dtype) -> TypeError:
        kind = _kind(dtype)
        if kind is None:
            return _not_numbers(self.name, f"an array of {dtype}")
        example = {_BOOL: "2 -> True", _INT: "0.5 -> 0", _FLOAT: "1+2j -> 1.0"}[self.kind]
        cast = ("bool", "int", "float", "complex")[kind]
        start = f"{self.name}=0.0 rather than {self.name}=0 on the first call, or " * (
            kind == _FLOAT
        )
        return TypeError(
            f"jhw.log: {self.name} was {self.dtype} on this run's first call and is {dtype} "
            f"now ({_KIND_NAMES[kind]}); kept as {self.dtype} it would change ({example}). "
            f"Log one kind of value per name: make its first value {_KIND_NAMES[kind]} too "
            f"(e.g. {start}{cast}({self.name}) every call); a new block starts a new run."
        )

    def take(self, x: Any) -> Any:
        """A value that is not a float, a jax.Array or a numpy array of this leaf's dtype: as it
        goes into the column (checked); Python numbers as they are (numpy then refuses an int
        that does not fit)."""
        kind = _PY_KINDS.get(type(x))
        if kind is not None:
            if not self.scalar:
                self.check_shape(())
            if kind > self.kind:
                self.check_dtype(np.asarray(x).dtype)
            return x
        a = _as_numbers(self.name, x)
        self.check_shape(a.shape)
        if a.dtype != self.dtype and self.check_dtype(a.dtype):
            return self.fitting(a)
        return a


def _is_array(x: Any) -> bool:
    """Whether ``x`` is a jax.Array (its class is remembered); a TypeError for a tracer."""
    if not isinstance(x, jax.Array):
        return False
    if isinstance(x, jax.core.Tracer):
        _first("", x)  # raises, saying why
    _ARRAYS.add(type(x))
    return True


class Leaves:
    """A run's leaves, in its layout's order (by name), from the values of its first call."""

    def __init__(self, values: dict[str, Any], step: int | None) -> None:
        if step is not None and STEP in values:
            raise TypeError(f"jhw.log: {STEP}= is the row's step; name the value otherwise.")
        firsts = {name: _first(name, x) for name, x in values.items()}
        if step is not None:
            firsts[STEP] = (np.asarray(np.int64(step)), True)
        self.names = tuple(sorted(firsts))  # the order a dict's leaves have (`Layout.treedef`)
        self.leaves = tuple(
            _Leaf(n, tuple(firsts[n][0].shape), np_dtype(firsts[n][0].dtype.name), firsts[n][1])
            for n in self.names
        )
        self.given = frozenset(values)  # the names each call gives (``step`` aside)
        self.step_index = self.names.index(STEP) if step is not None else None
        #: (index, leaf) of the leaves the calls give (``step`` aside).
        self.valued = tuple((i, x) for i, x in enumerate(self.leaves) if i != self.step_index)
        self.row_nbytes = sum(math.prod(leaf.shape) * leaf.dtype.itemsize for leaf in self.leaves)

    def check_names(self, values: dict[str, Any]) -> None:
        """Raise if a call gives other names than the first call did."""
        given = set(values) | ({STEP} if self.step_index is not None else set())
        raise TypeError(
            f"jhw.log: this run logs {list(self.names)} each call, got {sorted(given)}; log "
            "the same names every call (a new block starts a new run)."
        )


def _first(name: str, x: Any) -> tuple[Any, bool]:
    """A first call's value as something with a shape and dtype, and whether its arrays live
    in host memory (a jax.Array on the CPU)."""
    if isinstance(x, jax.core.Tracer):
        raise TypeError(
            "jhw.log is called from Python, once per step of a Python loop, with the values a "
            "jitted step returned; inside jit it sees tracers. Return the value from the "
            "jitted step and log it outside, or record it with jhw.while_loop / jhw.scan."
        )
    if isinstance(x, jax.Array):
        if _kind(np.dtype(x.dtype)) is None:
            raise _not_numbers(name, f"an array of {x.dtype}")
        # jaxlib ships no stub for its Device, so jax's annotations name an unresolved type.
        on_cpu = all(d.platform == "cpu" for d in x.sharding.device_set)  # type: ignore[attr-defined]
        return x, on_cpu
    return _as_numbers(name, x), jax.default_backend() == "cpu"


def _as_numbers(name: str, x: Any) -> np.ndarray:
    """``x`` as a numpy array of numbers, or a TypeError that says what to log instead."""
    if isinstance(x, jax.core.Tracer):
        _first(name, x)  # raises
    if isinstance(x, dict):
        raise _not_numbers(name, "a dict", f"log its entries by name: jhw.log(**{name})")
    if x is None:
        raise _not_numbers(name, "None", "for a value missing at this step log float('nan')")
    if isinstance(x, (str, bytes)):
        raise _not_numbers(name, f"a {type(x).__name__} ({x!r:.40})")
    try:
        a = np.asarray(x)
    except (TypeError, ValueError) as e:  # ragged lists and the like
        raise _not_numbers(name, f"a {type(x).__name__} numpy cannot make an array of") from e
    if _kind(a.dtype) is None:
        raise _not_numbers(name, f"a {type(x).__name__} that makes an array of {a.dtype}")
    return a


def _not_numbers(name: str, what: str, hint: str = "") -> TypeError:
    return TypeError(
        f"jhw.log: {name} is {what}{'; ' + hint if hint else ''}. jhw.log takes numbers or "
        "arrays of numbers (jax or numpy), one per name."
    )


class Batch:
    """Rows of a run not handed to the worker yet: a column per leaf, ``capacity`` rows at
    most, and the device copies of values not copied at the call (fetched by `columns`)."""

    __slots__ = ("capacity", "cols", "copies", "n")

    def __init__(self, leaves: Leaves, rows: int) -> None:
        self.capacity = max(1, min(rows, BATCH_BYTES // max(1, leaves.row_nbytes)))
        self.cols = [np.empty((self.capacity, *leaf.shape), leaf.dtype) for leaf in leaves.leaves]
        self.copies: list[tuple[int, int, jax.Array]] = []  # (row, leaf, device copy)
        self.n = 0

    def add(self, leaves: Leaves, values: dict[str, Any], step: int) -> None:
        """Add a call's row (``step``: its step, if the run keeps one). Raises, adding nothing,
        for a call that does not fit the run (other names, shapes, or a value it would
        change)."""
        if values.keys() != leaves.given:
            leaves.check_names(values)
        k, cols = self.n, self.cols
        copies = None
        for i, leaf in leaves.valued:
            col = cols[i]
            x = values[leaf.name]
            t = type(x)
            if t is float and leaf.scalar and leaf.kind >= _FLOAT:  # the most common value
                col[k] = x
            elif t in _ARRAYS or _is_array(x):
                check = x.dtype != leaf.dtype and leaf.check_dtype(x.dtype)
                if x.shape != leaf.shape:
                    leaf.check_shape(x.shape)
                if check:  # integers that may not fit: fetched (waited for) to be checked
                    col[k] = leaf.fitting(np.asarray(x))
                elif leaf.host and x.is_ready():
                    col[k] = np.asarray(x)  # computed, in host memory: copied now
                else:
                    if copies is None:
                        copies = []
                    copies.append((k, i, _device_copy(x)))
            else:
                try:
                    col[k] = leaf.take(x)
                except OverflowError as e:  # a Python int beyond the leaf's integer type
                    raise leaf.does_not_fit(x) from e
        if leaves.step_index is not None:
            cols[leaves.step_index][k] = step
        if copies is not None:
            self.copies += copies
        self.n = k + 1

    def columns(self) -> list[np.ndarray]:
        """The rows as one array per leaf, the device copies fetched in (on the worker: the
        fetch waits until the device has made them)."""
        if self.copies:
            fetched = jax.device_get([c for _, _, c in self.copies])
            for (k, i, _), value in zip(self.copies, fetched, strict=True):
                self.cols[i][k] = value
            self.copies = []
        return [col[: self.n] for col in self.cols]
