"""The sink API: what a user attaches to receive runs, and the runs made on the host.

- ``_sink``: `Sink`, the base every receiver derives from: attaching (``with sink:``, `run`,
  `run_async`), stop requests, a block's wait for the device (the runtime's ``Programs``);
  `name_runs`, the names the %%jaxhist magic gives a cell's runs;
- ``_recorder``: `Recorder`, the widget-free sink that keeps every run in memory;
- ``_log``: `log` and `Stopped`, a Python loop's rows made on the host, one run per block;
  ``_log_values`` how a call's values are kept until they are sent.

On top of the runtime (``runtime/``); the store and TensorBoard derive their sinks from it.
"""

from __future__ import annotations

from ._log import Stopped, log
from ._recorder import Recorder
from ._sink import Sink, name_runs

__all__ = ["Recorder", "Sink", "Stopped", "log", "name_runs"]
