"""The options of ``%%jaxhist`` and ``%jaxhist on``: parsed strictly, errors that name the fix."""

from __future__ import annotations

import re
import textwrap
from argparse import ArgumentTypeError
from collections.abc import Callable, Mapping
from typing import Any

from IPython.core import magic_arguments
from IPython.core.error import UsageError
from IPython.utils.process import arg_split

from .._host import Store
from ..ui import MAX_POINTS_LIMIT
from ..ui.series import BEST, VECTOR_MODES, check_lane_labels, check_lane_values, numeric_labels

#: The hyperparameter chart's options (`LivePlot`'s ``params_field``, ``params_best``).
PARAMS = ("params_field", "params_best")
#: The `LivePlot` options a magic takes as the name of a variable of the user's namespace
#: (``--lane-values rates``): a sweep's lanes are arrays a line of options cannot spell.
NAMED = ("lane_values", "lane_labels")


# The option types raise ArgumentTypeError: argparse shows its text (for a ValueError it would
# only say "invalid value").
def _max_points(text: str) -> int:
    # Checked while parsing, so a bad value is a usage error before any widget exists.
    try:
        value = int(text)
    except ValueError:
        raise ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if not 5 <= value <= MAX_POINTS_LIMIT:
        raise ArgumentTypeError(
            f"must be in 5..{MAX_POINTS_LIMIT} (points per line per update), got {value}"
        )
    return value


def _name(text: str) -> str:
    if not text.isidentifier():
        raise ArgumentTypeError(f"{text!r} is not a Python name")
    return text


def _store(text: str) -> Store:
    # Made while parsing: a path that cannot be a store (no such directory, another
    # application's file) fails the cell before it runs, with the store's own message.
    try:
        return Store(text)
    except (OSError, ValueError) as e:
        raise ArgumentTypeError(str(e)) from None


# A comma splits fields, except inside brackets: "loss,x[0,1]" is two fields.
_FIELD_SPLIT = re.compile(r",(?![^\[]*\])")


def _fields(text: str) -> list[str]:
    fields = [f.strip() for f in _FIELD_SPLIT.split(text)]
    if not all(fields):
        raise ArgumentTypeError(f"empty field name in {text!r}; write e.g. --fields loss,|x|")
    return fields


def _paths(text: str) -> list[str | tuple[str, str]]:
    """``xy,a:b``: a leaf of two components, or a pair ``x:y`` (x, then y)."""
    out: list[str | tuple[str, str]] = []
    for entry in _fields(text):
        parts = [p.strip() for p in entry.split(":")]
        if len(parts) > 2 or not all(parts):
            raise ArgumentTypeError(
                f"a path is a leaf of two components or a pair x:y, got {entry!r}; write "
                "e.g. --paths xy or --paths x[0]:x[1]"
            )
        out.append(parts[0] if len(parts) == 1 else (parts[0], parts[1]))
    return out


def _plot_options(args: Any) -> dict[str, Any]:
    """`LivePlot` keyword arguments from parsed magic options (only those given)."""
    options: dict[str, Any] = {}
    # A flag is an option only when given (True); every other option when set.
    flags = ("log_y", "keep_runs")
    names = ("fields", "max_points", "store", "charts", "vectors", "paths", *PARAMS)
    for name in ("title", *flags, *names):
        value = getattr(args, name)
        if (value is True) if name in flags else (value is not None):
            options[name] = value
    return options


def _named(args: Any) -> dict[str, str]:
    """The variables the options name (``{"lane_values": "rates"}``, only those given); a
    `UsageError` for ``--params-field`` / ``--params-best`` without lanes to rank."""
    named = {key: getattr(args, key) for key in NAMED if getattr(args, key) is not None}
    params = [key for key in PARAMS if getattr(args, key) is not None]
    if params and not named:
        flags = " and ".join(_flag(key) for key in params)
        raise UsageError(
            f"{flags}: a sweep's hyperparameter chart ranks its lanes by their values, and "
            "none are given; name the variable that holds them, e.g. --lane-values rates (one "
            "number per vmap lane, or a dict {'lr': rates}), or --lane-labels rates."
        )
    return named


def _read_named(
    named: dict[str, str], namespace: Mapping[str, Any], params: bool, before: str
) -> dict[str, Any]:
    """`LivePlot` keyword arguments from the variables ``named`` names, read from
    ``namespace`` now (a sweep's values one array: its parameter is named after the variable,
    ``loss vs rates``); a `UsageError` naming the fix for a name not defined (``before``: where
    to define it), a value `LivePlot` would refuse, or (``params``: the hyperparameter chart's
    options given) lanes that carry no values to rank."""
    options: dict[str, Any] = {}
    for key, name in named.items():
        if name not in namespace:
            raise UsageError(
                f"{_flag(key)} {name}: no variable {name!r} when the plot is made; define it "
                f"{before} (e.g. {name} = jnp.logspace(-3, 0, 16))."
            )
        value = namespace[name]
        if key == "lane_values" and not isinstance(value, Mapping):
            value = {name: value}
        try:
            (check_lane_values if key == "lane_values" else check_lane_labels)(value)
        except (TypeError, ValueError) as e:
            raise UsageError(f"{_flag(key)} {name}: {e}") from None
        options[key] = value
    values = options.get("lane_values")
    if params and values is None and numeric_labels(options.get("lane_labels")) is None:
        given = ", ".join(f"{_flag(key)} {name}" for key, name in named.items())
        raise UsageError(
            f"{given}: no number per lane for the hyperparameter chart to rank (--params-field, "
            "--params-best; labels that are str name the lanes only); give the lanes' values "
            "with --lane-values NAME."
        )
    return options


