"""The three layers import one way: the core runs with only jax and numpy installed."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap

from .conftest import ROOT

PACKAGE = ROOT / "jaxhist_widget"
CORE = {"history", "loop", "lanes", "streaming", "hostcall"}
HOST = {"registry", "runs", "sink", "recorder", "interrupts", "delivery", "backlog"}
WIDGET = {"widget", "liveplot", "decimate", "magics", "series", "figure", "export"}
WIDGET_LIBS = {"anywidget", "ipywidgets", "bqplot", "traitlets", "IPython", "ipykernel"}


def imports_of(module: str) -> set[str]:
    """Top-level names a module imports (``.x`` -> ``x`` for package-relative imports)."""
    tree = ast.parse((PACKAGE / f"{module}.py").read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # from . import x / from .x import y
                names |= (
                    {node.module.split(".")[0]} if node.module else {a.name for a in node.names}
                )
            else:
                names.add(node.module.split(".")[0])
    return names


def test_every_module_belongs_to_a_layer():
    modules = {p.stem for p in PACKAGE.glob("*.py")} - {"__init__"}
    assert modules == CORE | HOST | WIDGET


def test_core_and_host_never_import_widget_code():
    for module in CORE | HOST:
        bad = imports_of(module) & (WIDGET | WIDGET_LIBS)
        assert not bad, f"{module}.py imports {bad}"


def test_core_imports_host_only_through_the_registry():
    for module in CORE:
        assert not imports_of(module) & (HOST - {"registry", "runs"}), module


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
