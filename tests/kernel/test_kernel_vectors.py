"""Vectors and paths in a real kernel: a ``%%jaxhist --paths x`` cell running a compute-bound
gradient descent on the Rosenbrock function, recording its 2-D iterate and 50 per-class losses.
The path chart is updated while the cell runs (its line's comm gets new points before the run
ends), and the picture that the saved notebook keeps (the output a run's end replaces) draws the
same: the band of the 50 losses and the path with its start and end."""

from __future__ import annotations

import textwrap

import pytest

from jaxhist_widget.ui.plot._outputs import picture_svg

from ..helpers.kernels import KernelDriver, check_ok, printed

pytestmark = pytest.mark.kernel

STEPS = 40_000  # ~2 s here

SETUP = textwrap.dedent(
    f"""
    import json
    import jax, jax.numpy as jnp
    import jaxhist_widget as jhw
    %load_ext jaxhist_widget

    A = jax.random.normal(jax.random.key(0), (256, 256)) / 16.0
    RATES = 1.0 + jnp.arange(50) / 10.0

    def rosenbrock(x):
        return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2

    def body(c):  # a gradient step, beside compute-bound work (no host call in the step)
        k, x, h = c
        h = jax.lax.fori_loop(0, 16, lambda _, h: jnp.tanh(A @ h), h)
        return k + 1, x - 1.5e-3 * jax.grad(rosenbrock)(x), h

    def record(c):
        loss = rosenbrock(c[1])
        return {{"loss": loss, "x": c[1], "class_loss": loss * RATES}}

    descend = jax.jit(lambda x0: jhw.while_loop(
        lambda c: c[0] < {STEPS}, body, (0, x0, jnp.ones(256)), max_steps={STEPS},
        record=record))
    """
)


def test_a_path_streams_live_and_the_saved_picture_draws_band_and_path(
    kernel: KernelDriver,
) -> None:
    check_ok(kernel.execute(SETUP))
    run = kernel.execute(
        "%%jaxhist -o p --paths x\nfinal, hist = descend(jnp.array([-1.5, 2.0]))", timeout=300
    )
    check_ok(run)
    check = kernel.execute(
        "path = [f for f in p.figures if f.title == 'x[1] vs x[0]'][0]\n"
        "line = path.marks[0]\n"
        "band = [f for f in p.figures if f.title == 'class_loss'][0]\n"
        "print('STATE', json.dumps(dict(\n"
        "    titles=[f.title for f in p.figures], status=p.panel.status, notes=p.drawing().notes,\n"
        "    line=line.model_id, points=len(line.x), first=[float(line.x[0]), float(line.y[0])],\n"
        "    last=[float(line.x[-1]), float(line.y[-1])], final=final[1].tolist(),\n"
        "    band=[m.fill for m in band.marks])), flush=True)"
    )
    check_ok(check)
    state = printed(check, "STATE")
    # (in the order the record writes them, its path last)
    assert state["titles"] == ["loss", "x", "class_loss", "x[1] vs x[0]"], state
    assert state["status"] == "converged" and state["notes"] == []
    assert state["band"] == ["inside", "inside", "none"]  # two bands under the median
    assert state["first"] == [-1.5, 2.0]  # the path's start and end, exactly
    assert state["last"] == pytest.approx(state["final"], rel=1e-6)
    # live: the path line got new points several times while the cell was still running
    ended = max(t for t, m in run.messages if m["msg_type"] == "update_display_data")
    updates = [
        t
        for t, m in run.messages
        if m["msg_type"] == "comm_msg"
        and m["content"]["comm_id"] == state["line"]
        and "x" in m["content"]["data"].get("state", {})
    ]
    assert len([t for t in updates if t < ended]) >= 3, updates
    # the picture the notebook keeps (replaced at the run's end) draws the band and the path
    (svg,) = [
        picture_svg(m["content"]["data"])
        for _, m in run.messages
        if m["msg_type"] == "update_display_data"
    ][-1:]
    assert svg.count('class="jhw-band"') == 2 and 'data-title="x[1] vs x[0]"' in svg
    assert 'class="jhw-path-ring"' in svg and 'class="jhw-path-dot"' in svg
    assert "finished" in svg and "error" not in svg
