"""``--tensorboard DIR`` of ``%jaxhist on`` and ``%%jaxhist``: the cells' runs become TensorBoard
event files, read back with TensorBoard's own readers. Run in a real IPython shell (a fresh
process, as a user's terminal IPython; the widget side is the kernel tests')."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from ..helpers import ROOT
from ..helpers.tensorboard import read_events, run_names

pytest.importorskip("tensorboard")
pytestmark = pytest.mark.slow

SHELL = textwrap.dedent(
    """
    import json, sys
    from IPython.terminal.interactiveshell import TerminalInteractiveShell

    shell = TerminalInteractiveShell.instance(colors="NoColor")
    for cell in json.loads(sys.argv[1]):
        print("=== CELL", flush=True)
        result = shell.run_cell(cell, store_history=True)
        print("=== OK" if result.success else "=== FAILED", flush=True)
    """
)


def test_the_magics_write_the_cells_runs_as_tensorboard_runs(tmp_path):
    halve = "_ = jhw.while_loop(lambda x: x > 1.0, lambda x: x / 2, {}, max_steps=20)"
    cells = [
        "%load_ext jaxhist_widget",
        "import jaxhist_widget as jhw",
        f"%jaxhist on --tensorboard {tmp_path / 'auto'}",
        halve.format(10.0),  # cell 4
        "%%jaxhist --name own\n" + halve.format(20.0),  # its own plot; still auto's files
        "pass",  # a cell without a run writes nothing
        "%jaxhist off",
        f"%%jaxhist --tensorboard {tmp_path / 'cell'} --name adam\n" + halve.format(40.0),
        halve.format(80.0),  # auto mode is off: no files
        "%jaxhist off --tensorboard x",  # options go with `on`
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "JAX_PLATFORMS": "cpu"}
    env["IPYTHONDIR"] = str(tmp_path / "ipython")
    out = subprocess.run(
        [sys.executable, "-c", SHELL, json.dumps(cells)],
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    results = [c.strip().splitlines()[-1] for c in out.stdout.split("=== CELL\n")[1:]]
    assert results == ["=== OK"] * (len(cells) - 1) + ["=== FAILED"], out.stdout + out.stderr
    assert f"tensorboard='{tmp_path / 'auto'}'" in out.stdout  # the state says where
    assert sorted(run_names(tmp_path / "auto")) == ["cell 4", "own"]
    assert sorted(run_names(tmp_path / "cell")) == ["adam"]
    steps, values, _ = read_events(tmp_path / "cell" / "adam").scalars["value"]
    assert values.tolist() == [40.0, 20.0, 10.0, 5.0, 2.5, 1.25, 0.625]
    assert steps.tolist() == list(range(7))
    assert (
        read_events(tmp_path / "auto" / "cell 4").texts[-1][1].endswith("converged after 4 steps")
    )
