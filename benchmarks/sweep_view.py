"""What a sweep's default view shows: the y range of a learning-rate sweep whose largest rates
diverge, against the lanes that converged (issue 50).

    python benchmarks/sweep_view.py            # 4096 lanes, 300 steps
    python benchmarks/sweep_view.py --quick    # 256 lanes: the script runs

The sweep: gradient descent on one consistent least-squares problem (A 64x16, b = A x*, so the
loss falls over decades), one rate per lane, ``logspace(-3, 0.5) / L`` (L the largest
eigenvalue of the Hessian; past 2 / L a lane diverges), recording the loss. It runs into a
`LivePlot` (no frontend), then the chart's y range is read and set against the lanes:

- ``converged``: the lanes whose loss ended finite and below where it started;
- ``fill``: the spread of the converged lanes' rows (max - min) over the height of the chart's
  y axis, on the default view (the lanes that ran away left out: `jaxhist_widget.ui.reduce.
  bulk_range`) and, for comparison, on an axis fitting every finite row (what the chart drew
  before issue 50);
- ``update``: the plot's last update (``_push``), every lane's extent included.

Printed: one markdown table row per view. No target is asserted here
(``tests/ui/figure/test_runaways.py`` checks the view).
"""

from __future__ import annotations

import time

import jax
import jax.numpy as jnp
import numpy as np

# The scripts' shared helpers sit beside them (a script's own folder is on its path).
from _bench import arguments, machine, print_table

import jaxhist_widget as jhw
from jaxhist_widget.ui.look import ticks


def sweep(lanes: int, steps: int):
    """The sweep's jitted, vmapped solve and its rates."""
    ka, kb = jax.random.split(jax.random.PRNGKey(0))
    m, d = 64, 16
    a = jax.random.normal(ka, (m, d), jnp.float32)
    b = a @ jax.random.normal(kb, (d,), jnp.float32)  # consistent: the loss falls to ~0
    curvature = float(jnp.linalg.norm(a, 2) ** 2 / m)
    rates = jnp.logspace(-3, 0.5, lanes) / curvature

    def solve(lr):
        def body(c):
            i, x, _ = c
            r = a @ x - b
            return i + 1, x - lr * (a.T @ r) / m, 0.5 * jnp.vdot(r, r) / m

        init = (jnp.int32(0), jnp.zeros(d), 0.5 * jnp.vdot(b, b) / m)
        return jhw.while_loop(
            lambda c: c[0] < steps, body, init, max_steps=steps, record=lambda c: {"loss": c[2]}
        )

    return jax.jit(jax.vmap(solve)), rates


def fill(rows: np.ndarray, limits: tuple[float, float]) -> float:
    """The spread of ``rows`` over the height of an axis of ``limits``."""
    return float((rows.max() - rows.min()) / (limits[1] - limits[0]))


def main() -> None:
    args = arguments(__doc__).parse_args()
    lanes, steps = (256, 100) if args.quick else (4096, 300)
    print(machine())
    solve, rates = sweep(lanes, steps)
    jax.block_until_ready(solve(rates))  # compiled before the plot watches
    live = jhw.LivePlot()
    with live:
        _, hist = solve(rates)
    loss = [np.asarray(rows["loss"], np.float64) for rows in hist.to_numpy()]  # per lane
    last = np.array([v[-1] for v in loss])
    converged = np.isfinite(last) & (last < np.array([v[0] for v in loss]))
    kept = np.concatenate([loss[k] for k in np.flatnonzero(converged)])
    every = np.concatenate(loss)
    every = every[np.isfinite(every)]
    start = time.perf_counter()
    live.refresh()
    update = time.perf_counter() - start
    scale = live.figure.axes[1].scale
    shown = (float(scale.min), float(scale.max))
    before = ticks.linear_limits(float(every.min()), float(every.max()))
    ran = next((t for t in live.legend.value.split(">") if "ran away above" in t), "")
    away = int(ran.split(" lanes")[0].replace(",", "")) if ran else 0
    diverged = int((~np.isfinite(last)).sum())
    head = ["view", "lanes", "converged", "diverged", "ran away", "y axis", "fill", "update"]
    rows = [
        ["fit every row", lanes, int(converged.sum()), diverged, "-", _range(before),
         f"{fill(kept, before):.2g}", "-"],
        ["default", lanes, int(converged.sum()), diverged, away, _range(shown),
         f"{fill(kept, shown):.2f}", f"{update * 1e3:.0f} ms"],
    ]  # fmt: skip
    print_table(head, rows)
    print(f"default view: the converged lanes fill {fill(kept, shown):.0%} of the chart's height")


def _range(limits: tuple[float, float]) -> str:
    return f"{limits[0]:.3g} … {limits[1]:.3g}"


if __name__ == "__main__":
    main()
