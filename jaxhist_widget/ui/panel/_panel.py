"""`LivePanel`: the status/progress/controls strip of a `LivePlot`, as an anywidget.

This class holds only synced traits: every piece of state a view shows lives here (not in
JavaScript), so a view opened late, displayed twice or after a page reload shows the same thing.
What the run-state traits hold is `._state.panel_state`; `LivePlot` sets them.

Threads: a plot writes its panel from the host runtime's callback threads and the main thread
alike, and ipywidgets' ``hold_sync`` is not thread-safe (a trait set by one thread while another
holds the sync joins the other's pending keys, which it may be sending or clearing: the change
is lost for the view, or the send fails). So every write holds one lock, the panel's owner's
(a `LivePlot`'s update lock): its own writes (`write`, in one message), the controls its view
sends, and any other thread's, through the sync machinery itself.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anywidget
import ipywidgets
import traitlets

from ..._host.runtime import STATUSES as RUN_STATUSES
from ..look import TABLE_PATH, X_AXES
from ..reduce import MAX_WEIGHT
from ._esm import bundle
from ._subshell import CellStatus, serve_controls_at_once

__all__ = ["CSS_PATH", "ESM_PATH", "STATUSES", "STOP_MODES", "TABLES", "LivePanel"]


def _front_end_path(name: str) -> Path:
    # A wheel ships the front end inside the package (pyproject force-includes the files of js/
    # there); an editable/source checkout uses the repository's js/ folder.
    package = Path(__file__).resolve().parents[2]
    installed = package / "static" / name
    return installed if installed.exists() else package.parent / "js" / name


#: The entry of the panel's JavaScript modules (`._esm.bundle` joins them into the one module
#: anywidget loads).
ESM_PATH = _front_end_path("panel.js")
#: The panel's styles (anywidget puts them into the page once, for every view).
CSS_PATH = _front_end_path("panel.css")
#: The data tables the front end imports as JSON (inlined into the bundle): the look table.
TABLES = {TABLE_PATH.name: TABLE_PATH}

#: Values of `LivePanel.status`: the run's (`Run.status`, spelled in `_wire.STATUSES`; the view
#: says "finished" for ``converged``, which only means ``cond`` became False, and "error" for
#: ``failed``, with the error's text) and the panel's own: ``idle`` (no run), ``compiling``
#: (attached, waiting for the loop to start), ``interrupted`` (a stored run whose process
#: died) and ``error``.
STATUSES = (
    "idle",
    "compiling",
    *(s for s in RUN_STATUSES if s != "failed"),
    "interrupted",
    "error",
)

#: Values of `LivePanel.stop_mode`: how a Stop click reaches the kernel.
STOP_MODES = ("message", "interrupt")


class LivePanel(anywidget.AnyWidget):
    """Synced state of the panel. Python writes the run state; the view sends the controls.

    Parameters
    ----------
    lock
        Held by every write of the panel's traits, whatever thread makes it: its owner's lock
        (a `LivePlot` passes its update lock), a lock of its own when None.
    **traits
        Initial trait values.

    Examples
    --------
    >>> panel = LivePanel(status="running", step=5, max_steps=10)
    >>> panel.write(step=6, max_steps=12)
    >>> panel.get_state(["status", "step", "max_steps"])
    {'status': 'running', 'step': 6, 'max_steps': 12}
    """

    _esm = bundle(ESM_PATH, TABLES)
    _css = CSS_PATH

    # ---- written by Python (the run)
    title = traitlets.Unicode("").tag(sync=True)
    #: One of `STATUSES`.
    status = traitlets.Enum(STATUSES, default_value="idle").tag(sync=True)
    #: Steps done in the current run (rows - 1; the largest over vmap lanes).
    step = traitlets.Int(0).tag(sync=True)
    max_steps = traitlets.Int(0).tag(sync=True)
    #: Steps per second: the rate over the last few seconds while running, the run's average
    #: once it ended (0 when no step was taken).
    rate = traitlets.Float(0.0).tag(sync=True)
    #: Seconds since the run started (to its end once it ended).
    elapsed = traitlets.Float(0.0).tag(sync=True)
    #: Number of vmap lanes; 0 for an unbatched run.
    lanes = traitlets.Int(0).tag(sync=True)
    #: Runs this plot has received (1 for the first).
    run_number = traitlets.Int(0).tag(sync=True)
    #: Names of the plotted series, in legend order.
    fields = traitlets.List(traitlets.Unicode()).tag(sync=True)
    #: Latest value per series (the median over lanes under vmap). A float, or the string
    #: "nan" / "inf" / "-inf": JSON has no non-finite numbers.
    latest = traitlets.Dict().tag(sync=True)
    #: Under vmap: per series, ``[min, max]`` of the latest values over lanes; else empty.
    latest_range = traitlets.Dict().tag(sync=True)
    #: Under vmap, once the run ended: number of lanes per end status, e.g.
    #: ``{"converged": 5, "max_steps": 1}``; else empty.
    lane_statuses = traitlets.Dict().tag(sync=True)
    #: The plotted fields whose latest value (of any lane) is NaN or infinite. The view then
    #: says "diverged" (a warning: the computation itself succeeded) over the run's status.
    diverged = traitlets.List(traitlets.Unicode()).tag(sync=True)
    #: Under vmap, once the run ended: the labels of the lanes of each status (``lane k`` or
    #: the LivePlot's ``lane_labels``), for naming the few lanes that ended differently.
    lane_names = traitlets.Dict().tag(sync=True)
    #: How a Stop click reaches the kernel (one of `STOP_MODES`). "interrupt" while a normal
    #: cell runs the loop (``with live:``, `LivePlot.run`): the kernel handles no widget message
    #: before the cell ends, so the view asks for a kernel interrupt, as the notebook's stop
    #: button does, and the interrupt bridge turns it into a stop. "message" otherwise
    #: (``await live.run_async(...)``: the event loop is free and handles the click).
    stop_mode = traitlets.Enum(STOP_MODES, default_value="message").tag(sync=True)
    #: The runs drawn, oldest first, one dict each (`._state.run_entry`): ``number``, ``name``,
    #: ``color``, ``status``, ``diverged``, ``step``, ``max_steps``, ``elapsed``, ``lanes``,
    #: ``latest``, ``hidden``, ``filtered`` (the run filter leaves it out) and ``drawn`` (its
    #: drawn vmap lanes: ``[lane, name, hidden]``). The view lists them once there are two.
    runs = traitlets.List(traitlets.Dict()).tag(sync=True)
    #: Error text shown under the status (status is "error" while it applies).
    error = traitlets.Unicode("").tag(sync=True)
    #: The LivePlot's bqplot figure, or None. The view reads the points its lines already hold
    #: to show the step and value under the pointer (the hover read-out): in the browser, so it
    #: needs no kernel round trip and works while a cell keeps the kernel busy.
    figure = traitlets.Instance(ipywidgets.DOMWidget, allow_none=True).tag(
        sync=True, **ipywidgets.widget_serialization
    )
    #: Every chart's bqplot figure (one per plotted metric; `figure` is the first): the hover
    #: read-out reads the chart under the pointer.
    figures = traitlets.List(traitlets.Instance(ipywidgets.DOMWidget)).tag(
        sync=True, **ipywidgets.widget_serialization
    )

    # ---- the controls: set here from the view's messages (`_on_view_message`); Python
    # observes them
    log_y = traitlets.Bool(False).tag(sync=True)
    #: Whether the step axis is logarithmic (step 0 is then not drawn).
    log_x = traitlets.Bool(False).tag(sync=True)
    #: What the x axis counts: ``"step"``, ``"relative"`` (seconds since each run's first row)
    #: or ``"wall"`` (the time of day its rows reached the host).
    x_axis = traitlets.Unicode("step").tag(sync=True)
    #: On a time axis, per drawn run (by the name its lines end with): ``[times, steps]``, a
    #: few hundred pairs at most, for the hover read-out to tell the step at a time; ``{}`` on
    #: the step axis.
    x_clocks = traitlets.Dict().tag(sync=True)
    keep_runs = traitlets.Bool(False).tag(sync=True)
    #: Titles of the charts whose y axis is logarithmic (each chart's own log toggle; the
    #: ``log_y`` toggle puts all of them on one scale).
    log_charts = traitlets.List(traitlets.Unicode()).tag(sync=True)
    #: The charts on a linear y axis whose values span decades, by title: how many (the
    #: chart's tools offer it a log axis; written by Python).
    log_hints = traitlets.Dict().tag(sync=True)
    #: Per hyperparameter chart (by title): the run it shows (``run``) and the name of the lane
    #: of each of its points, in order (``names``): the view's hover names and lights it.
    param_lanes = traitlets.Dict().tag(sync=True)
    #: The plot's goal: the plotted field every "best" ranks ("": a loss-like one), and
    #: whether a lane's best value of it is its lowest ("min") or its highest ("max"; "": by
    #: the field's name).
    params_field = traitlets.Unicode("").tag(sync=True)
    params_best = traitlets.Unicode("").tag(sync=True)
    #: Numbers of the runs hidden from the run list (their lines are not drawn).
    hidden_runs = traitlets.List(traitlets.Int()).tag(sync=True)
    #: The run filter: a regular expression (case-insensitive) the shown runs' names match
    #: (""; or invalid, which the view marks: every run). What was typed, valid or not.
    run_filter = traitlets.Unicode("").tag(sync=True)
    #: The vmap lanes hidden one by one: ``[[run number, lane], ...]``.
    hidden_lanes = traitlets.List(traitlets.List(traitlets.Int())).tag(sync=True)
    #: Weight of the debiased EMA drawn over each line (0: off; see `..reduce.Ema`).
    smoothing = traitlets.Float(0.0).tag(sync=True)
    #: Steps shown: the last ``last_steps`` only (0: every step; see `..series.StepWindow`).
    last_steps = traitlets.Int(0).tag(sync=True)
    #: The zoom: ``[first, last]`` steps every chart shows (over ``last_steps``), or ``[]``.
    step_range = traitlets.List(traitlets.Int()).tag(sync=True)
    #: Whether each chart's y range leaves out the extreme few percent of its points.
    ignore_outliers = traitlets.Bool(False).tag(sync=True)
    #: Whether a sweep past 16 lanes draws every lane at full strength (else the lanes drawn for
    #: no role are faint: the band, its median and the lanes named lead).
    all_lanes = traitlets.Bool(False).tag(sync=True)
    #: One more on each Stop click (a counter, so two clicks are two changes).
    stop_clicks = traitlets.Int(0).tag(sync=True)
    #: One more on each Clear click.
    clear_clicks = traitlets.Int(0).tag(sync=True)
    #: Width in pixels of the LivePlot's figure as a view lays it out (0: not known yet). The
    #: figure chooses its number of x ticks from it (more on a wide plot, fewer on a narrow one).
    plot_width = traitlets.Int(0).tag(sync=True)

    def __init__(self, *, lock: threading.RLock | None = None, **traits: Any) -> None:
        # Before the traits: from here on every write holds it.
        self.__dict__["_write_lock"] = lock if lock is not None else threading.RLock()
        self.__dict__["_requests"] = {}
        self.__dict__["_cell_status"] = CellStatus()
        super().__init__(**traits)
        self.on_msg(self._on_view_message)
        # Controls act while a normal cell runs (where the kernel has subshells): see _subshell.
        serve_controls_at_once(self.comm)
        self.observe(lambda change: serve_controls_at_once(change["new"]), "comm")

    @property
    def lock(self) -> threading.RLock:
        """The lock every write of the panel's traits holds."""
        return self.__dict__["_write_lock"]

    def serve(self, name: str, handler: Callable[[Any], None]) -> None:
        """Answer the control ``name`` with ``handler(value)`` rather than with trait changes:
        a request for something (a chart's download), which its handler answers with a message
        of its own (`send`). It is called outside the lock: an answer that takes long (a CSV of
        a million rows) must not hold the plot's updates back."""
        self.__dict__["_requests"][name] = handler

    def write(self, **traits: Any) -> None:
        """Set ``traits``, under the lock, in one message to the views."""
        with self.hold_sync():
            for name, value in traits.items():
                setattr(self, name, value)

    # ipywidgets' sync machinery, each part under the lock: a trait's change (which sends it, or
    # joins a held sync's pending keys), a held sync (which sends and clears those keys), and a
    # state update from a view (its trait changes, notified when it ends).
    @contextlib.contextmanager
    def hold_sync(self) -> Iterator[None]:
        with self.lock, super().hold_sync():
            yield

    def notify_change(self, change: Any) -> None:
        lock = self.__dict__.get("_write_lock")
        if lock is None:  # (traits set while the widget is made, before the lock exists)
            super().notify_change(change)
            return
        with lock:
            super().notify_change(change)

    def set_state(self, sync_data: Any) -> None:
        with self.lock:
            super().set_state(sync_data)

    def cell_running(self, running: bool) -> None:
        """Whether the cell that calls this runs the plot now (True: from inside the cell):
        the kernel's status stays "busy" for it while its view's messages are served
        (`._subshell.CellStatus`)."""
        status = self.__dict__["_cell_status"]
        status.started(self.comm) if running else status.ended()

    def _on_view_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        """Apply a control the view sent (``{"jhw_control": name, "value": ...}``).

        The view sends its controls as messages rather than writing these traits: a trait write
        passes ipywidgets' throttle, which holds a model's next write until the kernel said
        "idle" for the previous one, and ipykernel 7 says nothing for a widget message handled
        while an async cell awaits; one write there held every later click back (see
        ``js/panel/kernel.js``). Other messages (anywidget's own) are left alone.
        """
        if not isinstance(content, dict) or "jhw_control" not in content:
            return
        try:
            handler = self.__dict__["_requests"].get(content["jhw_control"])
            if handler is not None:
                handler(content.get("value"))
                return
            with self.lock:  # a change made from the traits' values (a click count, a list)
                changes = self._control(content["jhw_control"], content.get("value"))
                if changes:
                    self.write(**changes)
        finally:
            # once handled: the kernel's "idle" for this message follows its handler's return,
            # which a redraw under the plot's lock can delay by seconds on a loaded machine
            self.__dict__["_cell_status"].served()

    def _control(self, name: Any, value: Any) -> dict[str, Any]:
        """The trait changes a control asks for; none for a control or value it cannot be."""
        if name == "stop":
            return {"stop_clicks": self.stop_clicks + 1}
        if name == "clear":
            return {"clear_clicks": self.clear_clicks + 1}
        flags = ("log_y", "log_x", "keep_runs", "ignore_outliers", "all_lanes")
        if name in flags and isinstance(value, bool):
            return {name: value}
        if name == "x_axis" and value in X_AXES:
            return {"x_axis": value}
        if name == "last_steps" and isinstance(value, int) and not isinstance(value, bool):
            return {"last_steps": max(0, value)}
        if name == "step_range" and (value is None or _is_step_range(value)):
            return {"step_range": list(value or [])}
        if name == "smoothing" and _is_weight(value):
            return {"smoothing": float(value)}
        if name == "run_hidden" and _is_run_hidden(value):
            number, hidden = value
            numbers = [n for n in self.hidden_runs if n != number]
            return {"hidden_runs": [*numbers, number] if hidden else numbers}
        if name == "run_filter" and isinstance(value, str):  # (an invalid one is not applied)
            return {"run_filter": value}
        if name == "runs_hidden" and isinstance(value, bool):
            # show all / hide all: the runs the filter shows (those the list shows)
            listed = [r["number"] for r in self.runs if not r.get("filtered")]
            numbers = [n for n in self.hidden_runs if n not in listed]
            return {"hidden_runs": [*numbers, *listed] if value else numbers}
        if name == "lane_hidden" and _is_lane_hidden(value):
            number, lane, hidden = value
            pairs = [p for p in self.hidden_lanes if list(p) != [number, lane]]
            return {"hidden_lanes": [*pairs, [number, lane]] if hidden else pairs}
        if name == "chart_log" and _is_chart_log(value):
            key, log = value
            keys = [k for k in self.log_charts if k != key]
            return {"log_charts": [*keys, key] if log else keys}
        if name == "params_field" and isinstance(value, str):
            return {"params_field": value}
        if name == "params_best" and value in ("min", "max"):
            return {"params_best": value}
        if name == "plot_width" and isinstance(value, int) and value >= 0:
            return {"plot_width": value}
        return {}


