"""The reductions a row goes through before it is drawn: numpy only, no widgets, no runs.

Each keeps what a chart can show of a series that grows, at a cost per update of the new rows
and the point budget, never of the length of the run:

- ``_decimate``: min/max buckets of a line (`MinMaxBuckets`, `minmax_decimate`);
- ``_lines``: one series of one lane as it grows (`LaneSeries`), a sweep's drawn lanes
  extended all at once (`extend_lines`), and the extent a y axis fits;
- ``_band``: a vector's quantile bands per step (`BandSeries`);
- ``_histogram``: a vector's histogram per group of steps, a heatmap (`HistogramBuckets`);
- ``_path``: a 2-D path kept where it moves (`PathSeries`);
- ``_ema``: TensorBoard's debiased exponential moving average (`Ema`);
- ``_outliers``: a y range without the points far outside their bulk (`robust_extent`);
- ``_spread``: a sweep's lanes side by side, and the range of those that did not run away
  (`LaneSpread`, `bulk_range`);
- ``_png``: a heatmap's pixels as a PNG file (`encode_png`);
- ``_parallel``: independent reductions side by side on idle cores (`each`).
"""

from __future__ import annotations

from ._band import BAND_PERCENTILES, BandSeries, row_quantiles
from ._decimate import MinMaxBuckets, minmax_decimate
from ._ema import MAX_WEIGHT, Ema, check_weight, ema, smoothed_budget
from ._histogram import HEATMAP_BINS, HEATMAP_COLUMNS, HEATMAP_ROWS, HistogramBuckets
from ._lines import LaneSeries, extend_lines, finite_tail, values_extent
from ._outliers import OUTLIER_FENCE, OUTLIER_FRACTION, robust_extent
from ._parallel import each
from ._path import PathSeries
from ._png import encode_png
from ._spread import FENCE, LOG_DECADES, Bulk, LaneSpread, bulk_decades, bulk_range, decades

__all__ = [
    "BAND_PERCENTILES",
    "FENCE",
    "HEATMAP_BINS",
    "HEATMAP_COLUMNS",
    "HEATMAP_ROWS",
    "LOG_DECADES",
    "MAX_WEIGHT",
    "OUTLIER_FENCE",
    "OUTLIER_FRACTION",
    "BandSeries",
    "Bulk",
    "Ema",
    "HistogramBuckets",
    "LaneSeries",
    "LaneSpread",
    "MinMaxBuckets",
    "PathSeries",
    "bulk_decades",
    "bulk_range",
    "check_weight",
    "decades",
    "each",
    "ema",
    "encode_png",
    "extend_lines",
    "finite_tail",
    "minmax_decimate",
    "robust_extent",
    "row_quantiles",
    "smoothed_budget",
    "values_extent",
]
