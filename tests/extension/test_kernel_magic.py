"""The notebook extension in a real kernel: ``%%jaxhist`` and ``%jaxhist on/off``, and in a plain
IPython terminal.

A real ipykernel through `jupyter_client`, as in the other kernel tests: the widget views a cell
shows are its ``display_data`` messages carrying a widget model, the plot moving is its panel's
``comm_msg`` updates on iopub, and ■ is ``KernelManager.interrupt_kernel()``. The loops are
compute-bound: each step is 16 ``x = tanh(A @ x)`` with a 256x256 ``A``, no Python in it, so
the host callbacks run on XLA's threads while the main thread sits inside the jitted call. The
kernel tests share one kernel and run in order, like the cells of a notebook.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import time
from typing import Any

import pytest

from ..helpers import ROOT
from ..helpers.kernels import Execution, KernelDriver, check_ok, message_time, printed

pytestmark = pytest.mark.kernel

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
LIVE_STEPS = 60_000  # ~3 s here (~50 µs a step)
LONG_STEPS = 5_000_000  # ~4 minutes unless interrupted
ANSI = re.compile(r"\x1b\[[0-9;]*m")

SETUP = textwrap.dedent(
    f"""
    import asyncio, json
    import jax, jax.numpy as jnp, numpy as np
    import jaxhist_widget as jhw
    %load_ext jaxhist_widget

    A = jax.random.normal(jax.random.key(0), (256, 256)) / 16.0
    x0 = jnp.ones(256)

    def heavy(c):  # compute-bound: pure XLA work, no host call in the step
        i, x = c
        return i + 1, jax.lax.fori_loop(0, 16, lambda _, x: jnp.tanh(A @ x), x)

    def solver(steps):
        return jax.jit(lambda x0: jhw.while_loop(
            lambda c: c[0] < steps, heavy, (0, x0), max_steps=steps,
            record=lambda c: {{"i": c[0], "norm": jnp.linalg.norm(c[1])}}))

    live_run, short_run, long_run = solver({LIVE_STEPS}), solver(300), solver({LONG_STEPS})

    def report(plot, final, hist, tag="REPORT"):
        host, device = plot.history(), hist.to_numpy()
        print(tag, json.dumps(dict(
            length=int(hist.length), final_i=int(final[0]), status=plot.runs[-1].status,
            host_rows=len(host["i"]), same_rows=bool(
                np.array_equal(host["i"], device["i"])
                and np.array_equal(host["norm"], device["norm"])),
            runs=len(plot.runs), run_number=plot.panel.run_number,
        )), flush=True)
    """
)


# ----------------------------------------------------------------------------- helpers
def widget_views(run: Execution) -> list[str]:
    """Model ids of the widget views the cell displayed (each one a view in the notebook)."""
    return [
        m["content"]["data"][WIDGET_VIEW]["model_id"]
        for _, m in run.messages
        if m["msg_type"] in ("display_data", "execute_result")
        and WIDGET_VIEW in m["content"].get("data", {})
    ]


def comm_opens(run: Execution) -> list[dict[str, Any]]:
    return [m for _, m in run.messages if m["msg_type"] == "comm_open"]


def panel_comm(run: Execution) -> str | None:
    panels = [
        m["content"]["comm_id"]
        for m in comm_opens(run)
        if "stop_clicks" in m["content"]["data"].get("state", {})
    ]
    assert len(panels) <= 1, f"{len(panels)} LivePanels opened in one cell"
    return panels[0] if panels else None


def panel_stop_mode(run: Execution, panel: str) -> str | None:
    """The panel's last ``stop_mode`` (how its view sends a Stop click) seen in the cell."""
    modes = [
        m["content"]["data"]["state"]["stop_mode"]
        for _, m in run.messages
        if m["msg_type"] in ("comm_open", "comm_msg")
        and m["content"].get("comm_id") == panel
        and "stop_mode" in m["content"].get("data", {}).get("state", {})
    ]
    return modes[-1] if modes else None


def panel_steps(run: Execution, panel: str) -> list[tuple[float, int]]:
    """(kernel time, step) of every panel update the cell sent."""
    return [
        (message_time(m), m["content"]["data"]["state"]["step"])
        for _, m in run.messages
        if m["msg_type"] == "comm_msg"
        and m["content"]["comm_id"] == panel
        and "step" in m["content"]["data"].get("state", {})
    ]


