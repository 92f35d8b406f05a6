"""The look table (``look.json``): one source of the plot's words, number formats and colours.

Its examples are checked here against the Python side and by ``node --test js/`` against the
panel's JavaScript (``js/base/look.test.mjs``): both sides write a value, a count, a duration, a
badge and a lane summary alike. The badge colours are the panel's CSS defaults
(``js/panel.css``), which the static picture draws with."""

from __future__ import annotations

import re

import pytest

from jaxhist_widget import _wire
from jaxhist_widget.ui import look, panel
from jaxhist_widget.ui.look import LOOK

from ...helpers import ROOT

CASES = {
    "value": look.format_value,
    "count": look.format_count,
    "duration": look.format_duration,
    "badge": lambda status, diverged: look.status_word({"status": status, "diverged": diverged}),
    "lanes": look.lane_summary,
}


@pytest.mark.parametrize("kind", sorted(CASES))
def test_the_tables_examples_read_as_the_table_says(kind: str) -> None:
    examples = LOOK["examples"][kind]
    assert examples, f"no {kind} examples"
    for *args, expected in examples:
        assert CASES[kind](*args) == expected, (kind, args)


def test_every_example_kind_of_the_table_is_checked_here() -> None:
    assert set(LOOK["examples"]) == set(CASES)


def test_the_badge_colours_are_the_panels_css_defaults() -> None:
    css = re.sub(r"/\*.*?\*/", "", (ROOT / "js" / "panel.css").read_text(), flags=re.S)
    rules = [(sel, body) for sel, body in re.findall(r"([^{}]+)\{([^{}]*)\}", css)]
    colour = r"[^;]*?(#[0-9a-fA-F]{3,6})\)?\s*(?:;|$)"

    def declared(selector: str, prop: str) -> str | None:
        """The fallback colour of ``prop`` in the last rule naming ``selector``."""
        found = None
        for selectors, body in rules:
            if selector in [s.strip() for s in selectors.split(",")]:
                m = re.search(rf"(?:^|;|\s){prop}:\s*" + colour, body)
                found = m.group(1) if m else found
        return found

    base_ink = declared(".jhw-status", "color")
    checked = 0
    for status, (fill, ink) in LOOK["status"]["badge_colors"].items():
        selector = f".jhw-status--{status.replace('_', '-')}"
        assert declared(selector, "background") == fill, status
        assert (declared(selector, "color") or base_ink) == ink, status
        checked += 1
    assert checked >= 9


def test_every_status_has_its_words_and_colours_and_the_table_no_other() -> None:
    # Statuses are spelled once: a run's in the contract (`_wire.STATUSES`), the panel's own
    # beside them (`panel.STATUSES`); the table holds their words, titles and colours, and
    # "diverged", which the view shows over a run's status when its latest value is not finite.
    ours = set(panel.STATUSES)
    assert set(_wire.STATUSES) - {"failed"} <= ours  # a failed run shows "error" and its text
    table = LOOK["status"]
    assert set(table["words"]) == ours | {"diverged"}
    assert set(table["badge_colors"]) == ours | {"diverged", "unknown"}
    assert set(table["titles"]) == (ours | {"diverged"}) - {"running", "error"}  # (own text)
    assert table["can_diverge"] == tuple(s for s in _wire.STATUSES if s != "failed")


def test_the_table_is_read_only() -> None:
    with pytest.raises(TypeError):
        LOOK["palette"] = ()  # type: ignore[index]
    assert LOOK["palette"] == look.PALETTE
    assert len(set(look.PALETTE)) == 10
