"""What a sweep's charts show of every lane, drawn as a line or not: per field, the band of the
lanes per step (`..reduce.BandSeries`) and each lane's extent (`Spread`), from which a chart's
y axis fits the lanes that did not run away (`..reduce.bulk_range`).

Numpy only. Past `MAX_LANES` the bands and the extents are over every lane, read a block of
rows at a time (`ingest_lane_bands`); up to it they are the drawn lanes' own series'. A window of
steps (a zoom, the last N steps) has the extents of its lines.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..reduce import LaneSeries, each, values_extent

__all__ = ["Spread", "ingest_lane_bands", "whole_spreads", "window_spreads"]


@dataclass(frozen=True)
class Spread:
    """The extent of each of some lanes of one field (`..reduce.LaneSpread`'s arrays)."""

    ids: np.ndarray  #: the run's lane index of each entry
    lo: np.ndarray
    hi: np.ndarray
    lo_pos: np.ndarray
    last: np.ndarray  #: its last finite value (NaN: none)
    gone: np.ndarray  #: whether the lane has had (or ends at) a NaN or ±inf

    def without(self, hidden: set[int] | frozenset[int]) -> Spread:
        """The same but the lanes ``hidden`` (all of them when every lane would go, as the
        axes keep every lane's range when every lane is hidden)."""
        keep = ~np.isin(self.ids, list(hidden)) if hidden else np.ones(len(self.ids), bool)
        if keep.all() or not keep.any():
            return self
        arrays = (self.ids, self.lo, self.hi, self.lo_pos, self.last, self.gone)
        return Spread(*(a[keep] for a in arrays))


def whole_spreads(d: Any) -> list[Spread | None]:
    """Per series of ``d`` (a `RunDrawing` of a batched run; None for a path or an unbatched
    run): the extent of every lane over all its rows, past `MAX_LANES` (a band over the
    lanes), else of each drawn lane."""
    if d.run.lanes is None:
        return [None] * len(d.specs)
    out: list[Spread | None] = []
    for i, spec in enumerate(d.specs):
        spread = d.lane_spreads.get(i)
        if spec.xy is not None:
            out.append(None)
        elif spread is not None:
            # (copies: the worker goes on extending them, `..plot` reads these under the lock)
            arrays = (spread.lo, spread.hi, spread.lo_pos, spread.last, spread.gone)
            out.append(Spread(np.arange(len(spread.lo)), *(a.copy() for a in arrays)))
        else:
            lines = [d.series[i, j] for j in range(d.lanes)]
            extents = np.array([(*s.extent, s.end[1]) for s in lines], np.float64)
            gone = np.array([s.diverged for s in lines], bool)
            lo, hi, lo_pos, last = extents.reshape(-1, 4).T
            out.append(Spread(np.asarray(d.drawn_lanes), lo, hi, lo_pos, last, gone))
    return out


def window_spreads(
    d: Any, lines: list[tuple[list[np.ndarray], list[np.ndarray], object]]
) -> list[Spread | None]:
    """Per series of ``d``, the extent of each drawn lane's points in ``lines`` (a window's:
    `._window.window_lines`), each lane gone as its whole line is."""
    if d.run.lanes is None:
        return [None] * len(d.specs)
    out: list[Spread | None] = []
    for i, (spec, (_, ys, _)) in enumerate(zip(d.specs, lines, strict=True)):
        if spec.xy is not None:
            out.append(None)
            continue
        extents = [(*values_extent(np.asarray(y)), _last(np.asarray(y))) for y in ys]
        series = [d.series[i, j] for j in range(len(ys))]
        gone = np.array([isinstance(s, LaneSeries) and s.diverged for s in series], bool)
        lo, hi, lo_pos, last = np.array(extents, np.float64).reshape(-1, 4).T
        out.append(Spread(np.asarray(d.drawn_lanes[: len(ys)]), lo, hi, lo_pos, last, gone))
    return out


def ingest_lane_bands(d: Any, counts: np.ndarray) -> None:
    """Extend ``d``'s bands over every lane with the steps new since the last call: per step,
    the spread of the lanes that have it (a lane that ended counts no more), and each lane's
    extent. One read per row count (the lanes step together: a few), no loop over lanes, in
    the values' own width (float32 sorts quicker). The series are reduced side by side
    (`..reduce.each`)."""
    start = next(iter(d.lane_bands.values())).size
    stop = int(counts.max())
    if stop <= start:
        return
    groups = [(c, np.flatnonzero(counts == c)) for c in np.unique(counts[counts > start])]
    # One group of every lane: each has every new step (the lanes in lockstep), no gaps.
    whole = len(groups) == 1 and len(groups[0][1]) == len(counts)
    # Scalars and components are read as columns (one copy); a norm or a median needs the
    # block of its leaf.
    direct = all(d.specs[i].kind in ("scalar", "component") for i in d.lane_bands)
    blocks = [] if direct else [d.reads.block(lanes, start, c) for c, lanes in groups]

    def read(i: int, g: int) -> np.ndarray:  # (steps, lanes), as the quantiles read them
        spec, (c, lanes) = d.specs[i], groups[g]
        if not direct:
            return spec.lane_values(blocks[g])
        rows = d.reads.columns(lanes, start, int(c), spec.leaf, spec.index)
        return rows.astype(np.result_type(rows.dtype, np.float32), copy=False)

    def reduce(i: int) -> None:
        per_group = [(c - start, lanes, read(i, g)) for g, (c, lanes) in enumerate(groups)]
        spread = d.lane_spreads[i]
        # A scan's stand-in row 0 is in the band (a step of no value) but no lane's extent:
        # its NaN is no divergence (every lane would read as gone, and fit no y range).
        blank = d.reads.no_value_at(d.specs[i].leaf, start)
        if whole:
            steps = per_group[0][2]
            spread.extend(steps[blank:])
        else:
            dtype = np.result_type(*(v.dtype for _, _, v in per_group))
            steps = np.full((stop - start, len(counts)), np.nan, dtype)
            for n, lanes, values in per_group:
                steps[:n, lanes] = values
                spread.extend(values[blank:], lanes)
        d.lane_bands[i].extend(steps)
        # said in the band's legend: the lanes it left out at a step for a NaN or ±inf there
        d.lane_bands[i].left_out = int(spread.gone.sum())

    work = (stop - start) * len(counts) * len(d.lane_bands)
    each(reduce, d.lane_bands, work)


def _last(y: np.ndarray) -> float:
    """The last finite value of ``y`` (NaN: none)."""
    finite = np.flatnonzero(np.isfinite(y))
    return float(y[finite[-1]]) if finite.size else np.nan