def check_one_view_of_its_plot(run: Execution) -> str:
    """The cell shows exactly one widget view: the container of the cell's LivePanel, in the
    cell's own output (the display comes from the thread that runs the callbacks)."""
    views = widget_views(run)
    assert len(views) == 1, f"{len(views)} widget views in the cell: {views}"
    panel = panel_comm(run)
    assert panel is not None, "no LivePanel was opened"
    (container,) = [m for m in comm_opens(run) if m["content"]["comm_id"] == views[0]]
    assert f"IPY_MODEL_{panel}" in container["content"]["data"]["state"]["children"]
    cell_id = run.reply["parent_header"]["msg_id"]
    shown = [
        m for _, m in run.messages if m["msg_type"] == "display_data" and WIDGET_VIEW in str(m)
    ]
    assert shown[0]["parent_header"]["msg_id"] == cell_id, "the view went to another cell"
    return panel


@pytest.fixture(scope="module")
def session(module_kernel: KernelDriver) -> KernelDriver:
    setup = module_kernel.execute(SETUP)
    check_ok(setup)
    assert not widget_views(setup), "loading the extension displayed something"
    return module_kernel


# ------------------------------------------------------------------------- cell magic
def test_magic_shows_one_plot_that_moves_during_the_cell(session: KernelDriver) -> None:
    run = session.execute(
        "%%jaxhist -o live --title magic\n"
        "final, hist = live_run(x0)\n"
        'print("FINAL", flush=True)\n'
        "report(live, final, hist)"
    )
    check_ok(run)
    panel = check_one_view_of_its_plot(run)
    # The plot is the first output: above everything the cell prints.
    kinds = [m["msg_type"] for _, m in run.messages if m["msg_type"] in ("display_data", "stream")]
    assert kinds[0] == "display_data", kinds

    (final_at,) = [
        message_time(m)
        for _, m in run.messages
        if m["msg_type"] == "stream" and "FINAL" in m["content"]["text"]
    ]
    updates = panel_steps(run, panel)
    during = sorted({step for t, step in updates if t < final_at and 0 < step < LIVE_STEPS})
    assert len(during) >= 5, f"the panel moved {len(during)} times during the loop: {during}"
    assert [s for _, s in updates] == sorted(s for _, s in updates), "the step went backwards"
    assert updates[-1][1] == LIVE_STEPS

    report = printed(run, "REPORT")
    assert report["status"] == "converged"
    assert report["length"] == report["host_rows"] == LIVE_STEPS + 1
    assert report["same_rows"], "host rows differ from the device history"


def test_magic_options_and_the_cells_value(session: KernelDriver) -> None:
    run = session.execute(
        "%%jaxhist -o p --title 'two words' --log-y --keep-runs --fields norm --max-points 50"
        " --charts shared\n"
        "final, hist = short_run(x0)\n"
        "final, hist = short_run(x0 + 1)\n"
        "int(hist.length)"
    )
    check_ok(run)
    check_one_view_of_its_plot(run)
    (value,) = [m["content"]["data"] for _, m in run.messages if m["msg_type"] == "execute_result"]
    assert value["text/plain"] == "301"  # the last expression is the cell's value, as usual
    quiet = session.execute("%%jaxhist\nint(hist.length);")  # and ";" hides it, as usual
    check_ok(quiet)
    assert not [m for _, m in quiet.messages if m["msg_type"] == "execute_result"]
    check = session.execute(
        "report(p, final, hist)\n"
        'print("OPTIONS", json.dumps([p.panel.title, p.log_y, p.keep_runs, p.panel.fields,'
        " p.max_points, p.drawing().mode]))"
    )
    check_ok(check)
    assert printed(check, "OPTIONS") == ["two words", True, True, ["norm"], 50, "shared"]
    report = printed(check, "REPORT")
    assert report["runs"] == 2 and report["run_number"] == 2  # both runs, kept
    assert report["same_rows"] and report["host_rows"] == 301


