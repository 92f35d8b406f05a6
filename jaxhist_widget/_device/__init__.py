"""The device layer: traced JAX only — the loops (`loop.while_loop`, its steps in `steps` and
its plain and streamed runs in `chunks`; `scan.scan` on ``lax.scan``; `fori.fori_loop`, one or
the other; their eager cache in `eager`), their argument checks in `checks`, the user's carry and
traced functions in `carry`, what they record in `rows`, size warnings in `sizes`, `History`,
vmap lanes, the flush that streams chunks, multi-device helpers (`devices`) and the host-call
primitive. It reaches the host only through the contract in `jaxhist_widget._wire`, and imports
no threads, sockets, signals or widget code."""

from __future__ import annotations

from .fori import fori_loop
from .history import History
from .loop import while_loop
from .scan import scan
from .sizes import DEFAULT_WARN_BYTES, HistorySizeWarning

__all__ = [
    "DEFAULT_WARN_BYTES",
    "History",
    "HistorySizeWarning",
    "fori_loop",
    "scan",
    "while_loop",
]
