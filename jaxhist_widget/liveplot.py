"""`LivePlot`: a sink that draws every streamed run live in Jupyter, and records it.

Layer 3 (widget). A `LivePlot` owns a `LivePanel` (status, progress, rate, latest values,
controls) and a bqplot `Figure` (one `Lines` mark per plotted field and run; one line per vmap
lane inside it). All drawn state lives in those widgets' traits, so a view opened late, shown
twice or after a page reload shows everything; without a frontend the widgets talk to nobody and
the plot still records.

Updates are throttled to at most `MAX_UPDATES_PER_SECOND` whatever the step rate, with a
trailing flush so a pause never hides the latest rows, and the final state is always sent when a
run ends. Each update sends at most ``max_points`` points per line: every series keeps its
rows as min/max buckets, reducing each row once as it arrives (`jaxhist_widget.series`), so an
update costs the same early and late in a run. The bqplot figure is `jaxhist_widget.figure`,
the exports `jaxhist_widget.export`. Any exception in this path is caught and shown in the
panel (status ``"error"``); it never reaches the run.
"""

from __future__ import annotations

import collections
import concurrent.futures
import math
import threading
import time
import traceback
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import bqplot
import ipywidgets
import numpy as np

from . import export
from .figure import LiveFigure, close_marks
from .runs import Run
from .series import LaneSeries, Spec, check_fields, resolve
from .sink import Sink
from .widget import LivePanel

T = TypeVar("T")

__all__ = ["MAX_UPDATES_PER_SECOND", "LivePlot"]

#: Cap on frontend updates per second (each update: the panel, every line of the current run,
#: and the scales, all at once).
MAX_UPDATES_PER_SECOND = 20.0
#: An update may take at most 1/PUSH_BUDGET of the time between updates (see `on_rows`).
PUSH_BUDGET = 10.0
#: Lanes drawn per field under vmap (all lanes are recorded; `history` has them all).
MAX_LANES = 64
#: Upper bound on ``max_points``.
MAX_POINTS_LIMIT = 4000
#: Points one mark (one field, all its lanes) sends per update: 4000 (int32 step, float64
#: value) pairs are 48 KB, so no widget message exceeds 64 KB (steps past 2**31 travel as
#: float64: 64,000 bytes). Under vmap the lanes share it (62 points each for 64 lanes).
MARK_POINTS = 4000

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


