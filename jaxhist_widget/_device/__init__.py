"""The device layer: traced JAX only, by concern:

- ``loops/``: the loops (`while_loop`, its steps in ``steps`` and its plain and streamed runs in
  ``chunks``; `scan` on ``lax.scan``; `fori_loop`, one or the other; their eager cache in
  ``eager``; the user's carry and traced functions in ``carry``);
- ``record/``: what a loop records: `History`, the rows kept each step (``rows``), argument
  checks (``checks``), size warnings (``sizes``), a scan's stand-in row 0 (``stand_ins``);
- ``stream/``: the flush that streams chunks to the host (``streaming``) and the host-call
  primitive (``hostcall``);
- ``parallel/``: where a loop runs side by side: vmap lanes (``lanes``) and several devices
  (``devices``).

Imports point one way: parallel <- record, stream <- loops. It reaches the host only through
the contract in `jaxhist_widget._wire`, and imports no threads, sockets, signals or widget
code."""

from __future__ import annotations

from .loops import fori_loop, scan, while_loop
from .record import DEFAULT_WARN_BYTES, History, HistorySizeWarning

__all__ = [
    "DEFAULT_WARN_BYTES",
    "History",
    "HistorySizeWarning",
    "fori_loop",
    "scan",
    "while_loop",
]
