"""Shared fixtures: a real Jupyter kernel (this interpreter's ipykernel via jupyter_client)."""

from __future__ import annotations

import math
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from .helpers import ROOT
from .helpers.docs import Built, build_site, newcomer_build
from .helpers.kernels import KernelDriver, start_kernel
from .helpers.notebook_runs import FOLDER_VARIABLE

__all__ = ["ROOT"]

# CI explores the same examples on every run (a submission must not fail on a fresh random
# draw), with no deadline per example (CI's oldest and Python 3.13 environments run beside the
# newest's, at a lower priority: see .ci/run); locally each run draws new ones, and failures are
# kept in .hypothesis/.
settings.register_profile("ci", derandomize=True, print_blob=True, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")


#: The markers whose tests run alone (`serial`): a real kernel, a browser, the docs site's build
#: (one per pytest process: a session fixture), the benchmark scripts (they time themselves).
SERIAL_MARKERS = ("kernel", "ui", "site", "bench")
#: Files whose tests run alone too, and why: they time what they check, count signals, or wait
#: on collectives across forced CPU devices that a busy core can make time out. (Every test
#: here passed beside another on a loaded machine but these: a core taken by the other pass
#: can push a timed check past its bound.)
SERIAL_FILES = {
    "tests/host/interrupts/": "presses: signals timed and counted",
    "tests/device/parallel/test_devices.py": "forced CPU devices: collectives time out under load",
    "tests/host/runtime/test_program_ends_on_devices.py": "forced CPU devices",
    "tests/host/runtime/test_program_ends.py": "a program's end seen within a time",
    "tests/host/runtime/test_hub.py": "runs in threads, timed",
    "tests/host/runtime/test_many_lanes.py": "filing timed",
    "tests/host/runtime/test_runs_in_threads_and_nested_loops.py": "runs in threads, timed",
    "tests/host/runtime/test_worker.py": "tasks held and timed",
    "tests/device/stream/test_streaming.py": "rows timed as they arrive",
    "tests/host/sinks/test_stop.py": "a stop timed",
    "tests/host/sinks/test_log.py": "the loop against the device's pace",
    "tests/host/store/test_store_processes.py": "processes and locks, timed",
    "tests/host/store/test_store_filing.py": "filing timed",
    "tests/host/tensorboard/test_tensorboard.py": "files read while the run goes on",
    "tests/ui/plot/test_widget.py": "update rates",
    "tests/ui/plot/test_throttle.py": "update rates",
    "tests/ui/plot/test_copies.py": "a slow copy's time kept out of the plot's",
}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--serial",
        choices=("only", "skip"),
        default=None,
        help="only: run the tests that must run alone (see SERIAL_MARKERS, SERIAL_FILES in "
        "tests/conftest.py); skip: the others (scripts/test.sh runs those on every core first)",
    )


def runs_alone(item: pytest.Item) -> bool:
    """Whether ``item`` must run with no other test beside it (`SERIAL_MARKERS`, or a test of
    `SERIAL_FILES`)."""
    if any(item.get_closest_marker(m) for m in SERIAL_MARKERS):
        return True
    path = item.path.relative_to(ROOT).as_posix()
    return any(path.startswith(prefix) for prefix in SERIAL_FILES)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    choice = config.getoption("--serial")
    if choice is None:
        return
    keep, drop = [], []
    for item in items:
        (keep if runs_alone(item) == (choice == "only") else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def pytest_configure(config: pytest.Config) -> None:
    # The tests press Ctrl-C as in a terminal's foreground job, in this process and in the
    # scripts it starts. A suite started in the background of a shell without job control
    # (`bash .ci/run &` in a script) inherits SIGINT ignored, and every child would inherit that
    # too: give Ctrl-C its default meaning back (a child's exec resets it to the default).
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def kernel(tmp_path: Path) -> Iterator[KernelDriver]:
    """A fresh real kernel for one test."""
    pytest.importorskip("jupyter_client")
    pytest.importorskip("ipykernel")
    km, kc = start_kernel(tmp_path)
    try:
        yield KernelDriver(km, kc)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


@pytest.fixture(scope="module")
def module_kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelDriver]:
    """One real kernel shared by a module's tests (they run in order, like notebook cells)."""
    pytest.importorskip("jupyter_client")
    pytest.importorskip("ipykernel")
    km, kc = start_kernel(tmp_path_factory.mktemp("kernel"))
    try:
        yield KernelDriver(km, kc)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


@pytest.fixture(scope="session", autouse=True)
def _notebook_runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A folder where a tutorial's run is kept for the session (``scripts/notebook_runs.py``):
    the docs site's build and the notebook tests run each tutorial once between them. (The
    build's subprocesses, a newcomer's included, inherit it.)"""
    before = os.environ.get(FOLDER_VARIABLE)
    os.environ[FOLDER_VARIABLE] = str(tmp_path_factory.mktemp("notebook-runs"))
    yield
    if before is None:
        os.environ.pop(FOLDER_VARIABLE, None)
    else:
        os.environ[FOLDER_VARIABLE] = before


@pytest.fixture(scope="session")
def docs_site(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """The docs site, built once per session (the build runs every tutorial): the README's way in
    a fresh environment (`newcomer_build`), shared by the newcomer's test, the site's and the
    browser's; in an environment pinned to the oldest versions (``PIP_CONSTRAINT``), which a
    newcomer's pip would not resolve, built here instead."""
    folder = tmp_path_factory.mktemp("docs")
    if os.environ.get("PIP_CONSTRAINT"):
        return Built(folder / "site", build_site(folder / "site"), newcomer=False)
    return newcomer_build(folder)


@pytest.fixture
def sinks_told_in_the_loops_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """No sink is found slow, for a test of what a sink does in the loop's own host call.

    The hub tells a sink whose one call took over `_hub_sinks.SLOW_S` (50 ms) of later rows on
    its worker instead; on CI's two loaded cores a plot's first update, or a pause of any sink's
    thread, can take that long, and the test would then check the worker's path by chance
    (CI: an update's rows noted on the worker after the loop's call had returned)."""
    from jaxhist_widget._host.runtime import _hub_sinks  # (the package, when a test asks)

    monkeypatch.setattr(_hub_sinks, "SLOW_S", math.inf)
