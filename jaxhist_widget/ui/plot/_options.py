"""`LivePlot`'s options, each declared once: a field of `Options`, in the order of the plot's
constructor, with its default, its check, its doc, and where it is also a live control
(`Control`) or a ``%%jaxhist`` flag (`Flag`).

Everything else is derived from that table: the check of the constructor's keywords
(`checked`), the plot's properties synced with its panel (`..plot._controls`), the traits the
constructor writes (`control_traits`), the ``%%jaxhist`` flags (`..._extension._options`), the
constructor's Parameters (`parameters_doc`) and the API page's options table (`options_table`).
The constructor's explicit signature, kept for editors, is checked against it by a test. Adding
an option: one field here, one line of the signature, and the code that uses it.

The checks of options with a module of their own (``fields``, ``vectors``, ``paths``,
``lane_labels``, the windows of steps: `..series`; ``smoothing``: `..reduce`; ``charts``:
`..figure`) stay there; these are the plain ones.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from ..figure import CHART_MODES, check_charts
from ..look import check_x_axis, shown_text
from ..reduce import check_weight
from ..series import (
    BEST,
    LABEL_PARAM,
    VECTOR_MODES,
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

__all__ = [
    "MAX_POINTS_LIMIT",
    "OPTIONS",
    "Control",
    "Flag",
    "Options",
    "Spec",
    "check_flag",
    "checked",
    "control_traits",
    "options_table",
    "parameters_doc",
    "specs",
    "with_parameters",
]

#: Upper bound on ``max_points``.
MAX_POINTS_LIMIT = 4000

#: How a ``%%jaxhist`` flag reads its text (the extension holds the readers): as it is, an
#: int, a comma-separated list of fields or of paths, a store's path, the name of a variable
#: of the user's namespace (a sweep's lanes are arrays a line cannot spell), one of
#: ``choices``, or no text (a switch: given, True).
Parse = Literal["text", "int", "fields", "paths", "store", "variable", "choice", "switch"]


@dataclass(frozen=True)
class Control:
    """An option that is also a control of the panel: its trait of the same name, and the
    plot's property synced with it (set in Python or clicked in the view: one truth)."""

    #: The property's doc.
    doc: str
    #: The trait's value of a checked one (None: the value itself).
    to_trait: Callable[[Any], Any] | None = None
    #: The property's value of the trait's (None: the trait's).
    read: Callable[[Any], Any] | None = None
    #: The property's check of a value set, ``(plot, value)``, where it is not the
    #: constructor's (``log_y`` takes no None once made; ``params_field`` a plotted field).
    check: Callable[[Any, Any], Any] | None = None


@dataclass(frozen=True)
class Flag:
    """An option that is also a flag of ``%%jaxhist`` and ``%jaxhist on`` (``--log-y``)."""

    help: str
    metavar: str | None = None
    parse: Parse = "text"
    choices: tuple[str, ...] | None = None
    #: Run the option's check as the line is parsed: a bad value is a usage error before any
    #: widget exists (its message the constructor's, less the option's name).
    check: bool = False
    #: False: the magic attaches what it names itself (a cell's `TensorBoard` sink).
    to_plot: bool = True


@dataclass(frozen=True)
class Spec:
    """One option: its doc (the constructor's Parameters entry; its first sentence is the API
    page's line), its check, and whether it is a control and a flag."""

    doc: str
    #: The value checked (raises TypeError / ValueError naming the option and the fix); None:
    #: taken as given (``store``, ``tensorboard``: the plot opens them) or checked with the
    #: options it depends on (`checked`).
    check: Callable[[Any], Any] | None = None
    #: The check is `check_flag`: True or False.
    boolean: bool = False
    control: Control | None = None
    flag: Flag | None = None


def option(default: Any, doc: str, **spec: Any) -> Any:
    """A field of `Options`: the option's default, and its `Spec` as the field's metadata."""
    return field(default=default, metadata={"option": Spec(doc, **spec)})


