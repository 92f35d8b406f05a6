"""An outlier-robust y range ("ignore outliers", as TensorBoard's chart option, on by default as
there): the range of the drawn points without those far outside their bulk.

Numpy only. It is computed from the points the chart draws (each bucket's min and max,
`._decimate`), not the rows: those are what the eye sees. The bulk is the points between their
`OUTLIER_FRACTION` and ``1 - OUTLIER_FRACTION`` quantiles; a point is an outlier when it lies
more than `OUTLIER_FENCE` times that bulk's span beyond it. So a spike that is a bucket's max in
under 2% of the buckets (an early loss of 65 over a run near 0.1) leaves the axis to the line's
bulk, while a line's own ends (a loss falling from 2.3, its first points above the 98th
percentile but near it) stay in. On a log axis the span is in decades.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

__all__ = ["OUTLIER_FENCE", "OUTLIER_FRACTION", "robust_extent"]

#: The fraction of the drawn points at each end that may hold outliers.
OUTLIER_FRACTION = 0.02
#: How far beyond the bulk a point is an outlier: this many times the bulk's span.
OUTLIER_FENCE = 2.0


def robust_extent(
    ys: Iterable[np.ndarray], fraction: float = OUTLIER_FRACTION, log: bool = False
) -> tuple[float, float, float]:
    """(min, max, smallest positive) of the finite values of ``ys`` that are no outliers (see
    the module docstring; on a ``log`` axis the fence is in decades of the positive values),
    or ``inf``, ``-inf``, ``inf`` when there is none.

    >>> import numpy as np
    >>> y = np.ones(1000)
    >>> y[::100] = 1e6  # ten spikes in a thousand points
    >>> robust_extent([y])
    (1.0, 1.0, 1.0)
    >>> robust_extent([10.0 / 2 ** np.arange(5)])  # a short run keeps its ends
    (0.625, 10.0, 0.625)
    """
    parts = [np.asarray(y, np.float64).reshape(-1) for y in ys]
    values = np.concatenate(parts) if parts else np.zeros(0)
    values = values[np.isfinite(values)]
    positive = values[values > 0]
    if log and positive.size:
        kept = 10.0 ** _within(np.log10(positive), fraction)
        return float(kept.min()), float(kept.max()), float(kept.min())
    if not values.size:
        return math.inf, -math.inf, math.inf
    kept = _within(values, fraction)
    above = kept[kept > 0]
    return float(kept.min()), float(kept.max()), float(above.min()) if above.size else math.inf


def _within(values: np.ndarray, fraction: float) -> np.ndarray:
    """The ``values`` within `OUTLIER_FENCE` bulk spans of their central quantiles."""
    lo, hi = np.quantile(values, [fraction, 1.0 - fraction])
    span = OUTLIER_FENCE * (hi - lo)
    return values[(values >= lo - span) & (values <= hi + span)]
