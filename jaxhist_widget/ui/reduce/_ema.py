"""Smoothing, as TensorBoard does it: a debiased exponential moving average of each series.

Numpy only. The smoothed value at step t is ``acc_t / (1 - w**n_t)`` with
``acc_t = w * acc_{t-1} + (1 - w) * y_t`` over the finite values (``n_t`` of them so far,
``acc`` starting at 0): dividing by ``1 - w**n`` removes the pull towards 0 that a plain EMA has
at its start. A non-finite value is passed through (a gap stays a gap) and leaves the average as
it was.

Why in the kernel, on the rows as they arrive, and not in the browser: the browser holds only
the decimated points (each bucket's min and max, `._decimate`), and an average of those is
neither the average of the data (the extremes of each bucket weigh as much as all its other
rows) nor spaced by steps. Here every row is read once, when it arrives (O(new rows) per
update, like the decimation), and the smoothed series is decimated like the raw one, so the
smoothed line drawn is exactly the min/max decimation of the true smoothed series. A new
weight recomputes every drawn series from its rows once (a run's smoothed series:
`jaxhist_widget.ui.series.RunSmoothing`).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["MAX_WEIGHT", "Ema", "check_weight", "ema", "smoothed_budget"]

#: The largest smoothing weight (TensorBoard's slider ends at 0.999 too).
MAX_WEIGHT = 0.999
# The closed form below divides by w**k within a block: blocks stay short enough for w**-k to
# stay far from overflow (1e150), so precision is that of a sum of positive terms.
_BLOCK_EXPONENT = 150 * math.log(10)


def check_weight(weight: object) -> float:
    """``weight`` as a float in [0, `MAX_WEIGHT`], else a TypeError / ValueError naming them."""
    if isinstance(weight, bool) or not isinstance(weight, (int, float)):
        raise TypeError(f"smoothing must be a number in [0, {MAX_WEIGHT}], got {weight!r}.")
    if not 0.0 <= weight <= MAX_WEIGHT:
        raise ValueError(
            f"smoothing must be in [0, {MAX_WEIGHT}] (0: off; TensorBoard's default is 0.6), "
            f"got {weight!r}."
        )
    return float(weight)


class Ema:
    """The debiased EMA of one series as it grows: its accumulator and finite-value count."""

    def __init__(self, weight: float) -> None:
        self.weight = weight
        self.acc = 0.0
        self.n = 0

    def extend(self, values: np.ndarray) -> np.ndarray:
        """The smoothed values of ``values`` (the next rows of the series), in O(len(values))."""
        y = np.asarray(values, dtype=np.float64).reshape(-1)
        out = y.copy()  # non-finite values pass through
        finite = np.isfinite(y)
        x = y[finite] if not finite.all() else y
        if x.size:
            w = self.weight
            acc = _ema(x, w, self.acc)
            counts = self.n + np.arange(1, x.size + 1)
            out[finite] = acc / -np.expm1(counts * math.log(w)) if w > 0 else x
            self.acc, self.n = float(acc[-1]), self.n + x.size
        return out


def ema(values: np.ndarray, weight: float) -> np.ndarray:
    """The debiased EMA of a whole series (see the module docstring)."""
    return Ema(weight).extend(values)


def _ema(x: np.ndarray, w: float, acc: float) -> np.ndarray:
    """``acc_t = w * acc_{t-1} + (1 - w) * x_t`` for every t, from ``acc`` (finite ``x``).

    In blocks of k values, all at once: from 0, a block's average at its j-th value is
    ``(1 - w) * w**j * sum_{i<=j} x_i * w**-i`` (a cumulative sum; k keeps ``w**-j`` far from
    overflow), and the average a block starts from adds ``w**(j+1)`` times itself: those
    carries, one per block, are the only sequential part. Each block's sum is taken of its
    values over a power of two at least their largest magnitude, so ``x_i * w**-i`` stays under
    1e150 for any finite values (1e200 times w**-i overflowed); a power of two scales exactly.
    """
    if w == 0:
        return x.copy()
    k = max(1, min(x.size, int(_BLOCK_EXPONENT / -math.log(w))))
    blocks = -(-x.size // k)
    grid = np.zeros((blocks, k))
    grid.reshape(-1)[: x.size] = x
    # (frexp: |x| < 2**e; by ldexp, as 2**e alone overflows for values near the float64 max)
    _, exponent = np.frexp(np.abs(grid).max(axis=1, keepdims=True))
    j = np.arange(k, dtype=np.float64)
    up = np.exp(-j * math.log(w))  # w**-j
    scaled = np.cumsum(np.ldexp(grid, -exponent) * up, axis=1) * ((1.0 - w) / up)
    local = np.ldexp(scaled, exponent)  # an average of values under 2**e: no overflow
    decay, carry = w**k, np.empty(blocks)
    for b, end in enumerate(local[:, -1].tolist()):
        carry[b] = acc
        acc = decay * acc + end
    out = local + carry[:, None] * (w / up)  # w**(j+1)
    return out.reshape(-1)[: x.size]


def smoothed_budget(raw: int) -> int:
    """Points of a smoothed line: half its raw line's (smooth by design, it needs fewer; with
    twice the marks an update would otherwise send twice the points).

    >>> smoothed_budget(2000), smoothed_budget(8)
    (1000, 5)
    """
    return max(5, raw // 2)
