"""TensorBoard's event files, written by this package (no TensorFlow, no protobuf package).

- ``_tensorboard``: `TensorBoard`, a sink that appends each run's rows as they arrive;
- ``_export``: `write_runs`, runs already made written alike;
- ``_files``: one run's files: its directory, the tags its rows become;
- ``_tfevents``: the event files' records and messages, encoded many rows at a time;
- ``_crc32c``: the CRC32C that frames each record, for many records at once.

On the sink API and the runtime; it never imports the store (nor the store it).
"""

from __future__ import annotations

from ._export import write_runs
from ._tensorboard import TensorBoard

__all__ = ["TensorBoard", "write_runs"]
