"""Run names: the name a run is given where it starts, and the short call a runner describes.

Host runtime, numpy only. One concept names runs everywhere: a run takes its name when it
starts, from the sinks it streams to (`Sink.named`, a runner's ``name=``, `Sink.name`, then a
name made up from the call or the cell), and keeps it in `Run.name`; every sink shows or files
that one name (a `LivePlot`'s run list, a `Store`'s ``runs.name``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from ._protocol import HubSink

__all__ = ["MAX_CALL_CHARS", "call_name", "check_name", "run_name"]

#: A name made up from a call (`call_name`) is cut to this many characters.
MAX_CALL_CHARS = 48


def check_name(name: object) -> str:
    """``name`` if it is a non-empty str, else a TypeError / ValueError saying what a name is."""
    if not isinstance(name, str):
        raise TypeError(f"a run's name is a str (e.g. name='adam lr=1e-3'), got {name!r}.")
    if not name.strip():
        raise ValueError("a run's name must not be empty; pass e.g. name='adam', or no name.")
    return name


def call_name(fn: Callable[..., Any], args: Sequence[Any], kwargs: Mapping[str, Any]) -> str:
    """A short name for the run of ``fn(*args, **kwargs)``: its name and its arguments, each in a
    few characters (a number as itself, an array as its dtype and shape), cut to
    `MAX_CALL_CHARS`.

    >>> import numpy as np
    >>> def solve(x0, lr=0.1): ...
    >>> call_name(solve, [np.float32(3.0)], {"lr": 1e-3})
    'solve(3, lr=0.001)'
    >>> call_name(solve, [np.zeros((8, 2))], {})
    'solve(f64[8,2])'
    """
    name = getattr(fn, "__name__", None) or type(fn).__name__
    parts = [_short(a) for a in args] + [f"{k}={_short(v)}" for k, v in kwargs.items()]
    text = f"{name}({', '.join(parts)})"
    return text if len(text) <= MAX_CALL_CHARS else text[: MAX_CALL_CHARS - 2] + "…)"


def _short(value: Any) -> str:
    """A few characters for one argument."""
    if isinstance(value, (bool, str)):
        text = repr(value)
        return text if len(text) <= 16 else text[:15] + "…"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _number(value)
    if callable(value):
        return getattr(value, "__name__", type(value).__name__).replace("<lambda>", "λ")
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if shape is not None and dtype is not None:
        if tuple(shape) == ():
            try:
                return _number(np.asarray(value).item())
            except Exception:  # a tracer or an abstract value: no number to show
                pass
        kind = np.dtype(dtype).kind if _is_numpy_dtype(dtype) else ""
        short = {"f": "f", "i": "i", "u": "u", "b": "bool", "c": "c"}.get(kind, "")
        bits = "" if short in ("bool", "") else str(8 * np.dtype(dtype).itemsize)
        return f"{short or str(dtype)}{bits}[{','.join(map(str, shape))}]"
    if isinstance(value, (list, tuple)):
        return "[…]" if isinstance(value, list) else "(…)"
    if isinstance(value, dict):
        return "{…}"
    return type(value).__name__


def _number(v: int | float | complex) -> str:
    if isinstance(v, float) and not math.isfinite(v):
        return repr(v)
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def _is_numpy_dtype(dtype: Any) -> bool:
    try:
        np.dtype(dtype)
    except TypeError:
        return False
    return True


def run_name(sinks: Iterable[HubSink]) -> tuple[str | None, bool]:
    """The name of a run that starts streaming to ``sinks`` now, and whether it was given.

    In this order: the innermost named block (`Sink.named`, a runner's ``name=``) of any sink;
    a sink's `Sink.name`; a name made up by a runner or a cell (its call, ``cell 7``). None when
    nothing names it (a plot then calls it ``run N``).
    """
    sinks = list(sinks)
    offers = [sink._run_names() for sink in sinks]
    for rank in range(3):
        for offer in offers:
            if offer[rank] is not None:
                return offer[rank], rank < 2
    return None, False
