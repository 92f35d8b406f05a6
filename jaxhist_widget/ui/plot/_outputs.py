"""The outputs that show a `LivePlot` in a notebook, and how they are kept current.

In a kernel a plot shows as two outputs: the widget's view, then a static picture of it
(`..picture`: an SVG as an HTML image, stored once; a text summary) that CSS hides where the live
view is drawn and shows everywhere else (nbconvert / GitHub / nbviewer, an export offline, a
reopened notebook whose widget model is gone: JupyterLab then writes "model not found" and
never falls back to another mimetype). Only the picture's output carries a display id and is
replaced when a run ends: updating the widget's output would make JupyterLab create a second
view of the live widget. Outside a kernel (a terminal) one output: the picture and summary.

Threads: a run ends on a callback or worker thread. ipykernel sends a display from a thread
without the cell's context under the latest request's header; JupyterLab / Notebook 7 route an
``update_display_data`` by its display id alone, nbclient by display id within the cell it is
running. So the update reaches the plot's outputs whichever thread sends it.
"""

from __future__ import annotations

import html
import re
import threading
import uuid
import warnings
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote
from xml.sax.saxutils import quoteattr

import ipywidgets

from ..look import CHART_MIN_PX, PICTURE_WIDTH
from ..picture import render_svg, summary
from ._snapshot import snapshot, synced_state

__all__ = [
    "Outputs",
    "fallback_html",
    "in_kernel",
    "picture_bundle",
    "picture_svg",
    "picture_width",
    "summary_line",
    "svg_data_uri",
]

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def in_kernel() -> bool:
    """True in a Jupyter kernel (a display can be updated there; a terminal would print it)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    return getattr(get_ipython(), "kernel", None) is not None


def picture_bundle(fig: Any, panel: Any, lock: threading.RLock) -> dict[str, str]:
    """The picture of what ``fig`` and ``panel`` show now: ``image/svg+xml``, ``text/plain``;
    as wide as the plot in its view (`picture_width`)."""
    with lock:  # the plot's update lock: a consistent copy of its lines and panel
        picture = snapshot(fig, panel)
        width = picture_width(panel.plot_width)
    return {
        "image/svg+xml": render_svg(picture, width),
        "text/plain": summary(picture.title, picture.state),
    }


def picture_width(view: int) -> int:
    """The picture's width: that of the plot in the view that reported one (``view``: the
    panel's ``plot_width``), so the picture in its place is as wide as the widget it stands
    for (an output narrower later scales it down: ``max-width: 100%``), between 320 and
    `MOST_PICTURE_PX`; `..look.PICTURE_WIDTH` before any view did.

    >>> picture_width(0), picture_width(1400), picture_width(100)
    (720, 1400, 320)
    """
    if not view or view <= 0:
        return PICTURE_WIDTH
    return int(min(max(view, CHART_MIN_PX), MOST_PICTURE_PX))


#: The widest picture drawn (a 4K output's width stays readable scaled down).
MOST_PICTURE_PX = 2400


def summary_line(panel: Any) -> str:
    """The picture's ``text/plain``, from the panel alone (no lock, no drawing)."""
    return summary(panel.title, synced_state(panel))


