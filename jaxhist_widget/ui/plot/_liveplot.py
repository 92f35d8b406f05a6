"""`LivePlot`: a sink that draws every streamed run live in Jupyter, and records it.

A `LivePlot` owns a `LivePanel` (status, progress, rate, latest values,
controls) and a `ChartGrid` (one bqplot figure per plotted metric, a `LiveFigure` each: one
`Lines` mark per field and run, one line per vmap lane inside it). All drawn state lives in
those widgets' traits, so a view opened late, shown twice or after a page reload shows
everything; without a frontend the widgets talk
to nobody and the plot still records.

This module is what a user holds: the options, display, data access, exports and runners. The
panel's controls and the view options are its base class, `._controls.PlotControls`;
turning runs into widget state (the hooks, the throttle, each update) is that one's base,
`._updates.LiveUpdates`.
"""

from __future__ import annotations

import concurrent.futures
import os
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import ipywidgets

from ..._host import Run, Store
from ..._host._report import report
from ..figure import ChartGrid, check_charts
from ..panel import LivePanel
from ..picture import save_svg
from ..reduce import check_weight
from ..series import (
    MAX_LANES,
    PlotChoice,
    check_fields,
    check_lane_labels,
    check_last_steps,
    check_paths,
    check_step_range,
    check_vectors,
)
from . import _export as export
from . import _outputs as outputs
from ._controls import PlotControls
from ._options import MAX_POINTS_LIMIT, check_flag, check_options
from ._updates import MAX_UPDATES_PER_SECOND, PUSH_BUDGET

__all__ = [
    "MAX_LANES",
    "MAX_POINTS_LIMIT",
    "MAX_UPDATES_PER_SECOND",
    "PUSH_BUDGET",
    "LivePlot",
]


