"""The package's layers are directories, and imports point one way between them:

    _device/ (traced JAX) -> _wire.py (contract) <- _host/ (runtime) <- ui/ <- _extension/

and, on top of the package's public API, the library adapters (optimistix.py, diffrax.py,
jaxopt.py: public modules, each importing its library, imported by nothing of the package).

The device code imports no threads, sockets or signals and nothing of the host; the host runtime
imports no widget code; the widget stack loads lazily, so the core runs with only jax and numpy.
Every module of the package, whatever its layer, is under 400 lines of code (one job per file;
docstrings, comments and blank lines are not counted, so a class stays whole and documented), every
folder holds at most 12 modules, and no module imports back into a circle (imports inside
functions and type-only ones count too). Inside ui/ and _host/, one subpackage per concern,
imports pointing one way between them too:

    look/, reduce/ <- series/, figure/, panel/, picture/ <- plot/ <- ui/__init__.py
    interrupts/ <- runtime/ <- sinks/ <- store/, tensorboard/ <- _export.py, _host/__init__.py
    _floats.py <- runtime/, store/
    parallel/ <- record/, stream/ <- loops/ <- _device/__init__.py

(the picture and the figure never import each other, nor the store and TensorBoard; another
part is reached through its face, its ``__init__``: in _device/, whose code names modules as it
calls them, ``devices.any_device``, a module that the face hands on too). Checked over every
file in each directory, so a new module joins its layer's rules by where it is put.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from .helpers import ROOT

PACKAGE = ROOT / "jaxhist_widget"
LAYERS = {"_device": "device", "_host": "host", "ui": "ui", "_extension": "extension"}
#: The library adapters: public modules on top of the package, each needing its library.
ADAPTERS = {"optimistix.py", "diffrax.py", "jaxopt.py"}
FILES = {"_wire.py": "wire", "__init__.py": "package", **dict.fromkeys(ADAPTERS, "adapter")}
# What each layer may import from the package (its own layer always).
ALLOWED = {
    "wire": set(),
    "device": {"wire"},
    "host": {"wire"},
    "ui": {"wire", "host"},
    "extension": {"wire", "host", "ui"},
    "package": {"wire", "device", "host", "ui", "extension"},
    "adapter": {"package"},  # the public API only
}
CONCURRENCY = {"threading", "_thread", "socket", "signal", "selectors", "concurrent", "asyncio"}
WIDGET_LIBS = {"anywidget", "ipywidgets", "bqplot", "traitlets", "IPython", "ipykernel"}


def layer_of(path: Path) -> str:
    rel = path.relative_to(PACKAGE)
    if len(rel.parts) > 1:
        return LAYERS[rel.parts[0]]
    return FILES[rel.name]


def modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def imports_of(path: Path) -> tuple[set[str], set[str]]:
    """(third-party top-level names, package layers) that a module imports anywhere in it."""
    tree = ast.parse(path.read_text())
    outside, layers = set(), set()
    here = path.relative_to(PACKAGE).parts[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                top = a.name.split(".")
                if top[0] == "jaxhist_widget":
                    layers.add(_layer_named(top[1:]))
                else:
                    outside.add(top[0])
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(here[: len(here) - node.level + 1])
                target = base + (node.module.split(".") if node.module else [])
                if target:
                    layers.add(_layer_named(target))
                else:  # from . import x (at the top of the package)
                    layers |= {_layer_named([a.name]) for a in node.names}
            elif node.module.split(".")[0] == "jaxhist_widget":
                layers.add(_layer_named(node.module.split(".")[1:]))
            else:
                outside.add(node.module.split(".")[0])
    return outside, layers


def _layer_named(parts: list[str]) -> str:
    if not parts:
        return "package"
    if parts[0] + ".py" in ADAPTERS:
        return "adapter"
    if parts[0] in LAYERS:
        return LAYERS[parts[0]]
    return FILES.get(parts[0] + ".py", "package")


def test_every_module_is_in_a_layer():
    for path in modules():
        layer_of(path)  # raises KeyError for a module outside every layer


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_point_one_way(path):
    layer = layer_of(path)
    outside, layers = imports_of(path)
    wrong = layers - ALLOWED[layer] - {layer}
    assert not wrong, f"{path.name} ({layer}) imports the {wrong} layer"
    if layer in {"device", "wire"}:
        assert not outside & CONCURRENCY, f"{path.name} imports {outside & CONCURRENCY}"
    if layer in {"device", "wire", "host"}:
        assert not outside & WIDGET_LIBS, f"{path.name} imports {outside & WIDGET_LIBS}"


def test_internals_are_private():
    # The public API is what `__init__` exports, and the adapters; every other module is
    # private: `_`-prefixed itself or inside a `_`-prefixed subpackage (`ui/` holds only
    # private modules).
    for path in modules():
        rel = path.relative_to(PACKAGE)
        private = any(part.startswith("_") for part in rel.parts)
        assert private or str(rel) in ADAPTERS, f"{rel} is a public module"


#: Most lines of code a module of the package has (each file one job: a longer one is split by
#: concern, never to fit: a class stays whole in one module).
MOST_LINES = 400


def code_lines(source: str) -> int:
    """Lines holding code: docstrings, comment-only and blank lines are not counted, so the
    cap never asks for a docstring or a comment to be cut; nor are the lines a text held as
    data continues on (a multi-line string's after its first: the docs in `LivePlot`'s option
    table, each option's declared once there, are its docstrings moved)."""
    tree = ast.parse(source)
    docs: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            docs.update(range(node.lineno + 1, (node.end_lineno or node.lineno) + 1))
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                docs.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return sum(
        1
        for number, line in enumerate(source.splitlines(), start=1)
        if number not in docs and line.strip() and not line.lstrip().startswith("#")
    )


def test_code_lines_leave_out_docstrings_and_comments():
    source = '"""Module.\n\nMore."""\n\n# a comment\ndef f():\n'
    source += '    """Doc."""\n    return 1  # why\n'
    assert code_lines(source) == 2
    # a text held as data: its first line is code, the lines it continues on are not
    assert code_lines('TEXT = """one\ntwo\nthree"""\nx = 1\n') == 2


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_every_module_stays_small(path: Path) -> None:
    lines = code_lines(path.read_text())
    assert lines < MOST_LINES, (
        f"{path.relative_to(PACKAGE)}: {lines} lines of code (split it by concern)"
    )


def test_nothing_in_the_package_imports_an_adapter():
    # Their libraries are optional: importing the package must never need one.
    for path in modules():
        if path.name not in ADAPTERS:
            assert "adapter" not in imports_of(path)[1], f"{path.name} imports an adapter"


@pytest.mark.slow  # a fresh Python process
def test_core_runs_without_any_widget_library():
    # A fresh interpreter where every widget library fails to import, as on a machine with
    # only jax and numpy installed.
    script = textwrap.dedent(
        f"""
        import sys
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in {sorted(WIDGET_LIBS)!r}:
                    raise ImportError("blocked: " + name)
        sys.meta_path.insert(0, Block())
        import jax, jaxhist_widget as jhw
        f = jax.jit(lambda x: jhw.while_loop(lambda x: x > 1, lambda x: x / 2, x, max_steps=5))
        with jhw.Recorder() as rec:
            _, hist = f(10.0)
        assert rec.history().tolist() == hist.to_numpy().tolist() == [10, 5, 2.5, 1.25, 0.625]
        try:
            jhw.LivePlot
        except ImportError as e:
            print("LivePlot needs the widget stack:", e)
        print("ok")
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("ok")
    assert "LivePlot needs the widget stack" in out.stdout


# ----------------------------------------------------------------- parts of a layer
# ui/ and _host/ by concern: each subpackage one concern, imports pointing one way between
# them. In ui/, the look and the reductions are pure and used by everyone, the static picture
# and the live figure never import each other (both draw with the look), the plot joins the
# parts. In _host/, the interrupt bridge knows nothing of the host; the runtime (the hub, runs,
# the worker) knows no sink class; the sink API is on the runtime; the store and TensorBoard
# are sinks, and never import each other (`_export.py` joins them: a store's file written as
# TensorBoard's). In _device/, the lanes and devices a loop runs over are under what it records
# and its host calls, which never import each other; the loops join them.
# The parts each part may import (its own always); a module at the layer's top is a part of
# its own, named after it ("face": the layer's __init__.py).
PARTS = {
    "ui": {
        "look": set(),
        "reduce": set(),
        "series": {"look", "reduce"},
        "figure": {"look", "reduce"},
        "picture": {"look", "reduce"},
        "panel": {"look", "reduce"},
        "plot": {"look", "reduce", "series", "figure", "panel", "picture"},
        "face": {"panel", "plot"},
    },
    "_host": {
        "_floats": set(),
        "interrupts": set(),
        "runtime": {"interrupts", "_floats"},
        "sinks": {"runtime"},
        "store": {"runtime", "sinks", "_floats"},
        "tensorboard": {"runtime", "sinks"},
        "_export": {"runtime", "store", "tensorboard"},
        "face": {"runtime", "sinks", "store", "tensorboard", "_export"},
    },
    "_device": {
        "parallel": set(),
        "record": {"parallel"},
        "stream": {"parallel"},
        "loops": {"parallel", "record", "stream"},
        "face": {"loops", "record"},
    },
}
#: The layers whose parts use other parts' modules by name (``from ..parallel import devices``,
#: a module its face imports), as well as names of their faces.
MODULES_BY_NAME = {"_device"}
# The layers below ui/ each part may reach (the run and its record, the sinks).
UI_BELOW = {"series": {"host", "wire"}, "panel": {"host"}, "plot": {"host"}}
# The widget libraries each ui/ part may import: the pure parts none.
UI_WIDGETS = {
    "figure": {"bqplot", "ipywidgets"},
    "panel": {"anywidget", "ipywidgets", "traitlets"},
    "plot": WIDGET_LIBS,
    "face": set(),
}
#: Most modules a folder of the package holds (its face aside).
MOST_MODULES = 12


def part_of(layer: str, path: Path) -> str:
    rel = path.relative_to(PACKAGE / layer)
    if len(rel.parts) > 1:
        return rel.parts[0]
    return "face" if rel.stem == "__init__" else rel.stem


def layer_modules(layer: str) -> list[Path]:
    return sorted((PACKAGE / layer).rglob("*.py"))


def targets_of(path: Path) -> set[tuple[str, ...]]:
    """What a module of the package imports, anywhere in it (type-only imports too): each
    target's path in the package (``("ui", "look", "_colors")``), with the names a ``from .
    import x`` takes."""
    here = path.relative_to(PACKAGE).parts[:-1]
    out: set[tuple[str, ...]] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            for a in node.names:
                parts = tuple(a.name.split("."))
                if parts[0] == "jaxhist_widget":
                    out.add(parts[1:])
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - node.level + 1]
            elif node.module.split(".")[0] == "jaxhist_widget":
                base = ()
            else:
                continue
            module = tuple(node.module.split(".")) if node.module else ()
            if node.level == 0:
                module = module[1:]
            target = base + module
            for a in node.names:  # `from . import _x` imports a module; else a name of target
                candidate = (*target, a.name)
                if (PACKAGE.joinpath(*candidate).with_suffix(".py")).exists():
                    out.add(candidate)
                else:
                    out.add(target)
    return out


@pytest.mark.parametrize("layer", sorted(PARTS))
def test_a_layer_is_made_of_its_parts(layer: str) -> None:
    folder = PACKAGE / layer
    parts = {p.name for p in folder.iterdir() if p.is_dir() and p.name != "__pycache__"}
    parts |= {"face" if p.stem == "__init__" else p.stem for p in folder.glob("*.py")}
    assert parts == set(PARTS[layer])


@pytest.mark.parametrize(
    "path",
    [p for layer in PARTS for p in layer_modules(layer)],
    ids=lambda p: str(p.relative_to(PACKAGE)),
)
def test_parts_import_one_way(path: Path) -> None:
    layer = path.relative_to(PACKAGE).parts[0]
    part, allowed = part_of(layer, path), PARTS[layer]
    if layer == "ui":
        outside, layers = imports_of(path)
        assert not (layers - {"ui"}) - UI_BELOW.get(part, set()), f"{path.name}: {layers}"
        widgets = outside & WIDGET_LIBS
        assert widgets <= UI_WIDGETS.get(part, set()), f"{path.name} ({part}) imports {widgets}"
    for target in targets_of(path):
        if target[:1] != (layer,) or len(target) < 2:
            continue
        other = target[1].removesuffix(".py")
        if other == part:
            continue
        assert other in allowed[part], f"{path.relative_to(PACKAGE)} ({part}) imports {other}"
        # Another part is reached through its face (its __init__), never into its modules
        # (in _device/, a module that its face imports, by name).
        if layer in MODULES_BY_NAME and len(target) == 3:
            handed_on = targets_of(PACKAGE / layer / other / "__init__.py")
            assert target in handed_on, f"{path.relative_to(PACKAGE)} imports {'/'.join(target)}"
        else:
            assert len(target) == 2, f"{path.relative_to(PACKAGE)} imports {'/'.join(target)}"


def test_no_module_imports_back_into_a_circle() -> None:
    graph = {p: set() for p in modules()}
    for path in graph:
        for target in targets_of(path):
            module = PACKAGE.joinpath(*target)
            found = module.with_suffix(".py") if module.with_suffix(".py").exists() else None
            found = found or (module / "__init__.py" if (module / "__init__.py").exists() else None)
            if found is not None and found in graph and found != path:
                graph[path].add(found)
    done: set[Path] = set()

    def visit(path: Path, trail: list[Path]) -> None:
        if path in trail:
            loop = [*trail[trail.index(path) :], path]
            raise AssertionError(" -> ".join(str(p.relative_to(PACKAGE)) for p in loop))
        if path in done:
            return
        for nxt in sorted(graph[path]):
            visit(nxt, [*trail, path])
        done.add(path)

    for path in graph:
        visit(path, [])


@pytest.mark.parametrize(
    "folder",
    sorted({p.parent for p in modules()}),
    ids=lambda p: str(p.relative_to(PACKAGE.parent)),
)
def test_every_folder_stays_small(folder: Path) -> None:
    # (Its modules' lines, as every module's, in `test_every_module_stays_small`.)
    held = [p for p in folder.glob("*.py") if p.name != "__init__.py"]
    assert len(held) <= MOST_MODULES, f"{folder.name}/ holds {len(held)} modules"
