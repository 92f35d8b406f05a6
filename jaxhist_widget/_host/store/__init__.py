"""Runs on disk: `Store`, a sink that files every run into one SQLite file as its rows arrive,
and `load_runs`, which reads them back as `StoredRun`s.

- ``_store``: `Store`, the sink: its hooks note, the worker files; ``_writer`` the filing;
- ``_stored``: `load_runs`, `StoredRun`, `table`: reading back;
- ``_schema``: the file's format; ``_blocks`` a run's rows as blocks and back; ``_legacy``
  files of older formats, read as they are, ``_migrate`` upgraded by the first writer;
- ``_file``: what is at a path, and opening it; ``_liveness`` whether a ``running`` run's
  writer is still at it; ``_open_stores`` this process's stores (a read waits for them).

On the sink API and the runtime; it never imports TensorBoard (nor TensorBoard it).
"""

from __future__ import annotations

from ._store import Store
from ._stored import StoredRun, load_runs, table

__all__ = ["Store", "StoredRun", "load_runs", "table"]
