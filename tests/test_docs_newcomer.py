"""The README's docs commands work on a fresh machine, as a newcomer runs them: in a new virtual
environment, from a copy of the repository, ``pip install -e ".[docs]"`` then ``python -m mkdocs
build --strict``, exactly as the README's Docs section writes them. The build runs the
tutorials, so the ``docs`` extra must bring what they need (a kernel, optax, the adapters'
libraries); their math comes out as MathML, which needs no script at view time.

Before (issue 50) the build stopped with ``ModuleNotFoundError: No module named 'nbclient'``: the
test environment had what the docs extra lacked, so no test saw it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .helpers import ROOT

# A fresh environment and everything the docs need installed into it: minutes (pip's download
# cache helps), out of the quick subset.
pytestmark = [pytest.mark.slow, pytest.mark.site]

#: The install (cached downloads) and the build (it runs the tutorials) together.
TIMEOUT_S = 1800


def readme_docs_commands() -> str:
    """The bash block of the README's Docs section, as written."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Docs\n", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```bash\n(.*?)```", section, re.DOTALL)
    return block


def copy_of_the_repository(to: Path) -> Path:
    """The repository's files as a clone has them (tracked, and new ones git does not ignore),
    without what a build left here (site/, a venv, caches)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            target = to / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return to


@pytest.mark.skipif(
    bool(os.environ.get("PIP_CONSTRAINT")),
    reason="pinned to the oldest versions here: a newcomer's pip resolves the newest",
)
def test_the_readmes_docs_commands_build_the_site_in_a_fresh_environment(tmp_path: Path) -> None:
    commands = readme_docs_commands()
    assert 'pip install -e ".[docs]"' in commands and "mkdocs build --strict" in commands
    repo = copy_of_the_repository(tmp_path / "jaxhist_widget")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    # A newcomer's shell: this environment's own variables are not theirs.
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PIP_CONSTRAINT", "JUPYTER_PATH")
    }
    env["PATH"] = os.pathsep.join([str(venv / "bin"), env.get("PATH", "")])
    out = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", f"source {venv}/bin/activate\n{commands}"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert out.returncode == 0, (out.stdout[-3000:], out.stderr[-6000:])
    site = repo / "site"
    assert (site / "index.html").is_file()
    sweep = (site / "tutorials" / "03_vmap_sweep.html").read_text(encoding="utf-8")
    assert '<img class="jhw-static"' in sweep  # the tutorials ran: their plots' pictures
    # its math, as MathML (no raw TeX, no script to typeset it)
    assert "<math " in sweep and "\\tfrac12" not in sweep and "$f(x)" not in sweep
