"""The static picture of a LivePlot (SVG + text summary): what a notebook read without its kernel
shows. Synthetic runs (no compiled loop): milliseconds per test.

The SVG is checked as a reader would see it: it parses, each drawn line is one path whose
points, read back through the axis ticks' positions, are the widget's decimated points, the
tick labels are the widget's, the legend names what is drawn.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import jaxhist_widget as jhw
from jaxhist_widget.ui import look as legend_module
from jaxhist_widget.ui.look import d3_format, format_value
from jaxhist_widget.ui.picture import summary
from jaxhist_widget.ui.plot import _outputs as _display

from ...helpers.static import SVG, label_value, picture, texts
from ...helpers.synthetic import feed

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def paths(root: ET.Element) -> list[ET.Element]:
    return [p for p in root.iter(f"{SVG}path") if p.get("class") == "jhw-line"]


def segments(path: ET.Element) -> list[np.ndarray]:
    """The path's pixel points, one (n, 2) array per connected piece (M starts a piece)."""
    out = []
    for piece in re.findall(r"M[^M]+", path.get("d")):
        nums = [float(v) for v in re.findall(r"-?[\d.]+", piece)]
        out.append(np.array(nums).reshape(-1, 2))
    return out


def axis_map(root: ET.Element, cls: str, log: bool = False):
    """Pixel -> data along an axis, from two of its tick labels (their value and position)."""
    ticks = texts(root, cls)
    key = "x" if cls == "x" else "y"
    values = [label_value(t.text) for t in ticks]
    pos = [float(t.get(key)) - (0 if cls == "x" else 4) for t in ticks]  # y labels sit 4 px low
    (v0, p0), (v1, p1) = (values[0], pos[0]), (values[-1], pos[-1])
    if log:
        v0, v1 = np.log10(v0), np.log10(v1)

    def to_data(p: np.ndarray) -> np.ndarray:
        v = v0 + (np.asarray(p) - p0) / (p1 - p0) * (v1 - v0)
        return 10**v if log else v

    return to_data


def drawn_points(live: jhw.LivePlot, run: int = -1) -> list[tuple[np.ndarray, np.ndarray]]:
    """The widget's decimated points of a run, per field and lane (what its marks hold)."""
    index = range(len(live.runs))[run]
    charts = live.drawing().charts.values()
    return [(ln.x, ln.y) for c in charts for ln in c.lines if ln.run == index and not ln.smoothed]


def test_the_bundle_holds_the_widget_the_svg_and_a_summary() -> None:
    live = jhw.LivePlot(title="Adam")
    loss = np.linspace(2.0, 0.162, 652)
    feed(live, {"loss": loss}, max_steps=2000)
    bundle, root = picture(live)
    assert WIDGET_VIEW in bundle  # a live frontend still draws the widget
    assert root.tag == f"{SVG}svg" and float(root.get("height")) > 300
    assert bundle["text/plain"] == "Adam: finished, 651 / 2,000 steps, loss 0.162"
    assert root.find(f"{SVG}title").text == bundle["text/plain"]
    header = " ".join(t.text or "" for t in root.iter(f"{SVG}text"))
    assert "Adam" in header and "finished" in header and "loss 0.162" in header


def test_one_path_per_line_with_the_decimated_points() -> None:
    live = jhw.LivePlot(max_points=100, charts="shared")  # one chart: one pair of axes
    n = 5000
    steps = np.arange(n)
    feed(live, {"loss": 10.0 / (1 + steps), "grad": np.cos(steps / 300.0)}, max_steps=n)
    _, root = picture(live)
    lines = paths(root)
    expected = drawn_points(live)
    assert [p.get("data-label") for p in lines] == ["loss · run 1", "grad · run 1"]
    fx, fy = axis_map(root, "x"), axis_map(root, "y")
    for path, (x, y) in zip(lines, expected, strict=True):
        (points,) = segments(path)
        assert len(points) == len(x) <= 100  # the decimated series, not the 5000 rows
        np.testing.assert_allclose(fx(points[:, 0]), x, atol=0.06 * n / 600)
        np.testing.assert_allclose(fy(points[:, 1]), y, atol=0.06)


