"""`Recorder`: a widget-free sink that keeps every streamed run in memory.

Host runtime.
"""

from __future__ import annotations

import threading
from typing import Any

from ..runtime import Run
from ._sink import Sink

__all__ = ["Recorder"]


class Recorder(Sink):
    """Collects the rows of every `jaxhist_widget.while_loop` run started while attached.

    Examples
    --------
    >>> import jax, jaxhist_widget as jhw
    >>> f = jax.jit(lambda x: jhw.while_loop(lambda x: x > 1.0, lambda x: x / 2, x, max_steps=5))
    >>> with jhw.Recorder() as rec:
    ...     _ = f(10.0)
    ...     _ = f(3.0)
    >>> [r.history().tolist() for r in rec.runs]
    [[10.0, 5.0, 2.5, 1.25, 0.625], [3.0, 1.5, 0.75]]
    >>> rec.runs[-1].status
    'converged'
    """

    def __init__(self) -> None:
        super().__init__()
        self._runs: list[Run] = []
        self._runs_lock = threading.Lock()

    def on_start(self, run: Run) -> None:
        with self._runs_lock:
            self._runs.append(run)

    @property
    def runs(self) -> list[Run]:
        """Every run streamed to this recorder, oldest first."""
        with self._runs_lock:
            return list(self._runs)

    def history(self, run: int = -1) -> Any:
        """Rows of run number ``run`` (default: the last) in the form of ``History.to_numpy()``.

        The arrays are read-only (every sink of the run shares them); copy to edit:
        ``np.array(rec.history())``.
        """
        runs = self.runs
        if not runs:
            raise LookupError(
                "This Recorder has received no run yet: call a jhw.while_loop inside "
                "`with recorder:` or via recorder.run(fn, ...)."
            )
        return runs[run].history()

    def clear(self) -> None:
        """Forget all recorded runs."""
        with self._runs_lock:
            self._runs.clear()
