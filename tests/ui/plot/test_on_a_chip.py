"""A `LivePlot` watching a loop that runs on an accelerator: the chip never waits for the plot.

On a CPU a plot's update pauses the loop (the two would share the cores); a chip stopped while
the host draws loses that time for nothing. Here the loop is traced as for an accelerator (its
layout says so; it runs on the CPU) and the plot's first hook takes long: the loop sends the
rest of its chunks meanwhile, and the plot then draws every row.
"""

from __future__ import annotations

import time

import jax
import jax.numpy as jnp
import numpy as np

import jaxhist_widget as jhw
from jaxhist_widget._device.parallel import devices

STEPS = 3000


def test_the_loop_runs_on_while_the_plot_draws_its_rows(monkeypatch) -> None:
    monkeypatch.setattr(devices, "accelerated", lambda: True)  # an accelerator's layout
    sent_on = []  # per call of the hook: whether the loop sent its last rows meanwhile

    def sent(run) -> int:
        rows, _ = run.arrivals()  # (noted as each host call comes, before any sink sees it)
        return int(rows[-1]) if len(rows) else 0

    class Busy(jhw.LivePlot):
        def on_rows(self, run, lanes):  # a plot busy drawing, its first time: a long while
            if not sent_on:
                deadline = time.monotonic() + 20
                while sent(run) < STEPS + 1 and time.monotonic() < deadline:
                    time.sleep(0.01)
                sent_on.append(sent(run) == STEPS + 1)
            super().on_rows(run, lanes)

    loop = jax.jit(
        lambda x: jhw.while_loop(
            lambda c: c[0] < STEPS,
            lambda c: (c[0] + 1, c[1] * 0.999),
            (jnp.int32(0), x),
            max_steps=STEPS,
            record=lambda c: {"value": c[1]},
            stream_every=500,  # 7 chunks: fewer than the worker queues for a run
        )
    )
    plot = Busy()
    with plot:
        (_, final), hist = jax.block_until_ready(loop(jnp.float32(1.0)))
    # the loop sent every chunk while the plot drew the first: it never waited for it
    assert sent_on == [True]
    run = plot.runs[-1]
    assert run.layout.accelerated
    assert run.status == "converged" and run.counts == [STEPS + 1]
    (line,) = [ln for c in plot.drawing().charts.values() for ln in c.lines]
    assert line.x[-1] == STEPS  # and every row drawn
    np.testing.assert_allclose(line.y[-1], np.asarray(hist.values["value"])[-1], rtol=1e-6)
    assert float(final) == np.float32(hist.values["value"][-1])
