"""The loop's host calls: the flush that packs a chunk's rows for the host (``streaming``),
through a pure host call that hands the host numpy arrays (``hostcall``). Traced JAX, on
``parallel/``; the host is reached only through `jaxhist_widget._wire`."""

from __future__ import annotations

from . import hostcall, streaming

__all__ = ["hostcall", "streaming"]
