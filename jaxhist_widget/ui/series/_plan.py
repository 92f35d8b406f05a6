"""What a `LivePlot` draws of one run: its options, read against the run's record (`plan`), as
the run's series (`Spec`).

Numpy only, no widgets. ``fields=``, ``vectors=`` and ``paths=`` are checked when the plot is
made (`._choice`); what they name is only known when a run's first rows arrive (its leaves,
their shapes, its vmap lanes). `plan` then turns them into the run's series and, for what cannot
be drawn as asked (a misspelt field, a path of a 3-component leaf, 50 components asked as
lines), a note the plot shows under its charts. A note is never an error: the computation
succeeded and its rows are all recorded.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass

import numpy as np

from ..._wire import Layout
from ..look import shown_text
from ..reduce import row_quantiles
from ._choice import PathEntry, PlotChoice, VectorChoice, path_title

__all__ = ["Plan", "Spec", "component_label", "plan"]

_NORM = re.compile(r"^\|(.+)\|$")
_COMPONENT = re.compile(r"^(.+)\[([\d,\s]+)\]$")


@dataclass(frozen=True)
class Spec:
    """One plotted series of a run: a scalar leaf, one component, a vector leaf's norm or median
    (drawn over its band or heatmap: `under`), or a path (`xy`: its x and y series)."""

    label: str
    leaf: int
    kind: str  # "scalar" | "norm" | "component" | "median" | "path"
    index: int = 0  # flat component index for kind == "component"
    chart: str = ""  # the chart it is drawn on, when not the one titled with its label
    under: str = ""  # what a median is drawn over: "band" | "heatmap"
    xy: tuple[Spec, Spec] | None = None  # a path's x and y series

    @property
    def key(self) -> str:
        """The chart it is drawn on (a vector's components and median: the leaf's name)."""
        return self.chart or self.label

    def values(self, rows: list[np.ndarray]) -> np.ndarray:
        """This series' float64 values of ``rows`` (one array per leaf, as `Run` hands out);
        for a path, ``(rows, 2)``: x and y."""
        if self.xy is not None:
            x, y = self.xy
            return np.stack([x.values(rows), y.values(rows)], axis=1)
        if self.kind in ("scalar", "component"):
            # (one column converted, not the leaf: a sweep's band reads every lane's rows)
            new = rows[self.leaf]
            return new.reshape(len(new), -1)[:, self.index].astype(np.float64)
        if self.kind == "median":  # NaN where a component is: the panel flags it as diverged
            values = self.components(rows)
            (median,) = row_quantiles(values, (50.0,))
            return np.where(np.isfinite(values).all(axis=1), median, np.nan)
        return np.linalg.norm(self.components(rows), axis=1)

    def lane_values(self, block: list[np.ndarray]) -> np.ndarray:
        """This series' values of a block of lanes (`Run.block`: one ``(lanes, rows, *shape)``
        array per leaf) as ``(rows, lanes)``, C-ordered: a scalar or a component in its own
        float width (float32 stays float32), a norm or a median in float64."""
        if self.kind in ("scalar", "component"):
            leaf = block[self.leaf]
            lanes, rows = leaf.shape[:2]
            column = leaf.reshape(lanes, rows, -1)[:, :, self.index]
            dtype = np.result_type(column.dtype, np.float32)
            return np.ascontiguousarray(column.T, dtype=dtype)
        leaf = block[self.leaf]  # (a norm or a median reads its own leaf only)
        lanes, rows = leaf.shape[:2]
        flat = [*block[: self.leaf], leaf.reshape(lanes * rows, *leaf.shape[2:])]
        return np.ascontiguousarray(self.values(flat).reshape(lanes, rows).T)

    def components(self, rows: list[np.ndarray]) -> np.ndarray:
        """Every value of this series' leaf in ``rows``, flat: float64 ``(rows, components)``."""
        new = rows[self.leaf]
        return new.reshape(len(new), -1).astype(np.float64, copy=False)


@dataclass(frozen=True)
class Plan:
    """A run's series, in legend order, and the notes on what is not drawn as asked."""

    specs: tuple[Spec, ...]
    notes: tuple[str, ...] = ()


def plan(
    layout: Layout,
    choice: PlotChoice,
    lanes: int | None,
    counters: Collection[int] | None = None,
) -> Plan:
    """The series to draw of a run of ``layout`` with ``lanes`` vmap lanes (None: unbatched);
    ``counters``: the leaves that count the steps drawn, left out by default (None: the
    layout's `Layout.step_counters`).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> record = SimpleNamespace(names=("loss", "x"), shapes=((), (50,)), step_counters=())
    >>> p = plan(record, PlotChoice(fields=("loss", "x", "lsos")), None)
    >>> [(s.label, s.key, s.under) for s in p.specs]
    [('loss', 'loss', ''), ('x median', 'x', 'band')]
    >>> p.notes[0][:40]
    "fields: no field 'lsos' in this run's re"
    """
    # Drawn as shown (`..look.shown_text`): a name is any str; the entries are read alike.
    names, shapes = tuple(map(shown_text, layout.names)), layout.shapes
    where = {n: i for i, n in enumerate(names)}
    specs: list[Spec] = []
    notes: list[str] = []
    counted = layout.step_counters if counters is None else counters
    order = getattr(layout, "order", ()) or range(len(names))  # (as written: `Layout.order`)
    fields = choice.fields if choice.fields is not None else _default_fields(names, counted, order)
    for f in fields:
        f = shown_text(f)
        if f in where:
            specs += _leaf(f, where[f], shapes[where[f]], choice.vectors, lanes, notes)
            continue
        one, why = _named(f, names, shapes)
        if one is not None:
            specs.append(one)
        else:
            notes.append(f"fields: {why}")
    # A misspelt leaf in vectors={...} would otherwise leave its leaf "auto" without a word.
    for key, mode in choice.vectors.per_leaf.items():
        if key not in where:
            notes.append(f"vectors: {_no_leaf(key, names)}; {{{key!r}: {mode!r}}} applies to none.")
    titles = set()
    for entry in choice.paths:
        if isinstance(entry, str):
            entry = shown_text(entry)
        else:  # a pair (`check_paths`)
            entry = (shown_text(entry[0]), shown_text(entry[1]))
        path, why = _path(entry, names, shapes)
        if path is None:
            notes.append(f"paths: {why}")
        elif path.label not in titles:
            titles.add(path.label)
            specs.append(path)
    return Plan(tuple(specs), tuple(notes))


