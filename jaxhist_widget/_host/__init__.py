"""The host runtime: the hub that owns attached sinks and runs, run storage, `Sink`,
`Recorder`, `Store` (runs on disk), `TensorBoard` (event files), the one worker thread, the
interrupt bridge, and `log` (a Python loop's rows, made on the host).

Importing it connects the hub to the device↔host contract (`jaxhist_widget._wire`), so the
traced loop's host calls reach it. It imports no widget code.
"""

from __future__ import annotations

from .. import _wire
from ._hub import HUB, Hub
from ._log import Stopped, log
from ._recorder import Recorder
from ._run import Run
from ._sink import Sink
from ._store import Store
from ._stored import StoredRun, load_runs, table
from ._tensorboard import TensorBoard, to_tensorboard

__all__ = [
    "HUB",
    "Hub",
    "Recorder",
    "Run",
    "Sink",
    "Stopped",
    "Store",
    "StoredRun",
    "TensorBoard",
    "load_runs",
    "log",
    "table",
    "to_tensorboard",
]

_wire.connect(HUB)
