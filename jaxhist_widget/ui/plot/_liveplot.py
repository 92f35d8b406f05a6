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
from ._options import MAX_POINTS_LIMIT, OPTIONS, checked
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

    Parameters
    ----------
    fields
        What to plot, by leaf name of ``record(carry)``. Default: every leaf. Entries:
        ``"loss"`` (a leaf; a vector leaf is drawn as ``vectors`` says), ``"|x|"`` (its L2
        norm), ``"x[3]"`` (one flat component; ``"W[1,2]"`` of a matrix). A name a run's
        record does not have is said in a note under the charts (the run is not an error).
    log_y
        None (default): each chart starts on a linear y axis and goes to a logarithmic one
        once its positive values span three decades or more (a loss falling from 2 to 1e-6;
        the hyperparameter chart too), until its own "log" toggle or the panel's "log y" is
        used. True / False: every chart on a log / linear axis from the start. The panel's
        "log y" toggle sets every chart; each chart also has its own "log" toggle in its top
        left corner.
    keep_runs
        Keep previous runs on the plot and in `runs` (a toggle), each in its own colour, listed
        in the panel (a show/hide toggle each, show all / hide all, a filter: ``run_filter``);
        False keeps the latest run only (bounded memory). A run is named where it starts
        (`named`, ``run(..., name=...)``, ``%%jaxhist --name``, `name`), else after the call
        (``solve(3, lr=0.001)``), the cell (``cell 7``) or its number (``run N``).
    title
        Shown at the top of the panel.
    max_points
        Points per line per update (min/max decimated), 5..4000; None: 2000, lanes sharing 4000.
    lane_labels
        Names of the vmap lanes (e.g. ``[f"lr={lr}" for lr in lrs]``), used wherever the plot
        names a lane; one per lane (a run with another lane count warns and uses ``lane k``).
        Numbers (``lane_labels=rates``, a numpy or jax array) are the lanes' values too.
    lane_values
        The swept parameters' values, one per lane: ``rates``, or ``{"lr": rates, "wd":
        wds}``. A sweep whose lanes carry values gets a chart per parameter of each lane's
        last and best value of a plotted field (``params_field``) against it (log x where the
        values span decades), live; hovering a point names its lane and lights its lines (a
        lane drawn only in the band: its line, drawn while hovered). They name the lanes
        (``lr=0.001``) when ``lane_labels`` is not given.
    params_field
        The plot's one goal: the plotted field every "best", "median" and "worst" ranks (the
        lanes a sweep names, the legend's ``best = lowest val_loss``, the hyperparameter
        charts; ``"acc"``, ``"|x|"``). None: a loss-like field, the validation one first
        (``val_loss`` over ``train_loss``), else an accuracy-like one, else the first plotted.
        ``params_best``: whether a lane's best value of it is its lowest (``"min"``, a loss) or
        its highest (``"max"``, an accuracy); None: ``"max"`` for an accuracy-like name, else
        ``"min"``: ``LivePlot(lane_values=rates, params_field="acc")`` ranks by the highest
        accuracy. Both are properties and controls in the hyperparameter chart's corner (a
        field select, a best toggle), changed live; the static picture and the chart's CSV
        follow them. A field ``fields=`` does not plot is refused here, one the sweep does
        not plot is said in a note under the charts.
    params_best
        ``"min"``, ``"max"`` or None (default: by the field's name): see ``params_field``.
    lanes
        The vmap lanes drawn as lines (indices, negative from the end, or ``lane_labels``), at
        most `MAX_LANES`; by default all up to it, else a stride and the best, median, worst
        and a diverged lane by the goal (re-chosen as rows arrive: `..series.ROLES`) over every
        lane's band. Those lanes are named for their role at any lane count.
    all_lanes
        Past 16 lanes (`..series.LEAD_LANES`) a sweep is read by the band of every lane's
        quartiles and min–max, its median (a line over it) and the lanes named best, median,
        worst and diverged: the other lanes' lines are drawn faint. True draws them all at full
        strength; a panel toggle too ("all lanes", shown for such a sweep).
    continue_steps
        Draw each run from the step where the previous one ended (a loop resumed from its last
        carry, e.g. in chunks of ``max_steps``), so the step axis counts the whole optimisation;
        best with ``keep_runs=True``. Host rows (`history`) keep each run's own steps.
    store
        Also append every run this plot draws to the SQLite store at this path (or this
        `jaxhist_widget.Store`), chunk by chunk, so a killed kernel keeps them; read them back
        with `jaxhist_widget.load_runs`.
    tensorboard
        Also write every run this plot draws as TensorBoard event files under this directory
        (or through this `jaxhist_widget.TensorBoard`), chunk by chunk, for
        ``tensorboard --logdir``. Leaving ``with live:`` (or `run_async`) waits until the runs
        are in the files, as for ``store``.
    vectors
        How a leaf of more than one value is drawn, on one chart: ``"lines"`` (one per
        component), ``"band"`` (the median over quartile and min–max bands), ``"heatmap"`` (the
        median over a histogram per step), ``"auto"`` (default: lines up to 10 components, 4
        under vmap, else a band), or a dict per leaf (``{"w": "heatmap"}``).
    paths
        Charts of one series against another, live: ``["xy"]`` (a leaf of two components) or
        ``[("x[0]", "x[1]")]`` (x, then y); one line per lane, its start and latest point marked.
    charts
        ``"per_field"`` (default): one chart per plotted field, each with its own y range and
        titled with the field's name (a vector leaf's components share one chart), in a grid
        that reflows with the cell's width (charts of at least 320 px side by side, one column
        when narrower); every chart shows the same steps and has its own log toggle. A run
        plotting more than 12 metrics draws them on one chart.
        ``"shared"``: every field on one chart.
    smoothing
        Weight of a debiased exponential moving average drawn over every line, TensorBoard's
        smoothing (0: off, up to 0.999; a panel slider); the raw line stays, faint. Computed in
        the kernel from every row: exact however the line is decimated.
    log_x
        A logarithmic step axis on every chart (step 0, which it cannot place, is left out);
        a panel toggle too.
    last_steps
        Show only the last ``last_steps`` steps (None or 0: every step), redrawn from their
        rows at each update (exact however long the run), each y axis fitting them (a field).
    step_range
        Zoom: show steps ``(first, last)`` only (None: every step), drawn from their rows
        (every point of the range, however long the run), each y axis fitting them; it wins
        over ``last_steps`` until reset. A drag across a chart sets it, a double-click resets
        it, shift+drag pans it (`step_range` is synced with them).
    x_axis
        ``"step"``, ``"relative"`` (seconds since each run's first row) or ``"wall"`` (time of
        day); a panel select too. Times are a chunk's (`Run.times`); zoom and `last_steps` wait.
    ignore_outliers
        Fit each chart's y range to its drawn points but those far outside their bulk (more
        than twice the span of the central 96% beyond it: an early spike leaves the axis to the
        rest, a line's own ends stay), as TensorBoard's "ignore outliers", on by default as
        there; False fits every point. A panel toggle too.
    run_filter
        Draw and list only the runs whose names match this regular expression (searched in
        the name, case-insensitive; "": every run): the run list's filter field.

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
        o = checked(unknown, **{k: given[k] for k in OPTIONS if k not in ("store", "tensorboard")})
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
        steps = list(o.step_range) if o.step_range is not None else []
        self.panel.write(smoothing=o.smoothing, ignore_outliers=o.ignore_outliers, log_x=o.log_x)
        self.panel.write(all_lanes=o.all_lanes)
        self.panel.write(params_field=o.params_field or "", params_best=o.params_best or "")
        self.panel.write(
            last_steps=o.last_steps, step_range=steps, x_axis=o.x_axis, run_filter=o.run_filter
        )

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

    # Rows are filed in the chunk's call (see `Sink`), though on_rows never stops: a push
    # pauses the loop rather than compete with it for the cores, its measured cost spacing the
    # updates (pushes deferred, a long run in JupyterLab got a fraction of its updates on a
    # machine of few cores). Only new rows are reduced on the worker between pushes (`._ahead`).
    rows_can_wait = False

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
