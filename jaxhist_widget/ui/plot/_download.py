"""A chart's downloads, asked for by the page (each chart's "download" menu,
js/charts/chart_download.js): the chart's data as CSV, or the plot's static picture as SVG (the
page rasterizes that one into the PNG), sent back in one widget message that carries the file as
a binary buffer.

The CSV holds every row of every run and lane drawn on the chart, read from the runs' storage
(the same rows as `LivePlot.to_pandas`), not the lines' decimated points. The page asks with a
``download`` control, so a download is served mid-run like any control (kernel subshells, see
`..panel`); it is made on a thread of its own, outside the plot's lock, so that a CSV of a
million rows holds neither the run's updates nor the other controls back.
"""

from __future__ import annotations

import concurrent.futures
import csv
import io
import itertools
import math
import re
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..._host import Run
from ..figure import ChartGrid
from ..look import shown_text
from ..panel import LivePanel
from ..series import ParamGrid, Spec, component_label
from ._state import PlotState

__all__ = ["FORMATS", "MAX_DOWNLOAD_BYTES", "Downloads", "TooLarge", "chart_csv", "file_stem"]

#: What a download may ask for, and the file's media type.
FORMATS = {"csv": "text/csv", "svg": "image/svg+xml"}
#: The largest file sent to the page (one widget message, held whole in the kernel, the server
#: and the page): past it the page is told to write the file from Python (`LivePlot.to_csv`),
#: which has no such bound. A million rows of one float32 field take about 52 MB.
MAX_DOWNLOAD_BYTES = 100_000_000
#: Rows formatted between two looks at the file's size.
_ROWS_PER_CHECK = 65_536
_UNSAFE = re.compile(r"[^\w.+=-]+")

#: One column of a run's rows: its name and how to read it from one lane's rows.
Column = tuple[str, Callable[[list[np.ndarray]], np.ndarray]]


class TooLarge(ValueError):
    """The file would be larger than `MAX_DOWNLOAD_BYTES`."""


def file_stem(*parts: str) -> str:
    """A file name of ``parts`` (the empty ones left out) joined by ``-``, with every run of
    characters a file system or a browser may refuse made ``_``.

    >>> file_stem("my run: lr=0.1", "|x|"), file_stem("", "loss"), file_stem("", "")
    ('my_run_lr=0.1-x', 'loss', 'jaxhist')
    """
    safe = [_UNSAFE.sub("_", p).strip("._") for p in parts]
    return "-".join(p for p in safe if p)[:120] or "jaxhist"


def spec_columns(spec: Spec, run: Run) -> list[Column]:
    """The columns of ``run``'s rows that series ``spec`` is drawn from: a scalar, a component
    or a norm its own; a vector's median every component of the leaf (``x[0]``, ... as
    `LivePlot.to_pandas` names them: the median is the drawing's, the rows are the data); a
    path its x and y series."""
    if spec.xy is not None:
        return [*spec_columns(spec.xy[0], run), *spec_columns(spec.xy[1], run)]
    leaf = spec.leaf

    def component(j: int) -> Callable[[list[np.ndarray]], np.ndarray]:
        # The leaf's own dtype (an int stays an int), as the run's table has it.
        return lambda rows: rows[leaf].reshape(len(rows[leaf]), -1)[:, j]

    if spec.kind == "scalar":
        return [(spec.label, component(0))]
    if spec.kind == "component":
        return [(spec.label, component(spec.index))]
    if spec.kind == "median":
        name, shape = shown_text(run.layout.names[leaf]), run.layout.shapes[leaf]
        return [(component_label(name, shape, j), component(j)) for j in range(math.prod(shape))]
    return [(spec.label, spec.values)]


def chart_csv(
    runs: Sequence[tuple[str, Run, Sequence[Spec]]], limit: int = MAX_DOWNLOAD_BYTES
) -> bytes:
    """The CSV (UTF-8) of ``runs`` (each: its name, the run, its series on one chart): the
    columns ``run``, ``lane`` (when a run is vmapped), ``step`` (the run's own, as in
    `LivePlot.to_pandas`), ``wall_time`` (seconds since the epoch the row reached the host),
    then each series' columns (`spec_columns`); a row per step of every lane of every run, the
    cells of a column a run does not have left empty.

    Raises
    ------
    TooLarge
        Once the file grows past ``limit`` bytes (checked every few thousand rows, so that a
        huge run is not formatted whole first).
    """
    columns = [dict(_unique(spec_columns(s, r) for s in specs)) for _, r, specs in runs]
    names = list(dict.fromkeys(n for cols in columns for n in cols))
    batched = any(run.lanes is not None for _, run, _ in runs)
    out = io.StringIO()
    writer = csv.writer(out)  # the dialect of `LivePlot.to_csv`
    writer.writerow(["run", *(["lane"] if batched else []), "step", "wall_time", *names])
    for (name, run, _), cols in zip(runs, columns, strict=True):
        for lane in range(len(run.counts)):
            rows = run.lane_rows(lane)
            n = len(rows[0]) if rows else 0
            values = [cols[c](rows).tolist() if c in cols else None for c in names]
            steps = np.arange(n)
            times = run.row_times(steps).tolist()
            lane_cell = [lane if run.lanes is not None else ""] if batched else []
            for lo in range(0, n, _ROWS_PER_CHECK):
                hi = min(n, lo + _ROWS_PER_CHECK)
                cells = [itertools.repeat(name), *(itertools.repeat(x) for x in lane_cell)]
                cells += [range(lo, hi), times[lo:hi]]
                cells += [v[lo:hi] if v is not None else itertools.repeat("") for v in values]
                writer.writerows(zip(*cells, strict=False))
                if out.tell() > limit:
                    raise TooLarge(f"over {limit / 1e6:g} MB")
    data = out.getvalue().encode("utf-8")
    if len(data) > limit:
        raise TooLarge(f"over {limit / 1e6:g} MB")
    return data


