"""Record every step of a compiled JAX ``while_loop``: on the device, and live on the host.

>>> import jax, jaxhist_widget as jhw
>>> final, hist = jhw.while_loop(lambda x: x > 1.0, lambda x: x / 2, 10.0, max_steps=5)
>>> hist.to_numpy().tolist()
[10.0, 5.0, 2.5, 1.25, 0.625]

Layers (imports point one way): the traced device code (`_device`) talks to the host only
through the contract in `_wire`; the host
runtime (`_host`: the hub, runs, sinks, one worker, the interrupt bridge) serves it; `LivePlot`
(the widget) is imported lazily so the core works with only jax and numpy installed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._device import DEFAULT_WARN_BYTES, History, HistorySizeWarning, fori_loop, scan, while_loop
from ._host import (
    Recorder,
    Run,
    Sink,
    Stopped,
    Store,
    StoredRun,
    TensorBoard,
    load_runs,
    log,
    to_tensorboard,
)
from ._wire import Layout

if TYPE_CHECKING:
    from .ui import LivePlot

__all__ = [
    "DEFAULT_WARN_BYTES",
    "History",
    "HistorySizeWarning",
    "Layout",
    "LivePlot",
    "Recorder",
    "Run",
    "Sink",
    "Stopped",
    "Store",
    "StoredRun",
    "TensorBoard",
    "fori_loop",
    "load_ipython_extension",
    "load_runs",
    "log",
    "scan",
    "to_tensorboard",
    "unload_ipython_extension",
    "while_loop",
]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    # The widget stack (anywidget, ipywidgets, bqplot) loads only when asked for.
    if name == "LivePlot":
        from .ui import LivePlot

        return LivePlot
    raise AttributeError(f"module 'jaxhist_widget' has no attribute {name!r}")


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext jaxhist_widget``: register the ``%%jaxhist`` and ``%jaxhist`` magics.

    IPython and the widget stack are imported here, not when the package is.
    """
    from ._extension import load_ipython_extension as load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext jaxhist_widget``: turn auto mode off."""
    from ._extension import unload_ipython_extension as unload

    unload(ipython)
