"""Fixtures for browser tests: a Jupyter server (plus a second one for Notebook 7
pages) and one Chromium per session, a fresh browser context (page) per test, and
the one set-up a test needs on it: ``notebook`` (a notebook opened in a theme and
run; theme and kernels put back afterwards).

The whole directory is skipped, with a reason, when Playwright or Chromium is
missing. On failure the report gets a full-page screenshot path (and one of the
widget for a ``notebook`` test), the browser console and the tail of the server
log.

A browser test that fails is run once more (pytest-rerunfailures), and the
summary names it with its first failure (``RERUN``): on CI's loaded two cores a
test's reading of the page could race the page (three of the last CI runs failed
that way, each on another test, each fixed in the test), and a failure there
means that nothing submitted lands. A test that fails twice fails; one that
needed its second run is a race to fix all the same.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ..helpers.browser import Notebook
from ..helpers.jupyter_browser import (
    CHROMIUM_ARGS,
    CHROMIUM_PATH,
    UI,
    BrowserLog,
    JupyterServer,
    save_screenshot,
    start_jupyter_server,
    stop_jupyter_server,
)

if TYPE_CHECKING:
    from collections.abc import Generator, Iterator

    from playwright.sync_api import Browser, Page, Playwright

HERE = Path(__file__).parent

#: Default Playwright timeout per action, generous for 2-core CI machines.
DEFAULT_TIMEOUT_MS = 60_000


def _missing_requirement() -> str | None:
    """Why the browser tests cannot run here, or None."""
    try:  # cheap (~0.1 s); a real import also catches a broken install
        import playwright.sync_api  # noqa: F401
    except ImportError as exc:
        return f"browser tests need Playwright (pip install playwright): {exc}"
    # find_spec only: importing jupyterlab takes ~1.5 s.
    if importlib.util.find_spec("jupyterlab") is None:
        return "browser tests need JupyterLab (pip install jupyterlab)"
    if not CHROMIUM_PATH.exists():
        return (
            f"browser tests need Chromium at {CHROMIUM_PATH} "
            "(apt-get install chromium, or set JAXHIST_UI_CHROMIUM)"
        )
    return None


def pytest_configure(config: pytest.Config) -> None:
    # pyproject.toml may register it too; avoid a duplicate in `pytest --markers`.
    if not any(str(line).startswith("ui:") for line in config.getini("markers")):
        config.addinivalue_line(
            "markers", "ui: browser test against a real JupyterLab/Notebook 7 (Playwright)"
        )


#: Runs of a failed browser test after its first (see the module docstring).
RERUNS = 1
#: The browser tests that failed and ran again: (test, how its first run failed).
_RERUN: list[tuple[str, str]] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.outcome == "rerun":
        crash = getattr(report.longrepr, "reprcrash", None)
        _RERUN.append((report.nodeid, crash.message if crash else str(report.longrepr)[-500:]))


def pytest_terminal_summary(terminalreporter) -> None:
    if _RERUN:
        terminalreporter.section("browser tests that failed once, then ran again (races to fix)")
        for nodeid, why in _RERUN:
            terminalreporter.line(f"{nodeid}: {why}")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Skip at collection time so no server or browser fixture is even set up.
    # This hook sees every collected item, so only touch the ones in this dir.
    reason = _missing_requirement()
    rerun = reason is None and config.pluginmanager.hasplugin("rerunfailures")
    for item in items:
        if not item.path.is_relative_to(HERE):
            continue
        if reason is not None:
            item.add_marker(pytest.mark.skip(reason=reason))
        elif rerun:
            item.add_marker(pytest.mark.flaky(reruns=RERUNS))


@pytest.fixture(scope="session")
def jupyter_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    """A ``jupyter lab`` server (Lab at /lab, Notebook 7 at /notebooks) with
    isolated config, runtime, IPython, settings and workspace dirs.

    Use it for JupyterLab pages; Notebook 7 pages get `notebook7_server`.
    """
    yield from _serve(tmp_path_factory.mktemp("jupyter"))


def _serve(root: Path) -> Iterator[JupyterServer]:
    server = start_jupyter_server(root)
    try:
        yield server
    finally:
        stop_jupyter_server(server)


@pytest.fixture(scope="session")
def notebook7_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    """A second server, for Notebook 7 pages only.

    One server cannot serve both front ends' hashed static files reliably:
    jupyter_server 2.21's ``FileFindHandler.get_absolute_path`` caches the file
    found for a static path in a class-wide dict keyed by the file name alone,
    and Lab and Notebook 7 ship files of the same name (e.g. the Font Awesome
    ``620019ed9d1100b6.woff2`` a LivePlot page loads). Whichever front end asks
    first wins; the other gets "403 ... is not in root static directory" and a
    console error.
    """
    yield from _serve(tmp_path_factory.mktemp("jupyter-nb7"))


@pytest.fixture(scope="package")
def playwright_instance() -> Iterator[Playwright]:
    # Package scope: Playwright's sync API leaves its event loop marked running in the main
    # thread while it is started, so `asyncio.run` in any later test would refuse to start.
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        yield pw


@pytest.fixture(scope="package")
def browser(playwright_instance: Playwright) -> Iterator[Browser]:
    """Headless system Chromium (Playwright cannot download browsers here)."""
    browser = playwright_instance.chromium.launch(
        executable_path=str(CHROMIUM_PATH),
        headless=True,
        chromium_sandbox=False,  # i.e. --no-sandbox; needed when running as root
        args=CHROMIUM_ARGS,
    )
    try:
        yield browser
    finally:
        browser.close()


@pytest.fixture
def browser_log() -> BrowserLog:
    """Console messages and page errors of the test's ``page``."""
    return BrowserLog()