def _default_fields(
    names: tuple[str, ...], counted: Collection[int], order: Iterable[int]
) -> tuple[str, ...]:
    """Every leaf of ``names`` but the step counters ``counted`` (the step axis shows them),
    unless that is all, in ``order`` (the leaves as the record was written, not JAX's sorted
    keys: the headline metric, written first, is the first chart)."""
    counters = set(counted)
    written = [names[i] for i in order]
    rest = tuple(n for i, n in zip(order, written, strict=True) if i not in counters)
    return rest or tuple(written)


def component_label(name: str, shape: tuple[int, ...], j: int) -> str:
    """``name[i]`` (``name[i,k]`` for a matrix) of flat component ``j``."""
    return f"{name}[{','.join(map(str, np.unravel_index(j, shape)))}]"


def _leaf(
    name: str,
    i: int,
    shape: tuple[int, ...],
    vectors: VectorChoice,
    lanes: int | None,
    notes: list[str],
) -> list[Spec]:
    """The series of leaf ``name`` named bare (or plotted by default)."""
    if shape == ():
        return [Spec(name, i, "scalar")]
    size = math.prod(shape)
    if size == 0:
        notes.append(f"{name}: no values (shape {shape}); nothing to draw.")
        return []
    mode, note = vectors.drawn(name, size, lanes)
    if note:
        notes.append(note)
    if mode == "lines":
        return [
            Spec(component_label(name, shape, j), i, "component", j, chart=name)
            for j in range(size)
        ]
    # A band per lane would cover the chart: under vmap each lane draws its median line only.
    under = "" if mode == "band" and lanes is not None else mode
    return [Spec(f"{name} median", i, "median", chart=name, under=under)]


def _named(f: str, names: tuple[str, ...], shapes: tuple[tuple[int, ...], ...]):
    """The one series an entry other than a bare leaf names (``|x|``, ``x[3]``), or None and
    why not."""
    where = {n: i for i, n in enumerate(names)}
    m_norm, m_comp = _NORM.match(f), _COMPONENT.match(f)
    if m_norm and m_norm.group(1) in where:
        return Spec(f, where[m_norm.group(1)], "norm"), ""
    if m_comp and m_comp.group(1) in where:
        leaf = m_comp.group(1)
        i, shape = where[leaf], shapes[where[leaf]]
        try:
            idx = tuple(int(k) for k in m_comp.group(2).split(","))
            j = int(np.ravel_multi_index(idx, shape)) if len(idx) > 1 else idx[0]
            if not 0 <= j < math.prod(shape) or shape == ():
                raise ValueError
        except ValueError:
            return None, f"no component {f!r} of {leaf!r} (shape {shape}); not drawn."
        return Spec(f, i, "component", j, chart=leaf), ""
    return None, (
        f"{_no_leaf(f, names)} (also '|name|' for a norm, 'name[i]' for a component); not drawn."
    )


def _no_leaf(f: str, names: tuple[str, ...]) -> str:
    """What a name that is no leaf of the run is told: the leaves there are."""
    return f"no field {f!r} in this run's record; its leaves are {', '.join(map(repr, names))}"


def _series(f: str, names: tuple[str, ...], shapes: tuple[tuple[int, ...], ...]):
    """The one series ``f`` names for a path's axis (a scalar leaf, a one-value leaf, a norm or
    a component), or None and why not."""
    if f in names:
        i = names.index(f)
        shape = shapes[i]
        if shape == ():
            return Spec(f, i, "scalar"), ""
        if math.prod(shape) == 1:
            return Spec(f, i, "component", 0), ""
        return None, (
            f"{f!r} has {math.prod(shape)} components (shape {shape}); name one, e.g. "
            f"'{component_label(f, shape, 0)}'."
        )
    return _named(f, names, shapes)


def _path(entry: PathEntry, names: tuple[str, ...], shapes: tuple[tuple[int, ...], ...]):
    """The path an entry names, or None and why not."""
    if isinstance(entry, str):
        if entry not in names:
            return None, _named(entry, names, shapes)[1]
        i = names.index(entry)
        shape = shapes[i]
        if math.prod(shape) != 2:
            return None, (
                f"{entry!r} has shape {shape}, not two components; name the two series, "
                f"e.g. paths=[('{entry}[0]', '{entry}[1]')] (or ('a', 'b') for two leaves)."
            )
        x = Spec(component_label(entry, shape, 0), i, "component", 0)
        y = Spec(component_label(entry, shape, 1), i, "component", 1)
    else:
        (x, why_x), (y, why_y) = (_series(f, names, shapes) for f in entry)
        if x is None or y is None:
            return None, f"{entry!r}: {why_x or why_y}"
    title = path_title(x.label, y.label)
    return Spec(title, -1, "path", xy=(x, y)), ""
