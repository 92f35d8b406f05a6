"""The magics: ``%%jaxhist`` (a cell with its own plot) and ``%jaxhist on|off`` (auto mode).

On top of the widget layer. Watching a loop in a notebook then takes no code change:

- ``%%jaxhist [options]`` shows a `LivePlot` at the top of the cell's output and runs the cell
  with it attached (exactly ``with live:`` around the cell body);
- ``%jaxhist on [options]`` / ``%jaxhist off``: auto mode. While on, each cell gets a sink of its
  own for the time it runs; when the cell's first streaming run starts, that sink makes a
  `LivePlot`, shows it under the cell and hands it every run of the cell. A cell that runs no
  loop shows nothing and creates no widget.

Both attach through ``Sink.__enter__`` / ``Sink.__exit__``, as ``with live:`` does, so an
interrupt (■) ends a loop the same way there.
"""

from __future__ import annotations

import ast
import contextlib
import re
import sys
import threading
import warnings
from collections.abc import Callable
from types import FrameType
from typing import TYPE_CHECKING, Any

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

from .._host import HUB, Sink, Store, TensorBoard, name_runs
from ..ui import LivePlot
from ._cell_sinks import _CellPlot, _CellSink
from ._options import (
    PARAMS,
    _describe,
    _named,
    _parse,
    _plot_arguments,
    _plot_options,
    _read_named,
    _usage,
)
from ._stopped import EndIfStopped, checker

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

__all__ = ["JaxHistMagics"]

NO_FRONTEND = (
    "jaxhist: no widget frontend here (a plain IPython terminal), so nothing is drawn; the runs "
    "are still recorded. Keep the plot with -o NAME (`%%jaxhist -o NAME`, `%jaxhist on -o NAME`) "
    "and read NAME.history(), NAME.to_csv(path) or NAME.runs."
)