class Outputs:
    """How one plot shows in a notebook: its widget (the panel above the charts and the legend
    row), its outputs (the widget's view, then the picture's, whose display id this keeps) and
    the picture, redrawn when asked (a run ended, a control changed what is drawn).

    Parameters
    ----------
    panel, fig
        The plot's `LivePanel` and `ChartGrid`.
    lock
        The plot's lock: the picture is a consistent copy of the two.
    """

    def __init__(self, panel: Any, fig: Any, lock: threading.RLock) -> None:
        self.id = f"jhw-liveplot-{uuid.uuid4().hex}"
        self._panel, self._fig, self._lock = panel, fig, lock
        self._box: ipywidgets.VBox | None = None
        #: Whether a frontend was handed the plot (its picture is then kept current).
        self.displayed = False

    @property
    def widget(self) -> ipywidgets.VBox:
        """The panel above the charts and the legend row (made on first use)."""
        if self._box is None:
            box = [self._panel, self._fig.box, self._fig.legend]
            self._box = ipywidgets.VBox(box, layout=ipywidgets.Layout(width="100%"))
            self._box.add_class("jhw-liveplot")
        return self._box

    def link_figures(self) -> None:
        """Hand the panel the charts' figures, now and whenever they change: its view reads
        them out on hover (in the browser), and a new chart follows the log toggle."""

        def link(_: Any = None) -> None:
            figures = self._fig.figures
            self._panel.write(
                figures=figures,
                figure=figures[0] if figures else None,
                **self._fig.log_state(),
            )

        link()
        self._fig.box.observe(link, "children")

    def picture(self) -> dict[str, str]:
        """The picture of what the plot shows now: ``image/svg+xml``, ``text/plain``."""
        return picture_bundle(self._fig, self._panel, self._lock)

    def bundle(self, **kwargs: Any) -> dict[str, Any]:
        """The widget's view and the picture, as one mimebundle (the plot is now displayed)."""
        self.displayed = True
        bundle = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle.update(self.picture())
        return bundle

    def show(self) -> None:
        """Display the plot: in a kernel as the widget's output and the picture's; elsewhere
        (a terminal) as one output."""
        from IPython.display import display

        bundle = self.bundle()
        if not in_kernel() or WIDGET_VIEW not in bundle:
            display(bundle, raw=True)
            return
        display({WIDGET_VIEW: bundle[WIDGET_VIEW]}, raw=True)
        display(fallback(bundle), raw=True, display_id=self.id)

    def update(self) -> None:
        """Replace the picture wherever the plot is shown (in a kernel). Never raises: a failed
        picture must not fail the run (this runs on the run's thread when it ends)."""
        if not self.displayed or not in_kernel():
            return
        try:
            from IPython.display import update_display

            # The picture alone: the widget's own bundle is not sent again (ipywidgets builds
            # its text/plain from a repr of every mark's arrays, slower than the picture)
            update_display(fallback(self.picture()), raw=True, display_id=self.id)
        except Exception as e:
            warnings.warn(f"LivePlot: the static picture was not updated: {e!r}", stacklevel=3)


def fallback(bundle: dict[str, Any]) -> dict[str, str]:
    """The picture's output of ``bundle``: the picture once, as an HTML image with the CSS that
    hides it beside a live view, and the summary.

    Parameters
    ----------
    bundle
        The picture (`picture_bundle`): ``image/svg+xml`` and ``text/plain``.

    Returns
    -------
    dict
        ``text/html`` and ``text/plain``: no ``image/svg+xml`` beside them.
    """
    # The SVG is stored once, in the HTML (issue 39: it was also the output's image/svg+xml,
    # twice the picture in every saved notebook). The HTML is the copy every reader without a
    # kernel takes (checked in JupyterLab 4.6 / Notebook 7.6 and nbconvert 7): JupyterLab and
    # Notebook 7 show an untrusted notebook's outputs (one saved elsewhere, or executed by
    # nbclient) only through safe renderers (never image/svg+xml: they fall back to the text)
    # and sanitize its HTML: no <style>, no inline <svg>, but an <img> with a data: URI stays.
    # A trusted notebook and nbconvert's HTML rank text/html first. So an SVG-only output would
    # show as its summary line in an untrusted notebook; the HTML image shows everywhere HTML
    # is drawn. A renderer that takes no HTML (nbconvert to LaTeX / PDF) gets the summary.
    return {
        "text/html": fallback_html(bundle["image/svg+xml"], bundle["text/plain"]),
        "text/plain": bundle["text/plain"],
    }


