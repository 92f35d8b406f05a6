"""``scripts/notebook_runs.py`` for the tests (the scripts folder is no package): a tutorial
run once per session, shared by the docs site's build and ``tests/kernel/test_notebooks.py``.
The session's folder is set in ``tests/conftest.py``."""

from __future__ import annotations

import importlib.util
import sys

from . import ROOT

_spec = importlib.util.spec_from_file_location(
    "notebook_runs", ROOT / "scripts" / "notebook_runs.py"
)
assert _spec is not None and _spec.loader is not None
_module = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("notebook_runs", _module)
_spec.loader.exec_module(_module)

FOLDER_VARIABLE: str = _module.FOLDER_VARIABLE
run_notebook = _module.run_notebook

__all__ = ["FOLDER_VARIABLE", "run_notebook"]
