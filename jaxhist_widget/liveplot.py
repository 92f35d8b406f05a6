"""`LivePlot`: a sink that draws every streamed run live in Jupyter, and records it.

Layer 3 (widget). A `LivePlot` owns a `LivePanel` (status, progress, rate, latest values,
controls) and a bqplot `Figure` (one `Lines` mark per plotted field and run; one line per vmap
lane inside it). All drawn state lives in those widgets' traits, so a view opened late, shown
twice or after a page reload shows everything; without a frontend the widgets talk to nobody and
the plot still records.

Updates are throttled to at most `MAX_UPDATES_PER_SECOND` whatever the step rate, with a
trailing flush so a pause never hides the latest rows, and the final state is always sent when a
run ends. Each update sends at most ``max_points`` points per line (min/max decimation, see
`jaxhist_widget.decimate`). Any exception in this path is caught and shown in the panel (status
``"error"``); it never reaches the run.
"""

from __future__ import annotations

import collections
import concurrent.futures
import csv
import html
import itertools
import math
import re
import threading
import time
import traceback
import warnings
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import bqplot
import ipywidgets
import numpy as np

from .decimate import minmax_decimate
from .runs import Run
from .sink import Sink
from .widget import LivePanel

T = TypeVar("T")

__all__ = ["MAX_UPDATES_PER_SECOND", "LivePlot"]

#: Cap on frontend updates per second (each update: the panel, every line of the current run,
#: and the scales, all at once).
MAX_UPDATES_PER_SECOND = 20.0
#: An update may take at most 1/PUSH_BUDGET of the time between updates (see `on_rows`).
PUSH_BUDGET = 20.0
#: Components a single ``fields=`` entry may expand to (a vector leaf named bare).
MAX_COMPONENTS = 32
#: Lanes drawn per field under vmap (all lanes are recorded; `history` has them all).
MAX_LANES = 64
#: Upper bound on ``max_points``: 4000 float64 (x, y) pairs are 64 KB per line per update.
MAX_POINTS_LIMIT = 4000

_PALETTE = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
)  # fmt: skip
_FADED = 0.3  # opacity of the run before the latest one; older ones fade further
_FADED_MIN = 0.12
#: Lanes colored along this ramp (lane 0 first). Mid-luminance ends, so that every lane stays
#: visible on JupyterLab's light and dark backgrounds.
_LANE_RAMP = ("#3b528b", "#21918c", "#5ec962", "#d39b12")
#: Axis text follows JupyterLab's theme (bqplot's own dark style made the label orange).
_AXIS_TEXT = "var(--jp-ui-font-color1)"  # (bqplot refuses a var() with a fallback)
#: Under vmap color tells lanes apart, so fields are told apart by dash style.
_LINE_STYLES = ("solid", "dashed", "dotted", "dash_dotted")
#: Up to this many lanes the legend names each lane; above it shows the lane color ramp.
LEGEND_LANES = 8
#: Pixels per character of a tick label (bqplot's axis font; measured in Chromium) and the
#: space a y label keeps from the tick and the figure's left edge.
_TICK_CHAR_PX = 7.0
_Y_LABEL_PAD_PX = 14
_OPTIONS = (
    "fields",
    "log_y",
    "keep_runs",
    "title",
    "max_points",
    "lane_labels",
    "continue_steps",
)
#: The panel's rate is measured over about this many seconds of the latest updates: rows arrive
#: in chunks, so a rate per update (or per second) jumps between chunk sizes.
RATE_WINDOW_S = 5.0


@dataclass(frozen=True)
class _Spec:
    """One plotted series of a run: a scalar leaf, a vector leaf's norm, or one component."""

    label: str
    leaf: int
    kind: str  # "scalar" | "norm" | "component"
    index: int = 0  # flat component index for kind == "component"


class _Growing:
    """An append-only float64 buffer (amortised O(1) appends, O(1) views)."""

    def __init__(self) -> None:
        self._data = np.empty(256)
        self.size = 0

    def extend(self, values: np.ndarray) -> None:
        need = self.size + len(values)
        if need > len(self._data):
            grown = np.empty(max(need, 2 * len(self._data)))
            grown[: self.size] = self._data[: self.size]
            self._data = grown
        self._data[self.size : need] = values
        self.size = need

    def view(self) -> np.ndarray:
        return self._data[: self.size]


@dataclass
class _Drawn:
    """What this LivePlot draws for one run: its series per lane and its bqplot marks."""

    run: Run
    number: int
    specs: list[_Spec]
    series: dict[tuple[int, int], _Growing] = field(default_factory=dict)  # (spec, lane)
    marks: list[bqplot.Lines] = field(default_factory=list)  # one per spec
    extent: dict[int, tuple[float, float, float]] = field(
        default_factory=dict
    )  # spec -> lo, hi, lo>0
    lanes_drawn: int = 0
    max_step: int = 0
    faded: bool = False
    opacity: float = 1.0  # of its lines (previous runs are faded)
    x0: int = 0  # step axis offset: where the previous run ended, with continue_steps=True


