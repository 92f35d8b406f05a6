"""Flushes encoded as the traced program encodes them, to drive the hub without a loop."""

from __future__ import annotations

import jax
import numpy as np

from jaxhist_widget import _wire
from jaxhist_widget._host import HUB

LAYOUT = _wire.Layout(
    names=("x",),
    shapes=((),),
    dtypes=("float32",),
    treedef=jax.tree_util.tree_structure(0.0),
    max_steps=100,
    chunk=8,
    every=4,
)


def flush(run_id: int, first: int, values: list[float], status: int = 0) -> np.ndarray:
    """What the device sends for one unbatched flush of ``values`` starting at row ``first``;
    returns the hub's answer."""
    window = np.zeros(LAYOUT.chunk, np.float32)
    window[: len(values)] = values
    head = np.array([run_id, -1, LAYOUT.chunk, first, len(values), first, status], np.int32)
    return HUB.receive_chunk(LAYOUT, head.view(np.uint32), window.view(np.uint32))


def lanes_flush(hub, layout, run_id: int, first: int, rows: np.ndarray, status: int = 0):
    """What the device sends for one vmapped flush: ``rows`` is ``(lanes, count)`` float32, every
    lane starting at row ``first`` (lanes in lockstep); returns the hub's answer."""
    lanes, count = rows.shape
    window = np.zeros((lanes, layout.chunk), np.float32)
    window[:, :count] = rows
    words = np.tile(np.array([first, count, first, status], np.int32), (lanes, 1))
    head = np.concatenate([np.array([run_id, lanes, layout.chunk], np.int32), words.ravel()])
    return hub.receive_chunk(layout, head.view(np.uint32), window.ravel().view(np.uint32))
