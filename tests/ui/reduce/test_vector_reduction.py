"""The reductions behind vectors and paths, on synthetic data (numpy only, no widget): a band's
edges keep every step's extreme component, a histogram counted as rows arrive equals one counted
at once, a decimated path keeps its start, end and turns, and each costs an update its new rows
and the point budget, not the length of the run."""

from __future__ import annotations

import numpy as np
import pytest

from jaxhist_widget.ui.reduce import BandSeries, HistogramBuckets, PathSeries, row_quantiles


# ------------------------------------------------------------------------------------ band
def test_a_band_keeps_every_steps_extreme_component() -> None:
    rng = np.random.default_rng(0)
    n, comps = 50_000, 50
    values = rng.normal(size=(n, comps)) * np.linspace(2.0, 0.1, n)[:, None]
    values[31_234, 17] = 40.0  # one component's spike, at one step
    values[7_000, 3] = -25.0
    band = BandSeries(400)
    for chunk in np.array_split(values, 97):
        band.extend(chunk)
    outer, inner = band.polygons(x0=10)
    for x, _ in (outer, inner):
        assert len(x) <= 400  # the polygon fits the budget of one line
        assert x.min() == 10 and x.max() == 10 + n - 1  # the whole run, from x0
    x, y = outer
    assert y.max() == 40.0 and x[y.argmax()] == 10 + 31_234  # the spike, at its step
    assert y.min() == -25.0 and x[y.argmin()] == 10 + 7_000
    assert band.extent[:2] == (-25.0, 40.0)
    # the quartile band lies inside the min-max band (both as drawn: decimated rows)
    assert inner[1].max() < outer[1].max() and inner[1].min() > outer[1].min()
    # an edge's points are real rows' percentiles: the drawn max at a step is that row's max
    upper = x[len(x) // 2 :][::-1], y[len(y) // 2 :][::-1]
    steps = upper[0][:-1] - 10
    assert np.allclose(upper[1][:-1], values[steps].max(axis=1))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("components", [1, 2, 5, 50, 333, 2000, 4096])
def test_row_quantiles_are_numpys_percentiles_of_the_finite_values(components, dtype) -> None:
    # float32: a sweep's lanes at a step, sorted in their own width (even past _SORT_MOST)
    rng = np.random.default_rng(components)
    values = rng.normal(size=(200, components)).astype(dtype)
    q = (0.0, 25.0, 50.0, 75.0, 100.0)
    exact = values.astype(np.float64)  # numpy's percentile of float32 rounds to float32
    np.testing.assert_allclose(row_quantiles(values, q), np.percentile(exact, q, axis=1))
    values[values > 1.2] = np.nan
    values[values < -1.5] = -np.inf
    values[0] = np.nan
    finite = np.where(np.isfinite(values), values, np.nan).astype(np.float64)
    with np.errstate(invalid="ignore"), pytest.warns(RuntimeWarning):  # the all-NaN row
        expect = np.nanpercentile(finite, q, axis=1)
    np.testing.assert_allclose(row_quantiles(values, q), expect)


def test_a_band_ignores_non_finite_components_and_bridges_empty_rows() -> None:
    values = np.tile(np.arange(5.0), (20, 1))
    values[3, 1] = np.nan  # one component of one row
    values[8] = np.inf  # a whole row
    band = BandSeries(100)
    band.extend(values)
    (x, y), _ = band.polygons()
    assert np.isfinite(y).all() and 8 not in x  # a closed polygon has no gap
    assert y.min() == 0.0 and y.max() == 4.0


# ------------------------------------------------------------------------------- histogram
def _recount(hist: HistogramBuckets, values: np.ndarray) -> np.ndarray:
    """The table of ``values`` counted at once with the final bins and column size."""
    table = hist.linear
    steps = np.repeat(np.arange(len(values)), values.shape[1])
    flat = values.reshape(-1)
    ok = np.isfinite(flat)
    b = np.floor((flat[ok] - table.k0 * table.width) / table.width).astype(int)
    out = np.zeros_like(table.counts)
    np.add.at(out, (steps[ok] // table.size, b), 1)
    return out


@pytest.mark.parametrize("kind", ["shrinking", "drifting", "constant then spread"])
def test_a_histogram_counted_as_rows_arrive_equals_one_counted_at_once(kind) -> None:
    rng = np.random.default_rng(1)
    n, comps = 20_000, 30
    if kind == "shrinking":  # per-class losses: a wide start, a narrow end
        values = 2.3 * np.exp(-np.arange(n)[:, None] / (500 + 50 * np.arange(comps)))
    elif kind == "drifting":  # the bins must move up, then widen
        values = np.arange(n)[:, None] * 0.01 + rng.normal(size=(n, comps))
    else:  # one value at first (zero-width data), then a spread 10**6 times wider
        values = np.zeros((n, comps))
        values[n // 2 :] = rng.normal(size=(n - n // 2, comps)) * 1e3
    values[123, 4] = np.nan
    hist = HistogramBuckets(columns=64, bins=32)
    for chunk in np.array_split(values, 73):  # as rows arrive
        hist.add(hist.steps, chunk)
    table = hist.linear
    assert table.counts.shape[0] <= 64 and table.counts.sum() == values.size - 1
    np.testing.assert_array_equal(table.counts, _recount(hist, values))
    # every value lies in the bins, which are no wider than twice the data's range needs
    assert table.k0 * table.width <= np.nanmin(values)
    assert np.nanmax(values) < (table.k0 + table.bins) * table.width
    assert table.width <= 4 * (np.nanmax(values) - np.nanmin(values)) / table.bins


def test_a_histogram_pools_lanes_at_their_own_steps_and_draws_a_log_axis_evenly() -> None:
    hist = HistogramBuckets()
    hist.add(0, np.full((10, 4), 1.0))  # lane 0, steps 0..9
    hist.add(0, np.full((5, 4), 100.0))  # lane 1, steps 0..4
    hist.add(10, np.full((3, 4), 1.0))  # lane 0 again
    assert hist.steps == 13 and hist.linear.counts.sum() == 72
    # on a log axis 1 and 100 are two decades apart: each gets rows of the image, and none of
    # the rows between them is drawn (the log table has bins of its own)
    image = hist.rgba((0.5, 200.0), log=True, color="#3a78c4", rows=64)
    assert image.shape == (64, 13, 4)
    drawn = set(np.flatnonzero(image[:, 0, 3] > 0).tolist())
    span = np.log10(200 / 0.5)
    expect = [int((np.log10(200) - np.log10(v)) / span * 64) for v in (100.0, 1.0)]
    near = [{e - 1, e, e + 1} for e in expect]
    assert all(drawn & rows for rows in near) and drawn <= near[0] | near[1], (drawn, expect)
    assert set(np.flatnonzero(image[:, 12, 3] > 0).tolist()) <= near[1]  # step 12: lane 0
    assert (image[..., :3] == [0x3A, 0x78, 0xC4]).all()  # one colour, opacity for density


# ------------------------------------------------------------------------------------ path
def _distance_to_polyline(points: np.ndarray, line: np.ndarray) -> np.ndarray:
    """Each point's distance to the polyline ``line`` (rows of x, y)."""
    a, b = line[:-1], line[1:]
    d = b - a
    out = np.full(len(points), np.inf)
    for k in range(0, len(points), 2000):
        p = points[k : k + 2000, None, :]
        t = np.clip(((p - a) * d).sum(-1) / np.maximum((d * d).sum(-1), 1e-300), 0, 1)
        out[k : k + 2000] = np.linalg.norm(p - (a + t[..., None] * d), axis=-1).min(axis=1)
    return out


def rosenbrock_path(steps: int, lr: float = 1.5e-3) -> np.ndarray:
    """Gradient descent on the Rosenbrock function from (-1.5, 2): a fast fall into the valley
    (a turn), then a long slow walk along it towards (1, 1)."""
    out = np.empty((steps, 2))
    x, y = -1.5, 2.0
    for k in range(steps):
        out[k] = x, y
        gx, gy = -2 * (1 - x) - 400 * x * (y - x * x), 200 * (y - x * x)
        x, y = x - lr * gx, y - lr * gy
    return out


def test_a_path_keeps_its_start_end_and_turns_within_the_budget() -> None:
    xy = rosenbrock_path(30_000)
    path = PathSeries(300)
    for chunk in np.array_split(xy, 200):
        path.extend(chunk)
    x, y, (lo, hi, _) = path.points()
    drawn = np.stack([x, y], axis=1)
    assert len(x) <= 300
    assert (drawn[0] == xy[0]).all() and (drawn[-1] == xy[-1]).all()  # start and end, exact
    assert (lo, hi) == (xy[:, 1].min(), xy[:, 1].max())
    # every step of the run lies close to the drawn path, relative to the path's extent
    extent = np.linalg.norm(xy.max(axis=0) - xy.min(axis=0))
    error = _distance_to_polyline(xy[::7], drawn) / extent
    assert error.max() < 0.01, error.max()
    # the fast first steps (the fall into the valley) are drawn at full resolution
    first = xy[:20]
    assert (_distance_to_polyline(first, drawn) == 0).all()


def test_a_path_is_drawn_more_finely_where_it_moves_than_equal_step_groups_would() -> None:
    xy = rosenbrock_path(30_000)
    path = PathSeries(300)
    path.extend(xy)
    x, y, _ = path.points()
    drawn = np.stack([x, y], axis=1)

    # groups of equal steps, each kept as the same six points (first, last, extremes of x and
    # y), as many groups as give as many points
    def equal_groups(count: int) -> list[int]:
        kept = set()
        for g in np.array_split(np.arange(len(xy)), count):
            kept |= {int(g[0]), int(g[-1])}
            kept |= {int(g[f(xy[g, c])]) for f in (np.argmin, np.argmax) for c in (0, 1)}
        return sorted(kept)

    count = 10
    while len(equal_groups(count + 10)) <= len(x):
        count += 10
    kept = equal_groups(count)
    extent = np.linalg.norm(xy.max(axis=0) - xy.min(axis=0))
    ours = _distance_to_polyline(xy[::5], drawn).max() / extent
    equal = _distance_to_polyline(xy[::5], xy[kept]).max() / extent
    assert len(kept) >= len(x) * 0.8  # about as many points
    assert ours < equal / 3, (ours, equal)


def test_a_path_with_gaps_breaks_there_and_never_ends_in_one() -> None:
    t = np.linspace(0, 1, 1000)
    xy = np.stack([t, t**2], axis=1)
    xy[400:410] = np.nan  # diverged for a while, then back
    xy[990:] = np.inf  # and at the end
    path = PathSeries(100)
    for chunk in np.array_split(xy, 10):
        path.extend(chunk)
    x, y, _ = path.points()
    assert np.isnan(y).any()  # the gap is drawn as a break
    assert np.isfinite(y[-1]) and y[-1] == xy[989, 1]  # the last finite point ends the line
    assert len(x) <= 100


def test_path_updates_cost_the_new_rows_and_the_budget() -> None:
    n, chunk, budget = 400_000, 1000, 2000
    t = np.arange(n)
    r = np.exp(-t / 3000.0)
    xy = np.stack([1 + r * np.cos(t / 40), 1 + r * np.sin(t / 40)], axis=1)
    path, work = PathSeries(budget), []
    for part in np.split(xy, n // chunk):
        before = path.work
        path.extend(part)
        path.points()
        work.append(path.work - before)
    # each update: its rows a few times, and passes over at most a few budgets of buckets;
    # the same late in the run as early (never the length of the run)
    assert max(work) <= 4 * chunk + 6 * budget, max(work)
    assert sum(work[-50:]) <= 1.5 * sum(work[50:100])
    assert path.size == n and len(path.points()[0]) <= budget
