"""`LivePlot`'s options are declared once, in the table `Options` (ui/plot/_options.py); every
other list of them agrees with it: the constructor's signature (kept for editors: names, order,
defaults), its docstring's Parameters, `OPTIONS` (what a bad keyword's error lists), the API
page's signature and options table, and the ``%%jaxhist`` flags (each one an option, spelled
with dashes, made of the table).

Before these tests the API page's signature lacked ``lane_values``, added to the constructor
later: each list was kept by hand."""

from __future__ import annotations

import inspect
import re

import pytest
from IPython.core.error import UsageError

from jaxhist_widget import LivePlot
from jaxhist_widget._extension._magics import JaxHistMagics
from jaxhist_widget._extension._options import _parse
from jaxhist_widget.ui.plot._controls import ControlOptions
from jaxhist_widget.ui.plot._options import OPTIONS, defaults, options_table, specs

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
    parser = JaxHistMagics.jaxhist_cell.parser
    dests = {a.dest for a in parser._actions if a.option_strings and a.dest != "help"}
    # the cell's own: where the plot goes (-o) and the runs' name
    own = {"output", "name"}
    assert dests - own <= set(OPTIONS), dests - own - set(OPTIONS)
    for action in parser._actions:
        if action.dest in set(OPTIONS):
            assert action.help, action.dest
            assert f"--{action.dest.replace('_', '-')}" in action.option_strings, action.dest


# Each option is declared once, in the table `Options` (its fields); the lists above and below
# are derived from it, and the constructor's signature, kept for editors, is checked here.
def test_the_signature_is_the_option_table() -> None:
    assert list(_signature().items()) == list(defaults().items())


def test_the_api_page_options_table_is_the_printed_one() -> None:
    api = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    (written,) = re.findall(r"-->\n(\| option \|.*?)\n<!-- end of the options table -->", api, re.S)
    assert written == options_table(), "python -m jaxhist_widget.ui.plot._options prints it"


def test_the_docstring_has_every_options_doc_in_order() -> None:
    doc = inspect.cleandoc(LivePlot.__doc__ or "")  # (as every Python gives it, 3.13's or not)
    params = doc.split("Parameters\n----------\n", 1)[1].split("\nExamples\n")[0]
    names = re.findall(r"^(\w+)$", params, re.M)
    assert names == list(_signature())


def test_the_control_properties_are_the_table_s_typed() -> None:
    # A property per control of the table, and its type for a type checker (the annotations
    # of `ControlOptions`): the same names, in the table's order.
    controls = [name for name, spec in specs().items() if spec.control is not None]
    typed = [name for name in ControlOptions.__annotations__ if name != "panel"]
    assert typed == controls
    for name in controls:
        assert isinstance(getattr(LivePlot, name), property), name


def test_the_flags_are_the_table_s() -> None:
    parser = JaxHistMagics.jaxhist_cell.parser
    actions = {a.dest: a for a in parser._actions}
    flagged = {name: spec.flag for name, spec in specs().items() if spec.flag is not None}
    assert [d for d in actions if d in OPTIONS] == list(flagged)
    for name, flag in flagged.items():
        action = actions[name]
        assert action.help == flag.help
        assert tuple(action.choices or ()) == tuple(flag.choices or ())
        assert action.const is (True if flag.parse == "switch" else None), name


def test_a_flag_range_check_is_the_constructors() -> None:
    # --max-points is checked as the line is parsed, by the option's one check: the message
    # is the constructor's, less the option's name argparse already says.
    with pytest.raises(ValueError) as made:
        LivePlot(max_points=3)
    with pytest.raises(UsageError) as parsed:
        _parse(JaxHistMagics.jaxhist_cell, "--max-points 3")
    said = str(made.value).removeprefix("max_points ").removesuffix(".")
    assert f"argument --max-points: {said}" in str(parsed.value)
