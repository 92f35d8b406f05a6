"""Which leaves a plot leaves out as the step counter: a leaf the loop adds one to each step
(`Layout.step_counters`) whose values are the steps drawn. A counter from another start (a
carry ``k`` from 5) is a value of its own and is drawn. Synthetic runs, and one real loop."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import jaxhist_widget as jhw

from ...helpers.synthetic import FakeLoop, layout

ROWS = 20


def titles_of(live: jhw.LivePlot, start: float, lanes: int | None = None, **options) -> list:
    """The chart titles of a run whose leaf ``k`` is a step counter from ``start``."""
    counted = dataclasses.replace(layout(("k", "loss")), step_counters=(0,))
    k = start + np.arange(ROWS, dtype=np.float64)
    loss = 1.0 / (1.0 + k)
    with live:
        loop = FakeLoop(counted, lanes)
        if lanes is None:
            loop.send(k=k, loss=loss)
        else:
            loop.send(k=[k] * lanes, loss=[loss] * lanes)
        loop.end()
    return [f.title for f in live.figures]


@pytest.mark.parametrize("lanes", [None, 2])
def test_a_counter_of_the_steps_is_left_out(lanes) -> None:
    assert titles_of(jhw.LivePlot(), 0.0, lanes) == ["loss"]


@pytest.mark.parametrize("lanes", [None, 2])
def test_a_counter_from_another_start_is_drawn(lanes) -> None:
    live = jhw.LivePlot()
    assert titles_of(live, 5.0, lanes) == ["k", "loss"]
    assert live.panel.fields == ["k", "loss"]


def test_a_continued_runs_counter_that_goes_on_counting_is_left_out() -> None:
    # continue_steps draws the second run from step ROWS - 1: a counter that goes on from
    # there is the step axis as drawn.
    live = jhw.LivePlot(continue_steps=True, keep_runs=True)
    titles_of(live, 0.0)
    assert titles_of(live, ROWS - 1.0) == ["loss"]
    assert [len(f.marks) for f in live.figures] == [2]


def test_a_carry_counter_from_5_is_drawn_in_a_real_loop() -> None:
    live = jhw.LivePlot()
    with live:
        jhw.while_loop(
            lambda c: c[0] < 20,
            lambda c: (c[0] + 1, c[1] * 0.9),
            (5, 1.0),
            max_steps=100,
            record=lambda c: {"k": c[0], "x": c[1]},
        )
    assert [f.title for f in live.figures] == ["k", "x"]
