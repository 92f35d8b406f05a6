"""The docs site builds with warnings as errors, holds every page and every tutorial, documents
the public API, and loads nothing from the network (it must work offline, from file://)."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

import jaxhist_widget

from .helpers.docs import NOTEBOOKS, PAGES, Built

# A fresh Python process for the build: kept out of the quick subset.
pytestmark = [pytest.mark.slow, pytest.mark.site]

#: A script, stylesheet, font or image the page would fetch from elsewhere (a plain link to
#: another site, an <a href>, is fine: it is followed only when clicked).
REMOTE = re.compile(
    r"<(?:script|link|img|iframe|source)\b[^>]*\b(?:src|href)=\"(?:https?:)?//", re.I
)


@pytest.fixture(scope="module")
def site(docs_site: Built) -> Path:
    out = docs_site.process
    assert out.returncode == 0, f"the docs build failed:\n{out.stdout[-3000:]}{out.stderr[-6000:]}"
    return docs_site.site


def test_every_page_is_built(site: Path) -> None:
    missing = [page for page in PAGES if not (site / page).is_file()]
    assert not missing, f"pages not built: {missing}"


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_tutorial_is_rendered(site: Path, notebook: Path) -> None:
    page = site / "tutorials" / f"{notebook.stem}.html"
    assert page.is_file(), f"no page for {notebook.name}"
    assert (site / "tutorials" / notebook.name).is_file(), "the notebook to download"
    text = html.unescape(re.sub(r"<[^>]+>", "", page.read_text(encoding="utf-8")))
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    title = "".join(cells[0]["source"]).splitlines()[0].lstrip("# ").replace("`", "")
    code = next("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    assert title in text, f"{page.name} lacks the notebook's title {title!r}"
    # Its code, highlighted (tags stripped): the first line of the first code cell.
    assert code.splitlines()[0] in text, f"{page.name} lacks the notebook's code"
    # Run at build time: every tutorial draws a LivePlot, shown as the static picture (an
    # SVG) a saved notebook holds, and its printed output.
    body = page.read_text(encoding="utf-8")
    picture = re.compile(r'<img class="jhw-static"[^>]*src="data:image/svg\+xml;base64,')
    assert picture.search(body), f"{page.name} shows no plot"
    # (a text block: highlighted as no language, where the code is language-python)
    assert '<div class="highlight">' in body, f"{page.name} shows no printed output"


@pytest.mark.parametrize("name", sorted(jaxhist_widget.__all__))
def test_the_api_page_documents_every_public_name(site: Path, name: str) -> None:
    api = (site / "api.html").read_text(encoding="utf-8")
    # mkdocstrings gives each documented object a heading whose id is its path.
    assert re.search(rf'id="jaxhist_widget\.(?:[\w.]+\.)?{name}"', api), f"{name} not documented"


def test_the_api_page_has_the_docstrings(site: Path) -> None:
    api = html.unescape(re.sub(r"<[^>]+>", "", (site / "api.html").read_text(encoding="utf-8")))
    for name in ("while_loop", "LivePlot", "Recorder", "Store"):
        first = getattr(jaxhist_widget, name).__doc__.strip().splitlines()[0]
        words = re.sub(r"[`*]", "", first)[:40]
        assert words in api, f"{name}'s docstring ({words!r}) is not on the API page"


def test_nothing_is_loaded_from_the_network(site: Path) -> None:
    remote = {
        str(page.relative_to(site)): REMOTE.findall(page.read_text(encoding="utf-8"))
        for page in site.rglob("*.html")
    }
    remote = {page: found for page, found in remote.items() if found}
    assert not remote, f"pages that load something from the network: {remote}"


def test_the_tutorials_math_is_mathml(site: Path) -> None:
    """Issue 50: the tutorials' math showed raw (``$f(x) = \\tfrac12 ...$``): no renderer was set
    up, and Material's (MathJax or KaTeX) loads from a CDN. It is MathML now, made at build
    time, which the browser draws itself, offline."""
    for name, tex in (("03_vmap_sweep", "\\tfrac12"), ("04_history_in_jit", "\\mathrm{lr}")):
        page = (site / "tutorials" / f"{name}.html").read_text(encoding="utf-8")
        maths = re.findall(r'<math xmlns="http://www.w3.org/1998/Math/MathML"', page)
        assert len(maths) >= 2, f"{name}: no MathML"
        assert tex not in page and 'class="arithmatex"' not in page, f"{name}: raw TeX"
    typesetter = re.compile(r'<script[^>]+src="[^"]*(?:mathjax|katex)', re.IGNORECASE)
    assert not any(typesetter.search(p.read_text()) for p in site.rglob("*.html"))
