"""The host: what serves the traced loop's host calls and receives its rows, by concern:

- ``runtime/``: the hub (attached sinks, the run table, the device's entry points), `Run`, the
  one worker, a run's pace;
- ``interrupts/``: Ctrl-C and the notebook's ■ while sinks are armed;
- ``sinks/``: the sink API: `Sink`, `Recorder`, `log` (a Python loop's rows, made on the host);
- ``store/``: `Store` (runs on disk) and `load_runs`;
- ``tensorboard/``: `TensorBoard` (event files);
- ``_export``: `to_tensorboard`, which joins the last two;
- ``_floats``: IEEE arithmetic in the host calls XLA runs with subnormals flushed.

Imports point one way: _floats, interrupts <- runtime <- sinks <- store, tensorboard <- _export
(the store uses _floats too). Importing it connects the hub to the device↔host contract
(`jaxhist_widget._wire`), so the traced loop's host calls reach it. It imports no widget code.
"""

from __future__ import annotations

from .. import _wire
from ._export import to_tensorboard
from .runtime import HUB, Hub, Run, unpaced
from .sinks import Recorder, Sink, Stopped, log, name_runs
from .store import Store, StoredRun, load_runs, table
from .tensorboard import TensorBoard

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
    "name_runs",
    "table",
    "to_tensorboard",
    "unpaced",
]

_wire.connect(HUB)
