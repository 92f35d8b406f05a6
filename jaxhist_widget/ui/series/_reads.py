"""`Reads`: a run's rows as a plot reads them, with row 0 of its stand-in leaves read as NaN.

Numpy only. A scan's row 0 holds a stand-in for the ``y`` no step has made yet
(`jaxhist_widget._wire.Layout.stand_ins`): NaN for a floating leaf, which a plot leaves out
as it leaves any NaN out, but 0 for an integer or bool one, which would be drawn as a value.
Every read a drawing makes of its run goes through here, so that row is no point in any line,
band, window, smoothed line, ranking or latest value. A read that starts past row 0 (nearly
every read of a live run) is the run's own arrays, untouched.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._host import Run

__all__ = ["Reads"]


class Reads:
    """The reads of ``run`` a drawing makes (`Run.rows_since`, `block`, `columns`,
    `latest`), each with row 0 of the run's stand-in leaves as NaN."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self._stand_ins = frozenset(getattr(run.layout, "stand_ins", ()))

    def no_value_at(self, leaf: int, start: int) -> int:
        """Rows at the start of a read from row ``start`` of ``leaf`` that hold no value (its
        stand-in row 0): 1 or 0. They read as NaN, but a NaN there is no divergence: a lane's
        extent (`..reduce.LaneSpread`) leaves them out, as a while loop's sweep has none."""
        return int(start == 0 and leaf in self._stand_ins)

    def rows_since(self, lane: int, start: int, stop: int | None = None) -> list[np.ndarray]:
        rows = self.run.rows_since(lane, start, stop)
        return self._blank(rows, start, axis=0)

    def block(self, lanes: Any, start: int, stop: int) -> list[np.ndarray]:
        return self._blank(self.run.block(lanes, start, stop), start, axis=1)

    def columns(self, lanes: Any, start: int, stop: int, leaf: int, index: int) -> np.ndarray:
        rows = self.run.columns(lanes, start, stop, leaf, index)  # (rows, lanes)
        if start == 0 and leaf in self._stand_ins and len(rows):
            rows = _as_float(rows)
            rows[0] = np.nan
        return rows

    def latest(self) -> tuple[np.ndarray, list[np.ndarray]]:
        """Each lane's last row (`Run.latest`): a lane that has only row 0 has no value yet."""
        has, leaves = self.run.latest()
        only_first = np.asarray(self.run.counts) == 1
        if self._stand_ins and only_first.any():
            leaves = list(leaves)
            for i in self._stand_ins:
                leaves[i] = _as_float(leaves[i])
                leaves[i][only_first] = np.nan
        return has, leaves

    def _blank(self, rows: list[np.ndarray], start: int, axis: int) -> list[np.ndarray]:
        """``rows`` (row axis ``axis``) with row 0 of each stand-in leaf NaN, if they hold it."""
        if start != 0 or not self._stand_ins:
            return rows
        out = list(rows)
        for i in self._stand_ins:
            if out[i].shape[axis]:
                out[i] = _as_float(out[i])
                out[i][(slice(None),) * axis + (0,)] = np.nan
        return out


def _as_float(x: np.ndarray) -> np.ndarray:
    """A writable copy of ``x`` that can hold NaN: a numpy float as it is, others (integers,
    bool, bfloat16 and the other ml_dtypes) in float64, as a plot reads them anyway."""
    return np.array(x, dtype=x.dtype if x.dtype.kind == "f" else np.float64)
