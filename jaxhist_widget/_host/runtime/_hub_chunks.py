"""Where a received chunk's rows go in its run: which lanes have new rows, grouped by the rows
they add and where those sit in the window sent, and how many rows the run has once it is filed.

Pure numpy on a decoded `Chunk` (`_wire.decode`); the hub files the groups (`Hub._file`).
"""

from __future__ import annotations

import numpy as np

from ..._wire import Chunk

__all__ = ["chunk_end", "lane_groups"]


def lane_groups(chunk: Chunk, run_id: int) -> tuple[list[int], list[tuple[np.ndarray, np.ndarray]]]:
    """The lanes of ``chunk`` with new rows, and those lanes in groups: per group its key
    ``(first row, row count, offset in the window)`` and its lanes.

    Lanes that share where their rows start and end are appended together, one copy per leaf:
    under vmap every running lane steps in lockstep, so nearly always all of them; lanes that
    ended inside this chunk form a few more groups. Raises if a lane's rows are not all in the
    window sent (``run_id`` names the run).
    """
    lanes = np.flatnonzero(chunk.count > 0)
    if not lanes.size:
        return [], []
    first, count = chunk.first[lanes], chunk.count[lanes]
    lo = first - chunk.slice_start[lanes]  # the device clamps window starts at the end
    window = chunk.leaves[0].shape[1]  # a loop recording no leaf streams nothing
    bad = (lo < 0) | (lo + count > window)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise RuntimeError(
            f"run {run_id} lane {int(lanes[i])}: rows {first[i]}..{first[i] + count[i]} "
            f"are not in the window sent (rows {first[i] - lo[i]}.."
            f"{first[i] - lo[i] + window}); please report this"
        )
    keys = np.stack([first, count, lo], axis=1)
    if (keys == keys[0]).all():
        groups = [(keys[0], lanes)]
    else:
        unique, which = np.unique(keys, axis=0, return_inverse=True)
        groups = [(unique[g], lanes[which.ravel() == g]) for g in range(len(unique))]
    return lanes.tolist(), groups


def chunk_end(chunk: Chunk) -> int:
    """The rows a run has once ``chunk`` is filed: the furthest end of its lanes' rows (the
    lanes of a vmap step together), 0 for a chunk without rows."""
    new = chunk.count > 0
    return int((chunk.first + chunk.count)[new].max()) if new.any() else 0
