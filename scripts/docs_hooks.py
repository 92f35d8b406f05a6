"""MkDocs hooks for the docs site (``mkdocs.yml`` names this file): the tutorial notebooks as pages.

Each ``notebooks/NN_name.ipynb`` becomes the page ``tutorials/NN_name.md``, rendered without
being executed: markdown cells as they are, code cells as Python code blocks. The notebooks are
kept without outputs and the test suite runs every one of them (``tests/kernel``), so executing
them again here would only slow the build (every cell compiles JAX code). The notebook itself is
copied next to its page, to be downloaded.

Why not mkdocs-jupyter: its page template loads MathJax from a CDN on every notebook page,
and the site must work offline; with no outputs to render, a notebook is plain markdown.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
#: Where the tutorial pages go in the site (and in ``mkdocs.yml``'s nav).
FOLDER = "tutorials"


def notebook_markdown(path: Path) -> str:
    """The page of one notebook: a download link, then its cells in order.

    Parameters
    ----------
    path
        The ``.ipynb`` file (nbformat 4).

    Returns
    -------
    str
        Markdown: markdown cells verbatim, code cells fenced as Python (magics included).
    """
    notebook: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    parts: list[str] = []
    for cell in notebook["cells"]:
        source = "".join(cell["source"]).strip("\n")
        if not source:
            continue
        if cell["cell_type"] == "markdown":
            parts.append(source)
        elif cell["cell_type"] == "code":
            # Four backticks: a cell's own code may hold a triple-backtick string.
            parts.append(f"````python\n{source}\n````")
    download = f"[Download the notebook]({path.name}) · run it with `bash scripts/quickstart.sh`."
    # The title (the first cell's heading) stays first, so it names the page.
    return "\n\n".join([*parts[:1], download, *parts[1:]]) + "\n"


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add a page and a download per notebook (MkDocs calls this once the docs are listed).

    Parameters
    ----------
    files
        The files MkDocs found in ``docs/``.
    config
        The site's configuration.

    Returns
    -------
    Files
        ``files`` with ``tutorials/NN_name.md`` and ``tutorials/NN_name.ipynb`` added.
    """
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        page = f"{FOLDER}/{path.stem}.md"
        files.append(File.generated(config, page, content=notebook_markdown(path)))
        files.append(File.generated(config, f"{FOLDER}/{path.name}", abs_src_path=str(path)))
    return files
