"""The static picture as files: an SVG, a PNG.

The SVG (the complete static picture, `._svg.render_svg`) needs nothing. The PNG is that same
SVG rasterized in the kernel by ``cairosvg`` when it is installed (`png_from_svg`): an optional
dependency,
not a hard one, because it needs the cairo C library, which a pip install cannot bring on every
platform. Drawing the PNG a second way (matplotlib from the series) would make two pictures to
keep alike, and a pure-Python rasterizer would need fonts for the text; asking the browser
(bqplot's ``get_png_data``, the older path a `LivePlot` keeps for a plot shown without
cairosvg) needs a frontend and gives the figure alone, without title, status, values or legend.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["PNG_HINT", "png_from_svg", "save_svg"]


#: What to install for `png_from_svg`, said in its error.
PNG_HINT = (
    "LivePlot.save_png rasterizes the plot's complete static picture (the one save_svg "
    "writes) in the kernel with cairosvg: pip install cairosvg (it uses the cairo library: "
    "present on most Linux systems, `brew install cairo` on macOS, "
    "`conda install cairosvg` anywhere). Without it, live.save_svg(path) writes the same "
    "picture as SVG."
)


def png_from_svg(svg: str, scale: float | None = None) -> bytes:
    """The SVG document ``svg`` as PNG bytes, ``scale`` times its size (1 when None).

    Raises
    ------
    ImportError
        Naming the fix (`PNG_HINT`) when ``cairosvg`` or the cairo library is missing.
    """
    try:
        import cairosvg
    except (ImportError, OSError) as e:  # OSError: cairocffi found no cairo library
        raise ImportError(f"{PNG_HINT} ({type(e).__name__}: {e})") from None
    png = cairosvg.svg2png(bytestring=svg.encode("utf-8"), scale=scale or 1.0)
    return bytes(png)


def save_svg(svg: str, path: str | Path) -> Path:
    """Write the SVG document ``svg`` to ``path`` (UTF-8)."""
    path = Path(path)
    path.write_text(svg, encoding="utf-8")
    return path
