"""The look table, ``look.json``, read once: the one source of the plot's colours, dashes,
opacities, sizes, status words and number formats.

The JavaScript of the panel reads the same file (``js/base/look.js``; the panel's bundle inlines
it), so the widget, the live figure and the static picture cannot drift apart. Its ``examples``
are checked on both sides (pytest and ``node --test js/``)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

__all__ = ["LOOK", "TABLE_PATH"]

#: The table's file, inside the package (a wheel ships it; the panel's bundle inlines it).
TABLE_PATH = Path(__file__).with_name("look.json")


def _frozen(value: Any) -> Any:
    """``value`` read-only: mappings as `MappingProxyType`, lists as tuples."""
    if isinstance(value, Mapping):
        return MappingProxyType({k: _frozen(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    return value


#: The table (read-only).
LOOK: Mapping[str, Any] = _frozen(json.loads(TABLE_PATH.read_text(encoding="utf-8")))