def svg_data_uri(svg: str) -> str:
    """``svg`` as a ``data:`` URI, percent-encoded only where a URL needs it.

    Base64 would add a third to every saved picture. The SVG text stays as it is but for ``%``
    and ``#`` (a percent sign, the fragment's start) and the line breaks and tabs a URL drops.
    The URI goes in a single-quoted HTML attribute (`fallback_html`), where ``<``, ``>`` and
    ``"`` need no escape.

    Parameters
    ----------
    svg
        The SVG document.

    Returns
    -------
    str
        ``data:image/svg+xml;charset=utf-8,...``; `picture_svg` reads the SVG back.
    """
    for char in "%#\n\r\t":  # "%" first: the escapes that follow hold one
        svg = svg.replace(char, f"%{ord(char):02X}")
    return f"{_SVG_URI}{svg}"


#: The start of the picture's URI, and the picture's image in its output's HTML.
_SVG_URI = "data:image/svg+xml;charset=utf-8,"
_PICTURE_IMG = re.compile(rf"<img class=\"jhw-static\"[^>]*? src='{re.escape(_SVG_URI)}([^']*)'")


def picture_svg(data: Mapping[str, Any]) -> str | None:
    """The SVG of a LivePlot picture's output, as a saved notebook holds it.

    Parameters
    ----------
    data
        An output's mimebundle (a line list, as nbformat may store a string, is joined): the
        picture's output (`fallback`), or the one-output bundle shown outside a kernel.

    Returns
    -------
    str or None
        The SVG, or None when ``data`` holds no LivePlot picture.
    """

    def text(mime: str) -> str:
        value = data.get(mime, "")
        return value if isinstance(value, str) else "".join(value)

    if "image/svg+xml" in data:
        return text("image/svg+xml")
    match = _PICTURE_IMG.search(text("text/html"))
    return None if match is None else unquote(html.unescape(match.group(1)))


#: The picture's output follows the widget's. It hides where the output before it holds a live
#: LivePlot view (JupyterLab / Notebook 7 with the kernel, an export whose widget manager
#: loaded), and shows everywhere else: a reopened notebook whose widget model is gone (where
#: the widget output's "model not found" text is hidden instead), an export offline, a renderer
#: without widgets. The last rule is for a view whose kernel connection is gone (a restarted
#: kernel, a view restored from saved widget state): ipywidgets marks each of its widgets with a
#: broken-link icon, a ``::before`` flex item that, inside the bqplot figure, pushes the marks'
#: SVG (in the flow) right of the axes' SVG (absolutely placed): lines off their axes. The panel
#: already says "kernel restarted"; the icons go.
_FALLBACK_CSS = (
    ".jp-OutputArea-child:has(.jhw-liveplot) + .jp-OutputArea-child:has(img.jhw-static)"
    "{display:none}"
    ".jp-OutputArea-child:has(+ .jp-OutputArea-child img.jhw-static)"
    ":has(:is(.jupyter-widgets,[data-mime-type*=widget-view])):not(:has(.jhw-liveplot))"
    "{display:none}"
    ".jhw-liveplot.jupyter-widgets-disconnected::before,"
    ".jhw-liveplot .jupyter-widgets-disconnected::before{display:none}"
)


def fallback_html(svg: str, text: str) -> str:
    """The picture as an image, for the output that follows the widget's: shown wherever the
    live widget is not (see `_FALLBACK_CSS`). It is the one output a run's end updates, so a
    live widget view is never re-rendered (JupyterLab would create a new view).

    Parameters
    ----------
    svg
        The picture.
    text
        Its summary: the image's ``alt`` text.

    Returns
    -------
    str
        A ``<style>`` of `_FALLBACK_CSS`, then the ``<img class="jhw-static">`` of ``svg``.
    """
    # In the single-quoted attribute only "&" and "'" need an escape (an "&amp;" of the SVG
    # stays one); "<" and ">" are legal there, and escaping them would add 3 bytes a tag.
    src = svg_data_uri(svg).replace("&", "&amp;").replace("'", "&#39;")
    return (
        f"<style>{_FALLBACK_CSS}</style>"
        f'<img class="jhw-static" style="max-width:100%" alt={quoteattr(text)} '
        f"src='{src}'>"
    )
