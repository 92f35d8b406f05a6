"""The device layer: traced JAX only — the loop (`loop.while_loop`; its argument checks in
`checks`, the user's carry and traced functions in `carry`, what it records in `rows`, size
warnings in `sizes`), `History`, vmap lanes, the flush
that streams chunks, multi-device helpers (`devices`) and the host-call primitive. It reaches
the host only through the contract in `jaxhist_widget._wire`, and imports no threads, sockets,
signals or widget code."""

from __future__ import annotations

from .history import History
from .loop import while_loop
from .sizes import DEFAULT_WARN_BYTES, HistorySizeWarning

__all__ = ["DEFAULT_WARN_BYTES", "History", "HistorySizeWarning", "while_loop"]