def test_tick_labels_are_the_widgets() -> None:
    live = jhw.LivePlot()
    feed(live, {"loss": np.linspace(-1500.0, 20_000.0, 12_001)}, max_steps=20_000)
    _, root = picture(live)
    chart = live.drawing().chart()
    for cls, ticks, spec in (
        ("x", chart.x_ticks, chart.x_format),
        ("y", chart.y_ticks, chart.y_format),
    ):
        widget = [d3_format(spec, t) for t in ticks]
        assert [t.text for t in texts(root, cls)] == widget
    assert [t.text for t in texts(root, "x")] == ["0", "5,000", "10,000"]
    assert [t.text for t in texts(root, "y")][:2] == ["0", "5,000"]


@pytest.mark.parametrize(
    ("spec", "value", "text"),
    [  # what d3-format 3 (bqplot's axes) writes
        (",.0f", 20000, "20,000"),
        (",.0f", -1500, "-1,500"),
        (",.1~f", 0.5, "0.5"),
        (",.2~f", 0.25, "0.25"),
        (",.2~f", 1.0, "1"),
        (",~g", 1000, "1,000"),
        (",~g", 0.001, "0.001"),
        (",~g", 1e-7, "1e-7"),
        (".0e", 1e-6, "1e-6"),
        (".1e", 2.5e7, "2.5e+7"),
        (".2~e", 1.5e-8, "1.5e-8"),
        (",.1~f", -0.0, "0"),
    ],
)
def test_d3_formats(spec: str, value: float, text: str) -> None:
    assert d3_format(spec, value) == text


def test_log_y_and_gaps() -> None:
    live = jhw.LivePlot(log_y=True)
    loss = 10.0 ** -np.linspace(0, 4, 200)
    loss[100] = np.nan  # a gap in the line
    feed(live, {"loss": loss}, max_steps=200)
    _, root = picture(live)
    assert [t.text for t in texts(root, "y")] == ["10⁻⁴", "10⁻³", "10⁻²", "10⁻¹", "10⁰"]
    (path,) = paths(root)
    pieces = segments(path)
    assert len(pieces) == 2  # the NaN leaves a gap
    fy = axis_map(root, "y", log=True)
    values = fy(np.concatenate([p[:, 1] for p in pieces]))
    np.testing.assert_allclose(values, np.delete(loss, 100), rtol=0.01)


def test_the_lines_are_clipped_to_the_plot() -> None:
    live = jhw.LivePlot()
    feed(live, {"loss": [1.0, 2.0, 3.0]})
    _, root = picture(live)
    group = next(g for g in root.iter(f"{SVG}g") if g.get("clip-path"))
    assert paths(group) and group.get("clip-path") == "url(#jhw-plot)"


def test_legend_entries_runs_and_lanes() -> None:
    live = jhw.LivePlot(keep_runs=True, lane_labels=["lr=0.1", "lr=0.2", "lr=0.3"])
    feed(live, {"loss": [3.0, 2.0, 1.0]})
    lanes = [np.linspace(3, 1, 50), np.linspace(3, 2, 80), np.linspace(3, 0.5, 30)]
    feed(live, {"loss": lanes}, lanes=3, status=["converged", "max_steps", "converged"])
    bundle, root = picture(live)
    legend = [
        "".join(t.text for t in g.iter(f"{SVG}text"))
        for g in root.iter(f"{SVG}g")
        if g.get("class") == "jhw-legend-item"
    ]
    # Two runs share the chart: each in its colour (the lanes too), named by the run list;
    # the goal names the latest sweep's best lane.
    assert legend == ["best = lowest loss: lr=0.3 (0.5)"]
    listed = [g.get("data-name") for g in root.iter(f"{SVG}g") if g.get("class") == "jhw-run"]
    assert listed == ["run 1", "run 2"]
    lines = paths(root)
    assert len(lines) == 1 + 3  # run 1's line, then one per lane of run 2
    colors = [p.get("stroke") for p in lines]
    assert colors == [legend_module.PALETTE[0]] + [legend_module.PALETTE[1]] * 3
    for path, (x, _) in zip(lines[1:], drawn_points(live), strict=True):
        (points,) = segments(path)
        assert len(points) == len(x)  # a shorter lane is not padded
    assert bundle["text/plain"] == (
        "LivePlot: max steps, 79 / 1,000 steps, 3 lanes (2 finished (lr=0.1, lr=0.3) · "
        "1 max steps (lr=0.2)), loss median 1 (min–max 0.5 … 2)"
    )