class LivePlot(PlotControls):
    """Plot every `jaxhist_widget.while_loop` run started while attached, live, and record it.

    Display it (last expression of a cell, or ``display(live)``), then run loops inside
    ``with live:`` (or ``with live.named("adam"):``, ``live.run(fn, ..., name="adam")``, or
    ``await live.run_async(fn, ...)``). The Stop
    button ends the run after its current chunk and keeps the partial history in both: in a
    normal cell it interrupts the kernel, as the notebook's ■ does (the kernel handles no widget
    message before the cell ends, and the interrupt becomes a stop of this plot's run); in an
    async cell it sends a message, handled while the cell awaits.

    Parameters
    ----------
    fields
        What to plot, by leaf name of ``record(carry)``. Default: every leaf. Entries:
        ``"loss"`` (a leaf; a vector leaf is drawn as ``vectors`` says), ``"|x|"`` (its L2
        norm), ``"x[3]"`` (one flat component; ``"W[1,2]"`` of a matrix). A name a run's
        record does not have is said in a note under the charts (the run is not an error).
    log_y
        Start with a logarithmic y axis on every chart (the panel's "log y" toggle sets every
        chart; each chart also has its own "log" toggle in its top left corner).
    keep_runs
        Keep previous runs on the plot and in `runs` (there is a toggle), each in a colour of
        its own and listed in the panel (name, status, steps, time, latest values, a show/hide
        toggle). When False only the latest run is kept, which also bounds memory. A run's name
        is given where it starts (`named`, ``run(..., name=...)``, ``%%jaxhist --name``,
        `name`); unnamed, it is named after the call of `run` / `run_async`
        (``solve(3, lr=0.001)``), after the cell in ``%%jaxhist`` and auto mode (``cell 7``),
        else ``run N`` (its number on this plot).
    title
        Shown at the top of the panel.
    max_points
        Points sent per line per update (min/max decimated), 5..4000.
    lane_labels
        Names of the vmap lanes (e.g. ``[f"lr={lr}" for lr in lrs]``), used wherever the plot
        names a lane; one per lane (a run with another lane count warns and uses ``lane k``).
    continue_steps
        Draw each run from the step where the previous one ended (a loop resumed from its last
        carry, e.g. in chunks of ``max_steps``), so the step axis counts the whole optimisation;
        best with ``keep_runs=True``. Host rows (`history`) keep each run's own steps.
    store
        Also append every run this plot draws to the SQLite store at this path (or this
        `jaxhist_widget.Store`), chunk by chunk, so a killed kernel keeps them; read them back
        with `jaxhist_widget.load_runs`.
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
        smoothing (0: off, up to 0.999; the panel has a slider); the raw line stays, faint.
        It is computed in the kernel from every row, so it is exact however the line is
        decimated.
    log_x
        A logarithmic step axis on every chart (step 0, which it cannot place, is left out);
        a panel toggle too.
    last_steps
        Show only the last ``last_steps`` steps (None or 0: every step), redrawn from their
        rows at each update (exact however long the run), each y axis fitting them; a panel
        field too.
    step_range
        Zoom: show steps ``(first, last)`` only (None: every step), drawn from their rows
        (every point of the range, however long the run), each y axis fitting them; it wins
        over ``last_steps`` until reset. A drag across a chart sets it, a double-click resets
        it, shift+drag pans it (`step_range` is synced with them).
    ignore_outliers
        Fit each chart's y range to its drawn points without the highest and lowest 2% (a
        spike leaves the axis alone), as TensorBoard's "ignore outliers"; a panel toggle too.

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
        log_y: bool = False,
        keep_runs: bool = False,
        title: str | None = None,
        max_points: int = 2000,
        lane_labels: Sequence[str] | None = None,
        continue_steps: bool = False,
        store: str | os.PathLike[str] | Store | None = None,
        charts: str = "per_field",
        vectors: str | dict[str, str] = "auto",
        paths: str | Sequence[str | tuple[str, str]] | None = None,
        smoothing: float = 0.0,
        ignore_outliers: bool = False,
        log_x: bool = False,
        last_steps: int | None = None,
        step_range: tuple[int, int] | None = None,
        **unknown: Any,
    ) -> None:
        check_options(unknown, max_points, title, continue_steps)
        choice = PlotChoice(check_fields(fields), check_vectors(vectors), check_paths(paths))
        smoothing = check_weight(smoothing)
        check_flag("ignore_outliers", ignore_outliers)
        check_flag("log_x", log_x)
        last_steps = check_last_steps(last_steps)
        step_range = check_step_range(step_range)
        check_lane_labels(lane_labels)
        fig = ChartGrid(log_y=bool(log_y), charts=check_charts(charts))
        super().__init__(
            LivePanel(title=title or "", log_y=bool(log_y), keep_runs=bool(keep_runs)),
            fig,
            choice=choice,
            max_points=max_points,
            lane_labels=lane_labels,
            continue_steps=continue_steps,
        )
        # Handed this plot's hooks (not attached itself): it files exactly the runs drawn here,
        # whether the plot is attached or fed by a cell of %jaxhist auto mode.
        self._store = store if isinstance(store, Store) or store is None else Store(store)
        self._container: ipywidgets.VBox | None = None
        self._displayed = False
        self._outputs = outputs.Outputs()  # the display ids of the outputs showing this plot
        #: The charts' grid (one bqplot figure per chart; see `figures`).
        self.charts = fig.box
        # The panel's view reads the figures out on hover (in the browser).
        self._link_figures()
        fig.box.observe(lambda _: self._link_figures(), "children")
        #: The legend row under the charts (HTML).
        self.legend = fig.legend
        self._observe_controls()
        self.smoothing = smoothing
        self.ignore_outliers = ignore_outliers
        self.log_x = log_x
        self.last_steps = last_steps
        self.step_range = step_range

    # ------------------------------------------------------------------ display
    @property
    def widget(self) -> ipywidgets.VBox:
        """The displayed widget: the panel above the figure (made on first use)."""
        if self._container is None:
            self._container = ipywidgets.VBox(
                [self.panel, self.charts, self.legend], layout=ipywidgets.Layout(width="100%")
            )
            self._container.add_class("jhw-liveplot")
        return self._container

    @property
    def figures(self) -> list[Any]:
        """The bqplot figures shown, one per chart (axes and one `Lines` mark per plotted
        series and run), in grid order."""
        return list(self._fig.figures)

    @property
    def figure(self) -> Any:
        """The first chart's bqplot figure (the only one with ``charts="shared"``)."""
        return self._fig.figures[0]

    def _link_figures(self) -> None:
        figures = self._fig.figures
        self.panel.figures = figures
        self.panel.figure = figures[0] if figures else None
        self.panel.log_charts = self._fig.log_charts  # a new chart follows the log toggle

    # The output: the widget's view and a static picture of it, updated when a run ends
    # (`._display`).

    def _ipython_display_(self) -> None:
        self._outputs.show(self._repr_mimebundle_())

    def __repr__(self) -> str:
        # What a script or a debugger prints: the picture's one-line summary.
        return f"<LivePlot: {outputs.summary_line(self.panel)}>"

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        self._displayed = True
        bundle = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle.update(self._static_bundle())
        return bundle

    def _static_bundle(self) -> dict[str, str]:
        return outputs.picture_bundle(self._fig, self.panel, self._state_lock)

    def _update_static(self) -> None:
        """Replace the picture wherever the plot is shown. Never raises: a failed picture
        must not fail the run (this runs on the run's thread when it ends)."""
        if not self._displayed:
            return
        try:
            self._outputs.update(self._repr_mimebundle_)
        except Exception as e:
            warnings.warn(f"LivePlot: the static picture was not updated: {e!r}", stacklevel=2)

    def on_end(self, run: Run) -> None:
        super().on_end(run)
        self._update_static()

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
        return self._run(run).history()

    def to_pandas(self, run: int = -1) -> Any:
        """Run ``run`` as a `pandas.DataFrame`: a ``step`` column (and ``lane`` under vmap),
        then one column per scalar leaf and per component of other leaves (``x[0]``, ...)."""
        return export.to_pandas(self._run(run))

    def to_csv(self, path: str | Path, run: int = -1) -> Path:
        """Write run ``run`` as CSV (the columns of `to_pandas`; no pandas needed)."""
        return export.to_csv(self._run(run), path)

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
        svg = self._static_bundle()["image/svg+xml"]
        return export.save_picture_png(svg, self.figure, self._displayed, path, scale)

    def save_svg(self, path: str | Path) -> Path:
        """Write the plot's complete static picture to ``path`` as SVG, now, with no frontend.

        The picture the notebook output carries for readers without the widget (exported
        HTML, GitHub, nbviewer): title, status, steps, final values, the figure's lines, ticks
        and log/linear axis as the widget draws them, and the legend.
        """
        return save_svg(self._static_bundle()["image/svg+xml"], path)

    def add_run(self, run: Run) -> None:
        """Draw a run that has ended, e.g. one read back from a store (`jaxhist_widget.load_runs`),
        as if it had just ended on this plot: runs that come next are drawn beside it, it is
        listed by its name (a stored run's stored name) in a colour of its own like a kept run,
        and it is in `runs` (and `history`). Turns `keep_runs` on, so that it
        stays (a baseline next to today's run).

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

    # The store (``store=``) gets each hook first, so a chunk is on disk before it is drawn;
    # its failure is reported and never stops the drawing or the run.
    def _start(self, run: Run) -> None:
        self._to_store("_start", run)
        super()._start(run)

    def on_rows(self, run: Run, lanes: list[int]) -> None:
        self._to_store("on_rows", run, lanes)
        super().on_rows(run, lanes)

    def _end(self, run: Run) -> None:
        self._to_store("_end", run)
        super()._end(run)

    def _to_store(self, hook: str, run: Run, *args: Any) -> None:
        if self._store is None:
            return
        try:
            getattr(self._store, hook)(run, *args)
        except Exception as e:
            report(e, f"Store.{hook.lstrip('_')}", once=(id(self._store), run.id, hook))

    # ---------------------------------------------------------------- helpers
    def _run(self, index: int) -> Run:
        runs = self.runs
        if not runs:
            raise LookupError(
                "This LivePlot has received no run yet: call a jhw.while_loop inside "
                "`with live:` or via live.run(fn, ...)."
            )
        return runs[index]
