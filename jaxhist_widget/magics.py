"""The IPython extension: ``%load_ext jaxhist_widget``, a ``%%jaxhist`` cell magic and auto mode.

Layer 3 (widget). Watching a loop in a notebook then takes no code change:

- ``%%jaxhist [options]`` shows a `LivePlot` at the top of the cell's output and runs the cell
  with it attached (exactly ``with live:`` around the cell body);
- ``%jaxhist on [options]`` / ``%jaxhist off``: auto mode. While on, each cell gets a sink of its
  own for the time it runs; when the cell's first streaming run starts, that sink makes a
  `LivePlot`, shows it under the cell and hands it every run of the cell. A cell that runs no
  loop shows nothing and creates no widget.

Both attach through ``Sink.__enter__`` / ``Sink.__exit__``, as ``with live:`` does, so an
interrupt (■) ends a loop the same way there. IPython is imported here only: the package itself
loads this module when IPython loads the extension.
"""

from __future__ import annotations

import ast
import re
import textwrap
import threading
from argparse import ArgumentTypeError
from collections.abc import Callable
from typing import Any

from IPython.core import magic_arguments
from IPython.core.error import UsageError
from IPython.core.magic import (
    Magics,
    cell_magic,
    line_magic,
    magics_class,
    output_can_be_silenced,
)
from IPython.display import display
from IPython.utils.process import arg_split

from . import registry
from .liveplot import MAX_POINTS_LIMIT, LivePlot
from .runs import Run
from .sink import Sink

__all__ = ["JaxHistMagics", "load_ipython_extension", "unload_ipython_extension"]

NO_FRONTEND = (
    "jaxhist: no widget frontend here (a plain IPython terminal), so nothing is drawn; the runs "
    "are still recorded. Keep the plot with -o NAME (`%%jaxhist -o NAME`, `%jaxhist on -o NAME`) "
    "and read NAME.history(), NAME.to_csv(path) or NAME.runs."
)


# ------------------------------------------------------------------------------ options
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


# A comma splits fields, except inside brackets: "loss,x[0,1]" is two fields.
_FIELD_SPLIT = re.compile(r",(?![^\[]*\])")


def _fields(text: str) -> list[str]:
    fields = [f.strip() for f in _FIELD_SPLIT.split(text)]
    if not all(fields):
        raise ArgumentTypeError(f"empty field name in {text!r}; write e.g. --fields loss,|x|")
    return fields


def _plot_options(args: Any) -> dict[str, Any]:
    """`LivePlot` keyword arguments from parsed magic options (only those given)."""
    options: dict[str, Any] = {}
    if args.title is not None:
        options["title"] = args.title
    if args.log_y:
        options["log_y"] = True
    if args.keep_runs:
        options["keep_runs"] = True
    if args.fields is not None:
        options["fields"] = args.fields
    if args.max_points is not None:
        options["max_points"] = args.max_points
    return options


