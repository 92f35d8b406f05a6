"""Every ```python block of the README runs, in order, as cells of a real Jupyter kernel."""

from __future__ import annotations

import re

import pytest

from .helpers import ROOT

pytestmark = pytest.mark.kernel

BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)


def test_readme_has_the_example():
    assert BLOCKS, "README.md has no python snippet"
    assert len(BLOCKS[0].strip().splitlines()) <= 20, "keep the first example short"


def test_readme_snippets_run_in_a_kernel(kernel):
    for i, code in enumerate(BLOCKS):
        run = kernel.execute(code, timeout=120)
        assert run.reply["content"]["status"] == "ok", f"README block {i} failed:\n{code}"
        assert not run.errors, f"README block {i}:\n" + "\n".join(run.errors)
