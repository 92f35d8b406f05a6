"""Every ```python block of the README and of the docs pages runs, in order, as cells of one
real Jupyter kernel: the README's first, then the pages in the order of the site's nav
(``mkdocs.yml``), so a page may use what an earlier one defined, as a reader going through the
site would have it (the guide's pages use the example of Getting started)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .helpers import ROOT

pytestmark = pytest.mark.kernel

PYTHON_BLOCK = re.compile(r"```python\n(.*?)```", flags=re.S)


def python_blocks(path: Path) -> list[str]:
    """The code of each ```python block of a markdown file, in order."""
    return PYTHON_BLOCK.findall(path.read_text(encoding="utf-8"))


def docs_pages() -> list[Path]:
    """The markdown pages of the site's nav, in nav order (the tutorials' pages are made from
    the notebooks, which ``tests/kernel/test_notebooks.py`` runs)."""
    # A regex rather than a YAML parser: the nav lists each page as `Title: path.md` or `- path.md`.
    entry = re.compile(r"^\s*-\s*(?:[^:\n]+:\s*)?(\S+\.md)\s*$", re.M)
    nav = entry.findall((ROOT / "mkdocs.yml").read_text())
    return [ROOT / "docs" / page for page in nav if (ROOT / "docs" / page).exists()]


BLOCKS = python_blocks(ROOT / "README.md")
#: (file, its index, code) of every block the kernel runs, in the order it runs them.
ALL_BLOCKS = [
    (path.relative_to(ROOT), i, code)
    for path in [ROOT / "README.md", *docs_pages()]
    for i, code in enumerate(python_blocks(path))
]


def test_readme_has_the_example():
    assert BLOCKS, "README.md has no python snippet"
    assert len(BLOCKS[0].strip().splitlines()) <= 20, "keep the first example short"


def test_docs_pages_are_collected():
    # A page moved or renamed without its nav entry would drop its blocks silently.
    pages = {str(p.relative_to(ROOT)) for p in docs_pages()}
    assert {"docs/getting-started.md", "docs/guide/plot.md", "docs/guide/store.md"} <= pages
    assert len(ALL_BLOCKS) > len(BLOCKS) + 10, "the docs pages' blocks are not collected"


def test_readme_snippets_run_in_a_kernel(kernel):
    for path, i, code in ALL_BLOCKS:
        run = kernel.execute(code, timeout=120)
        assert run.reply["content"]["status"] == "ok", f"{path} block {i} failed:\n{code}"
        assert not run.errors, f"{path} block {i}:\n" + "\n".join(run.errors)