def test_the_magic_names_the_cells_runs(session: KernelDriver) -> None:
    named = session.execute(
        "%%jaxhist -o named --name 'adam lr=0.1' --keep-runs\n"
        "final, hist = short_run(x0)\nfinal, hist = short_run(x0 + 1)\n"
        "print('NAMES', json.dumps([[r.name for r in named.runs],"
        " [e['name'] for e in named.panel.runs]]))"
    )
    check_ok(named)
    given = "adam lr=0.1"
    assert printed(named, "NAMES") == [[given, given], [given, f"{given} (2)"]]
    unnamed = session.execute(
        "%%jaxhist -o unnamed\nfinal, hist = short_run(x0)\n"
        "print('NAMES', json.dumps([r.name for r in unnamed.runs]))"
    )
    check_ok(unnamed)
    number = unnamed.reply["content"]["execution_count"]
    assert printed(unnamed, "NAMES") == [f"cell {number}"]  # after the cell, as its prompt


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("--max-points 2", "argument --max-points: must be in 5..4000"),
        ("--charts grid", "argument --charts: invalid choice: 'grid'"),
        ("--vectors norm", "argument --vectors: invalid choice: 'norm'"),
        ("--paths x:y:z", "a path is a leaf of two components or a pair x:y"),
        ("--log", "unrecognized arguments: --log"),  # no abbreviations
        ("-o 2x", "'2x' is not a Python name"),
        ("--fields norm,,i", "empty field name"),
        ("--title", "argument --title: expected one argument"),
    ],
)
def test_magic_rejects_bad_options_with_the_usage(
    session: KernelDriver, line: str, message: str
) -> None:
    run = session.execute(f"%%jaxhist {line}\nran = True\n")
    assert run.reply["content"]["status"] == "error"
    assert run.reply["content"]["ename"] == "UsageError"
    text = "\n".join(run.errors) + run.reply["content"]["evalue"]
    assert message in text, text
    # (the flags in the order of LivePlot's options, the table they are made of)
    assert "usage: %%jaxhist [-o NAME] [--fields A,B] [--log-y]" in text, text
    assert not widget_views(run) and not comm_opens(run), "a bad cell still made a plot"
    assert "NameError" in "\n".join(session.execute("ran").errors), "the cell body ran"


def test_an_error_in_the_cell_fails_the_cell(session: KernelDriver) -> None:
    run = session.execute("%%jaxhist\nfinal, hist = short_run(x0)\nz = 1 / 0\nprint('on')")
    assert run.reply["content"]["status"] == "error"  # Run All stops here
    assert run.reply["content"]["ename"] == "ZeroDivisionError"
    assert "on" not in run.stdout
    # The traceback names the cell as its prompt does, and the failing line by its number in
    # the cell (the magic line is line 1), however many context lines IPython prints.
    text = ANSI.sub("", "\n".join(run.errors))
    number = run.reply["content"]["execution_count"]
    assert re.findall(r"Cell In\[(\d+)\], line (\d+)", text) == [(str(number), "3")], text
    assert re.search(r"^-+> 3 z = 1 / 0$", text, re.MULTILINE), text
    assert "run_cell_magic" not in text and "_extension" not in text, "the magic's frames show"


def test_a_cell_after_another_magic_still_names_its_own_number(session: KernelDriver) -> None:
    # %%jaxhist called as a cell magic (here through run_cell_magic) runs its body itself.
    run = session.execute(
        "get_ipython().run_cell_magic('jaxhist', '', 'final, hist = short_run(x0)\\n1 / 0')"
    )
    assert run.reply["content"]["ename"] == "ZeroDivisionError"
    text = ANSI.sub("", "\n".join(run.errors))
    number = str(run.reply["content"]["execution_count"])
    assert {n for n, _ in re.findall(r"Cell In\[(\d+)\], line (\d+)", text)} == {number}, text
    assert "_extension" not in text


def test_a_jaxhist_cell_can_await(session: KernelDriver) -> None:
    run = session.execute(
        "%%jaxhist -o awaited\nimport asyncio\n"
        "final, hist = await asyncio.to_thread(short_run, x0)\nreport(awaited, final, hist)"
    )
    check_ok(run)
    check_one_view_of_its_plot(run)
    assert printed(run, "REPORT")["same_rows"]


