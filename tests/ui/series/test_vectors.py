"""Vectors and paths in a `LivePlot`, on synthetic runs (no compile): what each vector leaf is
drawn as by default and on request, a 2-D path chart, what cannot be drawn said in a note (never
as the run's error), the options' errors, and the static picture drawing the same."""

from __future__ import annotations

import base64
import html
import xml.etree.ElementTree as ET

import bqplot
import numpy as np
import pytest

import jaxhist_widget as jhw
from jaxhist_widget.ui import look as legend
from jaxhist_widget.ui.series import PlotChoice, RunDrawing, check_vectors

from ...helpers.synthetic import feed

SVG = "{http://www.w3.org/2000/svg}"
STEPS = np.arange(300.0)


def class_losses(k: int) -> np.ndarray:
    """``k`` per-class losses, each decaying at its own rate."""
    return np.stack([2.3 * np.exp(-STEPS / (20 + 9 * j)) for j in range(k)], axis=1)


def crossing_path() -> np.ndarray:
    """A 2-D iterate that passes through the origin (its norm dips to 0 there)."""
    return np.stack([np.linspace(-1.0, 1.0, len(STEPS)), np.linspace(-2.0, 2.0, len(STEPS))], 1)


def chart(live, title):
    (figure,) = [f for f in live.figures if f.title == title]
    return figure


def marks_of(figure, kind=bqplot.Lines, fill="none"):
    return [m for m in figure.marks if type(m) is kind and getattr(m, "fill", fill) == fill]


def picture(live) -> ET.Element:
    return ET.fromstring(live._repr_mimebundle_()["image/svg+xml"])


def legends(live) -> str:
    """The text of every legend: the grid's row and each chart's own (under that chart)."""
    rows = [live.legend.value] + [cell.children[1].value for cell in live.charts.children]
    return html.unescape("".join(rows))


def svg_chart(root, title):
    (g,) = [g for g in root.iter(f"{SVG}g") if g.get("data-title") == title]
    return g


# ---------------------------------------------------------------------- what is drawn by default
def test_small_vectors_are_one_line_per_component_by_default_not_their_norm() -> None:
    live = jhw.LivePlot()
    values = {"class_loss": class_losses(10), "xy": crossing_path(), "loss": STEPS}
    feed(live, values, shapes=[(10,), (2,), ()], max_steps=1000)
    assert [f.title for f in live.figures] == ["class_loss", "xy", "loss"]
    lines = marks_of(chart(live, "class_loss"))
    assert [m.labels[0] for m in lines] == [f"class_loss[{j}] · run 1" for j in range(10)]
    # every component its own colour of the palette, whatever else is plotted beside it
    assert [m.colors[0] for m in lines] == list(legend.PALETTE)
    # a chart of one series draws it in its run's colour (the same in every chart)
    assert chart(live, "loss").marks[0].colors == [legend.PALETTE[0]]
    x0, x1 = marks_of(chart(live, "xy"))
    # the components themselves: a path through the origin does not dip to 0 in the plot
    np.testing.assert_allclose(x0.y, values["xy"][:, 0].astype(np.float32))
    np.testing.assert_allclose(x1.y, values["xy"][:, 1].astype(np.float32))
    assert live.panel.status == "converged" and "|xy|" not in live.panel.fields


