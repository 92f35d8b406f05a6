"""The docs site opened as a reader who downloaded it would: from file://, with every request
but the site's own files blocked. A tutorial page shows its notebook's cells, styled, and its
links lead to the other pages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from ..helpers.browser import block_outside
from ..helpers.docs import Built

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = pytest.mark.ui


def test_a_tutorial_page_renders_offline(browser: Browser, docs_site: Built) -> None:
    assert docs_site.process.returncode == 0, "the docs build failed (tests/test_docs.py says why)"
    site = docs_site.site
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    try:
        blocked = block_outside(page)
        page.goto((site / "tutorials" / "01_quickstart.html").as_uri(), wait_until="load")
        title = page.locator("article h1").first
        assert "Quickstart" in title.inner_text()
        # A code cell, highlighted: Pygments' spans inside a code block of the theme.
        code = page.locator("article pre code").filter(has_text="jhw.while_loop").first
        assert code.is_visible()
        assert code.locator("span").count() > 3, "the code is not highlighted"
        # Its plots, run at build time: each static picture drawn (an image of the SVG).
        widths = page.evaluate(
            "() => [...document.querySelectorAll('article img.jhw-static')].map((i) =>"
            " i.complete ? i.naturalWidth : 0)"
        )
        assert len(widths) >= 2 and all(w >= 600 for w in widths), widths
        # The theme's stylesheet applied (no stylesheet from the network): a sticky header, and
        # the article beside the nav's sidebar, not an unstyled page from the left edge.
        header = "getComputedStyle(document.querySelector('.md-header')).position"
        assert page.evaluate(header) == "sticky"
        box = page.locator("article").bounding_box()
        assert box is not None and box["x"] > 200, box
        # The nav's links work from file:// (pages are .html files, not folders).
        page.locator("nav a", has_text="API reference").first.click()
        page.wait_for_load_state("load")
        assert page.url.endswith("/api.html")
        assert page.locator('[id="jaxhist_widget.while_loop"]').count() == 1
    finally:
        page.close()
    assert not blocked, f"the site asked the network for: {blocked}"
