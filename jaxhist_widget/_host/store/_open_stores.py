"""The `Store`s of this process, by the file each writes: what a read here waits for, and what
the end of Python files first.

Host runtime. A read (`load_runs`) in the process that writes the file sees every row it sent:
it waits for this process's stores of that path first. A store adds itself when it is made;
this module holds them weakly and knows them only as `OpenStore`, so the reader (`_stored`)
needs no import of the writer's sink (`_store`), which imports the reader. As Python exits,
the stores file what they received once the hub has let the rows on their way in
(`Hub.finish`).
"""

from __future__ import annotations

import os
import weakref
from pathlib import Path
from typing import Protocol

from ..runtime import HUB

__all__ = ["OpenStore", "add", "flush_stores"]


class OpenStore(Protocol):
    """What is asked of a store here (see `Store`)."""

    path: Path
    exit_wait: float

    def _wait(self, timeout: float | None, give_way: bool = False) -> bool: ...

    def _file_before_exit(self) -> None: ...


_STORES: weakref.WeakSet[OpenStore] = weakref.WeakSet()


def add(store: OpenStore) -> None:
    """Count ``store`` among this process's stores (until it is collected)."""
    _STORES.add(store)


def flush_stores(path: Path) -> None:
    """Wait until the stores of this process writing ``path`` have filed what they received
    (each at most its `Store.exit_wait`): a read in this process sees every row it sent."""
    try:
        target = os.path.realpath(path)
    except OSError:
        return
    for store in list(_STORES):
        if os.path.realpath(store.path) == target:
            store._wait(store.exit_wait, give_way=True)  # a locked file is read as it is


def _file_before_exit() -> None:
    for store in list(_STORES):
        store._file_before_exit()


HUB.at_exit(_file_before_exit)
