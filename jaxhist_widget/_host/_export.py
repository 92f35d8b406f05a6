"""`to_tensorboard`: runs already made, from a store's file or in memory, written as
TensorBoard event files.

Host runtime. It joins the two parts that never import each other: the store's reader
(`store.load_runs`, for a path) and TensorBoard's writer (`tensorboard.write_runs`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from .runtime import Run
from .store import load_runs
from .tensorboard import write_runs

__all__ = ["to_tensorboard"]


def to_tensorboard(
    runs: str | os.PathLike[str] | Run | Iterable[Run], logdir: str | os.PathLike[str]
) -> list[Path]:
    """Write runs that were made already as TensorBoard event files under ``logdir``, as the
    `TensorBoard` sink writes them live; returns each run's directory.

    ``runs``: a `Store`'s file (every run in it, read with `load_runs`), one run, or several
    (a `Recorder`'s ``runs``, a `LivePlot`'s). A run becomes a directory named after it
    (``name (2)`` where taken, so writing twice never mixes two copies), a directory per lane
    under vmap (``adam/lane 3``). Each row is an event at its step (row 0, the initial carry,
    is step 0): a scalar tag per scalar leaf and per component of a leaf of up to 10 components
    (``x[0]``), a histogram (30 buckets, its finite components) for a larger one; step counters
    are left out (the step axis shows them). Scalars are float32, what every TensorBoard reader
    takes: float32 values bit for bit (NaN and infinities too), float64 and integers beyond
    2**24 rounded to the nearest float32, bool as 0.0 / 1.0. The text summary ``jaxhist/run``
    names the run and its fields at step 0 and gives its status at its last step. Wall times
    run evenly from the run's start to its end (a stored run keeps no time per row).

    Examples
    --------
    >>> import os, tempfile, jaxhist_widget as jhw
    >>> folder = tempfile.mkdtemp()
    >>> with jhw.Store(os.path.join(folder, "runs.db"), name="halving"):
    ...     _ = jhw.while_loop(lambda x: x > 1.0, lambda x: x / 2, 10.0, max_steps=9)
    >>> [d.name for d in jhw.to_tensorboard(os.path.join(folder, "runs.db"), folder + "/tb")]
    ['halving']

    Raises
    ------
    FileNotFoundError
        If ``runs`` is a path with no store at it.
    TypeError
        If ``runs`` holds something other than runs.
    """
    if isinstance(runs, (str, os.PathLike)):
        runs = load_runs(runs)
    elif isinstance(runs, Run):
        runs = [runs]
    else:
        runs = list(runs)
        bad = [r for r in runs if not isinstance(r, Run)]
        if bad:
            raise TypeError(
                f"to_tensorboard takes a store's path, a run or runs (e.g. recorder.runs, "
                f"jhw.load_runs(path)); got {type(bad[0]).__name__}."
            )
    return write_runs(runs, logdir)
