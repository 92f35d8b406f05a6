"""What a loop records: `History` (``history``), the leaves kept each step and their buffers
(``rows``), the checks of a loop's arguments (``checks``), how large the history may grow
(``sizes``), which leaves of a scan's row 0 are stand-ins (``stand_ins``) and the order the
record's leaves were written in (``written``). Traced JAX, on
``parallel/``."""

from __future__ import annotations

from . import checks, rows, sizes, stand_ins, written
from .history import History
from .sizes import DEFAULT_WARN_BYTES, HistorySizeWarning

__all__ = [
    "DEFAULT_WARN_BYTES",
    "History",
    "HistorySizeWarning",
    "checks",
    "rows",
    "sizes",
    "stand_ins",
    "written",
]
