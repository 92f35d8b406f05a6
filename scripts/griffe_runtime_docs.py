"""A griffe extension for the docs site (``mkdocs.yml`` names it): `LivePlot`'s docstring as the
imported class has it.

Its Parameters section is made when the class is made, from the option table that declares
each option once (``jaxhist_widget/ui/plot/_options.py``); griffe reads the source, where the
docstring has none, so the site would show the options without their docs.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

import griffe

#: The classes whose docstring is completed at import.
COMPLETED_AT_IMPORT = {"jaxhist_widget.ui.plot._liveplot.LivePlot"}


class RuntimeDocstrings(griffe.Extension):
    """Replaces the source's docstring of each class of `COMPLETED_AT_IMPORT` by the imported
    class's."""

    def on_class(self, *, cls: griffe.Class, **kwargs: Any) -> None:
        if cls.path not in COMPLETED_AT_IMPORT or cls.docstring is None:
            return
        imported = getattr(importlib.import_module(cls.module.path), cls.name)
        source = cls.docstring
        cls.docstring = griffe.Docstring(
            inspect.cleandoc(imported.__doc__ or ""),
            lineno=source.lineno,
            endlineno=source.endlineno,
            parent=cls,
            parser=source.parser,
            parser_options=source.parser_options,
        )
