"""The benchmark scripts keep running (at tiny sizes); their numbers are not judged here."""

from __future__ import annotations

import subprocess
import sys

import pytest

from .helpers import ROOT

# A fresh Python process per case: kept out of the quick subset (see pyproject.toml).
pytestmark = [pytest.mark.slow, pytest.mark.bench]


@pytest.mark.parametrize(
    ("script", "args", "expect"),
    [
        ("overhead.py", ["--quick"], "one host call per chunk for all lanes"),
        ("decimation.py", [], "1,000,000"),
        ("devices.py", ["--quick"], "one run per call, every row of every lane on the host"),
        ("interrupt.py", ["--quick"], "every interrupt stopped its run with all its rows"),
        ("liveview.py", ["--quick"], "updates/s over the whole run"),
        ("vectors.py", ["--quick"], "field drawn as"),
        ("store.py", ["--quick"], "rows read back"),
        ("tensorboard.py", ["--quick"], "µs/row (ours)"),
        ("store_format.py", ["--quick"], "blocks: the cost of a copy"),
        ("compile.py", ["--quick"], "compile: jhw adds"),
        ("accelerator.py", ["--quick", "--stall", "1"], "nothing attached <= 1.1x stream=False"),
        ("zoom.py", ["--quick"], "its cost follows w, not n"),
        ("lanes.py", ["--quick"], "streaming <= 1.5x the copy of its bytes"),
        ("loops.py", ["--quick"], "each watched solve: one run of its steps"),
        ("picture.py", ["--quick"], "largest picture"),
        ("sweep_view.py", ["--quick"], "the converged lanes fill"),
        ("stages.py", ["--quick"], "every staged row equals the unstaged loop's"),
    ],
)
def test_benchmark_script_runs(script, args, expect):
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert expect in out.stdout
    assert out.stdout.startswith("jax ") or script in ("browser_draw.py", "liveview.py", "store.py")
    assert "jhw+rec |" in out.stdout or script != "overhead.py"