# --------------------------------------------------------------------------- auto mode
def test_auto_mode_plots_only_cells_with_a_run(session: KernelDriver) -> None:
    on = session.execute("%jaxhist on --title auto -o auto")
    check_ok(on)
    assert "jaxhist auto mode: on (title='auto', -o auto)" in on.stdout
    assert not widget_views(on)

    two_runs = session.execute(
        "final, hist = short_run(x0)\nfinal, hist = live_run(x0)\nreport(auto, final, hist)"
    )
    check_ok(two_runs)
    panel = check_one_view_of_its_plot(two_runs)  # several runs of a cell share its plot
    report = printed(two_runs, "REPORT")
    assert report["run_number"] == 2 and report["same_rows"]
    assert report["host_rows"] == LIVE_STEPS + 1
    during = {s for _, s in panel_steps(two_runs, panel) if 300 < s < LIVE_STEPS}
    assert len(during) >= 5, f"the auto plot moved {len(during)} times during the run"
    # the cell's sink is armed for the whole cell: a Stop click is a kernel interrupt (as ■)
    assert panel_stop_mode(two_runs, panel) == "interrupt"

    # the cell's runs are named after it, as its prompt numbers it
    names = session.execute(
        "short_run(x0)\nprint('NAMES', json.dumps([r.name for r in auto.runs]))"
    )
    check_ok(names)
    number = names.reply["content"]["execution_count"]
    assert printed(names, "NAMES") == [f"cell {number}"]

    no_run = session.execute("y = 2 + 2\nprint(y)")
    check_ok(no_run)
    assert not widget_views(no_run) and not comm_opens(no_run), "a cell without a run drew"

    # A %%jaxhist cell in auto mode has one plot: its own, and only it is attached.
    magic = session.execute(
        "%%jaxhist -o own\nfinal, hist = short_run(x0)\nreport(own, final, hist)\n"
        'print("ATTACHED", json.dumps([type(s).__name__ for s in jhw._host.HUB.attached()]))'
    )
    check_ok(magic)
    check_one_view_of_its_plot(magic)
    assert printed(magic, "ATTACHED") == ["LivePlot"]

    # So has a cell with its own `with live:`: the run is drawn there, not twice.
    explicit = session.execute(
        "mine = jhw.LivePlot(title='mine')\ndisplay(mine)\n"
        "with mine:\n    final, hist = short_run(x0)\nreport(mine, final, hist)"
    )
    check_ok(explicit)
    check_one_view_of_its_plot(explicit)
    assert printed(explicit, "REPORT")["same_rows"]

    # An async cell (the loop in a worker thread) gets its plot too.
    awaited = session.execute(
        "final, hist = await asyncio.to_thread(short_run, x0)\nreport(auto, final, hist)"
    )
    check_ok(awaited)
    check_one_view_of_its_plot(awaited)
    assert printed(awaited, "REPORT")["same_rows"]

    off = session.execute("%jaxhist off\nfinal, hist = short_run(x0)")
    check_ok(off)
    assert "jaxhist auto mode: off" in off.stdout
    assert not widget_views(off), "the cell that turned auto mode off still drew"
    after = session.execute("final, hist = short_run(x0)")
    check_ok(after)
    assert not widget_views(after) and not comm_opens(after), "auto mode did not end"
    state = session.execute("%jaxhist")
    assert state.stdout.strip() == "jaxhist auto mode: off"


# ------------------------------------------------------------------ interrupt and Stop
class ActAfter:
    """Interrupts the kernel (■), or clicks the plot's Stop, once its panel shows the loop well
    under way."""

    def __init__(self, kernel: KernelDriver, how: str, after_step: int = 2000) -> None:
        self.kernel, self.how, self.after_step = kernel, how, after_step
        self.panel: str | None = None
        self.at: float | None = None
        self.step: int | None = None

    def __call__(self, msg: dict[str, Any]) -> None:
        content = msg["content"]
        if msg["msg_type"] == "comm_open" and "stop_clicks" in str(content.get("data")):
            self.panel = content["comm_id"]
        if msg["msg_type"] != "comm_msg" or content.get("comm_id") != self.panel:
            return
        step = content["data"].get("state", {}).get("step")
        if self.at is None and step is not None and step >= self.after_step:
            self.at, self.step = time.monotonic(), step
            if self.how == "interrupt":
                self.kernel.interrupt()
            else:  # the message a view sends when Stop is clicked
                self.kernel.send_comm_update(self.panel, {"stop_clicks": 1})


@pytest.mark.parametrize(
    ("where", "how"),
    [
        ("magic", "interrupt"),
        ("auto", "interrupt"),
        ("auto-async", "stop_click"),  # an awaiting cell handles the click during the run
    ],
)
def test_a_stop_ends_the_loop_and_the_cell_goes_on(
    session: KernelDriver, where: str, how: str
) -> None:
    # Without a working stop the loop runs for minutes: the timeout below fails the test.
    call = "await asyncio.to_thread(long_run, x0)" if where == "auto-async" else "long_run(x0)"
    cell = f"final, hist = {call}\nprint('AFTER', flush=True)\nreport(plot, final, hist)"
    if where == "magic":
        cell = "%%jaxhist -o plot\n" + cell
    else:
        check_ok(session.execute("%jaxhist on -o plot"))
    watcher = ActAfter(session, how)
    try:
        run = session.execute(cell, on_message=watcher, timeout=90)
    finally:
        if where != "magic":
            session.execute("%jaxhist off")
    if how == "interrupt":
        # The press stopped the loop; the cell ran to its end, then ends as interrupted so
        # that Run All stops there (one line, no traceback).
        assert run.reply["content"]["status"] == "error", run.reply["content"]
        assert run.reply["content"]["ename"] == "CellStopped"
        assert [e.count("\n") for e in run.errors] == [0], run.errors
    else:  # a Stop click while the cell awaits is no interrupt: the cell is ok
        check_ok(run)
    assert watcher.at is not None, "the loop never got under way"
    assert "AFTER" in run.stdout, "the rest of the cell did not run"
    report = printed(run, "REPORT")
    assert report["status"] == "stopped"
    assert watcher.step <= report["length"] - 1 < LONG_STEPS, report
    assert report["final_i"] == report["length"] - 1
    assert report["host_rows"] == report["length"] and report["same_rows"], report
    # It ended at the next chunk, not at the end of the loop (minutes away): generous bound.
    took = run.reply_received - watcher.at
    print(
        f"\n{where}, {how}: at step {watcher.step}, stopped at {report['length'] - 1}, "
        f"cell done {took:.2f} s later"
    )
    assert took < 30.0


