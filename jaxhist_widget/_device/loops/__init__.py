"""The recording loops: `while_loop` (``loop``, its steps in ``steps``, its plain and streamed
runs in ``chunks``, the user's carry in ``carry``), `scan` (``scan``), `fori_loop` (``fori``),
and their eager cache (``eager``). Traced JAX, on ``record/``, ``stream/`` and ``parallel/``."""

from __future__ import annotations

from .fori import fori_loop
from .loop import while_loop
from .scan import scan

__all__ = ["fori_loop", "scan", "while_loop"]
