"""Each chart's own legend, right under it: the entries that belong to that chart alone (a
vector's components, its median, band or heatmap), so that a reader of a grid of charts never
matches colours across it; the legend row under the grid keeps what the charts share (a sweep's
lanes, a diverged line's flag, runs, a series drawn on several charts).

`split_legend` decides which entry goes where (pure); `ChartCells` holds each chart's grid cell:
its figure with the HTML legend under it (hidden while it names nothing). With one chart shown
every entry stays in the grid's row, which is right under that chart anyway.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ipywidgets

from ..look import LegendLine
from ._legend import legend_html

__all__ = ["ChartCells", "Entries", "shown_legends", "split_legend"]

#: What a chart's legend names (`LiveFigure.legend_entries`): series, lane names, lane count
#: and the lanes' keys.
Entries = tuple[list[LegendLine], list[str], int, list[tuple[int, int, bool]]]


def split_legend(
    entries: Sequence[Entries], order: Sequence[str], split: bool
) -> tuple[list[list[LegendLine]], list[Entries]]:
    """Per chart (``entries``: each chart's legend entries), the entries it shows under itself
    (each label once, in the fields' ``order``), and the entries left for the grid's row. An
    entry is a chart's own when ``split`` (several charts are shown) and its label is named by
    that chart alone, and it is no lane and no diverged flag (those mean the same on every
    chart)."""
    charts_of: dict[str, set[int]] = {}
    for i, (lines, *_) in enumerate(entries):
        for line in lines:
            charts_of.setdefault(line.label, set()).add(i)
    where = {label: i for i, label in enumerate(order)}
    own: list[list[LegendLine]] = []
    for i, (lines, names, _, _) in enumerate(entries):
        mine: dict[str, LegendLine] = {}
        if split:
            for line in lines:
                alone = charts_of[line.label] == {i}
                if alone and line.style != "flag" and line.label not in names:
                    mine.setdefault(line.label, line)
        own.append(sorted(mine.values(), key=lambda line: where.get(line.label, len(where))))
    owned = {line.label for lines in own for line in lines}
    rest = [
        ([line for line in lines if line.label not in owned], names, lanes, keys)
        for lines, names, lanes, keys in entries
    ]
    return own, rest


def shown_legends(
    charts: Sequence[Any], shown: Sequence[Any], order: Sequence[str]
) -> tuple[list[list[LegendLine]], list[Entries]]:
    """Per chart of ``shown`` (some of ``charts``), its own legend entries, and every chart's
    entries left for the grid's row: `split_legend` of their `legend_entries`, split when
    several charts are shown."""
    own, rest = split_legend([c.legend_entries() for c in charts], order, len(shown) > 1)
    by_chart = {id(c): lines for c, lines in zip(charts, own, strict=True)}
    return [by_chart.get(id(c), []) for c in shown], rest


class ChartCells:
    """The grid cell of each chart: a box of its figure and, under it, its own legend (an HTML
    row, hidden while empty). Made once per chart: a chart keeps its cell, so its figure's view
    is never made anew when its legend comes or goes."""

    def __init__(self) -> None:
        self._cells: dict[int, tuple[Any, ipywidgets.VBox, ipywidgets.HTML]] = {}

    def cell(self, chart: Any) -> ipywidgets.VBox:
        """``chart``'s cell (made on first use)."""
        if id(chart) not in self._cells:
            legend = ipywidgets.HTML(layout=ipywidgets.Layout(width="auto", display="none"))
            legend.add_class("jhw-chart-legend")
            box = ipywidgets.VBox(
                [chart.figure, legend], layout=ipywidgets.Layout(min_width="0", width="auto")
            )
            box.add_class("jhw-chart-cell")
            self._cells[id(chart)] = (chart, box, legend)
        return self._cells[id(chart)][1]

    def legend(self, chart: Any) -> ipywidgets.HTML:
        """The HTML legend under ``chart``."""
        self.cell(chart)
        return self._cells[id(chart)][2]

    def set_legends(self, charts: Sequence[Any], own: Sequence[Sequence[LegendLine]]) -> None:
        """Show each of ``charts`` its ``own`` entries under it (none: the row is hidden)."""
        for chart, lines in zip(charts, own, strict=True):
            legend = self.legend(chart)
            value = legend_html(lines) if lines else ""
            if legend.value != value:
                legend.value = value
            display = None if value else "none"
            if legend.layout.display != display:
                legend.layout.display = display

    @staticmethod
    def figure(cell: ipywidgets.VBox) -> Any:
        """The figure a cell holds."""
        return cell.children[0]