@pytest.mark.parametrize("where", ["magic", "auto", "with"])
def test_an_interrupt_during_run_all_stops_the_queued_cells(
    session: KernelDriver, where: str
) -> None:
    # What Run All sends: every cell at once, each with stop_on_error. Without the package, ■
    # fails the running cell and the kernel aborts the rest; so it must be with it, while the
    # stopped cell's results stay assigned.
    cell = "final, hist = long_run(x0)\nAFTER = int(hist.length)"
    if where == "magic":
        cell = "%%jaxhist -o plot\n" + cell
    elif where == "with":
        cell = "plot = jhw.LivePlot()\ndisplay(plot)\nwith plot:\n    " + cell.replace(
            "\n", "\n    "
        )
    else:
        check_ok(session.execute("%jaxhist on -o plot"))
    kc = session.client
    try:
        watcher = ActAfter(session, "interrupt")
        first = session.execute(cell, on_message=watcher, timeout=90, then=["NEXT = 1", "NEXT = 2"])
    finally:
        if where == "auto":
            session.execute("%jaxhist off")
    assert watcher.at is not None, "the loop never got under way"
    assert first.reply["content"]["status"] == "error", first.reply["content"]
    assert [r["content"]["status"] for r in first.queued] == ["aborted", "aborted"]
    check = session.execute("print('STATE', AFTER == int(hist.length), 'NEXT' in dir())")
    check_ok(check)
    assert "STATE True False" in check.stdout, check.stdout
    session.execute("del AFTER")
    assert kc.is_alive()


# ---------------------------------------------------------------------- plain IPython
TERMINAL = textwrap.dedent(
    """
    import json, sys
    from IPython.terminal.interactiveshell import TerminalInteractiveShell

    shell = TerminalInteractiveShell.instance(colors="NoColor")
    cells = json.loads(sys.argv[1])
    for cell in cells:
        print("=== CELL", flush=True)
        result = shell.run_cell(cell, store_history=True)
        print("=== OK" if result.success else "=== FAILED", flush=True)
    """
)

TERMINAL_CELLS = [
    "%load_ext jaxhist_widget",
    "import jax, jax.numpy as jnp, numpy as np, jaxhist_widget as jhw\n"
    "f = jax.jit(lambda x: jhw.while_loop(lambda x: x > 1, lambda x: x / 2, x, max_steps=20))",
    "%%jaxhist -o live\nx, hist = f(100.0)",
    "assert np.array_equal(live.history(), hist.to_numpy()) and len(live.history()) == 8",
    "%%jaxhist\nx, hist = f(10.0)",
    "%jaxhist on -o auto",
    "x, hist = f(1000.0)\nx2, hist2 = f(3.0)",
    "assert np.array_equal(auto.history(), hist2.to_numpy()) and auto.panel.run_number == 2",
    "%jaxhist off",
    "%%jaxhist --max-points 1\npass",
]


def test_plain_ipython_records_and_says_once_there_is_no_frontend(tmp_path) -> None:
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "IPYTHONDIR": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", TERMINAL, json.dumps(TERMINAL_CELLS)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=180,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    cells = out.stdout.split("=== CELL\n")[1:]
    assert len(cells) == len(TERMINAL_CELLS), out.stdout + out.stderr
    results = [c.strip().splitlines()[-1] for c in cells]
    assert results == ["=== OK"] * (len(TERMINAL_CELLS) - 1) + ["=== FAILED"], out.stdout
    assert out.stdout.count("no widget frontend") == 1, out.stdout  # said once, not per cell
    assert "no widget frontend" in cells[2]  # at the first plot
    assert "VBox(" not in out.stdout and "LivePanel(" not in out.stdout  # no widget reprs
    bad = cells[-1] + out.stderr
    assert "must be in 5..4000" in bad and "usage: %%jaxhist" in bad, bad
