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
from ..ui import option_specs
from ..ui.series import check_lane_labels, check_lane_values, numeric_labels

#: The hyperparameter chart's options (`LivePlot`'s ``params_field``, ``params_best``).
PARAMS = ("params_field", "params_best")
#: The `LivePlot` options a magic takes as the name of a variable of the user's namespace
#: (``--lane-values rates``): a sweep's lanes are arrays a line of options cannot spell.
NAMED = tuple(
    name for name, spec in option_specs().items() if spec.flag and spec.flag.parse == "variable"
)


# The option types raise ArgumentTypeError: argparse shows its text (for a ValueError it would
# only say "invalid value").
def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ArgumentTypeError(f"expected an integer, got {text!r}") from None


def _checked_now(name: str, check: Callable[[Any], Any], read: Callable[[str], Any]) -> Any:
    """``read``, then the option's own check: a bad value is a usage error before any widget
    exists, saying what the constructor would (less the option's name, which argparse says)."""

    def parse(text: str) -> Any:
        value = read(text)
        try:
            check(value)
        except (TypeError, ValueError) as e:
            raise ArgumentTypeError(str(e).removeprefix(f"{name} ").removesuffix(".")) from None
        return value

    return parse


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


#: How a flag's text is read, by the option table's `Flag.parse` ("choice" and "switch":
#: argparse's own ``choices`` and ``store_true``).
_READERS: dict[str, Callable[[str], Any]] = {
    "int": _int,
    "fields": _fields,
    "paths": _paths,
    "store": _store,
    "variable": _name,
}


def _option_flags() -> list[Any]:
    """The flags of the options the table (`LivePlot`'s) makes ``%%jaxhist`` flags, in its
    order, as `magic_arguments` decorators."""
    arguments = []
    for name, spec in option_specs().items():
        flag = spec.flag
        if flag is None:
            continue
        kwargs: dict[str, Any] = {"help": flag.help}
        if flag.parse == "switch":
            kwargs["action"] = "store_true"
        elif flag.parse == "choice":
            kwargs["choices"] = flag.choices
        else:
            kwargs["metavar"] = flag.metavar
            read = _READERS.get(flag.parse)
            if flag.check and spec.check is not None:
                read = _checked_now(name, spec.check, read or str)
            if read is not None:
                kwargs["type"] = read
        arguments.append(magic_arguments.argument(_flag(name), **kwargs))
    return arguments


def _plot_options(args: Any) -> dict[str, Any]:
    """`LivePlot` keyword arguments from parsed magic options (only those given; the named
    variables aside, `_named`)."""
    options: dict[str, Any] = {}
    for name, spec in option_specs().items():
        flag = spec.flag
        if flag is None or not flag.to_plot or flag.parse == "variable":
            continue
        # A switch is an option only when given (True); every other option when set.
        value = getattr(args, name)
        if (value is True) if flag.parse == "switch" else (value is not None):
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
            *_option_flags(),
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
