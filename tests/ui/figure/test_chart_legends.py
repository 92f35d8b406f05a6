"""A vector's legend by its chart: each chart whose series are its own (a vector's components,
its median and band) names them right under itself, live and in the static picture; the grid's
legend row keeps only what the charts share."""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET

import numpy as np

import jaxhist_widget as jhw
from jaxhist_widget.ui.look import CHART_HEIGHT_PX

from ...helpers.synthetic import feed

SVG = "{http://www.w3.org/2000/svg}"
STEPS = np.arange(200.0)


def three_charts() -> jhw.LivePlot:
    """A scalar ``loss``, ``w`` (10 components, a line each) and ``v`` (40 components: a
    median over a band)."""
    live = jhw.LivePlot(vectors={"w": "lines", "v": "band"})
    decay = np.exp(-STEPS / 50)[:, None]
    values = {
        "loss": 2.0 * decay[:, 0],
        "w": decay * np.arange(1.0, 11.0),
        "v": decay * np.linspace(0.5, 2.0, 40),
    }
    feed(live, values, shapes=[(), (10,), (40,)], max_steps=1000)
    return live


def texts(fragment: str) -> list[str]:
    """The entries' texts of a legend's HTML."""
    return [html.unescape(t).strip() for t in re.findall(r"</svg>([^<]*)</span>", fragment)]


def test_each_vector_chart_names_its_own_series_under_itself() -> None:
    live = three_charts()
    assert [f.title for f in live.figures] == ["loss", "w", "v"]
    cells = live.charts.children
    assert [cell.children[0] for cell in cells] == live.figures  # a figure, its legend under it
    own = {cell.children[0].title: texts(cell.children[1].value) for cell in cells}
    assert own["loss"] == []  # one series: its title names it
    assert cells[0].children[1].layout.display == "none"
    assert own["w"] == [f"w[{k}]" for k in range(10)]
    assert "v median" in own["v"] and any("25–75 %" in t for t in own["v"])
    assert not any(t.startswith("w") for t in own["v"])
    grid = texts(live.legend.value)
    assert not [t for t in grid if t.startswith(("w", "v"))]  # nothing of one chart's in the row


def test_one_chart_keeps_its_entries_in_the_row_under_it() -> None:
    live = jhw.LivePlot(vectors={"w": "lines"})
    feed(live, {"w": np.exp(-STEPS / 50)[:, None] * np.arange(1.0, 4.0)}, shapes=[(3,)])
    assert texts(live.legend.value) == ["w[0]", "w[1]", "w[2]"]
    assert live.charts.children[0].children[1].value == ""


def test_the_picture_draws_each_vector_charts_legend_under_that_chart() -> None:
    live = three_charts()
    root = ET.fromstring(live._repr_mimebundle_()["image/svg+xml"])
    charts = {g.get("data-title"): g for g in root.iter(f"{SVG}g") if g.get("class") == "jhw-chart"}
    assert list(charts) == ["loss", "w", "v"]

    clips = {c.get("id"): c.find(f"{SVG}rect") for c in root.iter(f"{SVG}clipPath")}

    def band(g):  # the chart's top (its title's baseline less 18), its plot's left and right
        title = next(t for t in g.iter(f"{SVG}text") if t.get("class") == "jhw-chart-title")
        plot = next(e for e in g.iter(f"{SVG}g") if e.get("clip-path"))
        rect = clips[plot.get("clip-path")[len("url(#") : -1]]
        left, width = float(rect.get("x")), float(rect.get("width"))
        return float(title.get("y")) - 18, left, left + width

    tops = sorted({band(g)[0] for g in charts.values()})
    for title, g in charts.items():
        items = [e for e in g.iter(f"{SVG}g") if e.get("class") == "jhw-chart-legend-item"]
        labels = [e.find(f"{SVG}text").text for e in items]
        if title == "loss":
            assert labels == []
            continue
        top, left, right = band(g)
        below = [t for t in tops if t > top]
        bottom = below[0] if below else float(root.get("height"))
        assert labels and all(label.startswith(title) for label in labels)
        for e in items:
            text = e.find(f"{SVG}text")
            x, y = float(text.get("x")), float(text.get("y"))
            assert top + CHART_HEIGHT_PX < y < bottom  # under its chart, above the next row
            assert left - 80 < x < right  # in its chart's column
    shared = [
        e.find(f"{SVG}text").text
        for e in root.iter(f"{SVG}g")
        if e.get("class") == "jhw-legend-item"
    ]
    assert not [t for t in shared if t.startswith(("w", "v"))]
