"""The panel: the status, progress, values and controls strip above the charts, as an
anywidget (`LivePanel`: synced traits only), what its run-state traits hold (`panel_state`, one
pure function of the run) and its front end (``js/``, joined into the one module anywidget loads
by `bundle`).
"""

from __future__ import annotations

from ._esm import bundle
from ._panel import CSS_PATH, ESM_PATH, STATUSES, STOP_MODES, TABLES, LivePanel
from ._state import FAILED_TEXT, RATE_WINDOW_S, RateWindow, panel_state, run_entry, run_step

__all__ = [
    "CSS_PATH",
    "ESM_PATH",
    "FAILED_TEXT",
    "RATE_WINDOW_S",
    "STATUSES",
    "STOP_MODES",
    "TABLES",
    "LivePanel",
    "RateWindow",
    "bundle",
    "panel_state",
    "run_entry",
    "run_step",
]
