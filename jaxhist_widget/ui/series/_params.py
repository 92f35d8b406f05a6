"""A sweep's swept parameters (``LivePlot(lane_values=...)``, or ``lane_labels=`` given as numbers)
and the hyperparameter view's points: each lane's last and best value of the ranked field
against its parameter (`param_points`), TensorBoard's HParams and W&B's parallel coordinates
for a `vmap` sweep.

Numpy only. The points come from each lane's extent (`._sweep.Spread`: past `MAX_LANES` over
every lane, drawn or not), so they cost one pass over the lanes per update, no read of rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from numbers import Real
from typing import Any

import numpy as np

from ..look import format_value

__all__ = [
    "LABEL_PARAM",
    "ParamPoints",
    "check_lane_values",
    "numeric_labels",
    "param_points",
    "value_labels",
]

#: The parameter of a sweep whose ``lane_labels`` are numbers (``lane_labels=rates``).
LABEL_PARAM = "lane label"
#: The parameter of ``lane_values`` given as one sequence, not a dict.
VALUE_PARAM = "value"


def numeric_labels(labels: Any) -> np.ndarray | None:
    """``labels`` as float64 when they are numbers (a numpy or jax array of numbers, or a
    sequence of them, not bool), else None (str labels, or anything else: checked as labels).

    >>> numeric_labels([1e-3, 1e-2]).tolist(), numeric_labels(["a", "b"])
    ([0.001, 0.01], None)
    """
    if labels is None or isinstance(labels, (str, bytes)):
        return None
    if hasattr(labels, "__array__") and not isinstance(labels, (list, tuple)):
        array = np.asarray(labels)
        if array.dtype.kind in "iuf" and array.ndim == 1:
            return array.astype(np.float64)
        return None
    if isinstance(labels, Sequence) and labels and all(_is_number(v) for v in labels):
        return np.asarray([float(v) for v in labels], np.float64)
    return None


def _is_number(v: Any) -> bool:
    return isinstance(v, (Real, np.number)) and not isinstance(v, (bool, np.bool_))


def check_lane_values(values: Any) -> dict[str, np.ndarray] | None:
    """``LivePlot(lane_values=...)`` checked: None, one sequence of numbers per lane (a
    parameter named ``"value"``), or a dict of them by parameter name (``{"lr": rates}``), each
    as long as the others; a TypeError / ValueError naming the fix for anything else.

    >>> check_lane_values({"lr": [0.1, 0.01]})["lr"].tolist(), check_lane_values(None)
    ([0.1, 0.01], None)
    """
    if values is None:
        return None
    named = dict(values) if isinstance(values, Mapping) else {VALUE_PARAM: values}
    if not named:
        raise ValueError("lane_values is empty: give one number per vmap lane, e.g. rates.")
    out = {}
    for name, column in named.items():
        numbers = numeric_labels(column)
        if not isinstance(name, str) or numbers is None:
            raise TypeError(
                "lane_values must be one number per vmap lane (a numpy or jax array, or a list), "
                f"or a dict of them by parameter name ({{'lr': rates}}), got {name!r}: "
                f"{column!r}."
            )
        out[name] = numbers
    if len({len(v) for v in out.values()}) > 1:
        sizes = {k: len(v) for k, v in out.items()}
        raise ValueError(f"lane_values' parameters have one value per lane each, got {sizes}.")
    return out


def value_labels(values: Mapping[str, np.ndarray]) -> tuple[str, ...]:
    """Each lane's name from its parameters' values: ``lr=0.001`` (``0.001`` for a bare
    sequence), ``lr=0.001, wd=0.1`` for several.

    >>> value_labels({"lr": np.array([1e-3, 0.1])}), value_labels({"value": np.array([2.0])})
    (('lr=0.001', 'lr=0.1'), ('2',))
    """
    names = list(values)
    lanes = len(next(iter(values.values())))
    if names == [VALUE_PARAM]:
        return tuple(format_value(float(v)) for v in values[VALUE_PARAM])
    return tuple(
        ", ".join(f"{k}={format_value(float(values[k][lane]))}" for k in names)
        for lane in range(lanes)
    )


@dataclass(frozen=True)
class ParamPoints:
    """One hyperparameter chart's points: each lane's ``last`` and ``best`` (lowest) finite
    value of ``field`` against its ``param`` value ``x``, in ascending ``x`` (NaN: none yet),
    and what the chart's y range reads to leave out the lanes that ran away (each lane's
    largest and smallest positive value, whether it went NaN or ±inf: `..reduce.bulk_range`)."""

    param: str
    field: str
    x: np.ndarray
    last: np.ndarray
    best: np.ndarray
    lanes: np.ndarray  #: the run's lane index of each point
    hi: np.ndarray
    lo_pos: np.ndarray
    gone: np.ndarray

    @property
    def title(self) -> str:
        """The chart's title (its key in the grid): ``loss vs lr``."""
        return f"{self.field} vs {self.param}"


def param_points(d: Any, values: Mapping[str, np.ndarray]) -> list[ParamPoints]:
    """Per parameter of ``values`` (one value per lane of the `RunDrawing` ``d``), the lanes'
    last and best value of the field the lanes are ranked by (the first plotted one): [] when
    ``d`` is no sweep of that many lanes, or plots no field."""
    if d.run.lanes is None or not values or not d.specs:
        return []
    lanes = len(d.run.counts)
    if any(len(v) != lanes for v in values.values()):
        return []
    field = next((i for i, s in enumerate(d.specs) if s.xy is None), None)
    spread = d.spreads()[field] if field is not None else None
    if spread is None:
        return []
    ids = np.asarray(spread.ids, np.int64)
    out = []
    for name, column in values.items():
        order = np.argsort(column[ids], kind="stable")
        lane = ids[order]
        best = np.where(np.isfinite(spread.lo[order]), spread.lo[order], np.nan)
        tail = (spread.hi[order], spread.lo_pos[order], spread.gone[order])
        label = d.specs[field].label
        out.append(ParamPoints(name, label, column[lane], spread.last[order], best, lane, *tail))
    return out