def _is_weight(value: Any) -> bool:
    """Whether ``value`` is a ``smoothing`` control's value: a number in [0, `MAX_WEIGHT`]."""
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    return number and 0.0 <= value <= MAX_WEIGHT


def _is_step_range(value: Any) -> bool:
    """Whether ``value`` is a ``step_range`` control's value: ``[first, last]`` steps,
    ``0 <= first < last`` (None resets the zoom)."""
    ints = isinstance(value, list) and len(value) == 2
    ints = ints and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    return ints and 0 <= value[0] < value[1]


def _is_run_hidden(value: Any) -> bool:
    """Whether ``value`` is a ``run_hidden`` control's value: ``[run number, hidden]``."""
    return (
        isinstance(value, list)
        and len(value) == 2
        and isinstance(value[0], int)
        and not isinstance(value[0], bool)
        and isinstance(value[1], bool)
    )


def _is_lane_hidden(value: Any) -> bool:
    """Whether ``value`` is a ``lane_hidden`` control's value: ``[run number, lane, hidden]``."""
    return (
        isinstance(value, list)
        and len(value) == 3
        and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value[:2])
        and isinstance(value[2], bool)
    )


def _is_chart_log(value: Any) -> bool:
    """Whether ``value`` is a ``chart_log`` control's value: ``[chart title, log on]``."""
    return (
        isinstance(value, list)
        and len(value) == 2
        and isinstance(value[0], str)
        and isinstance(value[1], bool)
    )
