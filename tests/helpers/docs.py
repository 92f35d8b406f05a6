"""The docs site as the test suite builds it: ``python -m mkdocs build --strict`` (the command
the README gives), into a folder of the test's own.

Shared by ``tests/test_docs.py`` (the pages and the API reference) and
``tests/browser/test_docs_ui.py`` (a tutorial page opened offline).
"""

from __future__ import annotations

import os
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
