"""`LivePlot`'s options: their names and the checks that name the fix for a bad one
(`checked`), in the order the plot's constructor meets them.

The checks of options with a module of their own (``fields``, ``vectors``, ``paths``,
``lane_labels``, the windows of steps: `..series`; ``smoothing``: `..reduce`; ``charts``:
`..figure`) stay there; these are the plain ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..figure import check_charts
from ..look import check_x_axis, shown_text
from ..reduce import check_weight
from ..series import (
    LABEL_PARAM,
    PlotChoice,
    check_fields,
    check_lane_labels,
    check_lane_values,
    check_lanes,
    check_last_steps,
    check_params_best,
    check_params_field,
    check_paths,
    check_run_filter,
    check_step_range,
    check_vectors,
    numeric_labels,
    value_labels,
)

__all__ = ["MAX_POINTS_LIMIT", "OPTIONS", "Options", "check_flag", "check_options", "checked"]

#: Upper bound on ``max_points``.
MAX_POINTS_LIMIT = 4000

#: The keyword arguments of `LivePlot`.
OPTIONS = (
    "fields",
    "log_y",
    "keep_runs",
    "title",
    "max_points",
    "lane_labels",
    "lane_values",
    "params_field",
    "params_best",
    "lanes",
    "all_lanes",
    "continue_steps",
    "store",
    "tensorboard",
    "charts",
    "vectors",
    "paths",
    "smoothing",
    "ignore_outliers",
    "log_x",
    "last_steps",
    "step_range",
    "x_axis",
    "run_filter",
)


def check_options(
    unknown: dict[str, Any], max_points: Any, title: Any, continue_steps: Any
) -> None:
    """Raise TypeError / ValueError naming the option and what it accepts."""
    if unknown:
        raise TypeError(
            f"LivePlot() got unexpected keyword argument(s) {', '.join(map(repr, unknown))}; "
            f"allowed: {', '.join(OPTIONS)}."
        )
    if max_points is not None:  # None: the default (`..series.line_points`)
        if not isinstance(max_points, int) or isinstance(max_points, bool):
            raise TypeError(f"max_points must be an int or None, got {max_points!r}.")
        if not 5 <= max_points <= MAX_POINTS_LIMIT:
            raise ValueError(
                f"max_points must be in 5..{MAX_POINTS_LIMIT} (points per line per update), "
                f"got {max_points}."
            )
    if title is not None and not isinstance(title, str):
        raise TypeError(f"title must be a str or None, got {title!r}.")
    if not isinstance(continue_steps, bool):
        raise TypeError(f"continue_steps must be True or False, got {continue_steps!r}.")


def check_flag(name: str, value: Any) -> bool:
    """``value`` if it is True or False, else a TypeError naming the option."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {value!r}.")
    return value


@dataclass(frozen=True)
class Options:
    """`LivePlot`'s options, checked (``store`` aside: the plot opens it)."""

    choice: PlotChoice
    #: Every chart on a log y axis (True) or a linear one (False); None: each chart on a log
    #: one once its values span `..reduce.LOG_DECADES` decades.
    log_y: bool | None
    keep_runs: bool
    title: str
    max_points: int | None
    lane_labels: tuple[str, ...] | None
    #: The swept parameters' values per lane, by name (``lane_values``, or numeric labels).
    lane_values: dict[str, Any] | None
    #: The plotted field the plot's goal ranks (None: a loss-like one, `..series.default_field`).
    params_field: str | None
    #: Whether a lane's best value of it is its lowest (``"min"``) or highest (``"max"``; None:
    #: by the field's name, `..series.best_of`).
    params_best: str | None
    continue_steps: bool
    #: Draw a sweep's every lane at full strength, not only those named for a role.
    all_lanes: bool
    charts: str
    smoothing: float
    ignore_outliers: bool
    log_x: bool
    last_steps: int
    step_range: tuple[int, int] | None
    x_axis: str
    run_filter: str


def checked(unknown: dict[str, Any], **options: Any) -> Options:
    """``options`` (every keyword of `LivePlot` but ``store``) checked; ``unknown``: the
    keywords it does not take. Raises TypeError / ValueError naming the option and its fix."""
    o = options
    check_options(unknown, o["max_points"], o["title"], o["continue_steps"])
    choice = PlotChoice(
        check_fields(o["fields"]),
        check_vectors(o["vectors"]),
        check_paths(o["paths"]),
        check_lanes(o["lanes"]),
    )
    smoothing = check_weight(o["smoothing"])
    return Options(
        choice=choice,
        log_y=None if o["log_y"] is None else check_flag("log_y", o["log_y"]),
        keep_runs=bool(o["keep_runs"]),
        title=shown_text(o["title"] or ""),  # any str, drawn as shown
        max_points=o["max_points"],
        continue_steps=o["continue_steps"],
        smoothing=smoothing,
        ignore_outliers=check_flag("ignore_outliers", o["ignore_outliers"]),
        all_lanes=check_flag("all_lanes", o["all_lanes"]),
        log_x=check_flag("log_x", o["log_x"]),
        last_steps=check_last_steps(o["last_steps"]),
        step_range=check_step_range(o["step_range"]),
        x_axis=check_x_axis(o["x_axis"]),
        run_filter=check_run_filter(o["run_filter"]),
        **lanes_named(o["lane_labels"], o["lane_values"]),
        params_field=check_params_field(o["params_field"], choice.fields),
        params_best=check_params_best(o["params_best"]),
        charts=check_charts(o["charts"]),
    )


def lanes_named(labels: Any, values: Any) -> dict[str, Any]:
    """``lane_labels`` and ``lane_values`` checked: labels made of the values when none are
    given (``lr=0.001``); numbers given as labels are also the lanes' values (a parameter named
    `..series.LABEL_PARAM`)."""
    params = check_lane_values(values)
    numbers = numeric_labels(labels)
    names = check_lane_labels(labels)
    if params is None and numbers is not None:
        params = {LABEL_PARAM: numbers}
    if names is None and params is not None:
        names = value_labels(params)
    lanes = {len(v) for v in (params or {}).values()} | ({len(names)} if names else set())
    if len(lanes) > 1:
        raise ValueError(
            f"lane_labels and lane_values name the vmap lanes differently: {sorted(lanes)} lanes;"
            " give one label and one value per lane."
        )
    return {"lane_labels": names, "lane_values": params}
