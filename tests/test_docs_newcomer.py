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

import pytest

from .helpers.docs import Built, readme_docs_commands

# A fresh environment and everything the docs need installed into it: minutes (pip's download
# cache helps), out of the quick subset. The build is the session's one (the ``docs_site``
# fixture): the site's tests and the browser's read the site it made.
pytestmark = [pytest.mark.slow, pytest.mark.site]


@pytest.mark.skipif(
    bool(os.environ.get("PIP_CONSTRAINT")),
    reason="pinned to the oldest versions here: a newcomer's pip resolves the newest",
)
def test_the_readmes_docs_commands_build_the_site_in_a_fresh_environment(docs_site: Built) -> None:
    commands = readme_docs_commands()
    assert 'pip install -e ".[docs]"' in commands and "mkdocs build --strict" in commands
    assert docs_site.newcomer, "built in this environment, not a newcomer's"
    out = docs_site.process
    assert out.returncode == 0, (out.stdout[-3000:], out.stderr[-6000:])
    site = docs_site.site
    assert (site / "index.html").is_file()
    sweep = (site / "tutorials" / "03_vmap_sweep.html").read_text(encoding="utf-8")
    assert '<img class="jhw-static"' in sweep  # the tutorials ran: their plots' pictures
    # its math, as MathML (no raw TeX, no script to typeset it)
    assert "<math " in sweep and "\\tfrac12" not in sweep and "$f(x)" not in sweep
