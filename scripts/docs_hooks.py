"""MkDocs hooks for the docs site (``mkdocs.yml`` names this file): the tutorial notebooks as pages,
and their math as MathML.

Each ``notebooks/NN_name.ipynb`` becomes the page ``tutorials/NN_name.md``: markdown cells as
they are, code cells as Python code blocks, each followed by its outputs. The notebooks are
kept without outputs, so the build runs each one in a kernel first (``nbclient``, on the CPU):
a cell that raises fails the build, and every `LivePlot` shows on its page as the static
picture the package writes into a saved notebook (its SVG), so the site shows what a reader
without a kernel sees. ``JHW_DOCS_EXECUTE=0`` renders the code alone (a quick local build).
The notebook itself is copied next to its page, to be downloaded.

Why not mkdocs-jupyter: its page template loads MathJax from a CDN on every notebook page,
and the site must work offline; a notebook's cells and outputs are plain markdown and images.

Math (``$f(x) = \tfrac12 x^2$`` in a tutorial's text, ``$$...$$`` for a block): Material for
MkDocs shows it through ``pymdownx.arithmatex``, which marks it in the page, and MathJax or
KaTeX, which it loads from a CDN to typeset it in the browser. Here the marked math is
converted to MathML when the site is built (`math_to_mathml`, by ``latex2mathml``, the ``docs``
extra), which every current browser draws itself: no script, no font, no network at view time.
"""

from __future__ import annotations

import base64
import html
import json
import os
import re
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

# (MkDocs puts this file's folder on the path while it loads it)
from notebook_runs import run_notebook  # type: ignore[import-not-found]

from jaxhist_widget.ui.plot._outputs import picture_svg

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
#: Where the tutorial pages go in the site (and in ``mkdocs.yml``'s nav).
FOLDER = "tutorials"
#: Whether the build runs each notebook to show its outputs (``JHW_DOCS_EXECUTE=0``: not).
EXECUTE = os.environ.get("JHW_DOCS_EXECUTE", "1") != "0"
#: A cell may take this long (the slowest tutorial cells take a few seconds).
CELL_TIMEOUT_S = 600
_WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def executed(path: Path) -> dict[str, Any]:
    """The notebook at ``path`` run in a fresh kernel, its outputs in its cells (a run the test
    suite already made of the same notebook, where it keeps them: ``notebook_runs.py``).

    Raises
    ------
    nbclient.exceptions.CellExecutionError
        If a cell raises: the build fails, as a tutorial that does not run must not ship.
    """
    notebook, _seconds = run_notebook(path, CELL_TIMEOUT_S)
    return notebook


def outputs_markdown(outputs: list[dict[str, Any]]) -> list[str]:
    """A code cell's outputs as markdown blocks: text as text blocks, a picture as an image.

    Of a rich output its SVG is shown (a `LivePlot`'s static picture, which its HTML carries),
    else its PNG, else its HTML, else its text; a live widget's view, which needs a kernel,
    shows nothing.
    """
    blocks: list[str] = []
    text: list[str] = []

    def flush_text() -> None:
        if "".join(text).strip():
            blocks.append("````text\n" + "".join(text).rstrip("\n") + "\n````")
        text.clear()

    for out in outputs:
        kind = out.get("output_type")
        if kind == "stream":
            text.append("".join(out.get("text", "")))
            continue
        data = out.get("data", {}) if kind in ("display_data", "execute_result") else {}
        if not data or _WIDGET_VIEW in data:
            continue
        flush_text()
        plain = "".join(data.get("text/plain", "")).splitlines()
        alt = html.escape(plain[0] if plain else "")
        svg = picture_svg(data)
        if svg is not None:
            src = "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode("ascii")
            blocks.append(f'<p><img class="jhw-static" alt="{alt}" src="{src}"></p>')
        elif "image/png" in data:
            png = "".join(data["image/png"]).strip()
            blocks.append(f'<p><img alt="{alt}" src="data:image/png;base64,{png}"></p>')
        elif "text/html" in data:
            blocks.append('<div class="jhw-output">\n' + "".join(data["text/html"]) + "\n</div>")
        elif "text/plain" in data:
            text.append("".join(data["text/plain"]) + "\n")
    flush_text()
    return blocks


def notebook_markdown(path: Path, run: bool = False) -> str:
    """The page of one notebook: a download link, then its cells in order.

    Parameters
    ----------
    path
        The ``.ipynb`` file (nbformat 4).
    run
        Run it first (`executed`) and show each code cell's outputs under it.

    Returns
    -------
    str
        Markdown: markdown cells verbatim, code cells fenced as Python (magics included), their
        outputs after them.
    """
    notebook: dict[str, Any] = (
        executed(path) if run else json.loads(path.read_text(encoding="utf-8"))
    )
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
            parts += outputs_markdown(cell.get("outputs", []))
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
        content = notebook_markdown(path, run=EXECUTE)
        files.append(File.generated(config, page, content=content))
        files.append(File.generated(config, f"{FOLDER}/{path.name}", abs_src_path=str(path)))
    return files


#: Math as ``pymdownx.arithmatex`` (``generic: true``) marks it: an inline span of ``\(...\)``
#: or a block of ``\[...\]``, its TeX HTML-escaped.
_MATH = re.compile(r'<(span|div) class="arithmatex">\s*\\([(\[])(.*?)\\[)\]]\s*</\1>', re.DOTALL)


def math_to_mathml(page_html: str) -> str:
    """``page_html`` with each math expression arithmatex marked in it as MathML.

    Raises
    ------
    ValueError
        If an expression is no TeX latex2mathml reads: the strict build fails, as a page whose
        math shows raw must not ship.

    Examples
    --------
    >>> out = math_to_mathml('<p><span class="arithmatex">\\(x_0^2\\)</span></p>')
    >>> out.startswith('<p><math xmlns="http://www.w3.org/1998/Math/MathML" display="inline">')
    True
    """
    from latex2mathml.converter import convert

    def mathml(match: re.Match[str]) -> str:
        tex = html.unescape(match.group(3)).strip()
        try:
            return convert(tex, display="block" if match.group(2) == "[" else "inline")
        except Exception as e:
            raise ValueError(f"math {tex!r} could not be converted to MathML: {e}") from e

    return _MATH.sub(mathml, page_html)


def on_page_content(html_text: str, **_: Any) -> str:
    """A page's HTML with its math as MathML (MkDocs calls this for every page)."""
    return math_to_mathml(html_text)
