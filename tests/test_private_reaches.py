"""State owned by one class is changed and read through names its module offers, not through
another object's private names: the package's cross-object private reaches are counted, and the
count is held at its low (`MOST_REACHES`).

What counts as a reach, checked by reading each module of the package (an AST walk, no import):
an attribute access ``E._name`` (read, written or deleted) where

- ``E`` is not ``self``, ``cls`` or ``super()``: an object's own state is its own;
- ``_name`` is private: one leading underscore, neither a dunder (``__dict__``) nor a sunder
  (``_repr_mimebundle_``, ``_ipython_display_``: Python's and IPython's protocols), nor a
  namedtuple's API (``_fields``, ``_replace``: public, underscored to leave room for fields);
- the module does not define ``_name`` itself (a ``def`` or ``class`` of that name, an assignment
  to ``self._name`` or ``cls._name``, a name assigned or annotated in a class or at the top): a
  module is the unit that owns its classes' state, so a class's own module (the class, its
  writing half, its helpers) may touch it. The rule goes by name, as a reader checks it: a
  module that defines ``_runs`` for one class is not counted reaching another's ``_runs``;
- the package defines ``_name`` somewhere (as above): a library's own private (namedtuple's
  ``_replace``, ``sys._getframe``, a kernel's comm) is that library's contract, not this
  package's state;
- no `typing.Protocol` of the package declares ``_name``: a protocol is a declared seam, each
  call through it checked by mypy (the hub calls a sink's ``_start`` through `HubSink`).

So the fix for a reach is a name the owner's module offers: a public method or property
(`Chart.runs`), a package-internal one (`Hub.log_run`, a `RunWriter` held by whoever makes the
run), or a function of that module. Removing a reach, lower `MOST_REACHES` to the new count.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import NamedTuple

from .helpers import ROOT

PACKAGE = ROOT / "jaxhist_widget"
#: The package's cross-object private reaches: at most this many (issue 58 counted 66 its own
#: way; by this rule there were 55 before the hub, the run, the chart and the sinks offered
#: names for them).
MOST_REACHES = 2
OWN = {"self", "cls"}
#: A namedtuple's public API, underscored so that it never clashes with a field's name.
NAMEDTUPLE = {"_asdict", "_field_defaults", "_fields", "_make", "_replace"}


class Reach(NamedTuple):
    module: str
    line: int
    expr: str

    def __str__(self) -> str:
        return f"{self.module}:{self.line}: {self.expr}"


def is_private(name: str) -> bool:
    sunder = len(name) > 2 and name.startswith("_") and name.endswith("_")
    dunder = name.startswith("__")
    return name.startswith("_") and not dunder and not sunder and name not in NAMEDTUPLE


def defined_in(tree: ast.Module) -> set[str]:
    """The private names a module defines: defs and classes, its classes' and objects' own
    attributes (``self._x = ...``), and names bound in a class body or at the top."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.add(node.name)
        elif (
            isinstance(node, ast.Attribute)
            and not isinstance(node.ctx, ast.Load)
            and isinstance(node.value, ast.Name)
            and node.value.id in OWN
        ):
            out.add(node.attr)
    scopes = [tree, *(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef))]
    for scope in scopes:
        for stmt in scope.body:
            targets = (
                stmt.targets
                if isinstance(stmt, ast.Assign)
                else [stmt.target]
                if isinstance(stmt, ast.AnnAssign)
                else []
            )
            out.update(t.id for t in targets if isinstance(t, ast.Name))
    return {name for name in out if is_private(name)}


def protocol_members(trees: dict[str, ast.Module]) -> set[str]:
    """The members the package's `typing.Protocol` classes declare."""
    out: set[str] = set()
    for tree in trees.values():
        for node in ast.walk(tree):
            bases = [ast.unparse(b) for b in getattr(node, "bases", ())]
            if isinstance(node, ast.ClassDef) and any(b.endswith("Protocol") for b in bases):
                out.update(
                    s.name
                    for s in node.body
                    if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)
                )
    return out


def reaches(package: Path = PACKAGE) -> list[Reach]:
    """Every cross-object private reach in ``package`` (see the module docstring)."""
    trees = {
        str(p.relative_to(package)): ast.parse(p.read_text(encoding="utf-8"))
        for p in sorted(package.rglob("*.py"))
    }
    own = {module: defined_in(tree) for module, tree in trees.items()}
    anywhere = set().union(*own.values()) - protocol_members(trees)
    out = []
    for module, tree in trees.items():
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute) or not is_private(node.attr):
                continue
            target = node.value
            if isinstance(target, ast.Name) and target.id in OWN:
                continue
            if isinstance(target, ast.Call) and ast.unparse(target.func) == "super":
                continue
            if node.attr in anywhere and node.attr not in own[module]:
                out.append(Reach(module, node.lineno, ast.unparse(node)))
    return sorted(out)


def test_private_reaches_stay_at_their_low() -> None:
    found = reaches()
    assert len(found) <= MOST_REACHES, (
        f"{len(found)} cross-object private reaches, at most {MOST_REACHES}: change another "
        "object's state through a name its module offers (a method, a property, a function "
        "of that module), not its private attributes:\n" + "\n".join(map(str, found))
    )


#: The modules that make a run's writer (`RunWriter`): the hub, for a run streaming in, and the
#: store's reader, for a run read back (its format migration too).
RUN_WRITERS = {"_host/runtime/_hub.py", "_host/store/_stored.py", "_host/store/_migrate.py"}


def test_only_the_hub_and_the_store_reader_write_runs() -> None:
    makers = {
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("RunWriter")
    }
    assert makers == RUN_WRITERS


def test_the_count_sees_each_kind_of_reach(tmp_path: Path) -> None:
    """A reach into another module's object is counted (read, write, a call); an object's own
    state, its own module's, a protocol's member, a library's private and a sunder are not."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "owner.py").write_text(
        "import typing\n"
        "class Seam(typing.Protocol):\n"
        "    def _hook(self) -> None: ...\n"
        "class Owner:\n"
        "    def __init__(self):\n"
        "        self._state = 0\n"
        "    def _helper(self):\n"
        "        return self._state\n"
        "def friend(o):\n"
        "    return o._state\n"
    )
    (package / "other.py").write_text(
        "import sys\n"
        "def use(o, s):\n"
        "    o._state = 1\n"  # a write: counted
        "    o._helper()\n"  # a call: counted
        "    x = o._state\n"  # a read: counted
        "    s._hook()\n"  # a protocol's member: the declared seam
        "    sys._getframe()\n"  # a library's private
        "    o._repr_mimebundle_()\n"  # a protocol of IPython's (a sunder)
        "    return x\n"
    )
    found = reaches(package)
    assert [(r.module, r.expr) for r in found] == [
        ("other.py", "o._state"),
        ("other.py", "o._helper"),
        ("other.py", "o._state"),
    ]