def test_a_large_vector_is_a_median_over_a_quartile_and_a_min_max_band() -> None:
    live = jhw.LivePlot(log_y=False)
    losses = class_losses(50)
    losses[123, 7] = 9.0  # one class's spike
    feed(live, {"class_loss": losses}, shapes=[(50,)], max_steps=1000)
    figure = chart(live, "class_loss")
    (median,) = marks_of(figure)
    outer, inner = marks_of(figure, fill="inside")
    assert figure.marks[:2] == [outer, inner]  # under the median line
    assert median.labels == ["class_loss median · run 1"]
    np.testing.assert_allclose(median.y, np.median(losses.astype(np.float32), axis=1))
    assert outer.y.max() == pytest.approx(9.0) and outer.x[np.argmax(outer.y)] == 123
    assert inner.y.max() < outer.y.max()
    assert outer.colors == median.colors == inner.fill_colors  # the median's colour
    assert live.panel.status == "converged" and live.panel.error == ""  # no longer an error
    assert live.panel.latest["class_loss median"] == pytest.approx(np.median(losses[-1]), 1e-6)
    # the y range holds the band, not only the median: its bulk, less the one spike while
    # outliers are ignored (the default), all of it else
    upper = np.asarray(outer.y)[len(outer.y) // 2 :]  # (the polygon's upper edge, backwards)
    assert np.sort(upper)[-2] <= figure.axes[1].scale.max < 9.0
    live.ignore_outliers = False
    assert figure.axes[1].scale.max >= 9.0
    legend = html.unescape(live.legend.value)
    assert "class_loss median" in legend and "class_loss min–max" in legend


def test_one_runs_vector_legend_names_components_and_no_run() -> None:
    # The one-run example of docs/guide/plot.md: a band (of run 1) beside component lines (of no
    # one run)
    # read as two runs, "(run 0)" and "(run 1)", in the legend and the picture.
    live = jhw.LivePlot(keep_runs=True)
    values = {"class_loss": class_losses(50), "xy": crossing_path()}
    feed(live, values, shapes=[(50,), (2,)], max_steps=1000)
    legend_text = legends(live)
    assert "xy[0]" in legend_text and "xy[1]" in legend_text and "class_loss median" in legend_text
    assert "(run" not in legend_text
    texts = [t.text or "" for t in picture(live).iter(f"{SVG}text")]
    assert "xy[0]" in texts and not [t for t in texts if "(run" in t]
    feed(live, values, shapes=[(50,), (2,)], max_steps=1000)  # a second run: no "run 0" either
    legend_text = legends(live)
    assert "(run 0)" not in legend_text and "xy[0] (run" not in legend_text


def test_under_vmap_a_large_vector_is_a_median_line_per_lane_and_few_components_lines() -> None:
    live = jhw.LivePlot()
    lanes = np.stack([class_losses(6) * (k + 1) for k in range(3)])
    few = lanes[..., :4]
    feed(live, {"many": lanes, "few": few}, shapes=[(6,), (4,)], lanes=3, max_steps=1000)
    (median,) = chart(live, "many").marks  # no band: three of them would cover the chart
    assert len(median.labels) == 3 and median.labels[0].startswith("many median · lane 0")
    few_marks = chart(live, "few").marks
    assert [m.line_style for m in few_marks] == ["solid", "dashed", "dotted", "dash_dotted"]


def test_a_heatmap_is_an_image_under_the_median_and_follows_the_log_toggle() -> None:
    live = jhw.LivePlot(vectors={"class_loss": "heatmap"}, log_y=False)
    feed(live, {"class_loss": class_losses(50), "loss": STEPS}, shapes=[(50,), ()])
    figure = chart(live, "class_loss")
    image, median = figure.marks
    assert type(image) is bqplot.Image and median.labels == ["class_loss median · run 1"]
    png = image.image.value
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) < 64_000
    assert image.y.tolist() == [figure.axes[1].scale.min, figure.axes[1].scale.max]
    assert image.x.tolist() == [0, len(STEPS) - 1]  # the run's steps, first to last
    live.log_y = True  # the marks are rebuilt on the log scale and the image redrawn for it
    image, median = chart(live, "class_loss").marks
    assert (
        type(image.scales["y"]).__name__ == "LogScale" and image.scales["y"] is median.scales["y"]
    )
    assert image.image.value != png
    # the static picture embeds the same image over the same values
    (img,) = [e for e in picture(live).iter(f"{SVG}image") if e.get("class") == "jhw-heatmap"]
    assert base64.b64decode(img.get("href").split(",", 1)[1]) == image.image.value


def test_under_vmap_a_heatmap_pools_every_lanes_components() -> None:
    live = jhw.LivePlot(vectors="heatmap")
    lanes = np.stack([np.full((len(STEPS), 20), float(k + 1)) for k in range(3)])  # 1, 2, 3
    feed(live, {"w": lanes}, shapes=[(20,)], lanes=3)
    image, median = chart(live, "w").marks
    assert len(median.labels) == 3  # a median line per lane, over one histogram of all lanes
    # the run's histogram, as the plot reduces it: one of every lane's components
    d = RunDrawing(live.runs[-1], 1, PlotChoice(vectors=check_vectors("heatmap")))
    assert d.start(None)
    d.ingest()
    (hist,) = d.extras.values()
    assert hist.linear.counts.sum() == 3 * len(STEPS) * 20
    rows = np.flatnonzero(_png_alpha(bytes(image.image.value))[:, 0])  # pixel rows drawn, top first
    lo, hi = image.y.tolist()
    values = sorted({round(hi - (r + 0.5) / 128 * (hi - lo)) for r in rows})
    assert values == [1, 2, 3], values  # each lane's value has its bin


