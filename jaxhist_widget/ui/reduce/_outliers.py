"""An outlier-robust y range ("ignore outliers", as TensorBoard's chart option): the range of
the drawn points without the highest and lowest few percent.

Numpy only. It is computed from the points the chart draws (each bucket's min and max,
`._decimate`), not the rows: those are what the eye sees, and a spike that is a bucket's max in
under `OUTLIER_FRACTION` of the buckets is left outside the axis, as in TensorBoard, while the
line's bulk fills it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

__all__ = ["OUTLIER_FRACTION", "robust_extent"]

#: The fraction of the drawn points left out at each end of the y range.
OUTLIER_FRACTION = 0.02


def robust_extent(
    ys: Iterable[np.ndarray], fraction: float = OUTLIER_FRACTION
) -> tuple[float, float, float]:
    """(min, max, smallest positive) of the finite values of ``ys`` between their ``fraction``
    and ``1 - fraction`` quantiles (``inf``, ``-inf``, ``inf`` when there is none).

    >>> import numpy as np
    >>> y = np.ones(1000)
    >>> y[::100] = 1e6  # ten spikes in a thousand points
    >>> robust_extent([y])
    (1.0, 1.0, 1.0)
    """
    parts = [np.asarray(y, np.float64).reshape(-1) for y in ys]
    values = np.concatenate(parts) if parts else np.zeros(0)
    values = values[np.isfinite(values)]
    if not values.size:
        return math.inf, -math.inf, math.inf
    lo, hi = np.quantile(values, [fraction, 1.0 - fraction])
    positive = values[values > 0]
    lo_pos = float(np.quantile(positive, fraction)) if positive.size else math.inf
    return float(lo), float(hi), lo_pos
