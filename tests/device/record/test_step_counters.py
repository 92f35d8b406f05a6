"""A carry leaf that counts the steps (``i + 1``) is the step axis again: the plot leaves it out
by default, live and reloaded from a store, and draws it when ``fields=`` names it."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

import jaxhist_widget as jhw


def _counters(body, init, record=None):
    with jhw.Recorder() as rec:
        jhw.while_loop(lambda c: True, body, init, max_steps=3, record=record)
    return rec.runs[-1].layout.step_counters


def _scaled(c):
    return c[0] + 1, c[1] * 0.5


@pytest.mark.parametrize(
    ("body", "init", "record", "expected"),
    [
        (_scaled, (0, 1.0), None, (0,)),  # a Python int, weakly typed
        (lambda c: (1 + c[0], c[1]), (jnp.int32(0), 1.0), None, (0,)),
        (lambda c: {"x": c["x"] - 1.0, "i": c["i"] + 1}, {"i": 0, "x": 1.0}, None, (0,)),
        (lambda c: c + 1, jnp.int32(7), None, (0,)),  # it counts from any start
        (lambda c: (c[0] + 2, c[1]), (0, 1.0), None, ()),  # not by one
        (lambda c: (c[0] + 1.0, c[1]), (0.0, 1.0), None, ()),  # a float: not a counter
        (lambda c: (c[0] + c[0], c[1]), (1, 1.0), None, ()),
        (lambda c: (c[0] + 1, c[1]), (jnp.zeros(2, jnp.int32), 1.0), None, ()),  # a vector
        # a record that keeps the counter as it is, and one that derives from it
        (_scaled, (0, 1.0), lambda c: {"loss": c[1], "step": c[0]}, (1,)),
        (_scaled, (0, 1.0), lambda c: {"step": c[0] * 2, "loss": c[1]}, ()),
    ],
)
def test_the_leaves_that_count_the_steps_are_found_at_trace_time(body, init, record, expected):
    assert _counters(body, init, record) == expected


def test_found_under_jit_and_vmap():
    def solve(x):
        return jhw.while_loop(lambda c: c[0] < 5, _scaled, (0, x), max_steps=9)

    for fn, x in [(jax.jit(solve), 1.0), (jax.jit(jax.vmap(solve)), jnp.ones(3))]:
        with jhw.Recorder() as rec:
            fn(x)
        assert rec.runs[-1].layout.step_counters == (0,)


def _titles(live):
    return [f.title for f in live.figures]


def test_a_plot_leaves_the_counter_out_unless_asked_for_it():
    def run(**options):
        live = jhw.LivePlot(**options)
        with live:
            jhw.while_loop(lambda c: c[0] < 10, _scaled, (0, 1.0), max_steps=20)
        return live

    live = run()
    assert _titles(live) == ["[1]"]
    assert live.panel.fields == ["[1]"]
    assert len(live.history()) == 2  # recorded and streamed all the same
    assert _titles(run(fields=["[0]", "[1]"])) == ["[0]", "[1]"]


def test_a_carry_that_is_only_a_counter_is_drawn():
    live = jhw.LivePlot()
    with live:
        jhw.while_loop(lambda i: i < 10, lambda i: i + 1, 0, max_steps=20)
    assert _titles(live) == ["value"]


def test_a_stored_run_keeps_its_counters(tmp_path):
    path = tmp_path / "runs.db"
    with jhw.Store(path):
        jhw.while_loop(lambda c: c[0] < 10, _scaled, (0, 1.0), max_steps=20)
    [run] = jhw.load_runs(path)
    assert run.layout.step_counters == (0,)
    live = jhw.LivePlot()
    live.add_run(run)
    assert _titles(live) == ["[1]"]
