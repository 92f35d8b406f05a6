"""`LiveFigure`: the bqplot figure of a `LivePlot`: its scales, axes, ticks, line marks, legend.

Layer 3 (widget). This module only draws: it is told which runs are drawn (objects with the
attributes of `jaxhist_widget.liveplot._Drawn`), which points each line has and what the data's
extent is, and turns that into bqplot traits. It computes no data (see `jaxhist_widget.series`)
and holds no run state.

Marks: `LiveFigure.new_marks` creates a run's `Lines` marks (one per plotted series, one line
per vmap lane inside it); `LiveFigure.set_lines` sets their ``x`` / ``y`` on every update.
"""

from __future__ import annotations

import html
import itertools
import math
import zlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import bqplot
import ipywidgets
import numpy as np

if TYPE_CHECKING:
    from .liveplot import _Drawn
    from .runs import Run

__all__ = ["LEGEND_LANES", "LiveFigure"]

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


class LiveFigure:
    """The figure widgets of one `LivePlot` and the code that fills their traits.

    Attributes
    ----------
    figure
        The bqplot `Figure` (axes and the marks of every drawn run).
    legend
        An HTML row under the figure: one entry per field (and kept run), plus the lanes.
    x_scale, y_lin, y_log
        The step scale and the two y scales; the y axis and the marks use `y_scale`.
    """

    def __init__(self, log_y: bool) -> None:
        self.log = log_y
        self.x_scale = bqplot.LinearScale(min=0.0, max=1.0)
        # Limits from the start: fixed tick values on a scale without a domain sit at NaN.
        self.y_lin = bqplot.LinearScale(min=0.0, max=1.0)
        self.y_log = bqplot.LogScale(min=0.1, max=10.0)
        # Tick values and formats are set here, not left to bqplot: its defaults mix formats on
        # one axis and put as many x ticks on a 330 px plot as on a 1400 px one.
        self.x_axis = bqplot.Axis(
            scale=self.x_scale,
            side="bottom",
            label="step",
            label_color=_AXIS_TEXT,
            color=_AXIS_TEXT,
            grid_lines="dashed",
            tick_values=np.array([0.0, 1.0]),
            tick_format=",.0f",
        )
        self._extent = (math.inf, -math.inf, math.inf)  # finite y: min, max, min > 0
        self.y_axis = self._new_y_axis()
        self.figure = bqplot.Figure(
            marks=[],
            axes=[self.x_axis, self.y_axis],
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
        # No bqplot tooltip: the panel's view shows the hover read-out (field, lane, run, step
        # and value of the point under the pointer) from these lines' points and `labels`.

    @property
    def y_scale(self) -> bqplot.Scale:
        """The y scale in use (log or linear)."""
        return self.y_log if self.log else self.y_lin

    # ------------------------------------------------------------------ marks
    def new_marks(self, d: _Drawn, names: list[str]) -> list[bqplot.Lines]:
        """Create the marks of run ``d`` (one per series, ``d.lanes_drawn`` lines in each),
        named for the hover read-out with ``names`` (the lane names under vmap)."""
        batched = d.run.lanes is not None
        field_colors = _field_colors([spec.label for spec in d.specs])
        lane_colors = _lane_colors(d.lanes_drawn)
        marks = []
        for i, spec in enumerate(d.specs):
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
            marks.append(self._new_line(labels=labels, colors=colors, line_style=style))
        return marks

    def set_lines(
        self, mark: bqplot.Lines, xs: list[np.ndarray], ys: list[np.ndarray], batched: bool
    ) -> None:
        """Set one mark's points: one (x, y) pair per lane (a single one when not batched)."""
        if batched:
            x, y = _pad(xs, 0), _pad(ys, np.nan)
        else:
            x, y = xs[0], ys[0]
        with mark.hold_sync():  # x and y in one message, so a view never sees them mismatched
            mark.x, mark.y = _step_array(x), y

    def show(self, drawn: Sequence[_Drawn]) -> None:
        """Make the figure list exactly the marks of ``drawn``."""
        self.figure.marks = [m for d in drawn for m in d.marks]

    def fade(self, d: _Drawn, age: int) -> None:
        """Fade run ``d``, ``age`` runs older than the latest: the older, the fainter."""
        d.faded = True
        d.opacity = max(_FADED_MIN, _FADED * 0.7 ** (age - 1))
        for mark in d.marks:
            mark.opacities = [d.opacity] * max(1, d.lanes_drawn)

    def set_log(self, log: bool, drawn: Sequence[_Drawn]) -> None:
        """Switch the y axis to a log (or linear) scale, rebuilding the marks on it.

        bqplot views do not follow a mark's or an axis's scale being swapped (measured in
        JupyterLab 4.6: the Python side changed, the drawing stayed linear), so the marks and the
        y axis are rebuilt on the other scale; their data is at most max_points.
        """
        self.log = log
        self._set_y_limits()  # the scale now in use was not kept up to date
        old = [self.y_axis]
        for d in drawn:
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
        self.y_axis = self._new_y_axis()
        with self.figure.hold_sync():
            self.show(drawn)
            self.figure.axes = [self.x_axis, self.y_axis]
        for w in old:
            w.close()
        self.update_ticks()

    def _new_y_axis(self) -> bqplot.Axis:
        return bqplot.Axis(
            scale=self.y_scale,
            side="left",
            color=_AXIS_TEXT,
            grid_lines="dashed",
            # Never a tick at 0 on a log scale (a NaN position); `update_ticks` sets the real ones.
            tick_values=np.array([0.1, 1.0, 10.0] if self.log else [0.0, 0.5, 1.0]),
            tick_format=",~g",
        )

    def _new_line(self, **traits: Any) -> bqplot.Lines:
        traits.setdefault("x", np.zeros(0))
        traits.setdefault("y", np.zeros(0))
        return bqplot.Lines(
            scales={"x": self.x_scale, "y": self.y_scale},
            stroke_width=1.5,
            display_legend=False,  # the legend is the HTML row under the figure
            # The scales' limits are always set here (`update_scales`), so a mark's own data
            # range never decides them: without this the browser recomputes every line's min
            # and max at each update only to find the limits unchanged.
            preserve_domain={"x": True, "y": True},
            **traits,
        )

    # ------------------------------------------------------------ scales, ticks
    def update_scales(self, drawn: Sequence[_Drawn], names: Callable[[Run], list[str]]) -> None:
        """Scales from the drawn runs' steps and extents, then ticks and legend."""
        lo, hi, lo_pos = math.inf, -math.inf, math.inf
        x_min = min((d.x0 for d in drawn), default=0)  # > 0: continued, earlier dropped
        x_max = x_min + 1
        for d in drawn:
            x_max = max(x_max, d.x0 + d.max_step)
            for a, b, c in d.extent.values():
                lo, hi, lo_pos = min(lo, a), max(hi, b), min(lo_pos, c)
        # The axis ends at a round number of steps at or past the last one: during a live run it
        # moves a few times a decade, not at every update. (A scale change makes the browser
        # redraw every line on it and the axis, on top of drawing the new points.)
        with self.x_scale.hold_sync():
            self.x_scale.min, self.x_scale.max = (
                float(x_min),
                float(x_min + _round_up(x_max - x_min)),
            )
        self._extent = (lo, hi, lo_pos)
        self._set_y_limits()
        self.update_ticks()
        self.update_legend(drawn, names)  # runs were added, faded or dropped: callers need both

    def _set_y_limits(self) -> None:
        """Limits of the y scale in use (the other one is set when the toggle selects it: one
        message less per update)."""
        lo, hi, lo_pos = self._extent
        # Explicit limits from finite values only: one inf or NaN must not flatten the plot.
        if not self.log:
            with self.y_lin.hold_sync():
                if math.isfinite(lo):
                    pad = 0.05 * (hi - lo) or 0.05 * abs(lo) or 1.0
                    # Out to the next multiple of a round step (a 20th of the span): the limits
                    # stay put while the values move within it (see the x axis above).
                    grid = _nice_step(hi - lo + 2 * pad, 20)
                    self.y_lin.min = float(math.floor((lo - pad) / grid) * grid)
                    self.y_lin.max = float(math.ceil((hi + pad) / grid) * grid)
                else:
                    self.y_lin.min, self.y_lin.max = 0.0, 1.0
        else:
            with self.y_log.hold_sync():
                if math.isfinite(lo_pos):
                    top = max(hi, lo_pos)
                    # Out to the next eighth of a decade (see the linear limits above).
                    self.y_log.min = float(10 ** (math.floor(8 * math.log10(lo_pos / 1.15)) / 8))
                    self.y_log.max = float(10 ** (math.ceil(8 * math.log10(top * 1.15)) / 8))
                else:
                    self.y_log.min, self.y_log.max = 0.1, 10.0

    def update_ticks(self) -> None:
        """Round tick values and one compact format per axis; the left margin fits the labels."""
        x_ticks = _linear_ticks(float(self.x_scale.min), float(self.x_scale.max), 4, integer=True)
        scale = self.y_scale
        lo, hi = float(scale.min), float(scale.max)
        y_ticks = _log_ticks(lo, hi) if self.log else _linear_ticks(lo, hi, 6)
        y_format, width = _tick_format(y_ticks, log=self.log)
        for axis, ticks, fmt in (
            (self.x_axis, x_ticks, _tick_format(x_ticks)[0]),
            (self.y_axis, y_ticks, y_format),
        ):
            if list(axis.tick_values) != ticks or axis.tick_format != fmt:
                with axis.hold_sync():
                    axis.tick_values = np.array(ticks, float)
                    axis.tick_format = fmt
        left = max(40, math.ceil(width * _TICK_CHAR_PX) + _Y_LABEL_PAD_PX)
        if self.figure.fig_margin.get("left") != left:
            self.figure.fig_margin = {**self.figure.fig_margin, "left": left}

    # ------------------------------------------------------------------ legend
    def update_legend(self, drawn: Sequence[_Drawn], names: Callable[[Run], list[str]]) -> None:
        """Rebuild the legend row: one entry per field (and per kept run), plus the lanes."""
        items = []
        several = sum(1 for d in drawn if d.marks) > 1
        for d in drawn:
            suffix = f" (run {d.number})" if several else ""
            for spec, mark in zip(d.specs, d.marks, strict=False):
                color = "currentColor" if d.run.lanes is not None else mark.colors[0]
                items.append(
                    f'<span class="jhw-legend-item" data-run="{d.number}" '
                    f'style="white-space:nowrap">'
                    f"{_swatch(color, mark.line_style, d.opacity)} "
                    f"{html.escape(spec.label + suffix)}</span>"
                )
        latest = next((d for d in reversed(drawn) if d.marks), None)
        if latest is not None and latest.run.lanes is not None:
            lane_names = names(latest.run)
            n = latest.lanes_drawn
            colors = _lane_colors(n)
            if n <= LEGEND_LANES:
                items += [
                    f'<span class="jhw-legend-lane" style="white-space:nowrap">'
                    f"{_swatch(colors[k], 'solid', 1.0)} {html.escape(lane_names[k])}"
                    f"</span>"
                    for k in range(n)
                ]
            else:
                more = f" (first {n} of {latest.run.lanes})" if latest.run.lanes > n else ""
                ramp = ", ".join(_LANE_RAMP)
                items.append(
                    f'<span class="jhw-legend-lanes" style="white-space:nowrap">'
                    f"{html.escape(lane_names[0])} "
                    f'<span style="display:inline-block;width:72px;height:8px;'
                    f'vertical-align:middle;background:linear-gradient(to right, {ramp})">'
                    f"</span> {html.escape(lane_names[n - 1])}{more}</span>"
                )
        self.legend.value = (
            '<div class="jhw-legend-items" style="display:flex;flex-wrap:wrap;'
            "gap:2px 14px;align-items:center;padding:0 8px 4px 8px;"
            "font-size:var(--jp-ui-font-size1, 12px);"
            'color:var(--jp-ui-font-color1, inherit)">' + "".join(items) + "</div>"
            if items
            else ""
        )


def close_marks(dropped: Sequence[_Drawn]) -> None:
    """Close the marks of runs no longer drawn (the figure must not list them any more).

    A widget lives, with its data, until closed (the kernel's widget registry holds it), so
    unclosed marks of replaced runs would grow by one widget per field and run.
    """
    for d in dropped:
        for mark in d.marks:
            mark.close()
        d.marks = []


def _pad(arrays: list[np.ndarray], empty: float) -> np.ndarray:
    """Stack lines of unequal length into one 2-d array, each padded with its own last point.

    Not NaN: bqplot places each line's label at its last point, and NaN there is an invalid
    SVG transform. Repeating the last point draws nothing extra. A line with no point at all is
    filled with ``empty``.
    """
    dtype = np.result_type(*arrays)
    out = np.full((len(arrays), max(len(a) for a in arrays)), empty, dtype=dtype)
    for k, a in enumerate(arrays):
        out[k, : len(a)] = a
        if len(a):
            out[k, len(a) :] = a[-1]
    return out


def _step_array(x: np.ndarray) -> np.ndarray:
    """Steps as int32 when they fit (4 bytes a point on the wire instead of 8)."""
    if x.dtype.kind in "iu" and (not x.size or int(x.max()) < 2**31):
        return x.astype(np.int32, copy=False)
    return x


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


def _round_up(span: float) -> float:
    """The smallest of 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 times a power of ten that is at least
    ``span`` (at least 1): an axis end on a round number, at most a third past the data.

    >>> [_round_up(v) for v in (0, 7, 10, 11, 199, 20_001, 1e6)]
    [1.0, 8.0, 10.0, 12.0, 200.0, 25000.0, 1000000.0]
    """
    if not span > 1:
        return 1.0
    mag = 10.0 ** math.floor(math.log10(span))
    return next(
        m * mag for m in (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10) if m * mag >= span * (1 - 1e-12)
    )


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
