"""What a `LivePlot` is asked to draw: the ``fields=``, ``vectors=`` and ``paths=`` options,
checked (`PlotChoice`).

No widgets. A vector leaf (any leaf with more than one value, named bare in ``fields=`` or
plotted by default) is drawn as

- ``"lines"``: one line per component, on one chart (per-class losses, a 2-D iterate);
- ``"band"``: its median over the components as a line, over a band of the middle half
  (quartiles) and one of the whole range (min–max), per step (a 50-component field);
- ``"heatmap"``: its median line over a histogram of the components per step (bins of values
  up the chart, one column per group of steps, darker where more components lie).

``"auto"`` (the default) draws lines up to `AUTO_LINES` components (the categorical palette:
every line its own colour) and a band beyond; under ``vmap``, where colour marks the lane and
dash style the component, lines up to `AUTO_LINES_VMAP` components. ``vectors`` may also map
leaf names to modes (``{"weights": "heatmap"}``, the others ``"auto"``).

Under ``vmap`` a band is drawn as one median line per lane (one band per lane would cover the
chart), and a heatmap pools every lane's components.

A path (``paths=``) is a chart of one series against another: the trajectory of an optimizer's
iterate, e.g. ``paths=[("x[0]", "x[1]")]`` or ``paths=["xy"]`` for a 2-component leaf.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..look import LINE_STYLES, PALETTE

__all__ = [
    "AUTO_LINES",
    "AUTO_LINES_VMAP",
    "MAX_LINES",
    "VECTOR_MODES",
    "PathEntry",
    "PlotChoice",
    "VectorChoice",
    "check_fields",
    "check_lanes",
    "check_paths",
    "check_vectors",
    "path_title",
]

#: Values of ``LivePlot(vectors=...)``.
VECTOR_MODES = ("auto", "lines", "band", "heatmap")
#: ``"auto"`` draws a vector of at most this many components as lines (one palette colour each).
AUTO_LINES = len(PALETTE)
#: Under vmap colour tells lanes apart and dash style components: as many as there are styles.
AUTO_LINES_VMAP = len(LINE_STYLES)
#: Most lines one vector leaf is drawn as (``vectors="lines"``); a larger one is drawn as a band.
MAX_LINES = 32

#: One ``paths=`` entry: a leaf of two components, or the x and y series.
PathEntry = str | tuple[str, str]


@dataclass(frozen=True)
class VectorChoice:
    """``LivePlot(vectors=...)``, checked: a mode for every vector leaf, or per leaf name."""

    default: str = "auto"
    per_leaf: Mapping[str, str] = field(default_factory=dict)

    def mode(self, name: str) -> str:
        """The mode asked for leaf ``name``."""
        return self.per_leaf.get(name, self.default)

    def drawn(self, name: str, size: int, lanes: int | None) -> tuple[str, str]:
        """How leaf ``name`` of ``size`` components is drawn in a run of ``lanes`` (None:
        unbatched): ``"lines"``, ``"band"`` or ``"heatmap"``, and a note when that is not
        what was asked (empty otherwise)."""
        asked = self.mode(name)
        if asked == "auto":
            limit = AUTO_LINES if lanes is None else AUTO_LINES_VMAP
            return ("lines" if size <= limit else "band"), ""
        if asked == "lines" and size > MAX_LINES:
            return "band", (
                f"{name}: {size} components are more than {MAX_LINES} lines; drawn as a band "
                f"(median, quartiles, min–max). Name components (fields=['{name}[0]', ...]) "
                "for lines."
            )
        if asked == "band" and lanes is not None:
            return "band", (
                f"{name}: under vmap, one median line per lane (a band per lane would cover "
                f"the chart); vectors={{'{name}': 'heatmap'}} pools the lanes' components."
            )
        return asked, ""


@dataclass(frozen=True)
class PlotChoice:
    """The `LivePlot` options that say what to draw, checked."""

    fields: tuple[str, ...] | None = None
    vectors: VectorChoice = field(default_factory=VectorChoice)
    paths: tuple[PathEntry, ...] = ()
    #: The vmap lanes drawn as lines past `MAX_LANES` (indices or labels); None: chosen.
    lanes: tuple[int | str, ...] | None = None


def _modes() -> str:
    return ", ".join(repr(m) for m in VECTOR_MODES)


def check_vectors(vectors: Any) -> VectorChoice:
    """Validate ``LivePlot(vectors=...)``: one of `VECTOR_MODES`, or a mapping of leaf names to
    them (leaves not named are ``"auto"``)."""
    if isinstance(vectors, str):
        if vectors not in VECTOR_MODES:
            raise ValueError(f"vectors must be one of {_modes()}, got {vectors!r}.")
        return VectorChoice(vectors)
    if isinstance(vectors, Mapping):
        for name, mode in vectors.items():
            if not isinstance(name, str):
                raise TypeError(
                    f"vectors={{...}} maps leaf names (str) to modes, got the key {name!r}."
                )
            if mode not in VECTOR_MODES:
                raise ValueError(
                    f"vectors={{{name!r}: {mode!r}}}: the mode must be one of {_modes()}."
                )
        return VectorChoice("auto", dict(vectors))
    raise TypeError(
        f"vectors must be one of {_modes()} or a dict of leaf names to them "
        f"(e.g. {{'weights': 'heatmap'}}), got {vectors!r}."
    )


def check_paths(paths: Any) -> tuple[PathEntry, ...]:
    """Validate ``LivePlot(paths=...)``: None, one entry, or a list of entries, where an entry
    is a leaf of two components (``"xy"``) or a pair of series (``("x[0]", "x[1]")``)."""
    if paths is None:
        return ()
    if isinstance(paths, str):
        return (paths,)
    usage = (
        "paths takes a list of entries, each a leaf of two components ('xy') or the x and y "
        "series as a pair (('x[0]', 'x[1]'), ('w', 'b')); e.g. paths=[('x[0]', 'x[1]')]"
    )
    if not isinstance(paths, Sequence) or not paths:
        raise TypeError(f"{usage}; got {paths!r}.")
    out: list[PathEntry] = []
    for entry in paths:
        if isinstance(entry, str):
            out.append(entry)
        elif (
            isinstance(entry, Sequence)
            and len(entry) == 2
            and all(isinstance(e, str) for e in entry)
        ):
            out.append((entry[0], entry[1]))
        else:
            raise TypeError(f"{usage}; got the entry {entry!r}.")
    return tuple(out)


def path_title(x: str, y: str) -> str:
    """A path chart's title (and key): ``"y vs x"``."""
    return f"{y} vs {x}"


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


def check_lanes(lanes: Any) -> tuple[int | str, ...] | None:
    """Validate ``LivePlot(lanes=...)``: None, or a sequence of lane indices (int) or labels
    (str, of ``lane_labels``)."""
    if lanes is None:
        return None
    if isinstance(lanes, (str, bytes)) or not isinstance(lanes, Sequence):
        raise TypeError(
            "lanes must be a sequence of vmap lane indices or labels, e.g. lanes=[0, 17, 4095] "
            f"or lanes=['lr=1e-3'], got {lanes!r}."
        )
    out = []
    for lane in lanes:
        if isinstance(lane, (bool, np.bool_)) or not isinstance(lane, (numbers.Integral, str)):
            raise TypeError(f"lanes holds lane indices (int) or labels (str), got {lane!r}.")
        out.append(lane if isinstance(lane, str) else int(lane))
    return tuple(out)
