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
    "BEST",
    "LABEL_PARAM",
    "ParamGrid",
    "ParamPoints",
    "check_lane_values",
    "check_params_best",
    "check_params_field",
    "is_grid",
    "numeric_labels",
    "param_points",
    "params_field_note",
    "ranked_fields",
    "value_labels",
]

#: The parameter of a sweep whose ``lane_labels`` are numbers (``lane_labels=rates``).
LABEL_PARAM = "lane label"
#: The parameter of ``lane_values`` given as one sequence, not a dict.
VALUE_PARAM = "value"
#: What a lane's best value of the ranked field is (``LivePlot(params_best=...)``): its lowest
#: (a loss, an error) or its highest (an accuracy, a reward).
BEST = ("min", "max")


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


def check_params_field(value: Any, fields: Any = None) -> str | None:
    """``LivePlot(params_field=...)`` checked: None (a loss-like plotted field, else the first:
    `._goal.default_field`) or the name of a
    plotted field (a leaf, ``"|x|"``, ``"x[3]"``); when ``fields=`` names what is plotted
    (``fields``, checked), one of them. A TypeError / ValueError naming the fix else.

    >>> check_params_field("acc", ("loss", "acc")), check_params_field(None)
    ('acc', None)
    """
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise TypeError(
            "params_field must be the name of a plotted field (a str such as 'acc') or None "
            f"(a loss-like plotted field), got {value!r}."
        )
    # (a vector leaf's component "x[0]" or median "x median" is plotted with fields=["x"])
    named = value in (fields or ()) or any(
        value.startswith((f"{f}[", f"{f} ")) for f in fields or ()
    )
    if fields is not None and isinstance(fields, (list, tuple)) and not named:
        plotted = ", ".join(map(repr, fields))
        raise ValueError(
            f"params_field={value!r} is not plotted: fields= plots {plotted}; rank by one of "
            f"them, or add {value!r} to fields=."
        )
    return value


def check_params_best(value: Any) -> str | None:
    """``LivePlot(params_best=...)`` checked: ``"min"`` (a lane's best value of the ranked field
    is its lowest: a loss), ``"max"`` (its highest: an accuracy) or None (read from the field's
    name: ``"max"`` for an accuracy-like one, `._goal.best_of`).

    >>> check_params_best("max"), check_params_best(None)
    ('max', None)
    """
    if value is not None and value not in BEST:
        raise ValueError(
            f"params_best must be 'min' (lower is better: a loss), 'max' (higher is better: "
            f"an accuracy) or None (by the field's name), got {value!r}."
        )
    return None if value is None else str(value)


def params_field_note(field: str, plotted: Sequence[str]) -> str:
    """The note under the charts when ``params_field`` names no plotted field of the sweep."""
    return (
        f"params_field={field!r} is not plotted, so the hyperparameter chart ranks none: choose "
        f"one of {', '.join(map(repr, plotted))} (live.params_field = ...), or plot it "
        f"(fields=[..., {field!r}])."
    )


def ranked_fields(d: Any) -> list[str]:
    """The fields of ``d`` (a `RunDrawing`) a hyperparameter chart can rank: every plotted
    series but a path, by label."""
    return [s.label for s in d.specs if s.xy is None]


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
    """One hyperparameter chart's points: each lane's ``last`` and ``best`` finite value of
    ``field`` (its best: its lowest where ``best_is`` is ``"min"``, its highest for ``"max"``)
    against its ``param`` value ``x``, in ascending ``x`` (NaN: none yet),
    and what the chart's y range reads to leave out the lanes that ran away (each lane's
    largest, smallest and smallest positive value, whether it went NaN or ±inf:
    `..reduce.bulk_range`)."""

    param: str
    field: str
    x: np.ndarray
    last: np.ndarray
    best: np.ndarray
    lanes: np.ndarray  #: the run's lane index of each point
    hi: np.ndarray
    lo_pos: np.ndarray
    gone: np.ndarray
    best_is: str = "min"  #: ``"min"`` or ``"max"`` (`BEST`)
    lo: np.ndarray | None = None  #: each lane's smallest finite value (None: ``best``)
    #: Whether its points are joined by a line: the one parameter swept, each lane's value its
    #: own (a line through lanes that share a value, or that differ in another parameter too,
    #: is a sawtooth that means nothing).
    joined: bool = True
    #: The point of the lane the goal names best (`._goal.Goal`: marked), or None.
    best_at: int | None = None

    @property
    def title(self) -> str:
        """The chart's title (its key in the grid): ``loss vs lr``."""
        return f"{self.field} vs {self.param}"


