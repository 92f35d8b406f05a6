"""A class lives whole in one module, its parts composed, not inherited to fit a line count:
no method is a placeholder (``raise NotImplementedError``) that a subclass elsewhere defines,
the figure's grid and the plot's updates are one class each (their parts held, not their
bases), and `LivePlot`'s public methods are methods of the class, typed, so that mypy checks
them (not module functions taking ``plot: Any`` bound into it). Read from the source (an AST
walk) and from the classes themselves.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from jaxhist_widget.ui.figure import ChartGrid
from jaxhist_widget.ui.plot._updates import Updates

from .helpers import ROOT

PACKAGE = ROOT / "jaxhist_widget"
LIVEPLOT = PACKAGE / "ui" / "plot" / "_liveplot.py"
#: `LivePlot`'s public methods that were module functions bound into the class (issue 58).
PLOT_METHODS = ("drawing", "refresh", "add_run", "show_run", "show_lane")


def placeholders(tree: ast.Module) -> list[str]:
    """The methods of ``tree``'s classes whose whole body (past a docstring) is ``raise
    NotImplementedError``: a base's hole for a subclass to fill."""
    out = []
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        for fn in cls.body:
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            body = fn.body[1:] if ast.get_docstring(fn) is not None else fn.body
            if (
                len(body) == 1
                and isinstance(body[0], ast.Raise)
                and body[0].exc is not None
                and "NotImplementedError" in ast.unparse(body[0].exc)
            ):
                out.append(f"{cls.name}.{fn.name}")
    return out


def test_the_placeholder_check_sees_one() -> None:
    source = (
        "class Base:\n"
        "    def hole(self) -> None:\n"
        '        """Filled below."""\n'
        "        raise NotImplementedError\n"
        "    def real(self, x: int) -> None:\n"
        "        if x < 0:\n"
        "            raise NotImplementedError('negative x')\n"
    )
    assert placeholders(ast.parse(source)) == ["Base.hole"]


@pytest.mark.parametrize(
    "path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE))
)
def test_no_method_is_a_placeholder(path: Path) -> None:
    found = placeholders(ast.parse(path.read_text(encoding="utf-8")))
    assert not found, f"{path.relative_to(PACKAGE)}: placeholders {found}: compose the part"


def test_the_grid_and_the_updates_are_whole_classes() -> None:
    for cls in (ChartGrid, Updates):
        assert cls.__mro__ == (cls, object), [c.__qualname__ for c in cls.__mro__]


def test_liveplots_public_methods_are_typed_methods_of_the_class() -> None:
    tree = ast.parse(LIVEPLOT.read_text(encoding="utf-8"))
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "LivePlot"]
    methods = {n.name: n for n in cls.body if isinstance(n, ast.FunctionDef)}
    for name in PLOT_METHODS:
        fn = methods.get(name)
        assert fn is not None, f"LivePlot.{name} is no method defined in the class"
        first, *rest = fn.args.args
        assert first.arg == "self" and first.annotation is None, name
        assert fn.returns is not None, f"LivePlot.{name} returns no declared type"
        for arg in rest:
            assert arg.annotation is not None, f"LivePlot.{name}({arg.arg}) has no type"
            assert "Any" not in ast.unparse(arg.annotation), f"LivePlot.{name}({arg.arg})"
