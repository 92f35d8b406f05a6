"""What the plot says under its charts is one short line by default, its details on demand,
and the static picture says it as plainly: as wide as the plot in its output, its facts
wrapped rather than cut, and nothing about buttons it does not have.

Before (issue 57) up to four paragraphs of grey notes sat under the charts, the picture told
readers to press a log button it does not have, cut "205 diver…" and was 720 px wide whatever
the output.
"""

from __future__ import annotations

import html
import re

import numpy as np

import jaxhist_widget as jhw

from ...helpers.static import SVG, picture
from ...helpers.synthetic import feed


def noted() -> jhw.LivePlot:
    """A 4096-lane sweep plotting a misspelt field too, on a linear axis (a log one offered):
    three notes."""
    rng = np.random.default_rng(0)
    t = np.arange(40.0)
    lanes = [np.exp(-(0.1 + rng.random()) * t) for _ in range(4096)]
    for k in range(0, 4096, 20):  # 205 lanes diverge
        lanes[k] = lanes[k].copy()
        lanes[k][-5:] = np.nan
    live = jhw.LivePlot(fields=["loss", "lsos"], log_y=False)
    feed(live, {"loss": lanes}, lanes=4096, max_steps=40)
    return live


def test_the_notes_are_one_short_line_their_details_on_demand() -> None:
    live = noted()
    notes = live.drawing().notes
    assert len(notes) >= 2 and live.panel.log_hints  # a misspelt field, the lanes drawn
    value = live.legend.value
    (block,) = re.findall(r'<details class="jhw-notes".*?</details>', value, re.S)
    (summary,) = re.findall(r"<summary[^>]*>(.*?)</summary>", block, re.S)
    line = html.unescape(summary)
    assert line.startswith("Note: ") and len(line) < 100 and "\n" not in line
    assert line.endswith(f"(+{len(notes) + len(live.panel.log_hints) - 1} more)")
    # every note in full inside, nothing outside the one line
    for note in notes:
        assert html.escape(note) in block
    assert value.count('class="jhw-note"') == len(notes) + len(live.panel.log_hints)
    assert value.index("<details") > value.index("jhw-legend-items")  # under the legend


def test_the_picture_is_as_wide_as_its_output_wraps_its_facts_and_says_no_button() -> None:
    live = noted()
    for width in (400, 1400):
        live.panel.plot_width = width  # as a view reports the plot's width
        _, root = picture(live)
        assert root.get("width") == str(width)
        facts = [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "jhw-facts"]
        joined = " ".join(facts)
        assert "205 diverged" in joined and "…" not in joined, facts  # wrapped, not cut
        text = " ".join(t.text or "" for t in root.iter(f"{SVG}text"))
        assert "button" not in text and "log y" not in text
        notes = [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "jhw-note"]
        assert len(notes) == 1  # one short line, as the widget