def test_one_batched_run_names_its_lanes() -> None:
    live = jhw.LivePlot(lane_labels=["lr=0.1", "lr=0.2", "lr=0.3"])
    feed(live, {"loss": [np.linspace(3, 1, 50)] * 3}, lanes=3)
    _, root = picture(live)
    legend = [
        "".join(t.text for t in g.iter(f"{SVG}text"))
        for g in root.iter(f"{SVG}g")
        if g.get("class") == "jhw-legend-item"
    ]
    assert legend == ["lr=0.1", "lr=0.2", "lr=0.3"]
    assert [p.get("stroke") for p in paths(root)] == list(legend_module.PALETTE[:3])


def test_many_lanes_show_the_color_ramp() -> None:
    live = jhw.LivePlot()
    feed(live, {"loss": np.ones((20, 5))}, lanes=20)
    _, root = picture(live)
    assert len(paths(root)) == 20 + 1  # and past 16 lanes, their median
    legend = [
        "".join(t.text for t in g.iter(f"{SVG}text"))
        for g in root.iter(f"{SVG}g")
        if g.get("class") == "jhw-legend-item"
    ]
    # the chart's title names the field; the lanes' band and median (all alike: none named)
    assert legend == ["lanes' median", "lanes 25–75 %", "lanes min–max", "lane 0 … lane 19"]


def test_empty_plot_placeholder() -> None:
    bundle, root = picture(jhw.LivePlot(title="waiting"))
    assert not paths(root)
    assert bundle["text/plain"] == "waiting: no run yet"
    assert "no run yet" in " ".join(t.text or "" for t in root.iter(f"{SVG}text"))
    assert summary("", {}) == "LivePlot: no run yet"


@pytest.mark.parametrize(
    ("value", "text"),
    [(0.162, "0.162"), (3.14159, "3.142"), (12345, "12345"), (2.5e-7, "2.5e-7"), ("nan", "NaN")],
)
def test_values_read_as_in_the_panel(value: object, text: str) -> None:
    assert format_value(value) == text


def test_run_end_updates_the_displayed_picture(monkeypatch: pytest.MonkeyPatch) -> None:
    shown: list[tuple[str, dict, dict]] = []

    def display(bundle, raw=False, display_id=None):
        shown.append(("display", display_id, bundle))

    def update_display(bundle, raw=False, display_id=None):
        shown.append(("update", display_id, bundle))

    import IPython.display

    monkeypatch.setattr(IPython.display, "display", display)
    monkeypatch.setattr(IPython.display, "update_display", update_display)
    monkeypatch.setattr(_display, "in_kernel", lambda: True)
    live = jhw.LivePlot(title="fit")
    live._ipython_display_()
    feed(live, {"loss": [3.0, 2.0, 1.0]}, max_steps=10)
    kinds = [k for k, _, _ in shown]
    # The widget's output, the placeholder picture, then only the picture replaced at the
    # run's end (updating the widget's output would make JupyterLab draw a second view).
    assert kinds == ["display", "display", "update"]
    widget, picture = shown[0], shown[1]
    assert set(widget[2]) == {WIDGET_VIEW} and widget[1] is None
    assert picture[1] and shown[2][1] == picture[1]
    assert picture[2]["text/plain"] == "fit: no run yet"
    final = shown[2][2]
    assert final["text/plain"] == "fit: finished, 2 / 10 steps, loss 1"
    assert WIDGET_VIEW not in final and "img" in final["text/html"]
    assert len(paths(ET.fromstring(_display.picture_svg(final)))) == 1


