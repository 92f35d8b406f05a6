"""Runs already made (a store's, a recorder's, a plot's) written as TensorBoard event files, as
the `TensorBoard` sink writes them live: `write_runs`, which `jhw.to_tensorboard` calls.

Host runtime, numpy only. A stored run keeps no time per row, so wall times run evenly from the
run's start to its end.
"""

from __future__ import annotations

import datetime
import os
import time
from collections.abc import Iterable
from pathlib import Path

from ..runtime import Run
from ._files import RunFiles

__all__ = ["write_runs"]


def write_runs(runs: Iterable[Run], logdir: str | os.PathLike[str]) -> list[Path]:
    """Write each of ``runs`` under ``logdir`` (a directory per run, per lane under vmap);
    returns each run's directory."""
    logdir = Path(logdir)
    written = []
    for run in runs:
        files = RunFiles(logdir, run.name, run)
        start, end = _span(run)
        last = max(max(run.counts, default=1) - 1, 1)
        files.write(run, lambda *_, steps, s=start, e=end, n=last: s + (e - s) * steps / n)
        if run.status != "running":
            files.end(run, end)
        written.append(files.dir)
    return written


def _span(run: Run) -> tuple[float, float]:
    """When ``run`` started and ended (now, if it has not), in seconds since the epoch."""
    # A run read back from a store (`StoredRun`) carries the times of day it started and ended
    # (read by name: the store is no import of TensorBoard's, nor it of the store's).
    started_at, ended_at = getattr(run, "started_at", None), getattr(run, "ended_at", None)
    if started_at:
        start = datetime.datetime.fromisoformat(started_at).timestamp()
        if ended_at:
            return start, datetime.datetime.fromisoformat(ended_at).timestamp()
        return start, start + max(run.elapsed, 0.0)
    # A run measures time on the perf_counter clock: its start, as a time of day.
    start = time.time() - (time.perf_counter() - run.started)
    return start, start + run.elapsed