@dataclass
class _Drawn:
    """What this LivePlot draws for one run: its series per lane and its bqplot marks."""

    run: Run
    number: int
    specs: list[Spec]
    series: dict[tuple[int, int], LaneSeries] = field(default_factory=dict)  # (spec, lane)
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
        self._fields = check_fields(fields)
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
        self._ingest_s = 0.0  # of the current update: reducing new rows (not throttled)
        self._rate_points: collections.deque[tuple[float, int]] = collections.deque()
        self._flusher = _Flusher(self._flush_pending)  # the trailing flush
        self._container: ipywidgets.VBox | None = None
        self._displayed = False

        self.panel = LivePanel(title=title or "", log_y=bool(log_y), keep_runs=bool(keep_runs))
        self._fig = LiveFigure(log_y=bool(log_y))
        #: The bqplot figure (axes and one `Lines` mark per plotted series and run).
        self.figure = self._fig.figure
        self.panel.figure = self.figure  # the panel's view reads it out on hover (in the browser)
        #: The legend row under the figure (HTML).
        self.legend = self._fig.legend
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
        return export.to_pandas(self._run(run))

    def to_csv(self, path: str | Path, run: int = -1) -> Path:
        """Write run ``run`` as CSV (the columns of `to_pandas`; no pandas needed)."""
        return export.to_csv(self._run(run), path)

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
        return export.save_png(self.figure, self._displayed, path, scale)

    def clear(self) -> None:
        """Forget previous runs and their lines (a running run stays), and reset the panel."""
        with self._state_lock:
            keep = [d for d in self._drawn if d.run.ended is None]
            dropped = [d for d in self._drawn if d.run.ended is not None]
            self._drawn = keep
            self._fig.show(keep)
            close_marks(dropped)
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
                self._fig.x_scale.max = 1.0
                self._error_run = None
            self._fig.update_scales(self._drawn, self._lane_names)

    # -------------------------------------------------------------- sink hooks
    def on_start(self, run: Run) -> None:
        with self._state_lock:
            self._cancel_timer()
            self._runs_seen += 1
            try:
                specs = resolve(run, self._fields)
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
            for age, d in enumerate(reversed(self._drawn), start=1):
                self._fig.fade(d, age)  # the older a run, the fainter
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
                self._fig.show(self._drawn)
                close_marks(dropped)  # only once the figure no longer shows them
                self._fig.update_scales(self._drawn, self._lane_names)
            except Exception as e:
                self._show_error(e, run)

    # Rows are filed in the chunk's call, not on the backlog (see `Sink`), although on_rows
    # never stops: a push then pauses the loop rather than competing with it for the cores,
    # and each push's measured cost (which spaces the updates) stays its own. With the backlog
    # on 2 cores a 10^6-step run in JupyterLab got 10-30 updates instead of 43-53.
    _rows_can_wait = False

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
            elif not self._flusher.pending:
                # Trailing flush: if no further rows come soon (a slow step), these still show.
                self._flusher.schedule(wait)

    def on_end(self, run: Run) -> None:
        with self._state_lock:
            self._cancel_timer()
            self._push(final=True, ended=run)  # never throttled: the last rows always show

    # ------------------------------------------------------------------ updates
    def _flush_pending(self) -> None:
        with self._state_lock:
            self._push(final=False)

    def _cancel_timer(self) -> None:
        self._flusher.cancel()

    def _push(self, final: bool, ended: Run | None = None) -> None:
        """Send the current state of every run with new rows, and the panel (caller holds lock)."""
        start = time.perf_counter()
        self._ingest_s = 0.0
        try:
            self._push_now(final, ended)
        finally:
            self._last_push = time.perf_counter()
            # Reducing the new rows is not counted: it is the same work per row whenever it is
            # done, so spacing updates out would not save it (it would only make each update
            # reduce more rows and look costlier, spacing them further: ever fewer updates).
            cost = max(0.0, self._last_push - start - self._ingest_s)
            self._push_cost = cost if self._push_cost == 0 else 0.7 * self._push_cost + 0.3 * cost

    def _push_now(self, final: bool, ended: Run | None) -> None:
        current = self._drawn[-1] if self._drawn else None
        try:
            for d in self._drawn:
                if d.run.ended is None or d.run is ended:
                    self._draw(d)
            self._fig.update_scales(self._drawn, self._lane_names)
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
        d.max_step = max(counts) - 1
        start = time.perf_counter()
        for lane in range(lanes):
            # Every series of a lane has the same length: read only the rows that are new,
            # and reduce each of them once (the series keep min/max buckets, not the rows).
            rows = d.run.rows_since(lane, d.series[0, lane].size)
            if len(rows[0]):
                for i, spec in enumerate(d.specs):
                    d.series[i, lane].extend(spec.values(rows))
        self._ingest_s += time.perf_counter() - start
        for i, mark in enumerate(d.marks):
            xs, ys, lo, hi, lo_pos = [], [], math.inf, -math.inf, math.inf
            for lane in range(lanes):
                x, y, (a, b, c) = d.series[i, lane].points(d.x0)
                xs.append(x)
                ys.append(y)
                lo, hi, lo_pos = min(lo, a), max(hi, b), min(lo_pos, c)
            d.extent[i] = (lo, hi, lo_pos)
            self._fig.set_lines(mark, xs, ys, batched=d.run.lanes is not None)

    def _make_marks(self, d: _Drawn, lanes: int) -> None:
        d.lanes_drawn = min(lanes, MAX_LANES)
        # The lanes of a mark share one message: at most MARK_POINTS points, 48 KB.
        budget = min(self.max_points, MARK_POINTS // d.lanes_drawn)
        for i in range(len(d.specs)):
            for lane in range(d.lanes_drawn):
                d.series[i, lane] = LaneSeries(budget)
        d.marks = self._fig.new_marks(d, self._lane_names(d.run))
        self._fig.show(self._drawn)
        self._fig.update_legend(self._drawn, self._lane_names)

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
                series.last
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
        with self._state_lock:
            self._fig.set_log(bool(change["new"]), self._drawn)

    def _on_keep_runs(self, change: dict[str, Any]) -> None:
        if not change["new"]:
            with self._state_lock:
                keep, dropped = self._drawn[-1:], self._drawn[:-1]
                self._drawn = keep
                self._fig.show(keep)
                close_marks(dropped)
                self._fig.update_scales(self._drawn, self._lane_names)

    # ---------------------------------------------------------------- helpers
    def _run(self, index: int) -> Run:
        runs = self.runs
        if not runs:
            raise LookupError(
                "This LivePlot has received no run yet: call a jhw.while_loop inside "
                "`with live:` or via live.run(fn, ...)."
            )
        return runs[index]


class _Flusher:
    """Calls ``fn`` once, ``wait`` seconds after `schedule` (unless cancelled), on one thread
    that lives while there is work.

    Not a `threading.Timer` per update: that is a new thread each time, and in ipykernel each
    thread that sends a message opens its own zmq socket to the iopub thread (measured: new
    sockets and threads about 10 times a second during a run, a share of each update's cost).
    """

    IDLE_S = 5.0  # the thread ends after this long with nothing scheduled

    def __init__(self, fn: Callable[[], None]) -> None:
        self._fn = fn
        self._cond = threading.Condition()
        self._due: float | None = None
        self._thread: threading.Thread | None = None

    @property
    def pending(self) -> bool:
        """True while a call is scheduled and has not started."""
        return self._due is not None

    def schedule(self, wait: float) -> None:
        with self._cond:
            self._due = time.monotonic() + wait
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._work, name="jaxhist-liveplot", daemon=True
                )
                self._thread.start()
            self._cond.notify()

    def cancel(self) -> None:
        with self._cond:
            self._due = None
            self._cond.notify()

    def _work(self) -> None:
        idle_since = time.monotonic()
        while True:
            with self._cond:
                while True:
                    now = time.monotonic()
                    if self._due is not None and now >= self._due:
                        self._due = None
                        break
                    if self._due is None and now - idle_since >= self.IDLE_S:
                        self._thread = None
                        return
                    self._cond.wait(self._due - now if self._due is not None else self.IDLE_S)
            try:
                self._fn()
            except Exception as e:  # the flush shows its own errors; never lose the thread
                warnings.warn(f"LivePlot flush failed: {e!r}", RuntimeWarning, stacklevel=1)
            idle_since = time.monotonic()


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


def _json_float(v: Any) -> float | str:
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v
