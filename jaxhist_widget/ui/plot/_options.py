"""`LivePlot`'s options: their names and the checks that name the fix for a bad one.

The checks of options with a module of their own (`fields`, `lane_labels`,
`charts`, `vectors`, `paths`) stay there; these are the plain ones.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MAX_POINTS_LIMIT", "OPTIONS", "check_flag", "check_options"]

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
    "continue_steps",
    "store",
    "charts",
    "vectors",
    "paths",
    "smoothing",
    "ignore_outliers",
    "log_x",
    "last_steps",
    "step_range",
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
    if not isinstance(max_points, int) or isinstance(max_points, bool):
        raise TypeError(f"max_points must be an int, got {max_points!r}.")
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