def check_flag(name: str, value: Any) -> bool:
    """``value`` if it is True or False, else a TypeError naming the option."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {value!r}.")
    return value


def _log_y(value: Any) -> bool | None:
    return None if value is None else check_flag("log_y", value)


def _title(title: Any) -> str:
    if title is not None and not isinstance(title, str):
        raise TypeError(f"title must be a str or None, got {title!r}.")
    return shown_text(title or "")  # any str, drawn as shown


def _max_points(max_points: Any) -> int | None:
    if max_points is not None:  # None: the default (`..series.line_points`)
        if not isinstance(max_points, int) or isinstance(max_points, bool):
            raise TypeError(f"max_points must be an int or None, got {max_points!r}.")
        if not 5 <= max_points <= MAX_POINTS_LIMIT:
            raise ValueError(
                f"max_points must be in 5..{MAX_POINTS_LIMIT} (points per line per update), "
                f"got {max_points}."
            )
    return max_points


def _ranked(plot: Any, value: Any) -> str | None:
    # The field a sweep drawn now plots, or a ValueError naming those it does.
    with plot._lock:
        return plot._state.check_ranked(check_params_field(value))


def _no_none(plot: Any, value: Any) -> bool:
    return check_flag("log_y", value)


def _steps_trait(steps: tuple[int, int] | None) -> list[int]:
    return list(steps) if steps is not None else []


def _steps_read(steps: list[int]) -> tuple[int, int] | None:
    return (steps[0], steps[1]) if steps else None


def _or_empty(value: str | None) -> str:
    return value or ""


def _or_none(value: str) -> str | None:
    return value or None


@dataclass(frozen=True)
class Options:
    """`LivePlot`'s options, checked: one field per keyword of its constructor, in its order,
    each with its default and its `Spec` (the table every other list of options derives from).
    """

    fields: tuple[str, ...] | None = option(
        None,
        """What to plot, by leaf name of ``record(carry)``. Default: every leaf. Entries:
        ``"loss"`` (a leaf; a vector leaf is drawn as ``vectors`` says), ``"|x|"`` (its L2
        norm), ``"x[3]"`` (one flat component; ``"W[1,2]"`` of a matrix). A name a run's
        record does not have is said in a note under the charts (the run is not an error).""",
        check=check_fields,
        flag=Flag(
            "what to plot, comma-separated: leaf names, '|x|' (norm), 'x[3]'",
            "A,B",
            "fields",
        ),
    )
    #: Every chart on a log y axis (True) or a linear one (False); None: each chart on a log
    #: one once its values span `..reduce.LOG_DECADES` decades.
    log_y: bool | None = option(
        None,
        """None (default): each chart starts on a linear y axis and goes to a logarithmic one
        once its positive values span three decades or more (a loss falling from 2 to 1e-6;
        the hyperparameter chart too), until its own "log" toggle or the panel's "log y" is
        used. True / False: every chart on a log / linear axis from the start. The panel's
        "log y" toggle sets every chart; each chart also has its own "log" toggle in its top
        left corner.""",
        check=_log_y,
        control=Control(
            """Whether every chart's y axis is logarithmic (synced with the panel's toggle; set,
        it ends each chart's going to a log axis of itself, as the constructor's None does).""",
            to_trait=bool,
            check=_no_none,
        ),
        flag=Flag("start with a logarithmic y axis", parse="switch"),
    )
    keep_runs: bool = option(
        False,
        """Keep previous runs on the plot and in `runs` (a toggle), each in its own colour,
        listed in the panel (a show/hide toggle each, show all / hide all, a filter:
        ``run_filter``); False keeps the latest run only (bounded memory). A run is named
        where it starts (`named`, ``run(..., name=...)``, ``%%jaxhist --name``, `name`), else
        after the call (``solve(3, lr=0.001)``), the cell (``cell 7``) or its number (``run
        N``).""",
        check=bool,
        control=Control(
            "Whether previous runs stay on the plot and in `runs` (synced with the toggle)."
        ),
        flag=Flag("keep previous runs on the plot, a colour each", parse="switch"),
    )
    title: str = option(
        None,
        "Shown at the top of the panel.",
        check=_title,
        flag=Flag("title of the plot", "TEXT"),
    )
    max_points: int | None = option(
        None,
        """Points per line per update (min/max decimated), 5..4000; None: 2000, lanes sharing
        4000.""",
        check=_max_points,
        flag=Flag(
            f"points sent per line per update, 5..{MAX_POINTS_LIMIT}", "N", "int", check=True
        ),
    )
    lane_labels: tuple[str, ...] | None = option(
        None,
        """Names of the vmap lanes (e.g. ``[f"lr={lr}" for lr in lrs]``), used wherever the
        plot names a lane; one per lane (a run with another lane count warns and uses ``lane
        k``). Numbers (``lane_labels=rates``, a numpy or jax array) are the lanes' values
        too.""",
        flag=Flag(
            "the variable holding the vmap lanes' names (str), or their values (numbers) "
            "(LivePlot(lane_labels=NAME))",
            "NAME",
            "variable",
        ),
    )
    #: The swept parameters' values per lane, by name (``lane_values``, or numeric labels).
    lane_values: dict[str, Any] | None = option(
        None,
        """The swept parameters' values, one per lane: ``rates``, or ``{"lr": rates, "wd":
        wds}``. A sweep whose lanes carry values gets a chart per parameter of each lane's
        last and best value of a plotted field (``params_field``) against it (log x where the
        values span decades), live; hovering a point names its lane and lights its lines (a
        lane drawn only in the band: its line, drawn while hovered). They name the lanes
        (``lr=0.001``) when ``lane_labels`` is not given.""",
        flag=Flag(
            "the variable holding a sweep's values, one per vmap lane (rates, or "
            "{'lr': rates}): its hyperparameter chart (LivePlot(lane_values=NAME))",
            "NAME",
            "variable",
        ),
    )
    #: The plotted field the plot's goal ranks (None: a loss-like one, `..series.default_field`).
    params_field: str | None = option(
        None,
        """The plot's one goal: the plotted field every "best", "median" and "worst" ranks
        (the lanes a sweep names, the legend's ``best = lowest val_loss``, the hyperparameter
        charts; ``"acc"``, ``"|x|"``). None: a loss-like field, the validation one first
        (``val_loss`` over ``train_loss``), else an accuracy-like one, else the first
        plotted. ``params_best``: whether a lane's best value of it is its lowest (``"min"``,
        a loss) or its highest (``"max"``, an accuracy); None: ``"max"`` for an accuracy-like
        name, else ``"min"``: ``LivePlot(lane_values=rates, params_field="acc")`` ranks by the
        highest accuracy. Both are properties and controls in the hyperparameter chart's
        corner (a field select, a best toggle), changed live; the static picture and the
        chart's CSV follow them. A field ``fields=`` does not plot is refused here, one the
        sweep does not plot is said in a note under the charts.""",
        control=Control(
            """The plot's goal: the plotted field every "best" ranks (the lanes named, the
        hyperparameter charts; None: a loss-like one, the validation one first, else the first
        plotted); synced with the field select in the chart's corner. Setting one the shown
        sweep does not plot raises a ValueError naming those it does.""",
            to_trait=_or_empty,
            read=_or_none,
            check=_ranked,
        ),
        flag=Flag(
            "the plotted field a sweep's hyperparameter chart ranks (default: the first)",
            "FIELD",
        ),
    )
    #: Whether a lane's best value of it is its lowest (``"min"``) or highest (``"max"``; None:
    #: by the field's name, `..series.best_of`).
    params_best: str | None = option(
        None,
        """``"min"``, ``"max"`` or None (default: by the field's name): see
        ``params_field``.""",
        check=check_params_best,
        control=Control(
            """Whether a lane's best value of `params_field` is its lowest (``"min"``: a loss) or
        its highest (``"max"``: an accuracy); None: by the field's name (``"max"`` for an
        accuracy-like one). Synced with the best toggle in the chart's corner.""",
            to_trait=_or_empty,
            read=_or_none,
        ),
        flag=Flag(
            "a lane's best value of that field: lowest (min, default) or highest (max)",
            parse="choice",
            choices=BEST,
        ),
    )
    lanes: tuple[int | str, ...] | None = option(
        None,
        """The vmap lanes drawn as lines (indices, negative from the end, or ``lane_labels``),
        at most `MAX_LANES`; by default all up to it, else a stride and the best, median,
        worst and a diverged lane by the goal (re-chosen as rows arrive: `..series.ROLES`) over
        every lane's band. Those lanes are named for their role at any lane count.""",
        check=check_lanes,
    )
    #: Draw a sweep's every lane at full strength, not only those named for a role.
    all_lanes: bool = option(
        False,
        """Past 16 lanes (`..series.LEAD_LANES`) a sweep is read by the band of every lane's
        quartiles and min–max, its median (a line over it) and the lanes named best, median,
        worst and diverged: the other lanes' lines are drawn faint. True draws them all at
        full strength; a panel toggle too ("all lanes", shown for such a sweep).""",
        boolean=True,
        control=Control(
            """Whether a sweep past 16 lanes draws every lane at full strength, not only the band,
        its median and the lanes named for a role (the others faint); synced with the
        toggle."""
        ),
    )
    continue_steps: bool = option(
        False,
        """Draw each run from the step where the previous one ended (a loop resumed from its
        last carry, e.g. in chunks of ``max_steps``), so the step axis counts the whole
        optimisation; best with ``keep_runs=True``. Host rows (`history`) keep each run's own
        steps.""",
        check=lambda value: check_flag("continue_steps", value),
    )
    store: Any = option(
        None,
        """Also append every run this plot draws to the SQLite store at this path (or this
        `jaxhist_widget.Store`), chunk by chunk, so a killed kernel keeps them; read them back
        with `jaxhist_widget.load_runs`.""",
        flag=Flag(
            "also append every run to the SQLite store at PATH (jhw.load_runs reads it)",
            "PATH",
            "store",
        ),
    )
    tensorboard: Any = option(
        None,
        """Also write every run this plot draws as TensorBoard event files under this
        directory (or through this `jaxhist_widget.TensorBoard`), chunk by chunk, for
        ``tensorboard --logdir``. Leaving ``with live:`` (or `run_async`) waits until the runs
        are in the files, as for ``store``.""",
        flag=Flag(
            "also write every run as TensorBoard event files under DIR (tensorboard --logdir DIR)",
            "DIR",
            to_plot=False,
        ),
    )
    charts: str = option(
        "per_field",
        """``"per_field"`` (default): one chart per plotted field, each with its own y range
        and titled with the field's name (a vector leaf's components share one chart), in a
        grid that reflows with the cell's width (charts of at least 320 px side by side, one
        column when narrower); every chart shows the same steps and has its own log toggle. A
        run plotting more than 12 metrics draws them on one chart. ``"shared"``: every field
        on one chart.""",
        check=check_charts,
        flag=Flag(
            "one chart per field (the default) or every field on one chart",
            parse="choice",
            choices=CHART_MODES,
        ),
    )
    vectors: Any = option(
        "auto",
        """How a leaf of more than one value is drawn, on one chart: ``"lines"`` (one per
        component), ``"band"`` (the median over quartile and min–max bands), ``"heatmap"``
        (the median over a histogram per step), ``"auto"`` (default: lines up to 10
        components, 4 under vmap, else a band), or a dict per leaf (``{"w": "heatmap"}``).""",
        check=check_vectors,
        flag=Flag(
            "how a vector leaf is drawn: lines, band (median, quartiles, min-max), "
            "heatmap, or auto (lines up to 10 components, a band beyond)",
            parse="choice",
            choices=VECTOR_MODES,
        ),
    )
    paths: Any = option(
        None,
        """Charts of one series against another, live: ``["xy"]`` (a leaf of two components)
        or ``[("x[0]", "x[1]")]`` (x, then y); one line per lane, its start and latest point
        marked.""",
        check=check_paths,
        flag=Flag(
            "charts of one series against another: a leaf of two components, or x:y",
            "XY,A:B",
            "paths",
        ),
    )
    smoothing: float = option(
        0.0,
        """Weight of a debiased exponential moving average drawn over every line,
        TensorBoard's smoothing (0: off, up to 0.999; a panel slider); the raw line stays,
        faint. Computed in the kernel from every row: exact however the line is decimated.""",
        check=check_weight,
        control=Control("The smoothing weight (0: off; synced with the panel's slider)."),
    )
    ignore_outliers: bool = option(
        True,
        """Fit each chart's y range to its drawn points but those far outside their bulk (more
        than twice the span of the central 96% beyond it: an early spike leaves the axis to
        the rest, a line's own ends stay), as TensorBoard's "ignore outliers", on by default
        as there; False fits every point. A panel toggle too.""",
        boolean=True,
        control=Control(
            "Whether the y ranges leave out the points far outside their bulk (synced with the "
            "toggle)."
        ),
    )
    log_x: bool = option(
        False,
        """A logarithmic step axis on every chart (step 0, which it cannot place, is left
        out); a panel toggle too.""",
        boolean=True,
        control=Control("Whether the step axis is logarithmic (synced with the panel's toggle)."),
    )
    last_steps: int = option(
        None,
        """Show only the last ``last_steps`` steps (None or 0: every step), redrawn from their
        rows at each update (exact however long the run), each y axis fitting them (a
        field).""",
        check=check_last_steps,
        control=Control(
            "Steps shown: the last ``last_steps`` only (0: every step; synced with the panel)."
        ),
    )
    step_range: tuple[int, int] | None = option(
        None,
        """Zoom: show steps ``(first, last)`` only (None: every step), drawn from their rows
        (every point of the range, however long the run), each y axis fitting them; it wins
        over ``last_steps`` until reset. A drag across a chart sets it, a double-click resets
        it, shift+drag pans it (`step_range` is synced with them).""",
        check=check_step_range,
        control=Control(
            """The zoom: the ``(first, last)`` steps every chart shows, or None (every step, or
        the `last_steps`). Synced with the charts: a drag across one sets it, a double-click
        resets it. It wins over `last_steps` until reset; setting `last_steps` resets it.""",
            to_trait=_steps_trait,
            read=_steps_read,
        ),
    )
    x_axis: str = option(
        "step",
        """``"step"``, ``"relative"`` (seconds since each run's first row) or ``"wall"`` (time
        of day); a panel select too. Times are a chunk's (`Run.times`); zoom and `last_steps`
        wait.""",
        check=check_x_axis,
        control=Control(
            """What the x axis counts: ``"step"``, ``"relative"`` (seconds since each run's first
        row) or ``"wall"`` (the local time of day its rows reached the host); synced with the
        panel's select. Times are per chunk of rows (see `jaxhist_widget.Run.times`)."""
        ),
    )
    run_filter: str = option(
        "",
        """Draw and list only the runs whose names match this regular expression (searched in
        the name, case-insensitive; "": every run): the run list's filter field.""",
        check=check_run_filter,
        control=Control(
            """A regular expression (case-insensitive, anywhere in the name): only the runs whose
        names match are drawn and listed ("": every run). Synced with the run list's filter
        field."""
        ),
    )

    @property
    def choice(self) -> PlotChoice:
        """What the plot draws of a run: its fields, vectors, paths and lanes."""
        return PlotChoice(self.fields, self.vectors, self.paths, self.lanes)


