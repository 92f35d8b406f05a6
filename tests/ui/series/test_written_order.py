"""A plot draws its charts in the order the record was written, the headline metric first:
``{"loss": ..., "accuracy": ..., "grad_norm": ...}`` is drawn ``loss · accuracy · grad_norm``
and the panel lists its values so, from a ``jhw.scan``'s ``y``, a ``record=`` or a carry.

Before (issue 57) the charts came in JAX's sorted key order (``accuracy · grad_norm · loss``),
the loss last, below the fold in a side panel.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxhist_widget as jhw

from ...helpers.loops import training_sweep

WRITTEN = ("loss", "accuracy", "grad_norm", "val_loss")


@pytest.mark.parametrize("kind", ["scan", "while"])
def test_a_training_sweeps_charts_come_as_its_metrics_were_written(kind: str) -> None:
    rates = np.logspace(-3, -1, 4).astype(np.float32)
    live = jhw.LivePlot()
    with live:
        hist = jax.jit(jax.vmap(training_sweep(kind, 20, WRITTEN)))(rates)
    assert list(live.drawing().charts) == list(WRITTEN)
    assert live.panel.fields == list(WRITTEN)
    assert list(hist.values) == sorted(WRITTEN)  # the History is JAX's pytree, as lax's


def test_a_carry_recorded_as_is_comes_as_body_fun_writes_it() -> None:
    def body(c):
        return {"loss": c["loss"] * 0.5, "acc": 1.0 - c["loss"], "lr": c["lr"]}

    live = jhw.LivePlot()
    with live:  # a carry passed into jit reaches the loop with its keys sorted
        jax.jit(lambda c: jhw.while_loop(lambda c: c["loss"] > 0.01, body, c, max_steps=20))(
            {"loss": 1.0, "acc": 0.0, "lr": jnp.float32(0.1)}
        )
    assert list(live.drawing().charts) == ["loss", "acc", "lr"]


def test_a_nested_record_keeps_each_level_as_written() -> None:
    def record(c):
        return {"train": {"loss": c, "acc": 1 - c}, "val": {"loss": 2 * c, "acc": 1 - 2 * c}}

    live = jhw.LivePlot()
    with live:
        jhw.while_loop(lambda c: c > 0.1, lambda c: c / 2, 1.0, max_steps=9, record=record)
    assert list(live.drawing().charts) == ["train.loss", "train.acc", "val.loss", "val.acc"]
