"""A sweep's hyperparameter chart from the magics, in a real kernel: ``--lane-values NAME`` (and
``--lane-labels NAME``) name a variable of the notebook, as ``-o NAME`` writes one, and give the
plot what ``LivePlot(lane_values=...)`` has; ``--params-field`` / ``--params-best`` without lanes
to rank are refused naming the fix.

Before (issue 56, item 6) the magics had no way to give the lanes' values: ``%%jaxhist
--params-field acc --params-best max`` drew no hyperparameter chart, and nothing said why.
"""

from __future__ import annotations

import textwrap

import pytest

from ..helpers.kernels import Execution, KernelDriver, check_ok, printed

pytestmark = pytest.mark.kernel

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

SETUP = textwrap.dedent(
    """
    import json
    import jax, jax.numpy as jnp, numpy as np
    import jaxhist_widget as jhw
    %load_ext jaxhist_widget

    def train(lr):  # gradient descent on x**2: its accuracy rises, its best is its highest
        def body(c):
            k, x = c
            return k + 1, x - lr * 2 * x
        return jhw.while_loop(
            lambda c: c[0] < 200, body, (0, jnp.float32(2.0)), max_steps=200,
            record=lambda c: {"loss": c[1] ** 2, "acc": 1 / (1 + c[1] ** 2)})

    sweep = jax.jit(jax.vmap(train))
    rates = jnp.logspace(-3, -0.3, 16)

    def chart_report(plot, hist, param, values):
        title = f"acc vs {param}"
        best = plot.drawing().chart(title).line("acc best")
        acc = np.asarray(hist.values["acc"], np.float64)  # lanes, rows
        print("CHART", json.dumps(dict(
            titles=[f.title for f in plot.figures],
            options=[plot.params_field, plot.params_best],
            synced=plot.panel.param_lanes[title]["best"],  # what the page is sent
            best_is_highest=bool(np.array_equal(best.y, acc.max(axis=1))),
            x_are_values=bool(np.allclose(best.x, np.asarray(values))),
        )), flush=True)
    """
)


def views(run: Execution) -> int:
    return sum(
        WIDGET_VIEW in m["content"].get("data", {})
        for _, m in run.messages
        if m["msg_type"] in ("display_data", "execute_result")
    )


def stderr(run: Execution) -> str:
    return "".join(
        m["content"]["text"]
        for _, m in run.messages
        if m["msg_type"] == "stream" and m["content"]["name"] == "stderr"
    )


def refused(run: Execution, *says: str) -> None:
    content = run.reply["content"]
    assert content["status"] == "error" and content["ename"] == "UsageError", content
    text = "\n".join(run.errors) + content["evalue"]
    assert all(s in text for s in says), text
    assert not views(run), "a refused cell still showed a plot"


@pytest.fixture(scope="module")
def session(module_kernel: KernelDriver) -> KernelDriver:
    check_ok(module_kernel.execute(SETUP))
    return module_kernel


def test_the_cell_magic_draws_the_chart_of_the_lanes_it_names(session: KernelDriver) -> None:
    run = session.execute(
        "%%jaxhist -o p --lane-values rates --params-field acc --params-best max\n"
        "_, hist = sweep(rates)"
    )
    check_ok(run)
    assert views(run) == 1
    # read once the cell ended: its plot drew every row by then
    chart = printed(session.execute("chart_report(p, hist, 'rates', rates)"), "CHART")
    # the parameter named as given; the charts in the order the record is written
    assert chart["titles"] == ["loss", "acc", "acc vs rates"]
    assert chart["options"] == ["acc", "max"] and chart["synced"] == "max"
    assert chart["best_is_highest"] and chart["x_are_values"]
    # numbers as labels are the lanes' values too, as LivePlot(lane_labels=rates)
    labels = session.execute(
        "%%jaxhist -o q --lane-labels rates --params-field acc --params-best max\n"
        "_, hist = sweep(rates)"
    )
    check_ok(labels)
    chart = printed(session.execute("chart_report(q, hist, 'lane label', rates)"), "CHART")
    assert chart["best_is_highest"] and chart["x_are_values"]


def test_the_cell_magic_refuses_what_it_cannot_draw_before_the_cell_runs(
    session: KernelDriver,
) -> None:
    refused(
        session.execute("%%jaxhist --params-field acc --params-best max\nran = 1\n"),
        "--params-field and --params-best",
        "--lane-values rates",
    )
    refused(
        session.execute("%%jaxhist --lane-values lrs --params-field acc\nlrs = rates\nran = 1\n"),
        "--lane-values lrs: no variable 'lrs'",
        "in an earlier cell",
    )
    refused(
        session.execute("%%jaxhist --lane-values json\nran = 1\n"),
        "--lane-values json: lane_values must be one number per vmap lane",
    )
    names = "names = [f'lr={float(r):.3g}' for r in rates]\n"
    check_ok(session.execute(names))
    refused(
        session.execute("%%jaxhist --lane-labels names --params-best max\nran = 1\n"),
        "--lane-labels names: no number per lane",
    )
    assert "NameError" in "\n".join(session.execute("ran").errors), "a refused cell ran"


def test_auto_mode_reads_the_name_when_each_cells_plot_is_made(session: KernelDriver) -> None:
    on = session.execute(
        "%jaxhist on -o auto --lane-values lrs --params-field acc --params-best max"
    )
    check_ok(on)
    assert "--lane-values lrs" in on.stdout
    try:
        # the cell defines the values itself, before its loop: its plot is made then
        check_ok(session.execute("lrs = rates * 2\n_, hist = sweep(lrs)"))
        chart = printed(session.execute("chart_report(auto, hist, 'lrs', lrs)"), "CHART")
        assert chart["titles"][-1] == "acc vs lrs" and chart["best_is_highest"]
        assert chart["x_are_values"]
        # a cell without them: its plot is drawn without the chart and a warning says why
        gone = session.execute("del lrs\n_, hist = sweep(rates)")
        check_ok(gone)
        titles = session.execute("print('TITLES', json.dumps([f.title for f in auto.figures]))")
        assert printed(titles, "TITLES") == ["loss", "acc"]
        assert "--lane-values lrs: no variable 'lrs'" in stderr(gone), stderr(gone)
        assert "before the cell's first loop" in stderr(gone)
    finally:
        check_ok(session.execute("%jaxhist off"))
    refused(
        session.execute("%jaxhist on --params-best max"),
        "--params-best: a sweep's hyperparameter chart ranks its lanes by their values",
    )
