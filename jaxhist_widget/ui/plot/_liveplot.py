"""`LivePlot`: a sink that draws every streamed run live in Jupyter, and records it.

What a user holds (options, display, data access, exports, runners, and the sink hooks the host
runtime calls from its callback threads), made of parts joined under one lock: the state
(`._state`, plain data), the throttle (`._throttle`), the figure (`..figure.ChartGrid`), the panel
(`..panel.LivePanel`, whose every write holds that lock, whatever thread makes it); `._updates`
draws the state into those two, `._controls` applies the panel's controls, `._outputs` shows the
plot. All drawn state lives in the widgets' traits (a view opened late or reloaded shows it all).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import ipywidgets

from ..._host import Run, Sink, Store, TensorBoard
from ..figure import ChartGrid
from ..panel import LivePanel
from ..picture import PlotDrawing, save_svg
from ..series import MAX_LANES
from . import _controls as controls
from . import _export as export
from . import _outputs as outputs
from . import _snapshot as snapshot
from ._download import Downloads
from ._options import MAX_POINTS_LIMIT, OPTIONS, checked, control_traits, with_parameters
from ._state import PlotState
from ._throttle import MAX_UPDATES_PER_SECOND, PUSH_BUDGET
from ._updates import Updates

__all__ = ["MAX_LANES", "MAX_POINTS_LIMIT", "MAX_UPDATES_PER_SECOND", "PUSH_BUDGET", "LivePlot"]

T = TypeVar("T")


class LivePlot(controls.ControlOptions, Sink):
    """Plot every `jaxhist_widget.while_loop` run started while attached, live, and record it.

    Display it (last expression of a cell, or ``display(live)``), then run loops inside
    ``with live:`` (or ``with live.named("adam"):``, ``live.run(fn, ..., name="adam")``, or
    ``await live.run_async(fn, ...)``). Stop ends the run after its current chunk and keeps
    the partial history in both: in a normal cell it interrupts the kernel, as the notebook's ■
    does (the kernel handles no widget message before the cell ends, and the interrupt becomes a
    stop of this plot's run); in an async cell it sends a message, handled while the cell awaits.

    Examples
    --------
    >>> import jax, jaxhist_widget as jhw
    >>> live = jhw.LivePlot(title="halving")
    >>> def solve(x):
    ...     return jhw.while_loop(lambda x: x > 1.0, lambda x: x / 2, x, max_steps=9)
    >>> with live:  # in a notebook: display(live) first
    ...     x, hist = jax.jit(solve)(10.0)
    >>> live.panel.get_state(["status", "step", "max_steps"])
    {'status': 'converged', 'step': 4, 'max_steps': 9}
    >>> live.history().tolist() == hist.to_numpy().tolist()
    True
    """

    # The Parameters section: each option's doc, declared once in the table (`._options`).
    __doc__ = with_parameters(__doc__)

    def __init__(
        self,
        *,
        fields: str | Sequence[str] | None = None,
        log_y: bool | None = None,
        keep_runs: bool = False,
        title: str | None = None,
        max_points: int | None = None,
        lane_labels: Sequence[str] | Any | None = None,
        lane_values: Any = None,
        params_field: str | None = None,
        params_best: str | None = None,
        lanes: Sequence[int | str] | None = None,
        all_lanes: bool = False,
        continue_steps: bool = False,
        store: str | os.PathLike[str] | Store | None = None,
        tensorboard: str | os.PathLike[str] | TensorBoard | None = None,
        charts: str = "per_field",
        vectors: str | dict[str, str] = "auto",
        paths: str | Sequence[str | tuple[str, str]] | None = None,
        smoothing: float = 0.0,
        ignore_outliers: bool = True,
        log_x: bool = False,
        last_steps: int | None = None,
        step_range: tuple[int, int] | None = None,
        x_axis: str = "step",
        run_filter: str = "",
        **unknown: Any,
    ) -> None:
        given = locals()  # (the options by name, as `checked` takes them)
        o = checked(unknown, **{k: given[k] for k in OPTIONS})
        super().__init__()
        self.max_points, self.continue_steps = o.max_points, o.continue_steps
        # The one lock of the plot's state and widgets: the hooks (callback threads), the
        # controls (the main thread) and every write of the panel's traits hold it.
        self._lock = threading.RLock()
        self._state = PlotState(
            o.choice, o.max_points, o.lane_labels, o.continue_steps, o.lane_values
        )
        self._fig = ChartGrid(log_y=o.log_y, charts=o.charts)
        #: The panel: status, progress, rate, latest values, the run list and the controls.
        log_y = bool(o.log_y)
        self.panel = LivePanel(lock=self._lock, title=o.title, log_y=log_y, keep_runs=o.keep_runs)
        self._updates = Updates(
            self._state, self._fig, self.panel, self._lock, lambda: self.attached, key=self
        )
        self._outputs = outputs.Outputs(self.panel, self._fig, self._lock)
        self._controls = controls.Controls(
            self.panel, self._fig, self._updates, sink=self, redraw_picture=self._update_static
        )
        self._copies = export.Copies(store, tensorboard)
        # Each chart's download menu in the page (its CSV, the picture): `._download`.
        parts = (self.panel, self._fig, self._state, self._lock, self._outputs.picture)
        self._downloads = Downloads(*parts)
        #: The charts' grid: per chart its bqplot figure (`figures`) and its own legend under it.
        self.charts = self._fig.box
        #: The legend row under the charts (HTML): what the charts share.
        self.legend = self._fig.legend
        self._outputs.link_figures()
        # Every control's trait, in the table's order (``last_steps`` before ``step_range``,
        # which its setting would reset).
        self.panel.write(**control_traits(o))

    @property
    def runs(self) -> list[Run]:
        """The runs this plot holds, oldest first: the latest, plus previous ones if kept."""
        with self._lock:
            return [d.run for d in self._state.drawn]

    # ------------------------------------------------------------------ display
    @property
    def widget(self) -> ipywidgets.VBox:
        """The displayed widget: the panel above the figure (made on first use)."""
        return self._outputs.widget

    @property
    def figures(self) -> list[Any]:
        """The bqplot figures shown, one per chart, in grid order."""
        return list(self._fig.figures)

    @property
    def figure(self) -> Any:
        """The first chart's bqplot figure (the only one with ``charts="shared"``)."""
        return self._fig.figures[0]

    # The output: the widget's view and a picture of it, updated when a run ends (`._outputs`).
    def _ipython_display_(self) -> None:
        self._outputs.show()

    def __repr__(self) -> str:  # what a script or a debugger prints: the picture's summary
        return f"<LivePlot: {outputs.summary_line(self.panel)}>"

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        return self._outputs.bundle(**kwargs)

    def _update_static(self) -> None:
        """Replace the picture wherever the plot is shown (never raises)."""
        self._outputs.update()

    # -------------------------------------------------------------- sink hooks
    # Called from the host's callback threads. The copies (``store=``, ``tensorboard=``) are
    # sinks of the plot's runs, joined by the hub, which hands them each chunk first.
    @property
    def _companions(self) -> tuple[Sink, ...]:
        return self._copies.sinks

    def on_start(self, run: Run) -> None:
        self._updates.start(run, keep_runs=self.panel.keep_runs)

    # On a CPU, rows are filed in the chunk's call (see `Sink`), though on_rows never stops: a
    # push pauses the loop rather than compete with it for the cores, its measured cost spacing
    # the updates (pushes deferred, a long run in JupyterLab got a fraction of its updates on a
    # machine of few cores). Only new rows are reduced on the worker between pushes (`._ahead`).
    # On an accelerator the loop does not share the host's cores, and a call the host answers
    # late stops the chip for nothing: the rows are drawn on the worker while the loop runs on
    # (a stop from the panel is answered at the next call all the same).
    def _rows_can_wait(self, accelerated: bool) -> bool:
        return accelerated if self.rows_can_wait is None else self.rows_can_wait

    def on_rows(self, run: Run, lanes: list[int]) -> None:
        self._updates.rows()

    def on_end(self, run: Run) -> None:
        self._updates.end(run)
        self._update_static()

    # ---------------------------------------------------------------- drawing
    def drawing(self) -> PlotDrawing:
        """What the figure shows now, per chart, as frozen plain data (`..picture.PlotDrawing`):
        each chart's lines (run, lane, field, the points drawn, colour, opacity), bands, flags,
        axes (log or linear, limits, ticks), and the notes under the charts. A copy: later rows
        or controls change the figure, not it; `refresh` first to draw what has arrived. Safe
        from any thread (it holds the plot's lock).

        Examples
        --------
        >>> import jaxhist_widget as jhw
        >>> live = jhw.LivePlot(log_y=True)
        >>> with live:
        ...     _ = jhw.while_loop(lambda x: x < 8, lambda x: x * 2, 1.0, max_steps=5)
        >>> chart = live.drawing().chart()  # the only chart
        >>> line = chart.line()  # its only line
        >>> chart.title, chart.log_y, line.x.tolist(), line.y.tolist()
        ('value', True, [0.0, 1.0, 2.0, 3.0], [1.0, 2.0, 4.0, 8.0])
        """
        with self._lock:
            return snapshot.drawing_of(self._fig, self._state.drawn)

    def refresh(self) -> None:
        """Draw what has arrived now, without waiting for the update throttle (which spaces the
        updates of a streaming run). Safe from any thread, a loop running or not: it holds the
        plot's lock, as every update does.

        Examples
        --------
        >>> import jaxhist_widget as jhw
        >>> live = jhw.LivePlot()
        >>> live.refresh()  # no run yet: no chart drawn
        >>> live.drawing().charts
        {}
        """
        self._updates.push()

    def attach(self) -> None:
        super().attach()
        self._updates.attached()

    def detach(self) -> None:
        super().detach()
        self._updates.detached()

    # ---------------------------------------------------------------- runners
    # Each keeps the panel's ``stop_mode`` true: whether Stop interrupts the kernel or sends a
    # message (`._controls.Controls.sync_stop_mode`).
    def __enter__(self) -> LivePlot:
        super().__enter__()
        self._sync_stop_mode()
        return self

    def __exit__(self, *exc: object) -> bool:
        try:
            return super().__exit__(*exc)  # True: a stopped `jhw.log` loop (`Stopped`) ended
        finally:
            self._sync_stop_mode()
            self._copies.flush()

    async def run_async(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T | None:
        with self._controls.async_run(self._sync_stop_mode):
            try:
                return await super().run_async(fn, *args, **kwargs)
            finally:
                await asyncio.to_thread(self._copies.flush)

    run_async.__doc__ = Sink.run_async.__doc__

    def _sync_stop_mode(self) -> None:
        self._controls.sync_stop_mode(self._interrupts_armed)

    # --------------------------------------------------------------------- data
    def history(self, run: int = -1) -> Any:
        """Rows of run number ``run`` (default: the latest), like ``History.to_numpy()``.

        Examples
        --------
        >>> import jaxhist_widget as jhw
        >>> live = jhw.LivePlot()
        >>> with live:
        ...     _, hist = jhw.while_loop(lambda x: x < 8, lambda x: x * 2, 1, max_steps=5)
        >>> live.history().tolist()
        [1, 2, 4, 8]
        """
        return self._state.run(run).history()

    def to_pandas(self, run: int = -1) -> Any:
        """Run ``run`` as a `pandas.DataFrame`: a ``step`` column (and ``lane`` under vmap),
        then one column per scalar leaf and per component of other leaves (``x[0]``, ...)."""
        return export.to_pandas(self._state.run(run))

    def to_csv(self, path: str | Path, run: int = -1) -> Path:
        """Write run ``run`` as CSV (the columns of `to_pandas`; no pandas needed)."""
        return export.to_csv(self._state.run(run), path)

    def save_png(self, path: str | Path, scale: float | None = None) -> concurrent.futures.Future:
        """Write the plot's complete picture (the one `save_svg` writes: title, status, final
        values, every chart, legend) to ``path`` as PNG, ``scale`` times its size.

        Rasterized here, in the kernel, by ``cairosvg`` (optional: ``pip install
        jaxhist_widget[png]``), so it needs no frontend and the file is there when this
        returns. Without cairosvg, a plot shown in a live frontend falls back to bqplot's PNG of
        its first chart alone, written when the browser answers (after the current cell ends,
        or while an async cell awaits: ``await asyncio.wrap_future(live.save_png(p))``).

        Returns
        -------
        concurrent.futures.Future
            Resolves to the written `Path` (already resolved when rasterized here).

        Raises
        ------
        ImportError
            Without cairosvg (or the cairo library) and without a frontend showing the plot;
            the message says what to install (`save_svg` needs nothing).
        """
        svg = self._outputs.picture()["image/svg+xml"]
        return export.save_picture_png(svg, self.figure, self._outputs.displayed, path, scale)

    def save_svg(self, path: str | Path) -> Path:
        """Write the plot's complete static picture to ``path`` as SVG, now, with no frontend.

        The picture the notebook output carries for readers without the widget (exported
        HTML, GitHub, nbviewer): title, status, steps, final values, the figure's lines, ticks
        and log/linear axis as the widget draws them, and the legend.
        """
        return save_svg(self._outputs.picture()["image/svg+xml"], path)

    # ------------------------------------------------------------------- runs
    def add_run(self, run: Run) -> None:
        """Draw a run that has ended, e.g. one read back from a store (`jaxhist_widget.load_runs`),
        as if it had just ended on this plot: runs that come next are drawn beside it, it is
        listed by its name (a stored run's stored name) in a colour of its own like a kept run,
        and it is in `runs` (and `history`). Turns `keep_runs` on, so that it stays (a baseline
        next to today's run).

        Examples
        --------
        >>> import os, tempfile, jaxhist_widget as jhw
        >>> path = os.path.join(tempfile.mkdtemp(), "runs.db")
        >>> def halve(x):
        ...     return jhw.while_loop(lambda x: x > 1.0, lambda x: x / 2, x, max_steps=9)
        >>> with jhw.Store(path, name="baseline"):
        ...     _ = halve(10.0)
        >>> live = jhw.LivePlot()
        >>> live.add_run(jhw.load_runs(path)[0])
        >>> with live:
        ...     _ = halve(40.0)
        >>> [len(r.history()) for r in live.runs]
        [5, 7]
        """
        if run.ended is None:
            raise ValueError("add_run draws a run that has ended; attach the plot to see one live.")
        if self.running:
            raise RuntimeError("add_run while a run streams to this plot: add it before or after.")
        self.keep_runs = True
        # The hooks a run that started and ended here gets: it is drawn the same way.
        self.on_start(run)
        self.on_end(run)

    def show_run(self, run: int | str, visible: bool = True) -> None:
        """Show (or hide, ``visible=False``) a drawn run, as its toggle in the run list does:
        ``run`` is its index in `runs` (``-1``: the latest) or the name the plot lists it by."""
        with self._lock:
            number = self._state.number_of(run)
            hidden = [n for n in self.panel.hidden_runs if n != number]
            self.panel.write(hidden_runs=hidden if visible else [*hidden, number])

    def show_lane(self, run: int | str, lane: int, visible: bool = True) -> None:
        """Show (or hide, ``visible=False``) vmap lane ``lane`` (its index in the vmap) of a
        drawn run, as a click on its legend entry or its toggle in the run list does: ``run`` is
        its index in `runs` (``-1``: the latest) or its name."""
        if isinstance(lane, bool) or not isinstance(lane, int) or lane < 0:
            raise TypeError(f"lane must be a vmap lane's index (an int >= 0), got {lane!r}.")
        with self._lock:
            number = self._state.number_of(run)
            pairs = [p for p in self.panel.hidden_lanes if list(p) != [number, lane]]
            self.panel.write(hidden_lanes=pairs if visible else [*pairs, [number, lane]])

    def clear(self) -> None:
        """Forget previous runs and their lines (a running run stays), and reset the panel."""
        self._controls.clear()