def _describe(options: dict[str, Any], output: str | None) -> str:
    parts = [f"{k}={v!r}" for k, v in options.items()]
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
                "--keep-runs", action="store_true", help="keep previous runs on the plot, faded"
            ),
            magic_arguments.argument(
                "--max-points",
                metavar="N",
                type=_max_points,
                help=f"points sent per line per update, 5..{MAX_POINTS_LIMIT}",
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


# ------------------------------------------------------------------------- cell sink
class _CellSink(Sink):
    """The sink auto mode attaches while one cell runs.

    It makes its cell's plot (with ``make_plot``, which also shows it) when the first run
    starts, and hands every run of the cell to it; so a cell without a run creates no widget.
    A run that also streams to another `LivePlot` (the cell has its own ``with live:``) is
    left to that one, so the cell never shows the same run twice.
    """

    def __init__(self, make_plot: Callable[[Sink], LivePlot]) -> None:
        super().__init__()
        self._make_plot = make_plot
        self.plot: LivePlot | None = None
        self._forwarded: set[Run] = set()

    def _start(self, run: Run) -> None:
        super()._start(run)
        if any(isinstance(s, LivePlot) for s in registry.attached()):
            return
        with self._lock:
            if self.plot is None:
                self.plot = self._make_plot(self)
            self._forwarded.add(run)
        self.plot._start(run)

    def on_rows(self, run: Run, lanes: list[int]) -> None:
        if self.plot is not None and run in self._forwarded:
            self.plot.on_rows(run, lanes)

    # The run stays in `_forwarded` after its end: a run given up for dead when the cell ended
    # (its loop was still running in another thread) is resumed when more rows come.
    def _end(self, run: Run) -> None:
        super()._end(run)
        if self.plot is not None and run in self._forwarded:
            self.plot._end(run)

    def _resume(self, run: Run) -> None:
        super()._resume(run)
        if self.plot is not None and run in self._forwarded:
            self.plot._resume(run)


class _CellPlot(LivePlot):
    """The `LivePlot` of an auto-mode cell. It is never attached itself (its cell's sink hands
    it the runs), so a stop asked of it (its Stop button, ``plot.stop()``) goes to that sink,
    which the runs ask whether to stop."""

    def __init__(self, cell_sink: Sink, **options: Any) -> None:
        super().__init__(**options)
        self._cell_sink = cell_sink
        self._sync_stop_mode()

    def _sync_stop_mode(self) -> None:
        # The cell's sink is attached (and, in the main thread, armed) for the whole cell, so a
        # Stop click can be a kernel interrupt, which reaches sync and awaiting cells alike.
        cell_sink = getattr(self, "_cell_sink", None)
        if cell_sink is None:
            super()._sync_stop_mode()
        else:
            armed = any(cell_sink._armed)
            self.panel.stop_mode = "interrupt" if armed else "message"

    def stop(self) -> None:
        super().stop()
        self._cell_sink.stop()


# ---------------------------------------------------------------------------- magics
@magics_class
class JaxHistMagics(Magics):
    """``%%jaxhist`` and ``%jaxhist on|off``; see the module docstring."""

    def __init__(self, shell: Any) -> None:
        super().__init__(shell)
        self._auto_options: dict[str, Any] | None = None  # None: auto mode is off
        self._auto_output: str | None = None
        self._cell_sink: _CellSink | None = None  # auto mode's sink for the running cell
        self._told_no_frontend = False
        self._say_lock = threading.Lock()

    # ------------------------------------------------------------------- display
    def _frontend(self) -> bool:
        # ipykernel's shell has a kernel, and with it the comms widgets talk through; a
        # terminal IPython has neither, and a displayed widget would only print its repr.
        return getattr(self.shell, "kernel", None) is not None

    def _show(self, live: LivePlot) -> None:
        if self._frontend():
            display(live)
        else:
            self._tell_no_frontend()

    def _tell_no_frontend(self) -> None:
        with self._say_lock:  # auto mode calls this from the thread that runs the callbacks
            told, self._told_no_frontend = self._told_no_frontend, True
        if not told:
            print(NO_FRONTEND)

    def _new_plot(
        self, options: dict[str, Any], output: str | None, cell_sink: Sink | None = None
    ) -> LivePlot:
        live = LivePlot(**options) if cell_sink is None else _CellPlot(cell_sink, **options)
        if output:
            self.shell.user_ns[output] = live
        self._show(live)
        return live

    # ---------------------------------------------------------------- cell magic
    @output_can_be_silenced  # a trailing ";" hides the value, as in any cell
    @magic_arguments.magic_arguments(name="%jaxhist")
    @_plot_arguments
    @cell_magic("jaxhist")
    def jaxhist_cell(self, line: str, cell: str) -> Any:
        """Show a live plot at the top of the output and run the cell with it attached.

        Every ``jhw.while_loop`` the cell runs streams to it, live; an interrupt (■) stops the
        loop with its partial history and the rest of the cell runs. The value of the cell's
        last expression is its output, as without the magic.
        """
        __tracebackhide__ = True  # a failing cell shows the user's frames, not the magic's
        args = _parse(self.jaxhist_cell, line)
        # This cell draws on its own plot: auto mode's sink for it would be a second one.
        self._end_cell_sink(None)
        live = self._new_plot(_plot_options(args), args.output)
        with live:
            return self._run_body(cell)

    def _run_body(self, cell: str) -> Any:
        """Run ``cell`` in the user namespace like a cell: last expression as the value.

        Not a nested ``run_cell``: that reports its own errors, so a failing body would leave
        the cell "ok" and Run All would go on. An exception here fails the cell.
        """
        __tracebackhide__ = True
        shell = self.shell
        # The leading newline keeps the line numbers of tracebacks those of the cell as shown,
        # with the %%jaxhist line as line 1.
        source = "\n" + shell.transform_cell(cell)
        filename = shell.compile.cache(source, shell.execution_count, raw_code=source)
        tree = shell.transform_ast(shell.compile.ast_parse(source, filename=filename))
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        try:
            body = shell.compile(tree, filename, "exec")
            value = None if last is None else shell.compile(last, filename, "eval")
        except SyntaxError as e:
            if "await" in str(e.msg):
                raise UsageError(
                    "%%jaxhist runs its cell synchronously, so top-level `await` cannot be used "
                    "in it. For an awaiting cell, turn on auto mode (`%jaxhist on`): it plots "
                    "every cell's runs, async cells included."
                ) from None
            raise
        exec(body, shell.user_ns)
        return None if value is None else eval(value, shell.user_ns)

    # ---------------------------------------------------------------- line magic
    @magic_arguments.magic_arguments(name="jaxhist")
    @magic_arguments.argument(
        "mode",
        nargs="?",
        choices=("on", "off"),
        help="on: plot every cell that runs a loop; off: stop. Alone: print the state.",
    )
    @_plot_arguments
    @line_magic("jaxhist")
    def jaxhist_line(self, line: str) -> None:
        """Auto mode: while on, each cell that starts a ``jhw.while_loop`` shows a live plot.

        The plot appears under the cell when its first run starts (a cell without a run shows
        nothing; several runs of a cell share its plot). Options given with ``on`` apply to
        every plot; ``-o NAME`` holds the latest cell's plot.
        """
        args = _parse(self.jaxhist_line, line)
        options = _plot_options(args)
        if args.mode != "on" and (options or args.output):
            raise UsageError(
                f"options go with `%jaxhist on` (got them with {args.mode or 'no mode'!r}); "
                "e.g. %jaxhist on --log-y\nusage: " + _usage(self.jaxhist_line)
            )
        if args.mode == "on":
            self._auto_on(options, args.output)
        elif args.mode == "off":
            self._auto_off()
        if self._auto_options is None:
            print("jaxhist auto mode: off")
        else:
            described = _describe(self._auto_options, self._auto_output)
            print("jaxhist auto mode: on" + (f" ({described})" if described else ""))
        if self._auto_options is not None and not self._frontend():
            self._tell_no_frontend()

    # ------------------------------------------------------------------ auto mode
    def _auto_on(self, options: dict[str, Any], output: str | None) -> None:
        self._auto_options, self._auto_output = options, output
        events = self.shell.events
        # Registering again only updates the options (turning it on twice is fine).
        if self._pre_run_cell not in events.callbacks["pre_run_cell"]:
            events.register("pre_run_cell", self._pre_run_cell)
            events.register("post_run_cell", self._post_run_cell)

    def _auto_off(self) -> None:
        self._auto_options = self._auto_output = None
        events = self.shell.events
        for name, callback in (
            ("pre_run_cell", self._pre_run_cell),
            ("post_run_cell", self._post_run_cell),
        ):
            if callback in events.callbacks[name]:
                events.unregister(name, callback)
        # This cell's post_run_cell will not come any more: detach its sink now.
        self._end_cell_sink(None)

    def _pre_run_cell(self, info: Any) -> None:
        self._end_cell_sink(None)  # a cell whose post_run_cell never came
        options, output = self._auto_options, self._auto_output
        if options is None:
            return
        sink = _CellSink(lambda cell_sink: self._new_plot(options, output, cell_sink))
        sink.__enter__()
        self._cell_sink = sink

    def _post_run_cell(self, result: Any) -> None:
        self._end_cell_sink(result)

    def _end_cell_sink(self, result: Any) -> None:
        sink, self._cell_sink = self._cell_sink, None
        if sink is None:
            return
        error = getattr(result, "error_in_exec", None)
        if error is None:
            sink.__exit__(None, None, None)
        else:  # the cell raised: runs it left unclosed are failed, as `with` would do
            sink.__exit__(type(error), error, error.__traceback__)

    def unload(self) -> None:
        """Turn auto mode off (the extension is being unloaded)."""
        self._auto_off()


# ------------------------------------------------------------------------- extension
_loaded: dict[int, JaxHistMagics] = {}


def load_ipython_extension(ipython: Any) -> None:
    """Register ``%%jaxhist`` and ``%jaxhist`` (``%load_ext jaxhist_widget``)."""
    if id(ipython) in _loaded:  # %load_ext twice, or %reload_ext after an unload
        return
    magics = JaxHistMagics(ipython)
    ipython.register_magics(magics)
    _loaded[id(ipython)] = magics


def unload_ipython_extension(ipython: Any) -> None:
    """Turn auto mode off (``%unload_ext jaxhist_widget``)."""
    magics = _loaded.pop(id(ipython), None)
    if magics is not None:
        magics.unload()
