"""A learning-rate sweep's losses, made by hand: most lanes converge over decades, a few run
away (to 1e36 and on to inf), as the runaway and hyperparameter chart tests need them.

    values = sweep(lanes=48, away=5)  # one array of STEPS losses per lane, runaways last
"""

from __future__ import annotations

import numpy as np

#: Rows of every lane of a `sweep`.
STEPS = 60


def sweep(lanes: int, away: int, seed: int = 0) -> list[np.ndarray]:
    """Per lane a loss from about 1 falling over decades, as a learning-rate sweep's; the last
    ``away`` lanes grow instead, to 1e36 and on to inf."""
    rng = np.random.default_rng(seed)
    t = np.arange(STEPS, dtype=np.float64)
    out = []
    for k in range(lanes - away):
        rate = 0.05 + 0.3 * k / lanes
        out.append((0.8 + 0.2 * rng.random()) * np.exp(-rate * t) + 1e-9)
    for k in range(away):
        grow = 1.5 + 0.02 * k
        curve = grow**t * (1 + 1e-3 * k)
        curve[curve > 1e36] = np.inf
        out.append(curve)
    return out
