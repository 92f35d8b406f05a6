"""Shared fixtures: a real Jupyter kernel (this interpreter's ipykernel via jupyter_client)."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from .helpers import ROOT
from .helpers.kernels import KernelDriver, start_kernel

__all__ = ["ROOT"]

# CI explores the same examples on every run (a submission must not fail on a fresh random
# draw); locally each run draws new ones, and failures are kept in .hypothesis/.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


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


@pytest.fixture(scope="session")
def docs_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, float]:
    """The docs site built once per session (the build runs every tutorial), and the seconds
    it took: shared by the site's tests and the browser's."""
    import time

    from .helpers.docs import build_site

    out = tmp_path_factory.mktemp("docs") / "site"
    start = time.monotonic()
    build = build_site(out)
    assert build.returncode == 0, f"mkdocs build --strict failed:\n{build.stdout}"
    return out, time.monotonic() - start