@magics_class
class JaxHistMagics(Magics):
    """``%%jaxhist`` and ``%jaxhist on|off``; see the module docstring."""

    def __init__(self, shell: Any) -> None:
        super().__init__(shell)
        self._auto_options: dict[str, Any] | None = None  # None: auto mode is off
        self._auto_output: str | None = None
        self._auto_named: dict[str, str] = {}  # the variables its plots read (--lane-values)
        self._cell_sink: _CellSink | None = None  # auto mode's sink for the running cell
        self._cell_plot: LivePlot | None = None  # the running %%jaxhist cell's plot
        # ``--tensorboard DIR``: auto mode's sink, attached while each cell runs (then in
        # `_auto_cell_tensorboard`), and a %%jaxhist cell's own, attached with its plot.
        self._auto_tensorboard: TensorBoard | None = None
        self._auto_cell_tensorboard: TensorBoard | None = None
        self._cell_tensorboard: TensorBoard | None = None
        self._cell_store: Store | None = None  # the running %%jaxhist cell's --store
        # The running cell's run names (`Sink.named`), undone when it ends.
        self._cell_names = contextlib.ExitStack()
        self._told_no_frontend = False
        self._start_cell, self._check_stopped = checker(lambda: HUB.interrupts.stops)
        self._end_if_stopped = EndIfStopped(f"{self._registry_entry}._check_stopped")
        self._say_lock = threading.Lock()

    @property
    def _ipython(self) -> InteractiveShell:
        """The shell: `Magics` types it as optional, but these magics are always given one."""
        shell = self.shell
        assert shell is not None
        return shell

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
            self._ipython.user_ns[output] = live
        self._show(live)
        return live

    def _new_cell_plot(
        self, options: dict[str, Any], output: str | None, named: dict[str, str], cell_sink: Sink
    ) -> LivePlot:
        """Auto mode's plot of a cell, made as its first run starts: the variables its options
        name are read now, so the cell itself may define them. One it cannot read leaves the
        plot without it, and a warning says why (a plot never fails the cell's loop)."""
        try:
            before = "before the cell's first loop"
            # a new dict: ``options`` are auto mode's, for every cell
            options = options | _read_named(
                named, self._ipython.user_ns, _has_params(options), before
            )
        except UsageError as e:
            message = f"jaxhist: {e} This cell's plot is drawn without the lanes' values."
            warnings.warn(message, RuntimeWarning, stacklevel=1)
        return self._new_plot(options, output, cell_sink)

    # ---------------------------------------------------------------- cell magic
    @output_can_be_silenced  # a trailing ";" hides the value, as in any cell
    @magic_arguments.magic_arguments(name="%jaxhist")
    @_plot_arguments
    @magic_arguments.argument(
        "--name",
        metavar="TEXT",
        help="the name of the cell's runs (default: 'cell N', N the cell's number)",
    )
    # IPython annotates cell_magic(name) as returning "_F | Callable[[_F], _F]", a union the
    # method cannot be passed to; it is the decorator (IPython's magic_deco with a name).
    @cell_magic("jaxhist")  # type: ignore[arg-type]
    def jaxhist_cell(self, line: str, cell: str) -> Any:
        """Show a live plot at the top of the output and run the cell with it attached.

        Every ``jhw.while_loop`` the cell runs streams to it, live; an interrupt (■) stops the
        loop with its partial history and the rest of the cell runs. The value of the cell's
        last expression is its output, as without the magic.

        A cell that starts with ``%%jaxhist`` is rewritten before IPython sees the magic (see
        `_rewrite_cell`), so it runs as the cell itself; this method serves the other ways of
        calling a cell magic (``run_cell_magic``, after another cell magic).
        """
        __tracebackhide__ = True  # a failing cell shows the user's frames, not the magic's
        live, name, tensorboard = self._begin_cell(line)
        try:
            with name_runs(live, *name), tensorboard or contextlib.nullcontext(), live:
                return self._run_body(cell)
        finally:
            self._file_cell_runs()

    def _begin_cell(self, line: str) -> tuple[LivePlot, tuple[str, bool], TensorBoard | None]:
        """The cell's plot, shown, the name of its runs (and whether it was given), and the
        cell's `TensorBoard` sink (``--tensorboard DIR``) or None."""
        args = _parse(self.jaxhist_cell, line)
        options = _plot_options(args)
        # read as the cell starts (its plot is made now), before anything of the cell runs
        named, params = _named(args), _has_params(options)
        options |= _read_named(named, self._ipython.user_ns, params, "in an earlier cell")
        name = (args.name, True) if args.name else (f"cell {_calling_cell(self.shell)}", False)
        # This cell draws on its own plot: auto mode's sink for it would be a second one.
        self._end_cell_sink(None)
        tensorboard = None
        if args.tensorboard:  # the cell's own files, not also auto mode's
            self._end_auto_tensorboard(None)
            tensorboard = TensorBoard(args.tensorboard)
        self._cell_store = options.get("store")
        return self._new_plot(options, args.output), name, tensorboard

    def _enter_cell(self, line: str) -> None:
        """Line 1 of a rewritten ``%%jaxhist`` cell: attach the cell's plot until it ends."""
        live, name, tensorboard = self._begin_cell(line)
        self._cell_names.enter_context(name_runs(live, *name))
        if tensorboard is not None:
            tensorboard.__enter__()
            self._cell_tensorboard = tensorboard
        live.__enter__()
        self._cell_plot = live

    def _rewrite_cell(self, lines: list[str]) -> list[str]:
        """Input transformer: ``%%jaxhist OPTIONS`` as line 1 becomes a call that attaches the
        cell's plot (detached in ``post_run_cell``), and the body runs as the cell itself.

        So the cell keeps IPython's own semantics, not an imitation of them: its number and
        line numbers in tracebacks, no frame of the magic, its value, top-level ``await``, and
        an error that fails the cell (Run All stops).
        """
        if not lines or not re.match(r"%%jaxhist(\s|$)", lines[0]):
            return lines
        options = lines[0][len("%%jaxhist") :].strip()
        return [f"{self._registry_entry}._enter_cell({options!r})\n", *lines[1:]]

    @property
    def _registry_entry(self) -> str:
        """Code that finds these magics at run time from the user's namespace."""
        return f"get_ipython().magics_manager.registry[{type(self).__name__!r}]"

    def _run_body(self, cell: str) -> Any:
        """Run ``cell`` in the user namespace like a cell: last expression as the value.

        Not a nested ``run_cell``: that reports its own errors, so a failing body would leave
        the cell "ok" and Run All would go on. An exception here fails the cell.
        """
        __tracebackhide__ = True
        shell = self._ipython
        # The leading newline keeps the line numbers of tracebacks those of the cell as shown,
        # with the %%jaxhist line as line 1; the number is the calling cell's.
        source = "\n" + shell.transform_cell(cell)
        filename = shell.compile.cache(source, _calling_cell(shell), raw_code=source)
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
                    "this %%jaxhist cell runs synchronously, so top-level `await` cannot be "
                    "used in it. Start the cell with %%jaxhist (not after another magic), or "
                    "turn on auto mode (`%jaxhist on`): both run awaiting cells."
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
    @line_magic("jaxhist")  # type: ignore[arg-type]  # as @cell_magic("jaxhist") above
    def jaxhist_line(self, line: str) -> None:
        """Auto mode: while on, each cell that starts a ``jhw.while_loop`` shows a live plot.

        The plot appears under the cell when its first run starts (a cell without a run shows
        nothing; several runs of a cell share its plot). Options given with ``on`` apply to
        every plot; ``-o NAME`` holds the latest cell's plot.
        """
        args = _parse(self.jaxhist_line, line)
        options, named = _plot_options(args), _named(args)
        if args.mode != "on" and (options or named or args.output or args.tensorboard):
            raise UsageError(
                f"options go with `%jaxhist on` (got them with {args.mode or 'no mode'!r}); "
                "e.g. %jaxhist on --log-y\nusage: " + _usage(self.jaxhist_line)
            )
        if args.mode == "on":
            self._auto_on(options, args.output, args.tensorboard, named)
        elif args.mode == "off":
            self._auto_off()
        if self._auto_options is None:
            print("jaxhist auto mode: off")
        else:
            tensorboard = self._auto_tensorboard
            described = _describe(
                self._auto_options,
                self._auto_output,
                None if tensorboard is None else str(tensorboard.logdir),
                self._auto_named,
            )
            print("jaxhist auto mode: on" + (f" ({described})" if described else ""))
        if self._auto_options is not None and not self._frontend():
            self._tell_no_frontend()

    # ------------------------------------------------------------------ cell hooks
    def _hooks(self) -> list[tuple[str, Callable[[Any], None]]]:
        return [("pre_run_cell", self._pre_run_cell), ("post_run_cell", self._post_run_cell)]

    def load(self) -> None:
        """Register the cell rewriter and the cell hooks (the extension is being loaded)."""
        self._ipython.input_transformers_cleanup.append(self._rewrite_cell)
        self._ipython.ast_transformers.append(self._end_if_stopped)
        for name, callback in self._hooks():
            self._ipython.events.register(name, callback)

    def unload(self) -> None:
        """Undo `load` and turn auto mode off (the extension is being unloaded)."""
        if self._rewrite_cell in self._ipython.input_transformers_cleanup:
            self._ipython.input_transformers_cleanup.remove(self._rewrite_cell)
        if self._end_if_stopped in self._ipython.ast_transformers:
            self._ipython.ast_transformers.remove(self._end_if_stopped)
        for name, callback in self._hooks():
            if callback in self._ipython.events.callbacks[name]:
                self._ipython.events.unregister(name, callback)
        self._auto_off()
        self._end_cell_plot(None)

    def _auto_on(
        self,
        options: dict[str, Any],
        output: str | None,
        tensorboard: str | None,
        named: dict[str, str],
    ) -> None:
        # Turning it on again only updates the options.
        self._auto_options, self._auto_output, self._auto_named = options, output, named
        self._auto_tensorboard = TensorBoard(tensorboard) if tensorboard else None

    def _auto_off(self) -> None:
        self._auto_options = self._auto_output = None
        self._auto_named = {}
        self._auto_tensorboard = None
        # This cell's sinks would live until its post_run_cell: detach them now.
        self._end_cell_sink(None)
        self._end_auto_tensorboard(None)

    def _pre_run_cell(self, info: Any) -> None:
        self._start_cell()
        # A cell whose post_run_cell never came leaves nothing attached to the next one.
        self._end_cell_sink(None)
        self._end_cell_plot(None)
        self._end_auto_tensorboard(None)
        self._cell_names.close()
        options, output, named = self._auto_options, self._auto_output, self._auto_named
        if options is None:
            return
        sink = _CellSink(lambda cell_sink: self._new_cell_plot(options, output, named, cell_sink))
        # Its runs are named after the cell (`In [N]` while it runs), unless named otherwise.
        cell = f"cell {_cell_to_run(self.shell)}"
        self._cell_names.enter_context(name_runs(sink, cell, False))
        if self._auto_tensorboard is not None:  # every run of the cell, whatever draws it
            self._auto_tensorboard.__enter__()
            self._auto_cell_tensorboard = self._auto_tensorboard
        sink.__enter__()
        self._cell_sink = sink

    def _post_run_cell(self, result: Any) -> None:
        self._end_cell_plot(result)
        self._end_cell_sink(result)
        self._end_auto_tensorboard(result)
        self._cell_names.close()
        self._file_cell_runs()

    def _file_cell_runs(self) -> None:
        """Wait until the cell's runs are in its ``--store`` (as leaving ``with store:`` does):
        when the cell ends, its rows are on disk, unless another program holds the file's lock
        (then they are filed when it lets go, and the store says so)."""
        store, self._cell_store = self._cell_store, None
        stores = [store, (self._auto_options or {}).get("store")]
        for s in {id(s): s for s in stores if isinstance(s, Store)}.values():
            s.flush(s.exit_wait, warn=True, unless_locked=True)

    def _end_cell_sink(self, result: Any) -> None:
        sink, self._cell_sink = self._cell_sink, None
        _exit(sink, result)

    def _end_auto_tensorboard(self, result: Any) -> None:
        tensorboard, self._auto_cell_tensorboard = self._auto_cell_tensorboard, None
        _exit(tensorboard, result)

    def _end_cell_plot(self, result: Any) -> None:
        live, self._cell_plot = self._cell_plot, None
        try:
            _exit(live, result)
        finally:
            self._end_cell_tensorboard(result)

    def _end_cell_tensorboard(self, result: Any) -> None:
        tensorboard, self._cell_tensorboard = self._cell_tensorboard, None
        _exit(tensorboard, result)


