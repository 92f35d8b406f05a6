"""The outputs that show a `LivePlot` in a notebook, and how they are kept current.

Layer 3 (widget). A LivePlot's output carries the widget's view AND a static picture of it
(`._static`: SVG and a text summary). A frontend with the widget's model draws the widget (its
mimetype ranks first); anything else (nbconvert / GitHub / nbviewer without widget state, a
terminal) shows the picture. In a kernel a second output follows it: the same picture for
JupyterLab / Notebook 7 when the widget's model is gone (they then write "model not found" and
never fall back to the next mimetype), shown there by CSS and hidden everywhere else
(`._static.fallback_html`). Both carry a display id of the plot, so each run's end replaces
them in every output showing the plot.

Threads: a run ends on a callback or worker thread. ipykernel sends a display from a thread
without the cell's context under the latest request's header; JupyterLab / Notebook 7 route an
``update_display_data`` by its display id alone, nbclient by display id within the cell it is
running. So the update reaches the plot's outputs whichever thread sends it.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from typing import Any

from . import _static as static

__all__ = ["Outputs", "in_kernel", "picture_bundle"]


def in_kernel() -> bool:
    """True in a Jupyter kernel (a display can be updated there; a terminal would print it)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    return getattr(get_ipython(), "kernel", None) is not None


def picture_bundle(fig: Any, panel: Any, lock: threading.RLock) -> dict[str, str]:
    """The picture of what ``fig`` and ``panel`` show now: ``image/svg+xml``, ``text/plain``."""
    with lock:  # the plot's update lock: a consistent copy of its lines and panel
        picture = static.snapshot(fig, panel)
    return {
        "image/svg+xml": static.render_svg(picture),
        "text/plain": static.summary(picture.title, picture.state),
    }


class Outputs:
    """The display ids of one plot's outputs: the widget with its picture, and the fallback."""

    def __init__(self) -> None:
        self.id = f"jhw-liveplot-{uuid.uuid4().hex}"
        self.fallback_id = f"{self.id}-fallback"

    def show(self, bundle: dict[str, Any]) -> None:
        """Display ``bundle`` (widget view + picture), and in a kernel its fallback."""
        from IPython.display import display

        display(bundle, raw=True, display_id=self.id)
        if in_kernel():
            display(fallback(bundle), raw=True, display_id=self.fallback_id)

    def update(self, make_bundle: Callable[[], dict[str, Any]]) -> None:
        """Replace both outputs, wherever shown, with ``make_bundle()`` (in a kernel only)."""
        if not in_kernel():
            return
        from IPython.display import update_display

        bundle = make_bundle()
        update_display(bundle, raw=True, display_id=self.id)
        update_display(fallback(bundle), raw=True, display_id=self.fallback_id)


def fallback(bundle: dict[str, Any]) -> dict[str, str]:
    """The fallback output of ``bundle``. No text of its own: where HTML is not rendered, the
    widget output's summary says it all."""
    html = static.fallback_html(bundle["image/svg+xml"], bundle["text/plain"])
    return {"text/html": html, "text/plain": ""}
