"""A class lives whole in one module, its parts composed, not inherited to fit a line count:
no method is a placeholder (``raise NotImplementedError``) that a subclass elsewhere defines,
the figure's grid and the plot's updates are one class each (their parts held, not their
bases), and `LivePlot`'s public methods are methods of the class, typed, so that mypy checks
them (not module functions taking ``plot: Any`` bound into it). Read from the source (an AST
walk) and from the classes themselves.
"""

from __future__ import annotations

import ast

from .helpers import ROOT

PACKAGE = ROOT / "jaxhist_widget"
LIVEPLOT = PACKAGE / "ui" / "plot" / "_liveplot.py"
#: `LivePlot`'s public methods that were module functions bound into the class (issue 58).
PLOT_METHODS = ("drawing", "refresh", "add_run", "show_run", "show_lane")


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
