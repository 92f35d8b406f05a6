"""No test module imports another: what tests share lives in ``tests/helpers/`` (one module per
concern: ``sweeps``, ``colours``, ``page_charts``, ...), so a test file can be moved, renamed or
deleted without breaking a test elsewhere, and running one file never collects another's tests
under a second name.

Held for every import a test file makes, code that a kernel or a subprocess runs (a string that
parses as Python) included.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent


def _test_files() -> list[Path]:
    # (this file shows the guard imports it must see, in a string)
    return sorted(p for p in TESTS.rglob("*.py") if p != Path(__file__).resolve())


def _is_test_module(name: str) -> bool:
    """Whether the dotted module ``name`` is (or lies inside) a test module: ``test_*``."""
    return any(part.startswith("test_") for part in name.split("."))


def _imports(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """``(line, module)`` of every module an import in ``tree`` names, relative ones with their
    leading dots; the imports inside code held in strings too (a kernel's cell)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            yield node.lineno, base
            # ``from . import test_x`` names the module among what it imports
            for alias in node.names:
                yield node.lineno, f"{base}.{alias.name}" if node.module else base + alias.name
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and "import" in node.value
        ):
            try:
                inner = ast.parse(node.value)
            except SyntaxError:
                continue  # prose, or a fragment: no code to import anything
            for _, name in _imports(inner):
                yield node.lineno, name


def test_the_guard_sees_each_form_of_import() -> None:
    # and no module but a test module
    code = '''
from .test_a import x
from ..ui.figure.test_b import y
from . import test_c
import tests.browser.test_d
cell = """
from tests.ui.test_e import z
"""
from ..helpers.sweeps import sweep
import testing_tools
'''
    found = [name for _, name in _imports(ast.parse(code)) if _is_test_module(name)]
    assert found == [
        ".test_a",
        ".test_a.x",
        "..ui.figure.test_b",
        "..ui.figure.test_b.y",
        ".test_c",
        "tests.browser.test_d",
        "tests.ui.test_e",
        "tests.ui.test_e.z",
    ], found


@pytest.mark.parametrize("path", _test_files(), ids=lambda p: str(p.relative_to(TESTS)))
def test_no_test_module_imports_another(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    hits = sorted(
        {
            f"{path.relative_to(TESTS)}:{line}: {name}"
            for line, name in _imports(tree)
            if _is_test_module(name)
        }
    )
    assert not hits, (
        "a test module imports another test module; move what they share into a module of "
        "tests/helpers/ named for its concern and import it from there:\n" + "\n".join(hits)
    )