def _unique(groups: Any) -> list[Column]:
    """The columns of several series, each name once (a path's x may be a line of its own)."""
    seen: dict[str, Column] = {}
    for group in groups:
        for column in group:
            seen.setdefault(column[0], column)
    return list(seen.values())


class Downloads:
    """Serves a plot's downloads: the panel's ``download`` control, ``{"id": int, "chart":
    title, "format": "csv" | "svg"}``, answered by a message ``{"jhw_download": id, "name":
    file name, "mime": media type, "error": ""}`` with the file as its one buffer (``error``
    says why not, with no buffer).

    Parameters
    ----------
    panel, fig, state
        The plot's panel (which receives the control and sends the answer), charts and state.
    lock
        The plot's lock, held only to read which runs and series a chart draws.
    picture
        The plot's static picture now (`._outputs.Outputs.picture`).
    """

    def __init__(
        self,
        panel: LivePanel,
        fig: ChartGrid,
        state: PlotState,
        lock: threading.RLock,
        picture: Callable[[], dict[str, str]],
    ) -> None:
        self.panel, self.fig, self.state, self.lock, self.picture = panel, fig, state, lock, picture
        self._worker: concurrent.futures.ThreadPoolExecutor | None = None
        #: The latest request's answer, sent or on its way (tests wait on it).
        self.last: concurrent.futures.Future | None = None
        panel.serve("download", self.request)

    def request(self, value: Any) -> None:
        """Answer the control's ``value`` on the download thread (one at a time, in order);
        a value that is no download request is ignored, as any control's."""
        if not _is_request(value):
            return
        if self._worker is None:
            self._worker = concurrent.futures.ThreadPoolExecutor(1, "jhw-download")
        self.last = self._worker.submit(self._send, value)

    def _send(self, value: dict[str, Any]) -> None:
        content, buffers = self.answer(value)
        self.panel.send(content, buffers=buffers)

    def answer(self, value: dict[str, Any]) -> tuple[dict[str, Any], list[bytes]]:
        """The message (content, buffers) that answers download request ``value``."""
        chart, kind = value["chart"], value["format"]
        title = self.panel.title
        reply: dict[str, Any] = {"jhw_download": value["id"], "format": kind, "error": ""}
        try:
            if kind == "svg":
                data = self.picture()["image/svg+xml"].encode("utf-8")
                stem = file_stem(title or "liveplot")
            else:
                params = self.chart_params(chart)
                runs = self.chart_runs(chart) if params is None else []
                data = params if params is not None else chart_csv(runs, MAX_DOWNLOAD_BYTES)
                stem = file_stem(title or "chart", chart)
        except TooLarge as e:
            reply["error"] = (
                f"The CSV of this chart is {e}, more than one message to the page carries: "
                "write it from Python instead, live.to_csv(path) (one run), or "
                "live.to_pandas()."
            )
            return reply, []
        except Exception as e:  # never a silent click: the page shows why
            reply["error"] = f"{type(e).__name__}: {e}"
            return reply, []
        reply.update(name=f"{stem}.{kind}", mime=FORMATS[kind], size=len(data))
        return reply, [data]

    def chart_params(self, chart: str) -> bytes | None:
        """The CSV of hyperparameter chart ``chart`` (its title), None for another chart: per
        lane (in order of the parameter) ``run``, ``lane``, ``name``, the parameter's value,
        the last and the best value of the field (`..series.ParamPoints`)."""
        with self.lock:
            d, points = self.state.param_points()
            p = next((p for p in points if p.title == chart), None)
            if d is None or p is None:
                return None
            names = self.state.lane_names(d.run)
        out = io.StringIO()
        writer = csv.writer(out)
        params = list(p.params) if isinstance(p, ParamGrid) else [p.param]
        values = [p.a, p.b] if isinstance(p, ParamGrid) else [p.x]
        writer.writerow(["run", "lane", "name", *params, f"{p.field} last", f"{p.field} best"])
        last, best, lanes = _cells(p.last), _cells(p.best), p.lanes.tolist()
        columns = zip(lanes, *(v.tolist() for v in values), last, best, strict=True)
        writer.writerows((d.name, row[0], names[row[0]], *row[1:]) for row in columns)
        return out.getvalue().encode("utf-8")

    def chart_runs(self, chart: str) -> list[tuple[str, Run, list[Spec]]]:
        """The runs drawn on chart ``chart`` (its title; ``""`` for the one shared chart),
        oldest first, each with its name and its series there; hidden runs are left out."""
        with self.lock:
            out = []
            for d in self.state.drawn:
                labels = set(self.fig.labels_on(d.number, chart))
                specs = [s for s in d.specs if s.label in labels]
                if specs and d.number not in self.state.hidden:
                    out.append((d.name, d.run, specs))
            return out


def _cells(values: np.ndarray) -> list[Any]:
    """Values as CSV cells: NaN (no value yet) an empty cell."""
    return ["" if not math.isfinite(v) else v for v in np.asarray(values, float).tolist()]


def _is_request(value: Any) -> bool:
    """Whether ``value`` is a ``download`` control's value."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("id"), int)
        and isinstance(value.get("chart"), str)
        and value.get("format") in FORMATS
    )
