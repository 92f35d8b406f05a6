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

import concurrent.futures
import csv
import math
import re
import threading
import time
import traceback
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import bqplot
import ipywidgets
import numpy as np

from .decimate import minmax_decimate
from .runs import Run
from .sink import Sink
from .widget import LivePanel

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
_FADED = 0.3  # opacity of kept previous runs
_OPTIONS = ("fields", "log_y", "keep_runs", "title", "max_points")


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


class LivePlot(Sink):
    """Plot every `jaxhist_widget.while_loop` run started while attached, live, and record it.

    Display it (last expression of a cell, or ``display(live)``), then run loops inside
    ``with live:`` (or ``live.run(fn, ...)``). For a working Stop button use an async cell,
    ``await live.run_async(fn, ...)``: a normal cell only sees clicks after it ends (the kernel
    queues them), while Ctrl-C / the notebook's ■ stops a ``with live:`` run at once.

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

        self._state_lock = threading.RLock()
        self._drawn: list[_Drawn] = []
        self._runs_seen = 0
        self._error_run: Run | None = None  # the run whose update failed (status stays "error")
        self._last_push = -math.inf
        self._push_cost = 0.0  # smoothed seconds per update, for the adaptive throttle
        self._last_rate_point: tuple[float, int] = (0.0, 0)
        self._timer: threading.Timer | None = None
        self._container: ipywidgets.VBox | None = None
        self._displayed = False

        self.panel = LivePanel(title=title or "", log_y=bool(log_y), keep_runs=bool(keep_runs))
        self._x = bqplot.LinearScale(min=0.0, max=1.0)
        self._y_lin = bqplot.LinearScale()
        self._y_log = bqplot.LogScale()
        self._x_axis = bqplot.Axis(scale=self._x, side="bottom", label="step", grid_lines="dashed")
        self._y_axis = self._new_y_axis()
        self.figure = bqplot.Figure(
            marks=[],
            axes=[self._x_axis, self._y_axis],
            animation_duration=0,  # transitions would lag behind 20 updates per second
            legend_location="top-right",
            fig_margin={"top": 20, "bottom": 40, "left": 60, "right": 20},
            layout=ipywidgets.Layout(width="100%", height="320px"),
        )
        self.figure.add_class("jhw-figure")
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
                [self.panel, self.figure], layout=ipywidgets.Layout(width="100%")
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
            dropped = []
            if not self.panel.keep_runs:
                dropped = [d for d in self._drawn if d.run.ended is not None]
                self._drawn = [d for d in self._drawn if d.run.ended is None]
            for d in self._drawn:
                self._fade(d)
            self._drawn.append(_Drawn(run, self._runs_seen, specs))
            self._error_run = run if error else None
            self._last_rate_point = (time.perf_counter(), 0)
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
                x_dec, y_dec = _finite_tail(*minmax_decimate(np.arange(len(y)), y, budget))
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
        for i, spec in enumerate(d.specs):
            for lane in range(d.lanes_drawn):
                d.series[i, lane] = _Growing()
            if batched:
                labels = [f"{spec.label} · lane {k}" for k in range(d.lanes_drawn)]
                # one field: tell lanes apart by color; several: color by field
                colors = [
                    _PALETTE[(k if len(d.specs) == 1 else i) % len(_PALETTE)]
                    for k in range(d.lanes_drawn)
                ]
            else:
                labels, colors = [spec.label], [_PALETTE[i % len(_PALETTE)]]
            d.marks.append(self._new_line(labels=labels, colors=colors))
        self.figure.marks = [m for dd in self._drawn for m in dd.marks]

    def _fade(self, d: _Drawn) -> None:
        if d.faded:
            return
        d.faded = True
        for mark in d.marks:
            with mark.hold_sync():
                mark.opacities = [_FADED] * max(1, d.lanes_drawn)
                mark.display_legend = False
                mark.labels = [f"{label} (run {d.number})" for label in mark.labels]

    def _update_scales(self) -> None:
        lo, hi, lo_pos, x_max = math.inf, -math.inf, math.inf, 1
        for d in self._drawn:
            x_max = max(x_max, d.max_step)
            for a, b, c in d.extent.values():
                lo, hi, lo_pos = min(lo, a), max(hi, b), min(lo_pos, c)
        self._x.max = float(x_max)
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

    def _update_panel(self, d: _Drawn, final: bool) -> None:
        run = d.run
        counts = run.counts
        step = max(counts) - 1 if counts else 0
        now = time.perf_counter()
        elapsed = run.elapsed
        if final:
            rate = step / elapsed if elapsed > 0 else 0.0
        else:
            t0, s0 = self._last_rate_point
            rate = (step - s0) / (now - t0) if now > t0 else 0.0
            self._last_rate_point = (now, step)
            rate = 0.5 * (self.panel.rate + rate) if self.panel.rate > 0 else rate
        latest = {}
        for i, spec in enumerate(d.specs):
            series = d.series.get((i, 0))
            if series is not None and series.size:
                latest[spec.label] = _json_float(series.view()[-1])
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
                        display_legend=m.display_legend,
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

    def _new_y_axis(self) -> bqplot.Axis:
        return bqplot.Axis(scale=self._y_scale, side="left", grid_lines="dashed", tick_format=".3g")

    def _new_line(self, **traits: Any) -> bqplot.Lines:
        traits.setdefault("x", np.zeros(0))
        traits.setdefault("y", np.zeros(0))
        traits.setdefault("display_legend", True)
        return bqplot.Lines(scales={"x": self._x, "y": self._y_scale}, stroke_width=1.5, **traits)

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