@dataclass(frozen=True)
class ParamGrid:
    """A sweep of two parameters over a grid (every pair of their values, one lane each): the
    lanes' last and best value of ``field`` per cell (`cells`), as one heatmap chart. Per lane
    (in lane order): its values ``a`` and ``b`` of ``params``, ``last``, ``best`` (as
    `ParamPoints`), and whether it ``gone`` (NaN or ±inf: diverged); ``best_at``: the lane the
    goal names best."""

    params: tuple[str, str]
    field: str
    a: np.ndarray
    b: np.ndarray
    last: np.ndarray
    best: np.ndarray
    lanes: np.ndarray
    gone: np.ndarray
    best_is: str = "min"
    best_at: int | None = None

    @property
    def title(self) -> str:
        """The chart's title (its key in the grid): ``loss vs lr × wd``."""
        return f"{self.field} vs {self.params[0]} × {self.params[1]}"

    def cells(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The grid: the first parameter's values (columns, ascending), the second's (rows),
        and each cell's lane (an index into the per-lane arrays): ``(rows, columns)``."""
        xs, col = np.unique(self.a, return_inverse=True)
        ys, row = np.unique(self.b, return_inverse=True)
        at = np.empty((len(ys), len(xs)), np.int64)
        at[row, col] = np.arange(len(self.a))
        return xs, ys, at


def is_grid(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two parameters' values per lane form a grid: every pair of their values once.

    >>> lr, wd = np.repeat([1e-3, 1e-2], 3), np.tile([0.0, 0.1, 0.2], 2)
    >>> is_grid(lr, wd), is_grid(lr, wd[::-1] * 0 + 1), is_grid(lr[:5], wd[:5])
    (True, False, False)
    """
    pairs = {(x, y) for x, y in zip(a.tolist(), b.tolist(), strict=True)}
    return len(pairs) == len(a) == len(set(a.tolist())) * len(set(b.tolist()))


def param_points(d: Any, values: Mapping[str, np.ndarray]) -> list[ParamPoints | ParamGrid]:
    """The hyperparameter charts of the `RunDrawing` ``d``, each lane's last and best value of
    the field of ``d``'s goal (`._goal.Goal`: its best the lowest or the highest) against
    ``values`` (one value per lane, by parameter): one `ParamGrid` for two parameters that
    form a grid, else a `ParamPoints` per parameter (joined by a line only for one parameter
    whose lanes' values are their own); [] when ``d`` is no sweep of that many lanes, or plots
    no such field."""
    if d.run.lanes is None or not values or not d.specs:
        return []
    lanes = len(d.run.counts)
    if any(len(v) != lanes for v in values.values()):
        return []
    ranked = d.goal.resolve(d.specs)
    spread = d.spreads()[ranked[0]] if ranked is not None else None
    if ranked is None or spread is None:
        return []
    i, best = ranked
    label = d.specs[i].label
    ids = np.asarray(spread.ids, np.int64)
    extreme = spread.hi if best == "max" else spread.lo
    tops = np.where(np.isfinite(extreme), extreme, np.nan)
    named = _best_lane(d, spread, best)
    if len(values) == 2:
        (a, col_a), (b, col_b) = values.items()
        if is_grid(col_a[ids], col_b[ids]):
            at = int(np.flatnonzero(ids == named)[0]) if named in ids else None
            cells = (col_a[ids], col_b[ids], spread.last, tops, ids, spread.gone)
            return [ParamGrid((a, b), label, *cells, best, at)]  # type: ignore[arg-type]
    out: list[ParamPoints | ParamGrid] = []
    for name, column in values.items():
        order = np.argsort(column[ids], kind="stable")
        lane = ids[order]
        tail = (spread.hi[order], spread.lo_pos[order], spread.gone[order])
        # (with another parameter swept too, its neighbours in this one differ in that one)
        joined = len(values) == 1 and len(set(column[lane].tolist())) == len(lane)
        at = int(np.flatnonzero(lane == named)[0]) if named in lane else None
        head = (name, label, column[lane], spread.last[order], tops[order], lane)
        out.append(ParamPoints(*head, *tail, best, spread.lo[order], joined, at))
    return out


def _best_lane(d: Any, spread: Any, best: str) -> int | None:
    """The lane the plot names best (its role: `._lanes.ranked_lanes`), else (``lanes=`` names
    the lanes drawn) the best last value of ``spread``'s lanes that did not go NaN or ±inf."""
    named = [k for k, role in d.lane_roles.items() if "best" in role.split(", ")]
    if named:
        return int(named[0])
    ok = np.isfinite(spread.last) & ~spread.gone
    if not ok.any():
        return None
    values = np.where(ok, spread.last if best == "min" else -spread.last, np.inf)
    return int(spread.ids[int(np.argmin(values))])
