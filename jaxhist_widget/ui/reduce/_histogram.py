"""A histogram over steps of a vector leaf (a heatmap), counted once as rows arrive.

Numpy only. `HistogramBuckets` keeps a table of counts: one column per group of steps and one
row per bin of values. Both axes grow by merging neighbours, the way `._decimate.MinMaxBuckets`
does for a line:

- a column holds ``size`` consecutive steps (a power of two); when a run needs more than
  `HEATMAP_COLUMNS` columns, adjacent pairs are summed and ``size`` doubles;
- the bins are ``width`` wide (a power of two) and aligned on multiples of it, starting at bin
  ``k0``; when a value falls outside them, they move (same width) or pairs are summed and the
  width doubles, until every value seen fits. Values are never re-binned: aligned power-of-two
  bins nest, so a merge is exact.

Each value is thus counted once; an update costs its new values and the table (at most
`HEATMAP_COLUMNS` x `HEATMAP_BINS`), whatever the length of the run. Under vmap every lane's
rows are counted in one table (at their own steps): the heatmap pools the lanes.

Two tables are kept: of the values, and of the logs of the positive ones, so that a chart on a
log y axis draws bins as even there as on a linear one. `HistogramBuckets.rgba` draws one as an
image over a chart's y range: each pixel row sums the bins it spans, each column shows the share
of the components in a row (against the column's fullest row), as opacity of one colour, transparent
where there is none, so the picture reads on a light and a dark background alike.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["HEATMAP_BINS", "HEATMAP_COLUMNS", "HEATMAP_ROWS", "HistogramBuckets"]

#: Most columns (groups of steps) the table keeps; also the most columns an image has.
HEATMAP_COLUMNS = 256
#: Bins of values (over the range of every value seen, up to twice as wide).
HEATMAP_BINS = 96
#: Pixel rows of a heatmap image (each reads the bin of its value).
HEATMAP_ROWS = 128
#: Opacity of the faintest drawn cell (a few components) and of the fullest.
_FAINT, _FULL = 0.16, 0.9


class _Table:
    """Counts of values per group of steps and bin of values, as rows arrive."""

    def __init__(self, columns: int = HEATMAP_COLUMNS, bins: int = HEATMAP_BINS) -> None:
        if columns < 2 or bins < 2:
            raise ValueError(f"columns and bins must be >= 2, got {columns} and {bins}.")
        self.columns, self.bins = columns, bins
        #: Steps per column (a power of two).
        self.size = 1
        #: Width of a bin (a power of two); 0 before the first finite value.
        self.width = 0.0
        #: Index of the first bin: the bins cover ``[k0 * width, (k0 + bins) * width)``.
        self.k0 = 0
        #: ``(columns, bins)`` counts.
        self.counts = np.zeros((0, bins), np.int64)
        #: One more than the largest step counted.
        self.steps = 0
        #: Values counted and table cells touched (counts, not time).
        self.work = 0
        self._lo, self._hi, self._lo_pos = math.inf, -math.inf, math.inf

    @property
    def extent(self) -> tuple[float, float, float]:
        """Min, max and smallest positive finite value counted (``inf`` / ``-inf``: none)."""
        return self._lo, self._hi, self._lo_pos

    def bins_in(self, first: int, last: int) -> tuple[float, float] | None:
        """The lowest and highest value counted at steps ``first .. last``, to a bin's width
        (within the values counted), or None where nothing was counted."""
        c0, c1 = max(0, first // self.size), min(len(self.counts), last // self.size + 1)
        used: np.ndarray | list[int]
        used = np.flatnonzero(self.counts[c0:c1].sum(axis=0)) if c0 < c1 else []
        if not len(used):
            return None
        lo, hi = (self.k0 + used[0]) * self.width, (self.k0 + used[-1] + 1) * self.width
        return max(lo, self._lo), min(hi, self._hi)

    def add(self, start: int, components: np.ndarray) -> None:
        """Count the rows ``components`` (float64 ``(rows, components)``) of steps
        ``start, start + 1, ...``; non-finite values (NaN, and for the log table the log of
        values <= 0) are not counted."""
        rows = len(components)
        if not rows:
            return
        self.work += components.size
        end = start + rows
        while -(-end // self.size) > self.columns:
            self._merge_columns()
        need = -(-end // self.size)
        if need > len(self.counts):
            grow = np.zeros((need - len(self.counts), self.bins), np.int64)
            self.counts = np.concatenate([self.counts, grow])
            self.work += grow.size
        self.steps = max(self.steps, end)
        finite = np.isfinite(components)
        every = bool(finite.all())  # the usual case: no mask, no copy of the finite values
        values = components if every else components[finite]
        if not values.size:
            return
        lo, hi = float(values.min()), float(values.max())
        self._lo, self._hi = min(self._lo, lo), max(self._hi, hi)
        if hi > 0:
            positive = values[values > 0] if lo <= 0 else values
            self._lo_pos = min(self._lo_pos, float(positive.min()))
        self._cover(self._lo, self._hi)
        base = self.k0 * self.width
        with np.errstate(invalid="ignore"):  # non-finite values get a bin, then are masked out
            b = np.floor((components - base) / self.width)
            np.clip(b, 0, self.bins - 1, out=b)
            b = b.astype(np.int64)
        column = (start + np.arange(rows)) // self.size
        first, last = int(column[0]), int(column[-1])
        flat = ((column - first) * self.bins)[:, None] + b
        n = (last - first + 1) * self.bins
        counted = np.bincount(flat.reshape(-1) if every else flat[finite], minlength=n)
        self.counts[first : last + 1] += counted.reshape(-1, self.bins)
        self.work += n

    def _merge_columns(self) -> None:
        counts = self.counts
        if len(counts) % 2:
            counts = np.concatenate([counts, np.zeros((1, self.bins), np.int64)])
        self.counts = counts[0::2] + counts[1::2]
        self.size *= 2
        self.work += counts.size

    def _cover(self, lo: float, hi: float) -> None:
        """Move or widen the bins so that ``[lo, hi]`` (every value counted) fits in them."""
        if self.width == 0.0:
            span = hi - lo
            if span > 0:
                self.width = 2.0 ** math.ceil(math.log2(span / (self.bins - 1)))
            else:  # one value so far: fine bins around it, widened when others come
                self.width = 2.0 ** (math.floor(math.log2(abs(lo))) - 6 if lo else -20)
            self.k0 = math.floor(lo / self.width)
            return
        width = self.width
        while math.floor(hi / width) - math.floor(lo / width) >= self.bins:
            width *= 2
        inside = self.k0 * width <= lo and hi < (self.k0 + self.bins) * width
        if width != self.width or not inside:
            self._rebin(width, math.floor(lo / width))

    def _rebin(self, width: float, k0: int) -> None:
        """Sum the counts into bins ``width`` wide from bin ``k0`` (an aligned power of two at
        least as wide: every old bin falls in exactly one new one)."""
        ratio = round(width / self.width)
        # Python integers: exact however far from zero the values are.
        index = np.array([(self.k0 + b) // ratio - k0 for b in range(self.bins)])
        keep = np.flatnonzero((index >= 0) & (index < self.bins))
        new = np.zeros_like(self.counts)
        if keep.size and len(new):
            ids = index[keep]
            starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
            new[:, ids[starts]] = np.add.reduceat(self.counts[:, keep], starts, axis=1)
        self.counts, self.width, self.k0 = new, width, k0
        self.work += new.size

    def shares(self, lo: float, hi: float, rows: int) -> np.ndarray | None:
        """Per pixel row (top first) over ``[lo, hi]`` and column (steps ``0 .. steps - 1``
        spread over at most `columns`): the count of the bins the row spans, against the
        column's fullest row. None before anything was counted."""
        if not self.steps or self.width == 0.0:
            return None
        edges = hi - np.arange(rows + 1) / rows * (hi - lo)  # top edge of each row, then bottom
        top, bottom = edges[:-1], edges[1:]
        base = self.k0 * self.width
        first = np.floor((bottom - base) / self.width)
        last = np.ceil((top - base) / self.width) - 1  # a bin touching two rows counts in both
        inside = (last >= 0) & (first < self.bins) & (top > bottom)
        first = np.clip(first, 0, self.bins - 1).astype(np.int64)
        last = np.clip(last, 0, self.bins - 1).astype(np.int64)
        width = min(self.steps, self.columns)
        steps = ((np.arange(width) + 0.5) * self.steps / width).astype(np.int64)
        columns = np.minimum(steps // self.size, len(self.counts) - 1)
        cum = np.zeros((width, self.bins + 1), np.int64)
        np.cumsum(self.counts[columns], axis=1, out=cum[:, 1:])
        counts = (cum[:, last + 1] - cum[:, first]) * inside  # (width, rows)
        share = counts / np.maximum(counts.max(axis=1, keepdims=True), 1)
        return share.T


class HistogramBuckets:
    """A vector leaf's histogram over steps: a table of its values and one of their logs
    (the positive ones), so that a chart on a log axis draws bins even on it."""

    def __init__(self, columns: int = HEATMAP_COLUMNS, bins: int = HEATMAP_BINS) -> None:
        self.linear, self.log = _Table(columns, bins), _Table(columns, bins)
        #: Bumped by every change (what a drawing compares to redraw only when needed).
        self.version = 0

    @property
    def steps(self) -> int:
        """One more than the largest step counted."""
        return self.linear.steps

    @property
    def work(self) -> int:
        """Values counted and table cells touched (counts, not time)."""
        return self.linear.work + self.log.work

    @property
    def extent(self) -> tuple[float, float, float]:
        """Min, max and smallest positive finite value counted (``inf`` / ``-inf``: none)."""
        return self.linear.extent

    def extent_in(self, first: int, last: int) -> tuple[float, float, float]:
        """As `extent`, of the values counted at steps ``first .. last`` (to a bin's width)."""
        linear, log = self.linear.bins_in(first, last), self.log.bins_in(first, last)
        if linear is None:
            return math.inf, -math.inf, math.inf
        return linear[0], linear[1], 10 ** log[0] if log is not None else math.inf

    def add(self, start: int, components: np.ndarray) -> None:
        """Count the rows ``components`` (float64 ``(rows, components)``) of steps
        ``start, start + 1, ...``."""
        if not len(components):
            return
        self.version += 1
        self.linear.add(start, components)
        with np.errstate(divide="ignore", invalid="ignore"):
            self.log.add(start, np.log10(np.where(components > 0, components, np.nan)))

    def rgba(
        self,
        y_limits: tuple[float, float],
        log: bool,
        color: str,
        opacity: float = 1.0,
        rows: int = HEATMAP_ROWS,
    ) -> np.ndarray | None:
        """The histogram as an image of the steps ``0 .. steps - 1`` (left to right) over the
        values ``y_limits`` (top row: the largest), on a linear or log scale: ``(rows,
        columns, 4)`` uint8, or None before anything was counted."""
        lo, hi = y_limits
        if log:
            lo, hi = math.log10(max(lo, 1e-300)), math.log10(max(hi, 1e-300))
        cells = (self.log if log else self.linear).shares(lo, hi, rows)
        if cells is None:
            return None
        alpha = np.where(cells > 0, _FAINT + (_FULL - _FAINT) * np.sqrt(cells), 0.0)
        out = np.empty((*cells.shape, 4), np.uint8)
        out[..., :3] = [int(color[i : i + 2], 16) for i in (1, 3, 5)]
        out[..., 3] = np.round(255 * opacity * alpha).astype(np.uint8)
        return out
