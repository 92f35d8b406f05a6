"""A tutorial notebook run top to bottom in a fresh kernel, once per test session.

Two parts of the test suite run every tutorial: the docs site's build (``scripts/docs_hooks.py``
shows each notebook's outputs on its page) and ``tests/kernel/test_notebooks.py`` (each runs and
ends on the picture it teaches). The same notebook run in the same kind of kernel gives the same
outputs, so where ``JHW_NOTEBOOK_RUNS`` names a folder (the test suite sets one per session:
``tests/conftest.py``), a run is kept there, keyed by the notebook's bytes, and whichever part
comes second reads it instead of running the notebook again (about a minute and a half of CI).
Without it (a docs build of one's own), every call runs the notebook.

Only a run that ended without an error is kept: a failing notebook fails whichever part asks.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

#: The folder of the runs kept (unset: none is kept or read).
FOLDER_VARIABLE = "JHW_NOTEBOOK_RUNS"
#: The key, in a kept run's metadata, of how long the run took (seconds).
SECONDS_KEY = "jhw_run_seconds"


def run_notebook(path: Path, cell_timeout: float) -> tuple[Any, float]:
    """The notebook at ``path`` run in a fresh ``python3`` kernel (cwd: its folder; JAX on the
    CPU unless ``JAX_PLATFORMS`` says otherwise), and how long the run took in seconds: a run of
    the same bytes kept in ``$JHW_NOTEBOOK_RUNS``, else a new one (kept there).

    Parameters
    ----------
    path
        The ``.ipynb`` file (nbformat 4).
    cell_timeout
        How long one cell may take, in seconds.

    Returns
    -------
    tuple
        The notebook (an ``nbformat.NotebookNode``) with its outputs, and the run's seconds.

    Raises
    ------
    nbclient.exceptions.CellExecutionError
        If a cell raises.
    """
    import nbclient
    import nbformat

    data = path.read_bytes()
    folder = os.environ.get(FOLDER_VARIABLE)
    kept = None
    if folder:
        digest = hashlib.sha256(data).hexdigest()[:16]
        kept = Path(folder) / f"{path.stem}-{digest}.ipynb"
        if kept.exists():
            notebook = nbformat.reads(kept.read_text(encoding="utf-8"), as_version=4)
            return notebook, float(notebook.metadata[SECONDS_KEY])
    notebook = nbformat.reads(data.decode("utf-8"), as_version=4)
    client = nbclient.NotebookClient(
        notebook,
        kernel_name="python3",
        timeout=cell_timeout,
        resources={"metadata": {"path": str(path.parent)}},
    )
    env = {**os.environ, "JAX_PLATFORMS": os.environ.get("JAX_PLATFORMS", "cpu")}
    start = time.perf_counter()
    client.execute(env=env)
    seconds = time.perf_counter() - start
    if kept is not None:
        kept.parent.mkdir(parents=True, exist_ok=True)
        copy = json.loads(nbformat.writes(notebook))
        copy["metadata"][SECONDS_KEY] = seconds
        # written whole, then named: a reader never sees half a run
        partial = kept.with_suffix(f".{os.getpid()}.partial")
        partial.write_text(json.dumps(copy), encoding="utf-8")
        partial.replace(kept)
    return notebook, seconds