def _has_params(options: dict[str, Any]) -> bool:
    """Whether the hyperparameter chart's options are among ``options``."""
    return any(key in options for key in PARAMS)


def _exit(sink: Sink | None, result: Any) -> None:
    """Leave ``with sink:`` as the cell ended: runs a failed cell left unclosed are failed."""
    if sink is None:
        return
    error = getattr(result, "error_in_exec", None)
    if error is None:
        sink.__exit__(None, None, None)
    else:
        sink.__exit__(type(error), error, error.__traceback__)


def _cell_to_run(shell: Any) -> int:
    """The number IPython will show for the cell about to run (in ``pre_run_cell``).

    Read from the input history, which holds one entry per numbered cell (and an empty one at
    0) and is stored after ``pre_run_cell``: IPython versions differ on whether
    `execution_count` was counted up by then.
    """
    history = getattr(getattr(shell, "history_manager", None), "input_hist_raw", None)
    return len(history) if isinstance(history, list) else shell.execution_count


def _calling_cell(shell: Any) -> int:
    """The number IPython shows for the cell whose code is running (``In[N]``).

    IPython may have counted the cell already when its code runs, so `execution_count` can be
    one ahead; the number of the running cell's code object is the one its prompt shows.
    """
    numbers = getattr(shell.compile, "_filename_map", {})
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        number = numbers.get(frame.f_code.co_filename)
        if number is not None:
            return number
        frame = frame.f_back
    return shell.execution_count
