"""A cell in which a press (■, the Stop button's interrupt) stopped a run ends as interrupted.

Without the package, ■ during Run All fails the running cell and Jupyter aborts the queued ones.
With it, the press stops the loop and keeps its partial results, so the cell's statements after
the loop still run (they may save or print those results); then, so that Run All stops here as
before, the cell ends with `CellStopped` (a `KeyboardInterrupt` shown as one line). The check is
appended to every cell by an AST transformer (the last expression keeps its value).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

__all__ = ["CellStopped", "EndIfStopped"]


class CellStopped(KeyboardInterrupt):
    """An interrupt stopped a run in this cell: its statements ran with the partial results,
    and the cell ends as interrupted (Run All stops here)."""

    def _render_traceback_(self) -> list[str]:  # IPython shows this instead of a traceback
        return [f"{type(self).__name__}: {self}"]


class EndIfStopped(ast.NodeTransformer):
    """Ends each cell with ``CHECK(last value)``: ``check`` (named by ``call``, an expression
    that finds it at run time) raises `CellStopped` if a press stopped a run in the cell."""

    def __init__(self, call: str) -> None:
        self._call = call

    def visit_Module(self, node: ast.Module) -> ast.Module:
        check = ast.parse(self._call, mode="eval").body
        if node.body and isinstance(node.body[-1], ast.Expr):
            last = node.body[-1]
            last.value = ast.Call(func=check, args=[last.value], keywords=[])
        else:
            node.body.append(ast.Expr(ast.Call(func=check, args=[], keywords=[])))
        return ast.fix_missing_locations(node)


def checker(stops: Callable[[], int]) -> tuple[Callable[[], None], Callable[..., Any]]:
    """``(start, check)``: ``start()`` at the start of a cell, ``check(value)`` at its end
    (returns ``value``, or raises `CellStopped`). ``stops()`` counts presses that stopped runs."""
    state = {"at_start": stops()}

    def start() -> None:
        state["at_start"] = stops()

    def check(value: Any = None) -> Any:
        pressed = stops() - state["at_start"]
        state["at_start"] = stops()
        if pressed:
            raise CellStopped(
                "an interrupt stopped the loop; the results so far are kept and the cell ran to "
                "its end. The cells after this one were not run."
            )
        return value

    return start, check
