"""A y axis ignores outliers by default, as TensorBoard's, with a toggle back: runs compared on
one chart, one of which spikes early, share an axis fitted to their losses, the spike drawn
and leaving it at the top; unticked, the axis holds every point.

Before (issue 57) five optimizers compared, one spiking to ~65 at step 5, drew all five as a
flat band on 0 until both log and ignore outliers were pressed.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import jaxhist_widget as jhw

STEPS = 1000
#: name -> (learning rate for the first 5 steps, then)
OPTIMIZERS = {
    "gd 0.02": (0.02, 0.02),
    "gd 0.05": (0.05, 0.05),
    "gd 0.1": (0.1, 0.1),
    "gd 0.2": (0.2, 0.2),
    "warmup too hot": (0.78, 0.1),  # overshoots for 5 steps, then converges
}


def train(warm: float, rate: float):
    """A compute-bound training scan of a least-squares model (no Python in the step)."""
    x = jax.random.normal(jax.random.PRNGKey(0), (64, 8))
    noise = 0.3 * jax.random.normal(jax.random.PRNGKey(1), (64,))  # a loss floor of ~0.08
    y = x @ jnp.linspace(-1.0, 1.0, 8) + noise

    def loss(w):
        return jnp.mean((x @ w - y) ** 2)

    def step(w, t):
        w = w - jnp.where(t < 5, warm, rate) * jax.grad(loss)(w)
        return w, {"loss": loss(w)}

    return jax.jit(lambda: jhw.scan(step, jnp.zeros(8), jnp.arange(STEPS))[1])()


def test_runs_compared_share_an_axis_of_their_bulk_and_the_toggle_gives_every_point() -> None:
    live = jhw.LivePlot(keep_runs=True)
    peaks = {}
    for name, (warm, rate) in OPTIMIZERS.items():
        with live.named(name):
            hist = train(warm, rate)
        peaks[name] = float(np.nanmax(np.asarray(hist.values["loss"])))
    spike = peaks["warmup too hot"]
    assert spike > 15 * peaks["gd 0.02"]  # (every run starts from the same loss, ~3.4)
    chart = live.drawing().chart("loss")
    assert chart.runs() == list(OPTIMIZERS)
    lo, hi = chart.y_range
    assert hi < spike / 10, (lo, hi)  # the spike leaves the axis (it is drawn all the same)
    assert np.nanmax(chart.line(run=-1).y) == np.float32(spike)
    for k in range(len(OPTIMIZERS)):  # a few points of each run leave it at most (a start)
        y = chart.line(run=k).y
        assert (y > hi).mean() < 0.03, k
    # the slowest run's descent fills the axis, not a flat band on 0 (before: 3.3 of 100)
    y = chart.line(run=0).y
    assert np.nanmax(y[y <= hi]) > hi / 2
    live.ignore_outliers = False  # the toggle back: every point
    assert live.drawing().chart("loss").y_range[1] >= spike
    live.ignore_outliers = True
    assert live.drawing().chart("loss").y_range == (lo, hi)


def test_a_kept_run_is_reduced_once_not_at_every_later_update(monkeypatch):
    """A `keep_runs` plot fits its axes without outliers at each update, over every run it
    draws: a run that ended keeps its points, so its lines are reduced once, and each later run
    costs the same. Before, each update reduced every kept run's lines again (a sweep of 200
    runs of 3 fields: ~10,000 reductions, minutes of a notebook's time)."""
    from jaxhist_widget.ui.reduce import _outliers

    from ...helpers.synthetic import feed

    reductions = []
    within = _outliers._within
    monkeypatch.setattr(
        _outliers, "_within", lambda *a, **kw: reductions.append(1) or within(*a, **kw)
    )
    live = jhw.LivePlot(keep_runs=True)
    rng = np.random.default_rng(0)
    counts = []
    for _ in range(3):
        for _ in range(10):
            feed(live, {f: np.cumsum(rng.normal(size=201)) for f in "abc"}, max_steps=200)
        counts.append(len(reductions))
    first, last = counts[0], counts[2] - counts[1]
    assert first > 0 and last <= 1.5 * first, counts