class LivePlot(Sink):
    """Plot every `jaxhist_widget.while_loop` run started while attached, live, and record it.

    Display it (last expression of a cell, or ``display(live)``), then run loops inside
    ``with live:`` (or ``live.run(fn, ...)``, or ``await live.run_async(fn, ...)``). The Stop
    button ends the run after its current chunk and keeps the partial history in both: in a
    normal cell it interrupts the kernel, as the notebook's ■ does (the kernel handles no widget
    message before the cell ends, and the interrupt becomes a stop of this plot's run); in an
    async cell it sends a message, handled while the cell awaits.

    Parameters
    ----------
    fields
        What to plot, by leaf name of ``record(carry)``. Default: every scalar leaf, and the L2
        norm of every other leaf (labelled ``|x|``). Entries: ``"loss"`` (a scalar leaf; a
        vector leaf gives all its components, at most 32), ``"|x|"`` (norm), ``"x[3]"`` (one
        flat component).
    log_y
        Start with a logarithmic y axis (there is a toggle in the panel).
    keep_runs
        Keep previous runs on the plot, faded, and in `runs` (there is a toggle). When False
        only the latest run is kept, which also bounds memory.
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
        **unknown: Any,
    ) -> None:
        if unknown:
            raise TypeError(
                f"LivePlot() got unexpected keyword argument(s) {', '.join(map(repr, unknown))}; "
                f"allowed: {', '.join(_OPTIONS)}."
            )
        super().__init__()
        self._fields = _check_fields(fields)
        if not isinstance(max_points, int) or isinstance(max_points, bool):
            raise TypeError(f"max_points must be an int, got {max_points!r}.")
        if not 5 <= max_points <= MAX_POINTS_LIMIT:
            raise ValueError(
                f"max_points must be in 5..{MAX_POINTS_LIMIT} (points per line per update), "
                f"got {max_points}."
            )
        if title is not None and not isinstance(title, str):
            raise TypeError(f"title must be a str or None, got {title!r}.")
        self.max_points = max_points
        if not isinstance(continue_steps, bool):
            raise TypeError(f"continue_steps must be True or False, got {continue_steps!r}.")
        self.continue_steps = continue_steps
        #: Names of the vmap lanes (e.g. the swept values), or None for ``lane k``. Checked
        #: against the lane count when a run's lanes are known (see `_lane_names`).
        self._lane_labels = _check_lane_labels(lane_labels)
        self._labels_checked: Run | None = None  # the run whose lane count was checked
        self._labels_ok = True
        self._async_runs = 0  # run_async calls in progress (their Stop is a message)

        self._state_lock = threading.RLock()
        self._drawn: list[_Drawn] = []
        self._runs_seen = 0
        self._error_run: Run | None = None  # the run whose update failed (status stays "error")
        self._last_push = -math.inf
        self._push_cost = 0.0  # smoothed seconds per update, for the adaptive throttle
        self._rate_points: collections.deque[tuple[float, int]] = collections.deque()
        self._timer: threading.Timer | None = None
        self._container: ipywidgets.VBox | None = None
        self._displayed = False

        self.panel = LivePanel(title=title or "", log_y=bool(log_y), keep_runs=bool(keep_runs))
        self._x = bqplot.LinearScale(min=0.0, max=1.0)
        # Limits from the start: fixed tick values on a scale without a domain sit at NaN.
        self._y_lin = bqplot.LinearScale(min=0.0, max=1.0)
        self._y_log = bqplot.LogScale(min=0.1, max=10.0)
        # Tick values and formats are set here, not left to bqplot: its defaults mix formats on
        # one axis and put as many x ticks on a 330 px plot as on a 1400 px one.
        self._x_axis = bqplot.Axis(
            scale=self._x,
            side="bottom",
            label="step",
            label_color=_AXIS_TEXT,
            color=_AXIS_TEXT,
            grid_lines="dashed",
            tick_values=np.array([0.0, 1.0]),
            tick_format=",.0f",
        )
        self._y_axis = self._new_y_axis()
        self.figure = bqplot.Figure(
            marks=[],
            axes=[self._x_axis, self._y_axis],
            animation_duration=0,  # transitions would lag behind 20 updates per second
            # The right margin holds half of the last x label ("100,000").
            fig_margin={"top": 16, "bottom": 40, "left": 48, "right": 32},
            layout=ipywidgets.Layout(width="100%", height="320px"),
        )
        self.figure.add_class("jhw-figure")
        # The legend is a row of HTML under the figure, never inside the plot: it cannot cover
        # a line or be covered by bqplot's toolbar, and it wraps instead of running off.
        self.legend = ipywidgets.HTML(layout=ipywidgets.Layout(width="auto"))
        self.legend.add_class("jhw-legend")
        # Hovering a line names it: field, lane (label) and run.
        self._tooltip = bqplot.Tooltip(fields=["name"], show_labels=False)
        self.panel.observe(self._on_stop_click, "stop_clicks")
        self.panel.observe(self._on_clear_click, "clear_clicks")
        self.panel.observe(self._on_log_y, "log_y")
        self.panel.observe(self._on_keep_runs, "keep_runs")

    # ------------------------------------------------------------------ display
    @property
    def widget(self) -> ipywidgets.VBox:
        """The displayed widget: the panel above the figure (made on first use)."""
        if self._container is None:
            self._container = ipywidgets.VBox(
                [self.panel, self.figure, self.legend], layout=ipywidgets.Layout(width="100%")
            )
            self._container.add_class("jhw-liveplot")
        return self._container

    def _ipython_display_(self) -> None:
        from IPython.display import display

        self._displayed = True
        display(self.widget)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        self._displayed = True
        return self.widget._repr_mimebundle_(**kwargs)

    # ------------------------------------------------------------------ options
    @property
    def log_y(self) -> bool:
        """Whether the y axis is logarithmic (synced with the panel's toggle)."""
        return self.panel.log_y

    @log_y.setter
    def log_y(self, value: bool) -> None:
        self.panel.log_y = bool(value)

    @property
    def keep_runs(self) -> bool:
        """Whether previous runs stay on the plot and in `runs` (synced with the toggle)."""
        return self.panel.keep_runs

    @keep_runs.setter
    def keep_runs(self, value: bool) -> None:
        self.panel.keep_runs = bool(value)

    @property
    def _y_scale(self) -> bqplot.Scale:
        return self._y_log if self.panel.log_y else self._y_lin

    # --------------------------------------------------------------------- data
    @property
    def runs(self) -> list[Run]:
        """The runs this plot holds, oldest first: the latest, plus previous ones if kept."""
        with self._state_lock:
            return [d.run for d in self._drawn]

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
        try:
            import pandas as pd
        except ImportError:
            raise ImportError(
                "LivePlot.to_pandas needs pandas (pip install pandas); "
                "live.history() and live.to_csv(path) work without it."
            ) from None
        return pd.DataFrame(self._table(self._run(run)))

    def to_csv(self, path: str | Path, run: int = -1) -> Path:
        """Write run ``run`` as CSV (the columns of `to_pandas`; no pandas needed)."""
        table = self._table(self._run(run))
        path = Path(path)
        with path.open("w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(list(table))
            writer.writerows(zip(*(col.tolist() for col in table.values()), strict=True))
        return path

    def save_png(self, path: str | Path, scale: float | None = None) -> concurrent.futures.Future:
        """Ask the frontend showing this plot to render it to PNG and write it to ``path``.

        The browser renders the figure, so this needs a live Jupyter frontend that displays
        the plot. The file is written when the frontend answers: after the current cell ends,
        or while an async cell awaits (``await asyncio.wrap_future(live.save_png(p))``).

        Returns
        -------
        concurrent.futures.Future
            Resolves to the written `Path`.

        Raises
        ------
        RuntimeError
            Without a frontend (plain Python, or a plot never displayed).
        """
        if not self._displayed or not _has_kernel_comm(self.figure):
            raise RuntimeError(
                "LivePlot.save_png needs a Jupyter frontend showing this plot (the browser "
                "renders the PNG): display(live) in a notebook first. Without a frontend, export "
                "the data with live.to_csv(path) / live.history() and plot it with matplotlib."
            )
        path = Path(path)
        future: concurrent.futures.Future = concurrent.futures.Future()

        def write(data: Any) -> None:
            try:
                path.write_bytes(bytes(data))
                future.set_result(path)
            except Exception as e:  # an unwritable path: report through the future
                future.set_exception(e)

        self.figure.get_png_data(write, scale=scale)
        return future

    def clear(self) -> None:
        """Forget previous runs and their lines (a running run stays), and reset the panel."""
        with self._state_lock:
            keep = [d for d in self._drawn if d.run.ended is None]
            dropped = [d for d in self._drawn if d.run.ended is not None]
            self._drawn = keep
            self.figure.marks = [m for d in keep for m in d.marks]
            _close_marks(dropped)
            if not keep:
                with self.panel.hold_sync():
                    self.panel.status = "idle"
                    self.panel.step = 0
                    self.panel.rate = 0.0
                    self.panel.elapsed = 0.0
                    self.panel.latest = {}
                    self.panel.latest_range = {}
                    self.panel.lane_statuses = {}
                    self.panel.lane_names = {}
                    self.panel.fields = []
                    self.panel.error = ""
                    self.panel.lanes = 0
                self._x.max = 1.0
                self._error_run = None
            self._update_scales()

    # -------------------------------------------------------------- sink hooks
    def on_start(self, run: Run) -> None:
        with self._state_lock:
            self._cancel_timer()
            self._runs_seen += 1
            try:
                specs = _resolve(run, self._fields)
                error = ""
            except ValueError as e:  # a bad fields= entry: record anyway, say why nothing plots
                specs, error = [], str(e)
            # A resumed run's row 0 is the previous run's last row: continue from its step
            # (known before the previous run's lines may be dropped just below).
            prev = self._drawn[-1] if self._drawn and self.continue_steps else None
            x0 = prev.x0 + prev.max_step if prev is not None else 0
            dropped = []
            if not self.panel.keep_runs:
                dropped = [d for d in self._drawn if d.run.ended is not None]
                self._drawn = [d for d in self._drawn if d.run.ended is None]
            for d in self._drawn:
                self._fade(d)
            self._drawn.append(_Drawn(run, self._runs_seen, specs, x0=x0))
            self._error_run = run if error else None
            self._rate_points = collections.deque([(time.perf_counter(), 0)])
            try:
                with self.panel.hold_sync():
                    self.panel.status = "error" if error else "running"
                    self.panel.error = error
                    self.panel.run_number = self._runs_seen
                    self.panel.max_steps = run.layout.max_steps
                    self.panel.step = 0
                    self.panel.rate = 0.0
                    self.panel.elapsed = 0.0
                    self.panel.lanes = 0
                    self.panel.fields = [s.label for s in specs]
                    self.panel.latest = {}
                    self.panel.latest_range = {}
                    self.panel.lane_statuses = {}
                    self.panel.lane_names = {}
                self.figure.marks = [m for d in self._drawn for m in d.marks]
                _close_marks(dropped)  # only once the figure no longer shows them
                self._update_scales()
            except Exception as e:
                self._show_error(e, run)

    def on_rows(self, run: Run, lanes: list[int]) -> None:
        with self._state_lock:
            now = time.perf_counter()
            # At most MAX_UPDATES_PER_SECOND, and slower when an update itself is costly (long
            # runs, many lanes): drawing never takes more than ~1/PUSH_BUDGET of the loop's time.
            interval = max(1.0 / MAX_UPDATES_PER_SECOND, PUSH_BUDGET * self._push_cost)
            wait = self._last_push + interval - now
            if wait <= 0:
                self._cancel_timer()
                self._push(final=False)
            elif self._timer is None:
                # Trailing flush: if no further rows come soon (a slow step), these still show.
                self._timer = threading.Timer(wait, self._flush_pending)
                self._timer.daemon = True
                self._timer.start()

    def on_end(self, run: Run) -> None:
        with self._state_lock:
            self._cancel_timer()
            self._push(final=True, ended=run)  # never throttled: the last rows always show

    # ------------------------------------------------------------------ updates
    def _flush_pending(self) -> None:
        with self._state_lock:
            self._timer = None
            self._push(final=False)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _push(self, final: bool, ended: Run | None = None) -> None:
        """Send the current state of every run with new rows, and the panel (caller holds lock)."""
        start = time.perf_counter()
        try:
            self._push_now(final, ended)
        finally:
            self._last_push = time.perf_counter()
            cost = self._last_push - start
            self._push_cost = cost if self._push_cost == 0 else 0.7 * self._push_cost + 0.3 * cost

    def _push_now(self, final: bool, ended: Run | None) -> None:
        current = self._drawn[-1] if self._drawn else None
        try:
            for d in self._drawn:
                if d.run.ended is None or d.run is ended:
                    self._draw(d)
            self._update_scales()
            if current is not None:
                self._update_panel(current, final=ended is current.run)
        except Exception as e:
            self._show_error(e, current.run if current else None)

    def _draw(self, d: _Drawn) -> None:
        counts = d.run.counts
        if not counts or not d.specs:
            return
        if not d.marks:
            self._make_marks(d, len(counts))
        lanes = d.lanes_drawn
        # Many lanes share a budget, so one update stays small (≈ 2 * max_points per field).
        budget = min(self.max_points, max(64, 2 * self.max_points // lanes))
        d.max_step = max(counts) - 1
        for lane in range(lanes):
            # Every series of a lane has the same length: read only the rows that are new.
            rows = d.run.rows_since(lane, d.series[0, lane].size)
            for i, spec in enumerate(d.specs):
                _extend(d.series[i, lane], spec, rows)
        for i, mark in enumerate(d.marks):
            xs, ys, lo, hi, lo_pos = [], [], math.inf, -math.inf, math.inf
            for lane in range(lanes):
                y = d.series[i, lane].view()
                x_dec, y_dec = _finite_tail(
                    *minmax_decimate(np.arange(d.x0, d.x0 + len(y)), y, budget)
                )
                xs.append(x_dec)
                ys.append(y_dec)
                good = y_dec[np.isfinite(y_dec)]  # decimation kept every extreme
                if good.size:
                    lo, hi = min(lo, good.min()), max(hi, good.max())
                    pos = good[good > 0]
                    if pos.size:
                        lo_pos = min(lo_pos, pos.min())
            d.extent[i] = (lo, hi, lo_pos)
            with mark.hold_sync():  # x and y in one message, so a view never sees them mismatched
                if d.run.lanes is None:
                    mark.x, mark.y = xs[0], ys[0]
                else:
                    mark.x, mark.y = _pad(xs), _pad(ys)

    def _make_marks(self, d: _Drawn, lanes: int) -> None:
        d.lanes_drawn = min(lanes, MAX_LANES)
        batched = d.run.lanes is not None
        names = self._lane_names(d.run)  # lane_labels=, or "lane k"
        field_colors = _field_colors([spec.label for spec in d.specs])
        lane_colors = _lane_colors(d.lanes_drawn)
        for i, spec in enumerate(d.specs):
            for lane in range(d.lanes_drawn):
                d.series[i, lane] = _Growing()
            # The labels are what the hover read-out shows: field, lane, run.
            if batched:
                # Color tells lanes apart (a ramp, lane 0 first), dash style tells fields apart.
                labels = [
                    f"{spec.label} · {names[k]} · run {d.number}" for k in range(d.lanes_drawn)
                ]
                colors, style = lane_colors, _LINE_STYLES[i % len(_LINE_STYLES)]
            else:
                labels = [f"{spec.label} · run {d.number}"]
                colors, style = [field_colors[i]], "solid"
            d.marks.append(self._new_line(labels=labels, colors=colors, line_style=style))
        self.figure.marks = [m for dd in self._drawn for m in dd.marks]
        self._update_legend()

    def _fade(self, d: _Drawn) -> None:
        # Called for every kept run when a new one starts: the older a run, the fainter.
        age = len(self._drawn) - self._drawn.index(d)
        d.faded = True
        d.opacity = max(_FADED_MIN, _FADED * 0.7 ** (age - 1))
        for mark in d.marks:
            mark.opacities = [d.opacity] * max(1, d.lanes_drawn)

    def _update_legend(self) -> None:
        """Rebuild the legend row: one entry per field (and per kept run), plus the lanes."""
        items = []
        several = sum(1 for d in self._drawn if d.marks) > 1
        for d in self._drawn:
            suffix = f" (run {d.number})" if several else ""
            for spec, mark in zip(d.specs, d.marks, strict=False):
                color = "currentColor" if d.run.lanes is not None else mark.colors[0]
                items.append(
                    f'<span class="jhw-legend-item" data-run="{d.number}" '
                    f'style="white-space:nowrap">'
                    f"{_swatch(color, mark.line_style, d.opacity)} "
                    f"{html.escape(spec.label + suffix)}</span>"
                )
        latest = next((d for d in reversed(self._drawn) if d.marks), None)
        if latest is not None and latest.run.lanes is not None:
            names = self._lane_names(latest.run)
            n = latest.lanes_drawn
            colors = _lane_colors(n)
            if n <= LEGEND_LANES:
                items += [
                    f'<span class="jhw-legend-lane" style="white-space:nowrap">'
                    f"{_swatch(colors[k], 'solid', 1.0)} {html.escape(names[k])}"
                    f"</span>"
                    for k in range(n)
                ]
            else:
                more = f" (first {n} of {latest.run.lanes})" if latest.run.lanes > n else ""
                ramp = ", ".join(_LANE_RAMP)
                items.append(
                    f'<span class="jhw-legend-lanes" style="white-space:nowrap">'
                    f"{html.escape(names[0])} "
                    f'<span style="display:inline-block;width:72px;height:8px;'
                    f'vertical-align:middle;background:linear-gradient(to right, {ramp})">'
                    f"</span> {html.escape(names[n - 1])}{more}</span>"
                )
        self.legend.value = (
            '<div class="jhw-legend-items" style="display:flex;flex-wrap:wrap;'
            "gap:2px 14px;align-items:center;padding:0 8px 4px 8px;"
            "font-size:var(--jp-ui-font-size1, 12px);"
            'color:var(--jp-ui-font-color1, inherit)">' + "".join(items) + "</div>"
            if items
            else ""
        )

    def _update_ticks(self) -> None:
        """Round tick values and one compact format per axis; the left margin fits the labels."""
        x_ticks = _linear_ticks(float(self._x.min), float(self._x.max), 4, integer=True)
        scale = self._y_scale
        lo, hi = float(scale.min), float(scale.max)
        log = scale is self._y_log
        y_ticks = _log_ticks(lo, hi) if log else _linear_ticks(lo, hi, 6)
        y_format, width = _tick_format(y_ticks, log=log)
        for axis, ticks, fmt in (
            (self._x_axis, x_ticks, _tick_format(x_ticks)[0]),
            (self._y_axis, y_ticks, y_format),
        ):
            if list(axis.tick_values) != ticks or axis.tick_format != fmt:
                with axis.hold_sync():
                    axis.tick_values = np.array(ticks, float)
                    axis.tick_format = fmt
        left = max(40, math.ceil(width * _TICK_CHAR_PX) + _Y_LABEL_PAD_PX)
        if self.figure.fig_margin.get("left") != left:
            self.figure.fig_margin = {**self.figure.fig_margin, "left": left}

    def _update_scales(self) -> None:
        lo, hi, lo_pos = math.inf, -math.inf, math.inf
        x_min = min((d.x0 for d in self._drawn), default=0)  # > 0: continued, earlier dropped
        x_max = x_min + 1
        for d in self._drawn:
            x_max = max(x_max, d.x0 + d.max_step)
            for a, b, c in d.extent.values():
                lo, hi, lo_pos = min(lo, a), max(hi, b), min(lo_pos, c)
        with self._x.hold_sync():
            self._x.min, self._x.max = float(x_min), float(x_max)
        # Explicit limits from finite values only: one inf or NaN must not flatten the plot.
        with self._y_lin.hold_sync():
            if math.isfinite(lo):
                pad = 0.05 * (hi - lo) or 0.05 * abs(lo) or 1.0
                self._y_lin.min, self._y_lin.max = float(lo - pad), float(hi + pad)
            else:
                self._y_lin.min, self._y_lin.max = 0.0, 1.0
        with self._y_log.hold_sync():
            if math.isfinite(lo_pos):
                top = max(hi, lo_pos)
                self._y_log.min, self._y_log.max = float(lo_pos / 1.25), float(top * 1.25)
            else:
                self._y_log.min, self._y_log.max = 0.1, 10.0
        self._update_ticks()
        self._update_legend()  # runs were added, faded or dropped: every caller needs both

    def _update_panel(self, d: _Drawn, final: bool) -> None:
        run = d.run
        counts = run.counts
        step = max(counts) - 1 if counts else 0
        now = time.perf_counter()
        elapsed = run.elapsed
        if final:
            rate = step / elapsed if elapsed > 0 and step > 0 else 0.0
        else:
            # Steps over the last RATE_WINDOW_S seconds (since the start, early on).
            points = self._rate_points
            points.append((now, step))
            while len(points) > 2 and now - points[1][0] >= RATE_WINDOW_S:
                points.popleft()
            t0, s0 = points[0]
            rate = (step - s0) / (now - t0) if now > t0 and step > s0 else 0.0
        latest, latest_range = {}, {}
        lanes = run.lanes or 0
        for i, spec in enumerate(d.specs):
            last = [
                series.view()[-1]
                for lane in range(max(1, lanes))
                if (series := d.series.get((i, lane))) is not None and series.size
            ]
            if not last:
                continue
            if lanes:  # under vmap: the median over lanes, and their range
                values = np.asarray(last, dtype=np.float64)
                with warnings.catch_warnings():  # all-NaN lanes: NaN is the right answer
                    warnings.simplefilter("ignore", RuntimeWarning)
                    mid, lo, hi = np.nanmedian(values), np.nanmin(values), np.nanmax(values)
                latest[spec.label] = _json_float(mid)
                latest_range[spec.label] = [_json_float(lo), _json_float(hi)]
            else:
                latest[spec.label] = _json_float(last[0])
        lane_statuses: dict[str, int] = {}
        lane_names: dict[str, list[str]] = {}
        if lanes and run.ended is not None:
            names = self._lane_names(run)
            for lane, status in enumerate(run.statuses):
                lane_statuses[status] = lane_statuses.get(status, 0) + 1
                lane_names.setdefault(status, []).append(names[lane])
            # Only the few lanes that ended differently are worth naming.
            lane_names = {k: v for k, v in lane_names.items() if len(v) <= 2}
        with self.panel.hold_sync():
            if run.status == "failed":  # the computation raised: keep its rows, say so
                self.panel.status = "error"
                self.panel.error = "The run failed: the computation raised an exception."
            elif self._error_run is not run:
                self.panel.status = run.status if run.ended is not None else "running"
            self.panel.step = step
            self.panel.max_steps = run.layout.max_steps
            self.panel.lanes = run.lanes or 0
            self.panel.elapsed = float(elapsed)
            self.panel.rate = float(rate)
            self.panel.latest = latest
            self.panel.latest_range = latest_range
            self.panel.lane_statuses = lane_statuses
            self.panel.lane_names = lane_names

    def _lane_names(self, run: Run) -> list[str]:
        """Names of ``run``'s lanes: the ``lane_labels`` given, or ``lane k`` when none were
        given or their number does not match the run's lanes (warned once per run)."""
        lanes = run.lanes or 0
        labels = self._lane_labels
        if not lanes:  # an unbatched run names no lane; the labels wait for a vmapped one
            return []
        if labels is not None and self._labels_checked is not run:
            self._labels_checked = run
            self._labels_ok = len(labels) == lanes
            if not self._labels_ok:
                warnings.warn(
                    f"LivePlot(lane_labels=...) has {len(labels)} labels but the run has "
                    f"{lanes} vmap lanes; lanes are named 'lane k'. Pass one label per lane.",
                    UserWarning,
                    stacklevel=2,
                )
        if labels is not None and self._labels_ok:
            return list(labels)
        return [f"lane {k}" for k in range(lanes)]

    def _show_error(self, error: BaseException, run: Run | None) -> None:
        # The update path must never raise into the run: show the error instead.
        self._error_run = run
        frames = traceback.format_exception(type(error), error, error.__traceback__, limit=-3)
        text = f"{type(error).__name__}: {error}\n\n{''.join(frames)}"
        try:
            with self.panel.hold_sync():
                self.panel.status = "error"
                self.panel.error = text
        except Exception:  # even the panel failed; fall back to a warning
            warnings.warn(f"LivePlot update failed: {text}", RuntimeWarning, stacklevel=2)

    # ---------------------------------------------------------------- runners
    # The view sends a Stop click as a widget message, which a kernel handles only while a cell
    # awaits (run_async); a normal cell (`with live:`, `run`) holds the kernel until it ends.
    # There the view asks for a kernel interrupt instead, which `interrupts` turns into a stop
    # of the armed sink's run: `stop_mode` tells the view which applies.
    def __enter__(self) -> LivePlot:
        super().__enter__()
        self._sync_stop_mode()
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            super().__exit__(*exc)
        finally:
            self._sync_stop_mode()

    async def run_async(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        self._async_runs += 1
        self._sync_stop_mode()
        try:
            return await super().run_async(fn, *args, **kwargs)
        finally:
            self._async_runs -= 1
            self._sync_stop_mode()

    run_async.__doc__ = Sink.run_async.__doc__

    def _sync_stop_mode(self) -> None:
        # `_armed` (Sink): one flag per open `with` block, True where interrupts were armed
        # (main thread only; elsewhere an interrupt would not reach the run).
        interrupt = any(self._armed) and self._async_runs == 0
        self.panel.stop_mode = "interrupt" if interrupt else "message"

    # --------------------------------------------------------------- controls
    def _on_stop_click(self, change: dict[str, Any]) -> None:
        # A click that arrives after the run ended must not stop the next run.
        if self.running:
            self.stop()

    def _on_clear_click(self, change: dict[str, Any]) -> None:
        self.clear()

    def _on_log_y(self, change: dict[str, Any]) -> None:
        # bqplot views do not follow a mark's or an axis's scale being swapped (measured in
        # JupyterLab 4.6: the Python side changed, the drawing stayed linear), so the marks
        # and the y axis are rebuilt on the other scale; their data is at most max_points.
        with self._state_lock:
            old = [self._y_axis]
            for d in self._drawn:
                old += d.marks
                d.marks = [
                    self._new_line(
                        labels=list(m.labels),
                        colors=list(m.colors),
                        opacities=list(m.opacities),
                        line_style=m.line_style,
                        x=m.x,
                        y=m.y,
                    )
                    for m in d.marks
                ]
            self._y_axis = self._new_y_axis()
            with self.figure.hold_sync():
                self.figure.marks = [m for d in self._drawn for m in d.marks]
                self.figure.axes = [self._x_axis, self._y_axis]
            for w in old:
                w.close()
            self._update_ticks()

    def _new_y_axis(self) -> bqplot.Axis:
        return bqplot.Axis(
            scale=self._y_scale,
            side="left",
            color=_AXIS_TEXT,
            grid_lines="dashed",
            # Never a tick at 0 on a log scale (a NaN position); `_update_ticks` sets the real ones.
            tick_values=np.array([0.1, 1.0, 10.0] if self.panel.log_y else [0.0, 0.5, 1.0]),
            tick_format=",~g",
        )

    def _new_line(self, **traits: Any) -> bqplot.Lines:
        traits.setdefault("x", np.zeros(0))
        traits.setdefault("y", np.zeros(0))
        return bqplot.Lines(
            scales={"x": self._x, "y": self._y_scale},
            stroke_width=1.5,
            display_legend=False,  # the legend is the HTML row under the figure
            tooltip=self._tooltip,
            **traits,
        )

    def _on_keep_runs(self, change: dict[str, Any]) -> None:
        if not change["new"]:
            with self._state_lock:
                keep, dropped = self._drawn[-1:], self._drawn[:-1]
                self._drawn = keep
                self.figure.marks = [m for d in keep for m in d.marks]
                _close_marks(dropped)
                self._update_scales()

    # ---------------------------------------------------------------- helpers
    def _run(self, index: int) -> Run:
        runs = self.runs
        if not runs:
            raise LookupError(
                "This LivePlot has received no run yet: call a jhw.while_loop inside "
                "`with live:` or via live.run(fn, ...)."
            )
        return runs[index]

    @staticmethod
    def _table(run: Run) -> dict[str, np.ndarray]:
        lanes = [None] if run.lanes is None else list(range(run.lanes))
        parts: list[dict[str, np.ndarray]] = []
        for lane in lanes:
            rows = run.lane_rows(lane or 0)
            n = len(rows[0]) if rows else 0
            cols: dict[str, np.ndarray] = {"step": np.arange(n)}
            if lane is not None:
                cols["lane"] = np.full(n, lane)
            for name, shape, leaf in zip(run.layout.names, run.layout.shapes, rows, strict=True):
                if name in ("step", "lane"):  # never overwrite the index columns
                    name = f"{name}_value"
                if shape == ():
                    cols[name] = leaf
                    continue
                flat = leaf.reshape(n, -1)
                for j in range(flat.shape[1]):
                    idx = ",".join(map(str, np.unravel_index(j, shape)))
                    cols[f"{name}[{idx}]"] = flat[:, j]
            parts.append(cols)
        return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


# ------------------------------------------------------------------------ functions
def _check_lane_labels(labels: Any) -> tuple[str, ...] | None:
    if labels is None:
        return None
    if isinstance(labels, (str, bytes)) or not isinstance(labels, Sequence):
        raise TypeError(
            "lane_labels must be a sequence of str, one per vmap lane (e.g. "
            f"[f'lr={{lr}}' for lr in lrs]), got {labels!r}."
        )
    bad = [x for x in labels if not isinstance(x, str)]
    if bad:
        raise TypeError(
            f"lane_labels must hold str only, got {bad[0]!r}; e.g. [str(v) for v in values]."
        )
    return tuple(labels)


def _check_fields(fields: Any) -> tuple[str, ...] | None:
    if fields is None:
        return None
    if isinstance(fields, str):
        return (fields,)
    try:
        items = tuple(fields)
    except TypeError:
        raise TypeError(f"fields must be None, a str or a list of str, got {fields!r}.") from None
    if not items or not all(isinstance(f, str) for f in items):
        raise TypeError(f"fields must be None, a str or a non-empty list of str, got {fields!r}.")
    return items


_NORM = re.compile(r"^\|(.+)\|$")
_COMPONENT = re.compile(r"^(.+)\[([\d,\s]+)\]$")


def _resolve(run: Run, fields: tuple[str, ...] | None) -> list[_Spec]:
    """The series to plot for ``run``'s layout; ValueError naming the choices for a bad entry."""
    names, shapes = run.layout.names, run.layout.shapes
    where = {n: i for i, n in enumerate(names)}
    if fields is None:
        return [
            _Spec(n, i, "scalar") if s == () else _Spec(f"|{n}|", i, "norm")
            for i, (n, s) in enumerate(zip(names, shapes, strict=True))
        ]
    specs = []
    for f in fields:
        if f in where:
            i, shape = where[f], shapes[where[f]]
            size = math.prod(shape)
            if shape == ():
                specs.append(_Spec(f, i, "scalar"))
            elif size <= MAX_COMPONENTS:
                for j in range(size):
                    idx = ",".join(map(str, np.unravel_index(j, shape)))
                    specs.append(_Spec(f"{f}[{idx}]", i, "component", j))
            else:
                raise ValueError(
                    f"field {f!r} has {size} components (shape {shape}), more than "
                    f"{MAX_COMPONENTS} lines; plot its norm '|{f}|' or pick components like "
                    f"'{f}[0]'."
                )
            continue
        m_norm, m_comp = _NORM.match(f), _COMPONENT.match(f)
        if m_norm and m_norm.group(1) in where:
            specs.append(_Spec(f, where[m_norm.group(1)], "norm"))
            continue
        if m_comp and m_comp.group(1) in where:
            i, shape = where[m_comp.group(1)], shapes[where[m_comp.group(1)]]
            try:
                idx = tuple(int(k) for k in m_comp.group(2).split(","))
                j = int(np.ravel_multi_index(idx, shape)) if len(idx) > 1 else idx[0]
                if not 0 <= j < math.prod(shape) or shape == ():
                    raise ValueError
            except ValueError:
                raise ValueError(
                    f"field {f!r}: no such component of {m_comp.group(1)!r} (shape {shape})."
                ) from None
            specs.append(_Spec(f, i, "component", j))
            continue
        choices = ", ".join(repr(n) for n in names)
        raise ValueError(
            f"LivePlot(fields=...): no field {f!r} in this run's record; its leaves are "
            f"{choices} (also '|name|' for a norm, 'name[i]' for a component)."
        )
    return specs


def _extend(series: _Growing, spec: _Spec, rows: list[np.ndarray]) -> None:
    """Append ``spec``'s values of the new ``rows`` to ``series`` (each row is converted once)."""
    new = rows[spec.leaf]
    if not len(new):
        return
    flat = new.reshape(len(new), -1).astype(np.float64)
    if spec.kind == "scalar":
        series.extend(flat[:, 0])
    elif spec.kind == "component":
        series.extend(flat[:, spec.index])
    else:
        series.extend(np.linalg.norm(flat, axis=1))


def _finite_tail(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Drop trailing non-finite points: bqplot puts a line's label at its last point, and a NaN
    there is an invalid SVG transform (a console error per update). Gaps inside stay."""
    finite = np.flatnonzero(np.isfinite(y))
    end = finite[-1] + 1 if finite.size else 0
    return x[:end], y[:end]


def _pad(arrays: list[np.ndarray]) -> np.ndarray:
    """Stack lines of unequal length into one 2-d array, each padded with its own last point.

    Not NaN: bqplot places each line's label at its last point, and NaN there is an invalid
    SVG transform. Repeating the last point draws nothing extra.
    """
    out = np.full((len(arrays), max(len(a) for a in arrays)), np.nan)
    for k, a in enumerate(arrays):
        out[k, : len(a)] = a
        if len(a):
            out[k, len(a) :] = a[-1]
    return out


def _json_float(v: Any) -> float | str:
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def _close_marks(dropped: list[_Drawn]) -> None:
    """Close the marks of runs no longer drawn (the figure must not list them any more).

    A widget lives, with its data, until closed (the kernel's widget registry holds it), so
    unclosed marks of replaced runs would grow by one widget per field and run.
    """
    for d in dropped:
        for mark in d.marks:
            mark.close()
        d.marks = []


def _has_kernel_comm(widget: ipywidgets.Widget) -> bool:
    """True when the widget talks to a kernel's comm (a frontend may be listening)."""
    comm = getattr(widget, "comm", None)
    return comm is not None and type(comm).__name__ != "DummyComm"


# ------------------------------------------------------------------------ figure helpers
def _field_colors(labels: Sequence[str]) -> list[str]:
    """A color per field that depends on its name, not on its position: ``grad_norm`` gets the
    same color in every plot. A name whose color is already taken in this plot gets the next
    free one (deterministic, so the same set of names always gets the same colors)."""
    taken: set[int] = set()
    out = []
    for label in labels:
        k = zlib.crc32(label.encode()) % len(_PALETTE)
        if len(taken) < len(_PALETTE):
            while k in taken:
                k = (k + 1) % len(_PALETTE)
        taken.add(k)
        out.append(_PALETTE[k])
    return out


def _lane_colors(n: int) -> list[str]:
    """``n`` colors along the sequential lane ramp (lane 0 first)."""
    ramp = np.array([[int(c[i : i + 2], 16) for i in (1, 3, 5)] for c in _LANE_RAMP], float)
    out = []
    for k in range(n):
        t = (k / (n - 1) if n > 1 else 0.0) * (len(ramp) - 1)
        j = min(int(t), len(ramp) - 2)
        rgb = ramp[j] + (t - j) * (ramp[j + 1] - ramp[j])
        out.append("#" + "".join(f"{round(v):02x}" for v in rgb))
    return out


def _nice_step(span: float, intervals: int) -> float:
    raw = span / intervals
    mag = 10.0 ** math.floor(math.log10(raw))
    return next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw * (1 - 1e-9))


def _linear_ticks(lo: float, hi: float, intervals: int, integer: bool = False) -> list[float]:
    """Round ticks (1, 2 or 5 times a power of ten apart) inside [lo, hi], at most
    ``intervals + 1`` of them."""
    span = hi - lo
    if not (math.isfinite(span) and span > 0):
        return [float(lo)] if math.isfinite(lo) else []
    step = _nice_step(span, intervals)
    if integer:
        step = max(1.0, step)
    first = math.ceil(lo / step - 1e-9)
    last = math.floor(hi / step + 1e-9)
    digits = max(0, 2 - math.floor(math.log10(step)))
    return [round(k * step, digits) for k in range(first, last + 1)]


def _log_ticks(lo: float, hi: float, most: int = 6) -> list[float]:
    """Powers of ten inside [lo, hi] (every k-th when there are more than ``most``); 1-2-5
    multiples when fewer than two powers fit; round linear ticks when even those do not."""
    if not (0 < lo < hi and math.isfinite(hi)):
        return []
    a, b = math.ceil(math.log10(lo) - 1e-9), math.floor(math.log10(hi) + 1e-9)
    if b - a + 1 >= 2:
        every = math.ceil((b - a + 1) / most)
        return [10.0**e for e in range(a, b + 1) if e % every == 0]
    ticks = sorted(
        m * 10.0**e for e in range(a - 1, b + 2) for m in (1, 2, 5) if lo <= m * 10.0**e <= hi
    )
    return ticks if len(ticks) >= 2 else _linear_ticks(lo, hi, 4)


def _tick_format(ticks: Sequence[float], log: bool = False) -> tuple[str, int]:
    """One d3-format string for every label of an axis, and the widest label in characters.

    Fixed point with thousands separators (``20,000``, ``0.25``: as many decimals as the tick
    spacing needs, no trailing zeros) while the labels stay short; otherwise scientific
    (``1e-6``, ``2.5e+7``) for all of them, never a mix.
    """
    ticks = [float(t) for t in ticks]
    if not ticks:
        return ",~g", 1
    big = max(abs(t) for t in ticks)
    if log:
        if all(1e-3 <= t < 1e5 for t in ticks):
            return ",~g", max(len(f"{t:,g}") for t in ticks)
        mantissa = [t / 10.0 ** math.floor(math.log10(t)) for t in ticks]
        p = 0 if all(abs(m - round(m)) < 1e-9 for m in mantissa) else 1
        return f".{p}e", max(len(_exp_label(t, p)) for t in ticks)
    step = min((b - a for a, b in itertools.pairwise(ticks)), default=big or 1.0)
    decimals = max(0, -math.floor(math.log10(step) + 1e-9)) if step > 0 else 0
    if 1e-3 <= big < 1e6 or big == 0:
        fixed = [f"{t:,.{decimals}f}" for t in ticks]
        return f",.{decimals}~f", max(map(len, fixed))
    p = min(6, max(0, math.floor(math.log10(big)) - math.floor(math.log10(step)))) if step else 2
    return f".{p}~e", max(len(_exp_label(t, p)) for t in ticks)


def _exp_label(t: float, p: int) -> str:
    """The longest label d3-format ``.{p}e`` writes for ``t`` (``1e-6``: no zero padding)."""
    mantissa, exponent = f"{t:.{p}e}".split("e")
    return f"{mantissa}e{int(exponent):+d}"


_DASHES = {"solid": "", "dashed": "6,3", "dotted": "2,2", "dash_dotted": "6,2,2,2"}


def _swatch(color: str, line_style: str, opacity: float) -> str:
    """A short line in the legend, drawn like the plotted line."""
    dash = _DASHES.get(line_style, "")
    dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
    return (
        f'<svg width="22" height="10" style="vertical-align:middle" aria-hidden="true">'
        f'<line x1="1" y1="5" x2="21" y2="5" stroke="{color}" stroke-width="2.5" '
        f'stroke-opacity="{opacity:.2f}"{dash_attr}/></svg>'
    )