def _flag(key: str) -> str:
    return "--" + key.replace("_", "-")


def _describe(
    options: dict[str, Any],
    output: str | None,
    tensorboard: str | None = None,
    named: dict[str, str] | None = None,
) -> str:
    parts = [f"{k}={v!r}" for k, v in options.items()]
    parts += [f"{_flag(k)} {name}" for k, name in (named or {}).items()]
    if tensorboard:
        parts.append(f"tensorboard={tensorboard!r}")
    if output:
        parts.append(f"-o {output}")
    return ", ".join(parts)


def _plot_arguments(func: Callable[..., Any]) -> Callable[..., Any]:
    """The options both magics take (``%jaxhist on`` takes them as defaults)."""
    for decorator in reversed(
        [
            magic_arguments.argument(
                "-o",
                dest="output",
                metavar="NAME",
                type=_name,
                help="store the LivePlot in the user namespace as NAME",
            ),
            magic_arguments.argument("--title", metavar="TEXT", help="title of the plot"),
            magic_arguments.argument(
                "--log-y", action="store_true", help="start with a logarithmic y axis"
            ),
            magic_arguments.argument(
                "--fields",
                metavar="A,B",
                type=_fields,
                help="what to plot, comma-separated: leaf names, '|x|' (norm), 'x[3]'",
            ),
            magic_arguments.argument(
                "--keep-runs",
                action="store_true",
                help="keep previous runs on the plot, a colour each",
            ),
            magic_arguments.argument(
                "--max-points",
                metavar="N",
                type=_max_points,
                help=f"points sent per line per update, 5..{MAX_POINTS_LIMIT}",
            ),
            magic_arguments.argument(
                "--charts",
                choices=("per_field", "shared"),
                help="one chart per field (the default) or every field on one chart",
            ),
            magic_arguments.argument(
                "--vectors",
                choices=VECTOR_MODES,
                help="how a vector leaf is drawn: lines, band (median, quartiles, min-max), "
                "heatmap, or auto (lines up to 10 components, a band beyond)",
            ),
            magic_arguments.argument(
                "--paths",
                metavar="XY,A:B",
                type=_paths,
                help="charts of one series against another: a leaf of two components, or x:y",
            ),
            magic_arguments.argument(
                "--lane-values",
                metavar="NAME",
                type=_name,
                help="the variable holding a sweep's values, one per vmap lane (rates, or "
                "{'lr': rates}): its hyperparameter chart (LivePlot(lane_values=NAME))",
            ),
            magic_arguments.argument(
                "--lane-labels",
                metavar="NAME",
                type=_name,
                help="the variable holding the vmap lanes' names (str), or their values "
                "(numbers) (LivePlot(lane_labels=NAME))",
            ),
            magic_arguments.argument(
                "--params-field",
                metavar="FIELD",
                help="the plotted field a sweep's hyperparameter chart ranks (default: the first)",
            ),
            magic_arguments.argument(
                "--params-best",
                choices=BEST,
                help="a lane's best value of that field: lowest (min, default) or highest (max)",
            ),
            magic_arguments.argument(
                "--store",
                metavar="PATH",
                type=_store,
                help="also append every run to the SQLite store at PATH (jhw.load_runs reads it)",
            ),
            magic_arguments.argument(
                "--tensorboard",
                metavar="DIR",
                help="also write every run as TensorBoard event files under DIR "
                "(tensorboard --logdir DIR)",
            ),
        ]
    ):
        func = decorator(func)
    return func


def _parse(func: Any, line: str) -> Any:
    """Parse ``line`` strictly; on a bad option raise a `UsageError` with the usage."""
    parser = func.parser
    parser.allow_abbrev = False  # "--log" is not "--log-y": options are spelt out
    try:
        # posix splitting: --title "two words" is the text two words, without the quotes.
        return parser.parse_args(arg_split(line, posix=True))
    except ValueError as e:  # unbalanced quotes
        raise UsageError(f"{e} in {line!r}\nusage: {_usage(func)}") from None
    except UsageError as e:
        raise UsageError(f"{e}\nusage: {_usage(func)}") from None


def _usage(func: Any) -> str:
    # IPython's help formatter starts the usage with a reST "::" line; a message needs none.
    text = func.parser.format_usage().removeprefix("::").strip("\n")
    return textwrap.dedent(text)
