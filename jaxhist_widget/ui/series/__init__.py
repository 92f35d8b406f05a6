"""What a plot draws of a run: the options that choose it (``fields=``, ``vectors=``,
``paths=``), the series they make of a run's record (`plan`, `Spec`), and each run's series read
from its rows as they arrive (`RunDrawing`), smoothed (`RunSmoothing`) or over a window of steps
(`StepWindow`), a sweep's every lane (`Spread`: each lane's extent, for the y range of those
that did not run away), its swept parameters and each lane's last and best value against them
(`check_lane_values`, `param_points`), the plot's one goal (`Goal`: the field its "best" ranks
and whether lowest or highest), and which runs and lanes are shown (`run_pattern`,
`hide_lanes`).

Numpy only, no widgets: the reductions themselves are `..reduce`'s; the live figure and the
static picture draw what these hand out.
"""

from __future__ import annotations

from ._choice import (
    AUTO_LINES,
    AUTO_LINES_VMAP,
    MAX_LINES,
    VECTOR_MODES,
    PathEntry,
    PlotChoice,
    VectorChoice,
    check_fields,
    check_lanes,
    check_paths,
    check_vectors,
    path_title,
)
from ._drawing import RunDrawing
from ._goal import Goal, best_of, default_field
from ._lanes import LEAD_LANES, MAX_LANES, ROLES, LaneNames, check_lane_labels
from ._params import (
    BEST,
    LABEL_PARAM,
    ParamGrid,
    ParamPoints,
    check_lane_values,
    check_params_best,
    check_params_field,
    numeric_labels,
    param_points,
    params_field_note,
    ranked_fields,
    value_labels,
)
from ._plan import Plan, Spec, component_label, plan
from ._points import DEFAULT_POINTS, MARK_POINTS
from ._smoothing import RunSmoothing
from ._sweep import Spread, whole_spreads, window_spreads
from ._visible import (
    MAX_FILTER,
    check_hidden_lanes,
    check_run_filter,
    filter_error,
    hide_lanes,
    run_pattern,
)
from ._window import (
    EMA_FORGOTTEN,
    StepWindow,
    check_last_steps,
    check_step_range,
    window_lines,
    window_range,
)

__all__ = [
    "AUTO_LINES",
    "AUTO_LINES_VMAP",
    "BEST",
    "DEFAULT_POINTS",
    "EMA_FORGOTTEN",
    "LABEL_PARAM",
    "LEAD_LANES",
    "MARK_POINTS",
    "MAX_FILTER",
    "MAX_LANES",
    "MAX_LINES",
    "ROLES",
    "VECTOR_MODES",
    "Goal",
    "LaneNames",
    "ParamGrid",
    "ParamPoints",
    "PathEntry",
    "Plan",
    "PlotChoice",
    "RunDrawing",
    "RunSmoothing",
    "Spec",
    "Spread",
    "StepWindow",
    "VectorChoice",
    "best_of",
    "check_fields",
    "check_hidden_lanes",
    "check_lane_labels",
    "check_lane_values",
    "check_lanes",
    "check_last_steps",
    "check_params_best",
    "check_params_field",
    "check_paths",
    "check_run_filter",
    "check_step_range",
    "check_vectors",
    "component_label",
    "default_field",
    "filter_error",
    "hide_lanes",
    "numeric_labels",
    "param_points",
    "params_field_note",
    "path_title",
    "plan",
    "ranked_fields",
    "run_pattern",
    "value_labels",
    "whole_spreads",
    "window_lines",
    "window_range",
    "window_spreads",
]