def _png_alpha(png: bytes) -> np.ndarray:
    """The alpha channel of a PNG that `._png.encode_png` wrote (filter 0, one IDAT)."""
    import struct
    import zlib

    width, height = struct.unpack(">II", png[16:24])
    start = png.index(b"IDAT") + 4
    size = struct.unpack(">I", png[start - 8 : start - 4])[0]
    raw = np.frombuffer(zlib.decompress(png[start : start + size]), np.uint8)
    return raw.reshape(height, 1 + 4 * width)[:, 1:].reshape(height, width, 4)[..., 3]


def test_vectors_lines_beyond_the_limit_is_a_band_with_a_note() -> None:
    live = jhw.LivePlot(vectors="lines")
    feed(live, {"w": class_losses(50), "v": class_losses(20)}, shapes=[(50,), (20,)])
    assert len(marks_of(chart(live, "v"))) == 20  # asked: lines
    assert len(marks_of(chart(live, "w"), fill="inside")) == 2  # 50 lines: a band instead
    (note,) = live.drawing().notes
    assert note.startswith("w: 50 components are more than 32 lines") and "w[0]" in note
    assert note in html.unescape(live.legend.value) and live.panel.status == "converged"


def test_a_misspelt_vectors_key_gets_a_note_as_a_misspelt_field_does() -> None:
    live = jhw.LivePlot(vectors={"xx": "band", "x": "lines"}, fields=["x", "lsos"])
    feed(live, {"x": class_losses(3), "loss": STEPS}, shapes=[(3,), ()])
    assert len(marks_of(chart(live, "x"))) == 3  # the key that is right still applies
    field_note, vectors_note = live.drawing().notes
    assert field_note.startswith("fields: no field 'lsos' in this run's record; its leaves are")
    assert vectors_note.startswith("vectors: no field 'xx' in this run's record; its leaves are")
    assert "'x', 'loss'" in vectors_note
    assert vectors_note.endswith("{'xx': 'band'} applies to none.")
    assert vectors_note in html.unescape(live.legend.value) and live.panel.status == "converged"


# ------------------------------------------------------------------------------------- paths
def rosenbrock(steps: int = 400) -> np.ndarray:
    out, (x, y) = np.empty((steps, 2)), (-1.5, 2.0)
    for k in range(steps):
        out[k] = x, y
        x, y = x + 1.5e-3 * (2 * (1 - x) + 400 * x * (y - x * x)), y - 1.5e-3 * 200 * (y - x * x)
    return out


@pytest.mark.parametrize("paths", [["xy"], [("xy[0]", "xy[1]")]])
def test_a_path_chart_draws_one_series_against_the_other(paths) -> None:
    xy = rosenbrock()
    live = jhw.LivePlot(paths=paths, fields=["loss"])
    feed(live, {"loss": STEPS[::-1], "xy": xy[: len(STEPS)]}, shapes=[(), (2,)])
    assert [f.title for f in live.figures] == ["loss", "xy[1] vs xy[0]"]
    figure = chart(live, "xy[1] vs xy[0]")
    line, rings, dots = figure.marks
    np.testing.assert_allclose(line.x, xy[: len(STEPS), 0].astype(np.float32))
    np.testing.assert_allclose(line.y, xy[: len(STEPS), 1].astype(np.float32))
    assert figure.axes[0].label == "xy[0]" and figure.axes[0].scale is not line.scales["y"]
    assert figure.axes[0].scale is not chart(live, "loss").axes[0].scale  # not the steps
    lo, hi = figure.axes[0].scale.min, figure.axes[0].scale.max
    assert lo <= line.x.min() and line.x.max() <= hi and "jhw-path" in figure._dom_classes
    assert (rings.x[0], rings.y[0]) == (line.x[0], line.y[0])  # where it started
    assert (dots.x[0], dots.y[0]) == (line.x[-1], line.y[-1])  # where it is now
    assert live.panel.fields == ["loss"]  # the panel lists fields, not paths
    # the static picture: the same chart, its own x axis, the start ring and the end dot
    g = svg_chart(picture(live), "xy[1] vs xy[0]")
    assert [t.text for t in g.iter(f"{SVG}text") if t.get("class") == "x-label"] == ["xy[0]"]
    classes = [e.get("class") for e in g.iter(f"{SVG}g")]
    assert "jhw-path-ring" in classes and "jhw-path-dot" in classes


