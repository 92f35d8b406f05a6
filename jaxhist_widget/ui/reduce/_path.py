"""A 2-D path (one series against another), decimated as it grows: `PathSeries`.

Numpy only. An optimizer's path is most of its steps where little moves (the end, near a
minimum) and a few steps where it moves far (the start, the turns): cut into equal groups of
steps, the first group of a long run would hold all of the path worth seeing. So the path is
kept as *buckets of consecutive steps of any length*, and the buckets that merge are those whose
points lie closest together:

- every bucket keeps its first and its last point and the points of its smallest and largest
  x and y (in step order), so the drawn path touches every side of each bucket's bounding box
  and runs exactly between buckets (the last point of one and the first of the next are
  consecutive steps): nothing it drew is ever cut off, and its start and end are exact;
- when the kept points would exceed the budget, neighbouring buckets are merged in rounds, the
  pairs whose merged box (relative to the whole path's extent) is smallest first, until they fit
  in three quarters of it. A turn of the path is a large box and stays; a thousand steps at the
  minimum become one bucket;
- new rows come in as buckets as large as the last merge allows: the boxes of aligned groups of
  1, 2, 4, ... rows are computed bottom-up in one pass (a pyramid, O(rows)), and each group is
  taken whole when its box is no larger than the largest box the last merge made, else split
  in two. A new row is thus touched a bounded number of times, however long the run.

A step whose x or y is not finite is a gap (a NaN point), merged last. Rows are taken in slices
of at most 16 times the budget, so an update costs O(new rows + budget), whatever the length of
the run.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["PathSeries"]

# Rows of the bucket table (one column per bucket): the first step of the bucket, one past its
# last, its first non-finite step (-1: none), then six kept points (first, last, smallest and
# largest x, smallest and largest y), each as step (-1: none), x, y.
_START, _END, _GAP = 0, 1, 2
_FIRST, _LAST, _XMIN, _XMAX, _YMIN, _YMAX = (3 + 3 * k for k in range(6))
_ROWS = 21
_POINT_STEPS = [_FIRST, _LAST, _XMIN, _XMAX, _YMIN, _YMAX]
#: A pair holding a gap merges after every pair of finite points (boxes are at most sqrt(2)).
_GAP_COST = 4.0


class PathSeries:
    """The path of one lane: ``(x, y)`` rows as they arrive, kept in at most ``budget`` points.

    Examples
    --------
    >>> import numpy as np
    >>> t = np.linspace(0, 1, 100_000)
    >>> xy = np.stack([t, np.where(t < 0.5, t, 1 - t)], axis=1)  # up, a turn, down
    >>> path = PathSeries(200)
    >>> for chunk in np.split(xy, 100):
    ...     path.extend(chunk)
    >>> x, y, _ = path.points()
    >>> x, y = x.tolist(), y.tolist()
    >>> len(x) <= 200, [x[0], y[0], x[-1], y[-1]], round(max(y), 3)
    (True, [0.0, 0.0, 1.0, 0.0], 0.5)
    """

    def __init__(self, budget: int) -> None:
        if budget < 8:
            raise ValueError(f"a path needs a budget of at least 8 points, got {budget}.")
        self.budget = budget
        self._table = np.zeros((_ROWS, 0))
        self._n = 0
        self._parity = 0
        self._cut = 0.0  # the largest box (relative) the latest merge made
        self._cut_now = 0.0
        self.work = 0  #: rows reduced and buckets touched so far (counts, not time)
        self._x = [math.inf, -math.inf]  # finite extent of x
        self._y = [math.inf, -math.inf, math.inf]  # of y: min, max, smallest positive
        self._last = math.nan

    @property
    def size(self) -> int:
        """Rows received so far."""
        return self._n

    @property
    def last(self) -> float:
        """The latest y value (NaN before the first row)."""
        return self._last

    def extend(self, xy: np.ndarray) -> None:
        """Append rows ``xy`` (float64 ``(rows, 2)``: x and y)."""
        xy = np.asarray(xy, dtype=np.float64).reshape(-1, 2)
        if not len(xy):
            return
        self._last = float(xy[-1, 1])
        for start in range(0, len(xy), 16 * self.budget):
            part = xy[start : start + 16 * self.budget]
            self._append(part)
            if self._points() > self.budget:
                self._shrink(3 * self.budget // 4)

    def points(self, x0: int = 0) -> tuple[np.ndarray, np.ndarray, tuple[float, float, float]]:
        """The kept points in step order (x, y; NaN at a gap, never ending in one) and the
        extent (min, max, smallest positive) of y. ``x0`` is unused (a path has no step axis):
        it keeps the signature of `._lines.LaneSeries.points`."""
        t = self._table
        steps = np.concatenate([t[k] for k in _POINT_STEPS] + [t[_GAP]])
        xs = np.concatenate([t[k + 1] for k in _POINT_STEPS] + [np.full(t.shape[1], np.nan)])
        ys = np.concatenate([t[k + 2] for k in _POINT_STEPS] + [np.full(t.shape[1], np.nan)])
        keep = steps >= 0
        _, where = np.unique(steps[keep], return_index=True)
        x, y = xs[keep][where], ys[keep][where]
        finite = np.flatnonzero(np.isfinite(y))
        end = finite[-1] + 1 if finite.size else 0
        self.work += t.shape[1]
        return x[:end], y[:end], (self._y[0], self._y[1], self._y[2])

    # ------------------------------------------------------------------ helpers
    def _append(self, xy: np.ndarray) -> None:
        """The new rows as buckets: groups of aligned rows no larger than the latest cut."""
        x, y = xy[:, 0], xy[:, 1]
        ok = np.isfinite(x) & np.isfinite(y)
        if ok.any():
            fx, fy = x[ok], y[ok]
            self._x = [min(self._x[0], fx.min()), max(self._x[1], fx.max())]
            positive = fy[fy > 0]
            lo_pos = positive.min() if positive.size else math.inf
            y_lo, y_hi = min(self._y[0], fy.min()), max(self._y[1], fy.max())
            self._y = [y_lo, y_hi, min(self._y[2], lo_pos)]
        spans = ((self._x[1] - self._x[0]) or 1.0, (self._y[1] - self._y[0]) or 1.0)
        new = _groups(x, y, ok, spans, self._cut)
        new[[_START, _END]] += self._n
        for k in [_GAP, *_POINT_STEPS]:
            new[k] = np.where(new[k] >= 0, new[k] + self._n, -1.0)
        self._table = np.concatenate([self._table, new], axis=1)
        self._n += len(xy)
        self.work += 2 * len(xy) + new.shape[1]

    def _points(self) -> int:
        """Points `points` would return (each bucket's distinct kept steps, and its gap)."""
        t = self._table
        steps = np.sort(np.stack([t[k] for k in _POINT_STEPS]), axis=0)
        distinct = (steps[0] >= 0).sum() + ((steps[1:] != steps[:-1]) & (steps[1:] >= 0)).sum()
        return int(distinct + (t[_GAP] >= 0).sum())

    def _shrink(self, target: int) -> None:
        """Merge neighbouring buckets, the closest pairs first, until ``target`` points fit."""
        self._cut_now = 0.0
        while self._table.shape[1] > 1:
            count = self._points()
            if count <= target:
                break
            self._merge_round(max(1, (count - target) // 2))
        self._cut = self._cut_now

    def _merge_round(self, most: int) -> None:
        """Merge up to ``most`` disjoint pairs of neighbours: those of the smallest boxes."""
        t = self._table
        b = t.shape[1]
        offset = self._parity if b > 2 else 0
        self._parity ^= 1  # pairs alternate, so no boundary between buckets stays for good
        left = np.arange(offset, b - 1, 2)
        merged = _merge(t[:, left], t[:, left + 1])
        score = self._box(merged)
        score += _GAP_COST * ((t[_GAP, left] >= 0) | (t[_GAP, left + 1] >= 0))
        score[(t[_FIRST, left] < 0) & (t[_FIRST, left + 1] < 0)] = 0.0  # gap next to gap
        chosen = np.sort(np.argpartition(score, most - 1)[:most]) if most < len(left) else None
        pick = np.arange(len(left)) if chosen is None else chosen
        finite = score[pick][score[pick] < _GAP_COST]
        if finite.size:
            self._cut_now = max(self._cut_now, float(finite.max()))
        keep = np.ones(b, bool)
        keep[left[pick] + 1] = False
        t = t.copy()
        t[:, left[pick]] = merged[:, pick]
        self._table = t[:, keep]
        self.work += b

    def _box(self, t: np.ndarray) -> np.ndarray:
        """Each bucket's bounding-box diagonal, relative to the whole path's extent."""
        span_x = (self._x[1] - self._x[0]) or 1.0
        span_y = (self._y[1] - self._y[0]) or 1.0
        with np.errstate(invalid="ignore"):
            dx = (t[_XMAX + 1] - t[_XMIN + 1]) / span_x
            dy = (t[_YMAX + 2] - t[_YMIN + 2]) / span_y
        box = np.hypot(dx, dy)
        return np.where(np.isfinite(box), box, 0.0)


def _groups(
    x: np.ndarray, y: np.ndarray, ok: np.ndarray, spans: tuple[float, float], cut: float
) -> np.ndarray:
    """Bucket columns (steps from 0) of the rows ``x``, ``y`` (``ok``: finite): aligned groups of
    1, 2, 4, ... rows, each as large as possible with a box (relative to ``spans``) of at most
    ``cut``; a group holding both a gap and a finite point is split down to single rows."""
    n = len(x)
    top = max(0, math.ceil(math.log2(n)))
    size = 1 << top
    rows = np.arange(size, dtype=np.float64)
    okp = np.zeros(size, bool)
    okp[:n] = ok
    xv, yv = np.zeros(size), np.zeros(size)
    xv[:n] = np.where(ok, x, 0.0)
    yv[:n] = np.where(ok, y, 0.0)
    # Every channel is a minimum over a group: x, -x, y, -y (the box), then the first finite
    # row, minus the last finite row, the first non-finite row (inf: none). The four box
    # channels carry the row where their extreme lies.
    value = np.full((7, size), np.inf)
    value[0], value[1] = np.where(okp, xv, np.inf), np.where(okp, -xv, np.inf)
    value[2], value[3] = np.where(okp, yv, np.inf), np.where(okp, -yv, np.inf)
    value[4], value[5] = np.where(okp, rows, np.inf), np.where(okp, -rows, np.inf)
    value[6] = np.where((rows < n) & ~okp, rows, np.inf)
    where = np.tile(rows, (4, 1))
    levels = [(value, where)]
    for _ in range(top):  # each level's groups are pairs of the one below
        a, b = value[:, 0::2], value[:, 1::2]
        take = b < a
        value = np.where(take, b, a)
        where = np.where(take[:4], where[:, 1::2], where[:, 0::2])
        levels.append((value, where))
    columns = []
    active = np.zeros(1, np.int64)  # groups of this level still to place, by index
    for depth in range(top, -1, -1):
        v, w = levels[depth][0][:, active], levels[depth][1][:, active]
        good, bad = np.isfinite(v[4]), np.isfinite(v[6])
        with np.errstate(invalid="ignore"):
            box = np.hypot((-v[1] - v[0]) / spans[0], (-v[3] - v[2]) / spans[1])
        box = np.where(good & bad, np.inf, np.where(good, box, 0.0))  # only gaps: merge freely
        done = (box <= cut) | (depth == 0)
        if done.any():
            columns.append(
                _columns(v[:, done], w[:, done], active[done] << depth, depth, n, xv, yv)
            )
        split = active[~done]
        active = np.stack([2 * split, 2 * split + 1], axis=1).reshape(-1)
        if depth:
            active = active[(active << (depth - 1)) < n]  # groups of padding only: none
    table = np.concatenate(columns, axis=1)
    return table[:, np.argsort(table[_START], kind="stable")]


def _columns(
    v: np.ndarray,
    w: np.ndarray,
    start: np.ndarray,
    depth: int,
    n: int,
    xv: np.ndarray,
    yv: np.ndarray,
) -> np.ndarray:
    """Bucket columns of groups of ``2**depth`` rows from ``start`` (channels ``v``, ``w`` of
    `_groups`)."""
    good = np.isfinite(v[4])
    out = np.empty((_ROWS, len(start)))
    out[_START], out[_END] = start, np.minimum(start + (1 << depth), n)
    out[_GAP] = np.where(np.isfinite(v[6]), v[6], -1)
    picks = (v[4], -v[5], w[0], w[1], w[2], w[3])  # first, last, x min, x max, y min, y max
    for row, pick in zip(_POINT_STEPS, picks, strict=True):
        i = np.where(good, pick, 0).astype(np.int64)
        out[row] = np.where(good, i, -1)
        out[row + 1], out[row + 2] = xv[i], yv[i]
    return out


def _merge(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Buckets ``a`` followed by ``b`` (columns) as one."""
    out = a.copy()
    out[_END] = b[_END]
    out[_GAP] = np.where(a[_GAP] >= 0, a[_GAP], b[_GAP])
    _take(out, b, _FIRST, a[_FIRST] < 0)
    _take(out, b, _LAST, b[_LAST] >= 0)
    has_a, has_b = a[_XMIN] >= 0, b[_XMIN] >= 0  # (every kept point exists, or none)
    either = has_b & ~has_a
    _take(out, b, _XMIN, either | (has_a & has_b & (b[_XMIN + 1] < a[_XMIN + 1])))
    _take(out, b, _XMAX, either | (has_a & has_b & (b[_XMAX + 1] > a[_XMAX + 1])))
    _take(out, b, _YMIN, either | (has_a & has_b & (b[_YMIN + 2] < a[_YMIN + 2])))
    _take(out, b, _YMAX, either | (has_a & has_b & (b[_YMAX + 2] > a[_YMAX + 2])))
    return out


def _take(out: np.ndarray, b: np.ndarray, point: int, where: np.ndarray) -> None:
    for k in range(point, point + 3):
        out[k] = np.where(where, b[k], out[k])
