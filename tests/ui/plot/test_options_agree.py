"""`LivePlot`'s options are declared in its constructor's signature; every other list of them
agrees with it: `OPTIONS` (what a bad keyword's error lists), the API page's signature (names
and defaults), and the ``%%jaxhist`` flags (each one an option, spelled with dashes).

Before this test the API page's signature lacked ``lane_values``, added to the constructor
later: each list was kept by hand."""

from __future__ import annotations

import inspect
import re

from jaxhist_widget import LivePlot
from jaxhist_widget.ui.plot._options import OPTIONS

from ...helpers import ROOT


def _signature() -> dict[str, object]:
    params = inspect.signature(LivePlot.__init__).parameters.values()
    return {p.name: p.default for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY}


def test_options_are_the_constructors_keywords() -> None:
    assert set(OPTIONS) == set(_signature())
    assert len(OPTIONS) == len(set(OPTIONS))


def test_the_api_page_shows_every_option_with_its_default() -> None:
    api = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    (shown,) = re.findall(r"`jhw\.LivePlot\(([^`]*)\)`", api)
    written = dict(part.split("=", 1) for part in shown.split(", "))
    assert set(written) == set(_signature()), set(written) ^ set(_signature())
    for name, default in _signature().items():
        assert written[name] == ('"' + default + '"' if isinstance(default, str) else repr(default))


def test_every_jaxhist_flag_is_an_option() -> None:
    from jaxhist_widget._extension._magics import JaxHistMagics

    parser = JaxHistMagics.jaxhist_cell.parser
    dests = {a.dest for a in parser._actions if a.option_strings and a.dest != "help"}
    # the cell's own: where the plot goes (-o) and the runs' name
    own = {"output", "name"}
    assert dests - own <= set(OPTIONS), dests - own - set(OPTIONS)
    for action in parser._actions:
        if action.dest in set(OPTIONS):
            assert action.help, action.dest
            assert f"--{action.dest.replace('_', '-')}" in action.option_strings, action.dest