def test_under_vmap_a_path_is_one_line_per_lane() -> None:
    live = jhw.LivePlot(paths=["xy"], lane_labels=["a", "b"])
    paths = np.stack([rosenbrock()[:100], rosenbrock()[:100] * 0.5])
    feed(live, {"xy": paths}, shapes=[(2,)], lanes=2)
    line, _, dots = chart(live, "xy[1] vs xy[0]").marks
    assert len(line.labels) == 2 and line.labels[1] == "xy[1] vs xy[0] · b · run 1"
    assert dots.x.tolist() == pytest.approx(paths[:, -1, 0].tolist())


@pytest.mark.parametrize(
    ("paths", "says"),
    [
        (["xy3"], "'xy3' has shape (3,), not two components"),
        ([("loss", "xy3")], "'xy3' has 3 components (shape (3,)); name one, e.g. 'xy3[0]'"),
        ([("loss", "nope")], "no field 'nope'"),
        (["loss"], "'loss' has shape (), not two components"),
    ],
)
def test_a_path_that_cannot_be_drawn_is_a_note(paths, says) -> None:
    live = jhw.LivePlot(paths=paths)
    feed(live, {"loss": STEPS, "xy3": np.zeros((len(STEPS), 3))}, shapes=[(), (3,)])
    assert [f.title for f in live.figures] == ["loss", "xy3"]  # the fields, no path chart
    (note,) = live.drawing().notes
    assert note.startswith("paths: ") and says in note, note
    assert live.panel.status == "converged" and live.panel.error == ""
    notes = [t.text for t in picture(live).iter(f"{SVG}text") if t.get("class") == "jhw-note"]
    assert notes and notes[0].startswith("Note: paths:")


# ------------------------------------------------------------------------------------ options
@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"vectors": "norm"}, ValueError, r"'auto', 'lines', 'band', 'heatmap'"),
        ({"vectors": 3}, TypeError, r"a dict of leaf names to them"),
        ({"vectors": {"w": "bars"}}, ValueError, r"vectors=\{'w': 'bars'\}: the mode must be"),
        ({"vectors": {1: "band"}}, TypeError, r"maps leaf names \(str\) to modes"),
        ({"paths": [("x", "y", "z")]}, TypeError, r"paths=\[\('x\[0\]', 'x\[1\]'\)\]"),
        ({"paths": [3]}, TypeError, r"got the entry 3"),
        ({"paths": []}, TypeError, r"a list of entries"),
        ({"path": ["xy"]}, TypeError, r"allowed: .*vectors, paths"),
    ],
)
def test_bad_vectors_and_paths_options_name_the_fix(kwargs, error, match) -> None:
    with pytest.raises(error, match=match):
        jhw.LivePlot(**kwargs)


def test_the_magics_paths_option_reads_leaves_and_pairs() -> None:
    from argparse import ArgumentTypeError

    from jaxhist_widget._extension._options import _paths

    assert _paths("xy,x[0]:x[1],w:b") == ["xy", ("x[0]", "x[1]"), ("w", "b")]
    assert _paths("W[0,1]:W[1,0]") == [("W[0,1]", "W[1,0]")]  # brackets keep their comma
    for bad in ("a:b:c", "a:", ":b"):
        with pytest.raises(ArgumentTypeError, match=r"--paths x\[0\]:x\[1\]"):
            _paths(bad)


def test_a_bad_component_and_a_zero_size_leaf_are_notes_not_errors() -> None:
    live = jhw.LivePlot(fields=["loss", "x[7]", "empty"])
    feed(live, {"loss": STEPS, "x": crossing_path(), "empty": np.zeros((len(STEPS), 0))},
         shapes=[(), (2,), (0,)])  # fmt: skip
    assert [f.title for f in live.figures] == ["loss"]
    assert list(live.drawing().notes) == [
        "fields: no component 'x[7]' of 'x' (shape (2,)); not drawn.",
        "empty: no values (shape (0,)); nothing to draw.",
    ]
    assert live.panel.status == "converged"


