"""Size of one plot update, and the time to decimate it, vs the number of recorded steps.

One field (a noisy, decaying loss with a spike and a NaN gap), float64 x and y buffers as sent
to the browser by `LivePlot` (``max_points=2000``, the default). Run::

    python benchmarks/decimation.py
"""

from __future__ import annotations

import time

import numpy as np

# The scripts' shared helpers sit beside them (a script's own folder is on its path).
from _bench import arguments, machine

from jaxhist_widget.ui.reduce import minmax_decimate

MAX_POINTS = 2000


def loss_curve(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    steps = np.arange(n)
    y = np.exp(-steps / (0.2 * n)) * (1 + 0.1 * rng.standard_normal(n))
    y[n // 3] = 50.0  # a spike decimation must keep
    y[n // 2 : n // 2 + max(1, n // 1000)] = np.nan  # a divergence gap
    return y


def best_of(fn, repeat: int = 7) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    arguments(__doc__).parse_args()
    print(machine())
    print(f"one field, max_points={MAX_POINTS}, float64 x + y per update")
    print(
        f"| {'steps':>9} | {'raw bytes':>11} | {'sent points':>11} | {'sent bytes':>10} | "
        f"{'decimate ms':>11} | spike kept |"
    )
    print(f"|{'-' * 11}|{'-' * 13}|{'-' * 13}|{'-' * 12}|{'-' * 13}|{'-' * 12}|")
    for n in (1_000, 10_000, 100_000, 1_000_000):
        y = loss_curve(n)
        x = np.arange(n)
        xd, yd = minmax_decimate(x, y, MAX_POINTS)
        sent = xd.nbytes + yd.nbytes
        assert sent <= 64_000
        ms = 1e3 * best_of(lambda x=x, y=y: minmax_decimate(x, y, MAX_POINTS))
        print(
            f"| {n:>9,} | {16 * n:>11,} | {len(xd):>11,} | {sent:>10,} | {ms:>11.2f} | "
            f"{'yes' if 50.0 in yd else 'NO':>10} |"
        )


if __name__ == "__main__":
    main()