def specs() -> dict[str, Spec]:
    """Every option's `Spec`, by name, in the constructor's order."""
    return {f.name: f.metadata["option"] for f in dataclasses.fields(Options)}


def defaults() -> dict[str, Any]:
    """Every option's default, by name, in the constructor's order."""
    return {f.name: f.default for f in dataclasses.fields(Options)}


#: The keyword arguments of `LivePlot`.
OPTIONS = tuple(specs())


def checked(unknown: dict[str, Any], **given: Any) -> Options:
    """``given`` (every keyword of `LivePlot`) checked; ``unknown``: the keywords it does not
    take. Raises TypeError / ValueError naming the option and its fix."""
    if unknown:
        raise TypeError(
            f"LivePlot() got unexpected keyword argument(s) {', '.join(map(repr, unknown))}; "
            f"allowed: {', '.join(OPTIONS)}."
        )
    values = {}
    for name, spec in specs().items():
        value = given[name]
        if spec.boolean:
            value = check_flag(name, value)
        elif spec.check is not None:
            value = spec.check(value)
        values[name] = value
    # The options checked with others: the lanes' names and values name the same lanes, and
    # the goal is a plotted field.
    values |= lanes_named(values["lane_labels"], values["lane_values"])
    values["params_field"] = check_params_field(values["params_field"], values["fields"])
    return Options(**values)