# --------------------------------------------------------------------------- kept runs, picture
def test_kept_runs_draw_their_bands_in_their_colours_and_replaced_runs_close_them() -> None:
    live = jhw.LivePlot(keep_runs=True)
    feed(live, {"w": class_losses(50)}, shapes=[(50,)])
    feed(live, {"w": class_losses(50) * 2}, shapes=[(50,)])
    figure = chart(live, "w")
    old_outer, old_inner, new_outer, new_inner = marks_of(figure, fill="inside")
    old_median, new_median = marks_of(figure)
    # each run's band in its run's colour, the colour of its median line
    assert list(old_outer.fill_colors) == list(old_inner.colors) == list(old_median.colors)
    assert list(new_outer.fill_colors) == list(new_median.colors) != list(old_median.colors)
    live.show_run(0, visible=False)  # a hidden run's band leaves the chart with its line
    assert marks_of(figure, fill="inside") == [new_outer, new_inner]
    live.show_run(0, visible=True)
    live.keep_runs = False
    assert old_outer.comm is None and old_inner.comm is None  # closed: no widget left behind
    assert marks_of(figure, fill="inside") == [new_outer, new_inner]


def test_the_static_picture_draws_the_same_band() -> None:
    live = jhw.LivePlot(title="per class")
    feed(live, {"class_loss": class_losses(50)}, shapes=[(50,)])
    figure = chart(live, "class_loss")
    bands = marks_of(figure, fill="inside")
    g = svg_chart(picture(live), "class_loss")
    paths = [p for p in g.iter(f"{SVG}path") if p.get("class") == "jhw-band"]
    assert [p.get("data-label") for p in paths] == [m.labels[0] for m in bands]
    for p, mark in zip(paths, bands, strict=True):
        vertices = p.get("d").rstrip("Z").replace("M", "L").split("L")[1:]
        assert len(vertices) == len(mark.x)  # every point the widget draws, none more
        assert p.get("fill") == mark.fill_colors[0]
    lines = [p.get("data-label") for p in g.iter(f"{SVG}path") if p.get("class") == "jhw-line"]
    assert lines == ["class_loss median · run 1"]
    live.log_y = True  # on a log axis the band runs to the bottom instead of vanishing
    outer = marks_of(chart(live, "class_loss"), fill="inside")[0]
    assert outer.y.min() >= chart(live, "class_loss").axes[1].scale.min > 0


def test_view_options_leave_a_path_as_it_went_and_keep_the_band() -> None:
    """Smoothing, log x and the last-steps window are about steps: a path chart (its x is a
    series) is drawn whole and unsmoothed on its own linear x axis; a band stays under its
    smoothed median."""
    xy = rosenbrock()[: len(STEPS)]
    live = jhw.LivePlot(paths=["xy"], smoothing=0.6, log_x=True, last_steps=50)
    feed(live, {"class_loss": class_losses(50), "xy": xy}, shapes=[(50,), (2,)])
    path = chart(live, "xy[1] vs xy[0]")
    line, _, _ = path.marks  # no smoothed twin
    np.testing.assert_allclose(line.x, xy[:, 0].astype(np.float32))  # every step, not the last 50
    live.log_x = False
    live.log_x = True  # toggled on with the chart there
    path = chart(live, "xy[1] vs xy[0]")
    assert type(path.axes[0].scale) is bqplot.LinearScale and path.axes[0].label == "xy[0]"
    band = chart(live, "class_loss")
    outer, inner = marks_of(band, fill="inside")
    assert band.marks[:2] == [outer, inner]  # under the lines
    raw, smoothed = marks_of(band)
    assert raw.labels == ["class_loss median · run 1"]
    assert smoothed.labels == ["class_loss median · run 1 · smoothed"]
    assert type(band.axes[0].scale) is bqplot.LogScale
    assert raw.x.min() >= len(STEPS) - 1 - 50  # the window
    assert list(outer.fill_colors) == list(smoothed.colors)
    picture(live)  # the static picture draws them all
    live.log_x, live.last_steps, live.smoothing = False, 0, 0.0  # and back
    assert len(chart(live, "xy[1] vs xy[0]").marks[0].x) == len(STEPS)
    assert marks_of(chart(live, "class_loss"))[0].x.min() == 0