def test_picture_output_is_shown_except_beside_a_live_view() -> None:
    live = jhw.LivePlot(title="fit")
    feed(live, {"loss": [3.0, 2.0, 1.0]}, max_steps=10)
    bundle = live._repr_mimebundle_()
    html = _display.fallback(bundle)["text/html"]
    img = html[html.index("<img ") :]
    assert 'class="jhw-static"' in img and "display:none" not in img  # hidden by CSS only
    assert f'alt="{bundle["text/plain"]}"' in img
    assert _display.picture_svg({"text/html": html}) == bundle["image/svg+xml"]
    rules = re.search(r"<style>(.*)</style>", html).group(1)
    assert ".jp-OutputArea-child:has(.jhw-liveplot) + .jp-OutputArea-child" in rules


def test_the_picture_output_holds_its_svg_once() -> None:
    """Issue 39: the output held the SVG twice (as image/svg+xml, and as a base64 image in its
    HTML). Now once, in the HTML's image, read back exactly, whatever the title holds (a URL's
    "%" and "#", the HTML's "&" and "'", a tab)."""
    live = jhw.LivePlot(title="50% #1 'a' & <b> \"q\" \u00fc\ttab &amp; %41")
    feed(live, {"loss": [3.0, 2.0, 1.0], "acc": [0.1, 0.5, 0.9]}, max_steps=10)
    bundle = live._repr_mimebundle_()
    svg = bundle["image/svg+xml"]
    output = _display.fallback(bundle)
    assert set(output) == {"text/html", "text/plain"}
    assert _display.picture_svg(output) == svg
    line = paths(ET.fromstring(svg))[0].get("d")
    assert json.dumps(output).count(line) == 1 and "base64" not in output["text/html"]


def test_a_failing_picture_never_fails_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    import IPython.display

    def broken(*args, **kwargs):
        raise RuntimeError("no frontend")

    monkeypatch.setattr(IPython.display, "update_display", broken)
    monkeypatch.setattr(_display, "in_kernel", lambda: True)
    live = jhw.LivePlot()
    live._outputs.displayed = True
    with pytest.warns(UserWarning, match="static picture was not updated"):
        feed(live, {"loss": [3.0, 2.0]})
    assert live.history()["loss"].tolist() == [3.0, 2.0]


def test_save_svg_writes_the_complete_picture_without_a_frontend(tmp_path) -> None:
    live = jhw.LivePlot(title="Adam")
    feed(live, {"loss": [3.0, 2.0, 0.162]}, max_steps=2000)
    path = live.save_svg(tmp_path / "plot.svg")
    root = ET.parse(path).getroot()
    assert len(paths(root)) == 1
    assert root.find(f"{SVG}title").text == "Adam: finished, 2 / 2,000 steps, loss 0.162"
    pytest.importorskip("cairosvg")
    png = live.save_png(tmp_path / "plot.png").result(timeout=0)  # rasterized in the kernel
    assert png.read_bytes().startswith(b"\x89PNG")


def test_a_failed_run_reads_as_an_error() -> None:
    live = jhw.LivePlot(title="fit")
    feed(live, {"loss": [3.0, 2.0]}, status="failed", max_steps=10)
    bundle, root = picture(live)
    assert bundle["text/plain"] == (
        "fit: error, 1 / 10 steps, loss 2, The run failed: the computation raised an exception."
    )
    (badge,) = [g for g in root.iter(f"{SVG}g") if g.get("class") == "jhw-status"]
    assert badge.get("data-status") == "error"
    assert len(paths(root)) == 1  # its rows are drawn


def test_a_script_prints_the_summary() -> None:
    live = jhw.LivePlot(title="Adam")
    assert repr(live) == "<LivePlot: Adam: no run yet>"
    feed(live, {"loss": [3.0, 2.0, 0.162]}, max_steps=2000)
    assert repr(live) == "<LivePlot: Adam: finished, 2 / 2,000 steps, loss 0.162>"