def control_traits(options: Options) -> dict[str, Any]:
    """The panel's control traits of ``options``, in the constructor's order."""
    traits = {}
    for name, spec in specs().items():
        if spec.control is not None:
            value, to_trait = getattr(options, name), spec.control.to_trait
            traits[name] = to_trait(value) if to_trait is not None else value
    return traits


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


def parameters_doc() -> str:
    """The constructor's numpy-style Parameters section, from each option's doc."""
    lines = ["Parameters", "----------"]
    for name, spec in specs().items():
        lines += [name, *("    " + line.strip() for line in spec.doc.splitlines())]
    return "\n".join(lines)


def with_parameters(doc: str | None) -> str:
    """``doc`` (`LivePlot`'s docstring) with `parameters_doc` before its Examples, as
    `inspect.cleandoc` gives it: Python 3.13 strips a docstring's indentation when it compiles
    it, where earlier versions keep it."""
    summary, examples = inspect.cleandoc(doc or "").split("\nExamples\n", 1)
    return f"{summary}\n{parameters_doc()}\n\nExamples\n{examples}"


def options_table() -> str:
    """The API page's table of the options (markdown): each one's default, whether it is a
    live control (the plot's property of its name) and a ``%%jaxhist`` flag, and its doc's
    first sentence."""
    rows = [
        "| option | default | live control | `%%jaxhist` flag | what it does |",
        "|---|---|---|---|---|",
    ]
    for (name, spec), default in zip(specs().items(), defaults().values(), strict=True):
        shown = f'"{default}"' if isinstance(default, str) else repr(default)
        control = f"`live.{name}`" if spec.control is not None else ""
        flag = f"`--{name.replace('_', '-')}`" if spec.flag is not None else ""
        # (a sentence ends at a full stop before a capital: "e.g. in chunks" goes on)
        first = re.split(r"(?<=\.)\s+(?=[A-Z])", " ".join(spec.doc.split()))[0]
        rows.append(f"| `{name}` | `{shown}` | {control} | {flag} | {first} |")
    return "\n".join(rows)


if __name__ == "__main__":  # python -m jaxhist_widget.ui.plot._options: the API page's table
    print(options_table())
