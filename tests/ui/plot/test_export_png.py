"""The PNG export is the plot's complete static picture (the SVG a notebook output carries),
rasterized in the kernel without a frontend, when the optional ``cairosvg`` is installed; a
clear error naming the fix when it is not.
"""

from __future__ import annotations

import io
import re
import struct
import sys

import numpy as np
import pytest

import jaxhist_widget as jhw
from jaxhist_widget.ui.plot import _export as export

from ...helpers.synthetic import feed


def plot() -> jhw.LivePlot:
    live = jhw.LivePlot(title="Adam")
    steps = np.arange(500)
    feed(live, {"loss": 10.0 / (1 + steps), "grad": np.cos(steps / 30)}, max_steps=2000)
    return live


def svg_size(svg: str) -> tuple[int, int]:
    root = re.search(r"<svg[^>]*>", svg).group(0)
    width, height = (re.search(rf'\b{k}="([\d.]+)', root).group(1) for k in ("width", "height"))
    return round(float(width)), round(float(height))


def test_the_png_is_the_static_picture_rasterized(tmp_path):
    pytest.importorskip("cairosvg")
    image = pytest.importorskip("PIL.Image")
    svg = plot()._outputs.picture()["image/svg+xml"]
    future = export.save_png(None, False, tmp_path / "plot.png", None, svg=svg)
    path = future.result(timeout=0)  # written at once: no frontend involved
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", data[16:24]) == svg_size(svg)  # IHDR: the SVG's size
    pixels = np.asarray(image.open(io.BytesIO(data)).convert("RGB")).reshape(-1, 3)
    colours, counts = np.unique(pixels, axis=0, return_counts=True)
    background = colours[counts.argmax()]
    assert (pixels != background).any(axis=1).mean() > 0.02  # lines, text, axes drawn
    # Each line's own colour, as the SVG's paths give it, is in the picture.
    strokes = set(re.findall(r'<path[^>]*stroke="#([0-9a-fA-F]{6})"', svg))
    assert len(strokes) >= 2
    present = {tuple(c) for c in colours}
    for hex_colour in strokes:
        assert tuple(int(hex_colour[i : i + 2], 16) for i in (0, 2, 4)) in present, hex_colour


def test_scale_multiplies_the_size(tmp_path):
    pytest.importorskip("cairosvg")
    svg = plot()._outputs.picture()["image/svg+xml"]
    data = export.png_from_svg(svg, 2)
    width, height = svg_size(svg)
    assert struct.unpack(">II", data[16:24]) == (2 * width, 2 * height)


def test_without_cairosvg_the_error_names_the_fix(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "cairosvg", None)  # import cairosvg -> ImportError
    svg = plot()._outputs.picture()["image/svg+xml"]
    with pytest.raises(ImportError, match=r"pip install cairosvg.*save_svg\(path\)"):
        export.save_png(None, False, tmp_path / "plot.png", None, svg=svg)
    assert not (tmp_path / "plot.png").exists()
