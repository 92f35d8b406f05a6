"""The docs site as the test suite builds it: as a newcomer does (`newcomer_build`: the README's
Docs commands, ``pip install -e ".[docs]"`` then ``python -m mkdocs build --strict``, in a new
virtual environment, on a copy of the repository), or in this environment (`build_site`, where
this environment is pinned to the oldest versions, which a newcomer's pip would not resolve).

The suite builds it once (the ``docs_site`` fixture: the build runs every tutorial) and shares it
between ``tests/test_docs_newcomer.py`` (the commands work), ``tests/test_docs.py`` (the pages and
the API reference) and ``tests/browser/test_docs_ui.py`` (a tutorial page opened offline).
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from . import ROOT

#: The site's pages (less the tutorials', made one per notebook), as built.
PAGES = [
    "index.html",
    "getting-started.html",
    "guide/plot.html",
    "guide/extension.html",
    "guide/loops.html",
    "guide/lax.html",
    "guide/stopping.html",
    "guide/store.html",
    "guide/tensorboard.html",
    "guide/devices.html",
    "guide/limits.html",
    "tutorials/index.html",
    "api.html",
    "performance.html",
    "how-it-works.html",
]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
#: How long a build may take on a loaded 2-core machine (it runs every tutorial: about a minute).
BUILD_TIMEOUT_S = 900
#: A newcomer's build: the install (cached downloads) and the build together.
NEWCOMER_TIMEOUT_S = 1800


@dataclasses.dataclass(frozen=True)
class Built:
    """A finished build of the site."""

    #: The site's folder (its pages, when the build succeeded).
    site: Path
    #: The build's process: its status, and its output in ``stdout`` (and ``stderr``).
    process: subprocess.CompletedProcess[str]
    #: Whether it was built the newcomer's way (`newcomer_build`), not in this environment.
    newcomer: bool


def build_site(site: Path) -> subprocess.CompletedProcess[str]:
    """Build the site into ``site`` with warnings as errors, as ``mkdocs.yml`` asks.

    Parameters
    ----------
    site
        The folder to write (made or emptied by MkDocs).

    Returns
    -------
    subprocess.CompletedProcess
        The finished build, its output (MkDocs logs to stderr) in ``stdout``.
    """
    for module in ("mkdocs", "material", "mkdocstrings_handlers.python"):
        pytest.importorskip(module, reason='the docs build needs pip install -e ".[docs]"')
    # Material prints a banner about MkDocs 2.0 on each build; it is no warning of the site's.
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=BUILD_TIMEOUT_S,
        check=False,
    )


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


def newcomer_build(folder: Path) -> Built:
    """The site built as the README tells a newcomer: its Docs commands, run as written in a new
    virtual environment (made in ``folder``) on a copy of the repository, with none of this
    environment's variables that a newcomer's shell would not have."""
    commands = readme_docs_commands()
    repo = copy_of_the_repository(folder / "jaxhist_widget")
    venv = folder / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PIP_CONSTRAINT", "JUPYTER_PATH")
    }
    env["PATH"] = os.pathsep.join([str(venv / "bin"), env.get("PATH", "")])
    process = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", f"source {venv}/bin/activate\n{commands}"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=NEWCOMER_TIMEOUT_S,
    )
    return Built(repo / "site", process, newcomer=True)
