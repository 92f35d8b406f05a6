"""What a `LivePlot` draws of a run: the plotted series (`Spec`) and, per lane, their points.

Layer 3 (widget) by role, numpy only. `resolve` turns ``LivePlot(fields=...)`` into the series
of a run's layout (a scalar leaf, a vector leaf's norm, or one component). `LaneSeries` holds
one series of one vmap lane as it grows: the values of the new rows are reduced once, as they
arrive, into min/max buckets (`jaxhist_widget.decimate.MinMaxBuckets`), so an update costs the
new rows and the point budget, not the length of the run.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ._decimate import MinMaxBuckets

if TYPE_CHECKING:
    from .._host import Run

__all__ = ["MAX_COMPONENTS", "LaneSeries", "Spec", "check_fields", "resolve"]

#: Components a single ``fields=`` entry may expand to (a vector leaf named bare).
MAX_COMPONENTS = 32


@dataclass(frozen=True)
class Spec:
    """One plotted series of a run: a scalar leaf, a vector leaf's norm, or one component."""

    label: str
    leaf: int
    kind: str  # "scalar" | "norm" | "component"
    index: int = 0  # flat component index for kind == "component"

    def values(self, rows: list[np.ndarray]) -> np.ndarray:
        """This series' float64 values of ``rows`` (one array per leaf, as `Run` hands out)."""
        new = rows[self.leaf]
        flat = new.reshape(len(new), -1)
        if self.kind == "scalar":
            return flat[:, 0].astype(np.float64)
        if self.kind == "component":
            return flat[:, self.index].astype(np.float64)
        return np.linalg.norm(flat.astype(np.float64), axis=1)


class LaneSeries:
    """One series of one lane as it grows: its min/max buckets and the extent of its values.

    Each value is reduced once, when it arrives (`extend`); `points` then costs the point
    budget, not the length of the run.
    """

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._line = MinMaxBuckets(budget)
        # Extent of the finite values so far: min, max, smallest positive (for a log axis).
        self._lo, self._hi, self._lo_pos = math.inf, -math.inf, math.inf

    @property
    def size(self) -> int:
        """Rows received so far."""
        return self._line.n

    @property
    def last(self) -> float:
        """The latest value (NaN before the first row)."""
        return self._line.last

    @property
    def work(self) -> int:
        """Values reduced and buckets touched so far (see `MinMaxBuckets.work`)."""
        return self._line.work

    def extend(self, values: np.ndarray) -> None:
        """Append the values of the new rows."""
        lo, hi = self._line.extend(values)
        self._lo, self._hi = min(self._lo, lo), max(self._hi, hi)
        if lo > 0:  # (a loss) the smallest value is the smallest positive one
            self._lo_pos = min(self._lo_pos, lo)
        elif hi > 0:  # a sign change: one more pass, over the new values only
            self._lo_pos = min(self._lo_pos, float(values[(values > 0) & (values <= hi)].min()))

    def points(self, x0: int) -> tuple[np.ndarray, np.ndarray, tuple[float, float, float]]:
        """The points to draw (int64 steps from ``x0``, float64 values, NaN at gaps, never
        ending in NaN) and the extent (min, max, smallest positive) of the finite values,
        ``inf`` / ``-inf`` when there is none."""
        steps, y = self._line.points()
        x, y = finite_tail(steps + x0 if x0 else steps, y)
        return x, y, (self._lo, self._hi, self._lo_pos)


def finite_tail(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Drop trailing non-finite points: bqplot puts a line's label at its last point, and a NaN
    there is an invalid SVG transform (a console error per update). Gaps inside stay."""
    finite = np.flatnonzero(np.isfinite(y))
    end = finite[-1] + 1 if finite.size else 0
    return x[:end], y[:end]


def check_fields(fields: Any) -> tuple[str, ...] | None:
    """Validate ``LivePlot(fields=...)``: None, a str, or a non-empty sequence of str."""
    if fields is None:
        return None
    if isinstance(fields, str):
        return (fields,)
    try:
        items = tuple(fields)
    except TypeError:
        raise TypeError(f"fields must be None, a str or a list of str, got {fields!r}.") from None
    if not items or not all(isinstance(f, str) for f in items):
        raise TypeError(f"fields must be None, a str or a non-empty list of str, got {fields!r}.")
    return items


_NORM = re.compile(r"^\|(.+)\|$")
_COMPONENT = re.compile(r"^(.+)\[([\d,\s]+)\]$")


def resolve(run: Run, fields: tuple[str, ...] | None) -> list[Spec]:
    """The series to plot for ``run``'s layout; ValueError naming the choices for a bad entry."""
    names, shapes = run.layout.names, run.layout.shapes
    where = {n: i for i, n in enumerate(names)}
    if fields is None:
        return [
            Spec(n, i, "scalar") if s == () else Spec(f"|{n}|", i, "norm")
            for i, (n, s) in enumerate(zip(names, shapes, strict=True))
        ]
    specs = []
    for f in fields:
        if f in where:
            i, shape = where[f], shapes[where[f]]
            size = math.prod(shape)
            if shape == ():
                specs.append(Spec(f, i, "scalar"))
            elif size <= MAX_COMPONENTS:
                for j in range(size):
                    idx = ",".join(map(str, np.unravel_index(j, shape)))
                    specs.append(Spec(f"{f}[{idx}]", i, "component", j))
            else:
                raise ValueError(
                    f"field {f!r} has {size} components (shape {shape}), more than "
                    f"{MAX_COMPONENTS} lines; plot its norm '|{f}|' or pick components like "
                    f"'{f}[0]'."
                )
            continue
        m_norm, m_comp = _NORM.match(f), _COMPONENT.match(f)
        if m_norm and m_norm.group(1) in where:
            specs.append(Spec(f, where[m_norm.group(1)], "norm"))
            continue
        if m_comp and m_comp.group(1) in where:
            i, shape = where[m_comp.group(1)], shapes[where[m_comp.group(1)]]
            try:
                idx = tuple(int(k) for k in m_comp.group(2).split(","))
                j = int(np.ravel_multi_index(idx, shape)) if len(idx) > 1 else idx[0]
                if not 0 <= j < math.prod(shape) or shape == ():
                    raise ValueError
            except ValueError:
                raise ValueError(
                    f"field {f!r}: no such component of {m_comp.group(1)!r} (shape {shape})."
                ) from None
            specs.append(Spec(f, i, "component", j))
            continue
        choices = ", ".join(repr(n) for n in names)
        raise ValueError(
            f"LivePlot(fields=...): no field {f!r} in this run's record; its leaves are "
            f"{choices} (also '|name|' for a norm, 'name[i]' for a component)."
        )
    return specs
