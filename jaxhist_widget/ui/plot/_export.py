"""Getting a `LivePlot`'s data and picture out: a table per run (pandas, CSV), the PNG, and a
copy of every run it draws in a store and as TensorBoard files (``LivePlot(store=...,
tensorboard=...)``).

The tables need only numpy (pandas when asked for a DataFrame). The PNG is the static picture
rasterized in the kernel (`..picture.png_from_svg`); without cairosvg, a plot shown in a live
frontend falls back to bqplot's PNG of its first chart, which the browser renders.
"""

from __future__ import annotations

import concurrent.futures
import csv
import os
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..._host import Run, Sink, Store, TensorBoard, table
from ..picture import PNG_HINT, png_from_svg

if TYPE_CHECKING:
    import bqplot
    import ipywidgets

__all__ = [
    "Copies",
    "has_kernel_comm",
    "save_picture_png",
    "save_png",
    "table",
    "to_csv",
    "to_pandas",
]


class Copies:
    """Files every run a plot draws into ``store`` (a `Store`, a path, or None) and writes it
    as TensorBoard event files under ``tensorboard`` (a `TensorBoard`, a directory, or None).

    They are the plot's companions (`Sink._companions`): the hub joins them to every run the
    plot gets, whether the plot is attached or joined by a cell of %jaxhist auto mode, as
    sinks of the run in their own right: each gets every hook (a run given up for dead and
    taken up again included) before the plot (a chunk is handed to the store before it is
    drawn), in the hub's order and under its policy (a failure reported once per sink, run and
    hook, never stopping the drawing or the run; a slow one's updates moved to the worker).
    """

    def __init__(
        self,
        store: str | os.PathLike[str] | Store | None,
        tensorboard: str | os.PathLike[str] | TensorBoard | None,
    ) -> None:
        self.store = store if isinstance(store, Store) or store is None else Store(store)
        self.tensorboard = (
            tensorboard
            if isinstance(tensorboard, TensorBoard) or tensorboard is None
            else TensorBoard(tensorboard)
        )
        #: The copies, as the plot's companions.
        self.sinks: tuple[Sink, ...] = tuple(
            s for s in (self.store, self.tensorboard) if s is not None
        )

    def flush(self) -> None:
        """Wait until the runs handed over so far are in the files, as leaving a block of the
        sinks themselves does (a store at most its ``exit_wait``, and not at all while another
        program holds its file's lock; then it warns and files on in the background)."""
        if self.store is not None:
            self.store.flush(self.store.exit_wait, warn=True, unless_locked=True)
        if self.tensorboard is not None:
            self.tensorboard.flush()


def to_pandas(run: Run) -> Any:
    """``run`` as a `pandas.DataFrame` with the columns of `table`."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError(
            "LivePlot.to_pandas needs pandas (pip install pandas); "
            "live.history() and live.to_csv(path) work without it."
        ) from None
    return pd.DataFrame(table(run))


def to_csv(run: Run, path: str | Path) -> Path:
    """Write ``run`` as CSV (the columns of `table`; no pandas needed)."""
    columns = table(run)
    path = Path(path)
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(list(columns))
        writer.writerows(zip(*(col.tolist() for col in columns.values()), strict=True))
    return path


def save_picture_png(
    svg: str, figure: bqplot.Figure, displayed: bool, path: str | Path, scale: float | None
) -> concurrent.futures.Future:
    """`LivePlot.save_png`: the complete picture ``svg`` rasterized here; without cairosvg,
    bqplot's PNG of ``figure`` from a frontend showing it, with a warning naming the fix."""
    try:
        return save_png(figure, displayed, path, scale, svg=svg)
    except ImportError:
        if not displayed or not has_kernel_comm(figure):
            raise
        warnings.warn(f"{PNG_HINT} Writing bqplot's PNG of the first chart instead.", stacklevel=3)
        return save_png(figure, displayed, path, scale)


def save_png(
    figure: bqplot.Figure,
    displayed: bool,
    path: str | Path,
    scale: float | None,
    svg: str | None = None,
) -> concurrent.futures.Future:
    """Write a PNG of the plot to ``path``; a future resolving to the `Path`.

    With ``svg`` (the plot's complete static picture): rasterized here and now
    (`png_from_svg`), no frontend needed, the future already resolved; ImportError naming the
    fix without ``cairosvg``. Without: the frontend showing ``figure`` is asked for bqplot's
    PNG of the figure alone, written on arrival; RuntimeError, naming what to do instead, when
    no frontend shows it (``displayed`` is False or the figure has no kernel comm).
    """
    if svg is not None:
        done: concurrent.futures.Future = concurrent.futures.Future()
        data = png_from_svg(svg, scale)  # raises before anything is written
        path = Path(path)
        path.write_bytes(data)
        done.set_result(path)
        return done
    if not displayed or not has_kernel_comm(figure):
        raise RuntimeError(
            "LivePlot.save_png needs a Jupyter frontend showing this plot (the browser "
            "renders the PNG): display(live) in a notebook first. Without a frontend, "
            "live.save_svg(path) writes the complete picture, and live.to_csv(path) / "
            "live.history() export the data."
        )
    path = Path(path)
    future: concurrent.futures.Future = concurrent.futures.Future()

    def write(data: Any) -> None:
        try:
            path.write_bytes(bytes(data))
            future.set_result(path)
        except Exception as e:  # an unwritable path: report through the future
            future.set_exception(e)

    figure.get_png_data(write, scale=scale)
    return future


def has_kernel_comm(widget: ipywidgets.Widget) -> bool:
    """True when the widget talks to a kernel's comm (a frontend may be listening)."""
    comm = getattr(widget, "comm", None)
    return comm is not None and type(comm).__name__ != "DummyComm"