@pytest.fixture
def page(browser: Browser, browser_log: BrowserLog, tmp_path: Path) -> Iterator[Page]:
    """A page in a fresh browser context, with ``browser_log`` attached.

    Requests ``tmp_path`` so the failure hook below can always save a
    screenshot there.
    """
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(DEFAULT_TIMEOUT_MS)
    page = context.new_page()
    browser_log.attach(page)
    try:
        yield page
    finally:
        context.close()


@pytest.fixture
def notebook(
    page: Page, browser_log: BrowserLog, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[Notebook]:
    """The notebook a test opens (`Notebook.open`: its cells, front end, theme; run) on
    ``page``, on the session's server for that front end (started when first asked for)."""
    servers: dict[UI, str] = {"lab": "jupyter_server", "notebook7": "notebook7_server"}
    nb = Notebook(page, browser_log, tmp_path, lambda ui: request.getfixturevalue(servers[ui]))
    try:
        yield nb
    finally:
        nb.close()


@pytest.fixture(autouse=True)
def _shutdown_kernels_after_test(request: pytest.FixtureRequest) -> Iterator[None]:
    # Each test opens its own notebook and kernel; stop them afterwards so
    # kernels (JAX ones are large) do not pile up over the session.
    yield
    for name in ("jupyter_server", "notebook7_server"):
        if name in request.fixturenames:
            request.getfixturevalue(name).shutdown_kernels()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if report.when != "call" or not report.failed or not item.path.is_relative_to(HERE):
        return report
    funcargs: dict[str, object] = getattr(item, "funcargs", {})
    nb = funcargs.get("notebook")
    if isinstance(nb, Notebook):
        try:
            shot = nb.failure_screenshot()
            report.sections.append(("widget screenshot", f"the LivePlot at failure: {shot}"))
        except Exception as exc:  # the page may have crashed; keep the real failure
            report.sections.append(("widget screenshot", f"could not save: {exc}"))
        if nb.server is not None:
            report.sections.append(("notebook's server log (tail)", nb.server.log_tail()))
    page, tmp_path = funcargs.get("page"), funcargs.get("tmp_path")
    if page is not None and isinstance(tmp_path, Path):
        try:
            shot = save_screenshot(page, tmp_path, "failure")  # type: ignore[arg-type]
            report.sections.append(("screenshot", f"full page at failure: {shot}"))
        except Exception as exc:  # the page may have crashed; keep the real failure
            report.sections.append(("screenshot", f"could not save: {exc}"))
    log = funcargs.get("browser_log")
    if isinstance(log, BrowserLog):
        lines = log.messages[-60:] + [f"[pageerror] {e}" for e in log.page_errors]
        report.sections.append(("browser console", "\n".join(lines) or "<empty>"))
    for name in ("jupyter_server", "notebook7_server"):
        server = funcargs.get(name)
        if isinstance(server, JupyterServer):
            report.sections.append((f"{name} log (tail)", server.log_tail()))
    return report
