"""The static picture's run list: long run names never run into the status column, and the
latest values wrap onto more lines instead of being cut at the picture's edge."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from jaxhist_widget.ui.picture._run_list import draw_run_list

SVG = "{http://www.w3.org/2000/svg}"
BOLD_PX, CHAR_PX = 8.0, 7.0  # upper bounds of a 12 px DejaVu Sans character, bold and regular


def _rows(runs: list[dict], width: int = 720) -> list[list[tuple[float, str]]]:
    out: list[str] = []
    draw_run_list(out, runs, 0.0, width)
    root = ET.fromstring(f'<svg xmlns="http://www.w3.org/2000/svg">{"".join(out)}</svg>')
    rows = [g for g in root.iter(f"{SVG}g") if g.get("class") == "jhw-run"]
    return [[(float(t.get("x")), t.text or "") for t in g.iter(f"{SVG}text")] for g in rows]


def test_a_long_name_stops_before_the_status_and_values_wrap_inside():
    latest = {f"metric_{k}": 0.123456 * k for k in range(12)}
    runs = [
        {"name": "momentum 0.9", "status": "converged", "step": 10, "latest": latest},
        {"name": "adam lr=1e-3 with a very long description", "status": "converged", "step": 9},
    ]
    width = 720
    for texts in _rows(runs, width):
        (x_name, name), (x_status, _) = texts[0], texts[1]
        assert x_name + BOLD_PX * len(name) < x_status, (name, x_name, x_status)
        for x, text in texts[4:]:  # the values, on one line or more
            assert x + CHAR_PX * len(text) <= width, text
    values = " ".join(t for _, t in _rows(runs, width)[0][4:])
    assert "metric_11" in values and "…" not in values  # every value shown, none cut
