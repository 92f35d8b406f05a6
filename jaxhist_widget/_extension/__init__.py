"""The IPython extension (``%load_ext jaxhist_widget``): the ``%%jaxhist`` cell magic and auto
mode. IPython is imported here only: the package loads this when IPython loads the extension."""

from __future__ import annotations

from typing import Any

from ._magics import JaxHistMagics

__all__ = ["JaxHistMagics", "load_ipython_extension", "unload_ipython_extension"]

_loaded: dict[int, JaxHistMagics] = {}


def load_ipython_extension(ipython: Any) -> None:
    """Register ``%%jaxhist`` and ``%jaxhist`` (``%load_ext jaxhist_widget``)."""
    if id(ipython) in _loaded:  # %load_ext twice, or %reload_ext after an unload
        return
    magics = JaxHistMagics(ipython)
    ipython.register_magics(magics)
    magics.load()
    _loaded[id(ipython)] = magics


def unload_ipython_extension(ipython: Any) -> None:
    """Turn auto mode off (``%unload_ext jaxhist_widget``)."""
    magics = _loaded.pop(id(ipython), None)
    if magics is not None:
        magics.unload()
