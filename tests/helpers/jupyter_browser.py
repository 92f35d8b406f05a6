"""Helpers for driving a real JupyterLab 4 / Notebook 7 server from Playwright.

Everything here is generic (no knowledge of jaxhist_widget) so widget tests can
reuse it. Fixtures live in ``conftest.py``; this module holds the plain
functions and data types so tests can import them with
``from .jupyter_browser import ...``.

Playwright is only imported for type checking: the directory is skipped (not
errored) when it is missing, see ``conftest.py``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import quote

if TYPE_CHECKING:
    from collections.abc import Iterator

    from playwright.sync_api import Locator, Page

UI = Literal["lab", "notebook7"]

#: Chromium binary; Playwright cannot download its own browsers here.
CHROMIUM_PATH = Path(os.environ.get("JAXHIST_UI_CHROMIUM", "/usr/bin/chromium"))

#: Flags that keep headless Chromium from blocked network chatter
#: (see /work/shared/notes/browser-testing.md). Playwright adds --headless and
#: --no-sandbox itself (headless=True, chromium_sandbox=False).
CHROMIUM_ARGS = [
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

#: Console/page errors that are known and harmless. Notebook 7.6.5 logs the
#: "schema" one on every page load.
KNOWN_HARMLESS_ERRORS: tuple[re.Pattern[str], ...] = (
    re.compile(r"Cannot read properties of undefined \(reading 'schema'\)"),
)

#: User settings written into JUPYTERLAB_SETTINGS_DIR (used by Lab and Notebook 7).
#: No news/update toast covering the page; windowingMode "none" keeps every
#: cell in the DOM instead of virtualising off-screen ones.
USER_SETTINGS: dict[str, dict[str, Any]] = {
    "@jupyterlab/apputils-extension/notification": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
}

KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}


# --------------------------------------------------------------------------- server


@dataclass
class JupyterServer:
    """A running ``jupyter lab`` server (which also serves Notebook 7)."""

    base_url: str  # e.g. "http://127.0.0.1:41234"
    token: str
    root_dir: Path  # notebooks are written here
    log_path: Path  # server stdout+stderr
    process: subprocess.Popen[bytes]

    def url(self, path: str, query: str = "") -> str:
        """Absolute URL for ``path`` carrying the token (which sets the login cookie)."""
        sep = "&" if query else ""
        return f"{self.base_url}/{path.lstrip('/')}?{query}{sep}token={self.token}"

    def api(self, method: str, path: str, timeout: float = 10.0) -> Any:
        """Call the REST API; returns decoded JSON (or None for an empty body)."""
        req = urllib.request.Request(
            f"{self.base_url}/{path.lstrip('/')}",
            method=method,
            headers={"Authorization": f"token {self.token}"},
        )
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            body = resp.read()
        return json.loads(body) if body else None

    def log_tail(self, n_chars: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-n_chars:]
        except OSError:
            return "<no server log>"

    def shutdown_kernels(self) -> None:
        """Best-effort: stop every kernel (keeps memory low between tests)."""
        with contextlib.suppress(OSError, urllib.error.URLError, ValueError):
            for kernel in self.api("GET", "api/kernels"):
                self.api("DELETE", f"api/kernels/{kernel['id']}")


def _free_port() -> int:
    # Racy by nature, but the server runs with port_retries=0 so a lost race
    # fails loudly instead of silently serving on another port.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def write_user_settings(settings_dir: Path, settings: dict[str, dict[str, Any]]) -> None:
    """Write ``<plugin id>.jupyterlab-settings`` files, e.g. ``@scope/ext/plugin``."""
    for plugin_id, values in settings.items():
        package, plugin = plugin_id.rsplit("/", 1)
        target = settings_dir / package / f"{plugin}.jupyterlab-settings"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(values, indent=2))


def start_jupyter_server(
    base_dir: Path,
    startup_timeout: float = 90.0,
    launcher: list[str] | None = None,
    settings: dict[str, dict[str, Any]] | None = None,
) -> JupyterServer:
    """Start ``jupyter lab`` with isolated config/runtime/settings dirs under ``base_dir``.

    Uses ``sys.executable`` so kernels (whose kernelspec argv is "python") run
    in the same environment as the tests and see the installed package.
    ``launcher``: a command that starts ``jupyter lab`` itself and passes it the
    server options given after it (e.g. the README's quickstart script); the
    server's root is then the launcher's own choice. ``settings``: user settings
    over `USER_SETTINGS`.
    """
    dirs = {
        name: base_dir / name
        for name in ("root", "config", "runtime", "ipython", "settings", "workspaces", "notary")
    }
    for path in dirs.values():
        path.mkdir(parents=True, exist_ok=True)
    write_user_settings(dirs["settings"], {**USER_SETTINGS, **(settings or {})})

    env = dict(os.environ)
    env.update(
        JUPYTER_CONFIG_DIR=str(dirs["config"]),
        JUPYTER_RUNTIME_DIR=str(dirs["runtime"]),
        IPYTHONDIR=str(dirs["ipython"]),
        JUPYTERLAB_SETTINGS_DIR=str(dirs["settings"]),
        JUPYTERLAB_WORKSPACES_DIR=str(dirs["workspaces"]),
        # A browser is never wanted from the server itself.
        BROWSER="true",
    )
    if launcher:  # its `python3` is this environment's
        env["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), env.get("PATH", "")])
    port = _free_port()
    token = secrets.token_hex(16)
    cmd = [
        *(launcher or [sys.executable, "-m", "jupyter", "lab"]),
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--ServerApp.token={token}",
        "--ServerApp.allow_root=True",
        *([] if launcher else [f"--ServerApp.root_dir={dirs['root']}"]),
        # Else the notebook-signing secret and database land in ~/.local/share.
        f"--NotebookNotary.data_dir={dirs['notary']}",
        # Expose window.jupyterapp (commands, kernel status) in both front ends.
        "--LabApp.expose_app_in_browser=True",
        "--JupyterNotebookApp.expose_app_in_browser=True",
    ]
    log_path = base_dir / "jupyter-server.log"
    # Log to a file, not a pipe: nobody drains a pipe during the session and a
    # full pipe buffer would block the server.
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env
        )
    server = JupyterServer(
        base_url=f"http://127.0.0.1:{port}",
        token=token,
        root_dir=dirs["root"],
        log_path=log_path,
        process=process,
    )
    deadline = time.monotonic() + startup_timeout
    while True:
        if process.poll() is not None:
            raise RuntimeError(
                f"jupyter lab exited with {process.returncode} during startup:\n{server.log_tail()}"
            )
        try:
            server.api("GET", "api/status", timeout=2.0)
            return server
        except (OSError, urllib.error.URLError):
            if time.monotonic() > deadline:
                stop_jupyter_server(server)
                raise RuntimeError(
                    f"jupyter lab did not answer /api/status within {startup_timeout} s:\n"
                    f"{server.log_tail()}"
                ) from None
            time.sleep(0.2)


def stop_jupyter_server(server: JupyterServer, grace: float = 15.0) -> None:
    """Stop kernels via the API, then the server by its handle (terminate, then kill)."""
    if server.process.poll() is None:
        server.shutdown_kernels()
        server.process.terminate()
        try:
            server.process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait(timeout=grace)


# --------------------------------------------------------------------- browser log


@dataclass
class BrowserLog:
    """Console messages and uncaught page errors of one page, in arrival order."""

    messages: list[str] = field(default_factory=list)  # "[type] text"
    page_errors: list[str] = field(default_factory=list)

    def errors(self, ignore: tuple[re.Pattern[str], ...] = KNOWN_HARMLESS_ERRORS) -> list[str]:
        """Console errors and page errors, minus known harmless ones."""
        found = [m for m in self.messages if m.startswith("[error]")]
        found += [f"[pageerror] {e}" for e in self.page_errors]
        return [m for m in found if not any(p.search(m) for p in ignore)]

    def attach(self, page: Page) -> None:
        page.on("console", lambda msg: self.messages.append(f"[{msg.type}] {msg.text}"))
        page.on("pageerror", lambda err: self.page_errors.append(str(err)))


# ----------------------------------------------------------------------- notebooks


def write_notebook(path: Path, cells: list[str]) -> None:
    """Write a v4 notebook WITH kernelspec metadata: without it Lab opens a
    "Select Kernel" dialog and no kernel starts."""
    nb = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {"kernelspec": KERNELSPEC, "language_info": {"name": "python"}},
        "cells": [
            {
                "cell_type": "code",
                "id": f"cell-{i}",
                "metadata": {},
                "execution_count": None,
                "outputs": [],
                "source": source,
            }
            for i, source in enumerate(cells)
        ],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(nb, indent=1))


# JS predicate: the current main-area widget is notebook `path`, its cells are
# rendered and its kernel is connected and idle. Works in Lab and Notebook 7
# (both expose `window.jupyterapp` with the flags the server is started with;
# the app object appears only after the page has loaded, hence the checks).
_KERNEL_IDLE_JS = """
(path) => {
  const app = window.jupyterapp;
  const w = app && app.shell && app.shell.currentWidget;
  if (!w || !w.context || w.context.path !== path || !w.context.isReady) return false;
  const kernel = w.sessionContext && w.sessionContext.session
    && w.sessionContext.session.kernel;
  return !!kernel && kernel.connectionStatus === 'connected' && kernel.status === 'idle'
    && w.content.widgets.length > 0;
}
"""

_OPEN_IN_LAB_JS = """
async (path) => {
  const app = window.jupyterapp;
  await app.restored;
  // Return nothing: the widget is not serialisable.
  await app.commands.execute('docmanager:open', { path, factory: 'Notebook' });
}
"""


def open_notebook(
    page: Page,
    server: JupyterServer,
    cells: list[str],
    name: str,
    ui: UI = "lab",
    timeout: float = 90.0,
) -> None:
    """Write ``cells`` as notebook ``name`` into the server root, open it in
    ``ui`` and wait until its kernel is connected and idle.

    ``name`` must be unique per test: the file and its kernel session are per
    name. Needs ``window.jupyterapp`` (the ``jupyter_server`` fixture exposes it).
    """
    write_notebook(server.root_dir / name, cells)
    timeout_ms = timeout * 1000
    if ui == "lab":
        # Not /lab/tree/NAME: jupyterlab_server stores the tree path in the
        # server-wide page_config_data dict that Notebook 7 pages also use, so
        # every later /notebooks/... page would inherit treePath=NAME and fail
        # with "Command 'filebrowser:open-path' not registered". Open a fresh
        # (?reset) workspace of its own instead and open the file by command.
        workspace = re.sub(r"[^A-Za-z0-9_-]", "-", name)
        page.goto(
            server.url(f"lab/workspaces/{workspace}", query="reset"),
            wait_until="domcontentloaded",
            timeout=timeout_ms,
        )
        page.wait_for_function("() => !!window.jupyterapp", timeout=timeout_ms)
        page.evaluate(_OPEN_IN_LAB_JS, name)
    elif ui == "notebook7":
        page.goto(
            server.url(f"notebooks/{quote(name)}"),
            wait_until="domcontentloaded",
            timeout=timeout_ms,
        )
    else:  # pragma: no cover - guarded by the Literal type
        raise ValueError(f"unknown ui {ui!r}")
    _wait_kernel_idle(page, name, timeout)


_KERNEL_STATE_JS = """
() => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  return k ? `${k.connectionStatus}/${k.status}` : 'no kernel';
}
"""


def _wait_kernel_idle(page: Page, name: str, timeout: float) -> None:
    """Wait until notebook ``name`` is open with its kernel connected and idle.

    On a loaded CI machine the page has (rarely) missed its new kernel's first status and
    waited the whole timeout on a kernel that was idle all along, before any cell ran: then
    reload once (the workspace reopens the notebook, its kernel kept) and wait again.
    """
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

    first = min(timeout / 2, 60.0)
    try:
        page.wait_for_function(_KERNEL_IDLE_JS, arg=name, timeout=first * 1000, polling=100)
        return
    except PlaywrightTimeoutError:
        state = page.evaluate(_KERNEL_STATE_JS)
        print(f"kernel of {name} not idle after {first:.0f} s ({state}): reloading the page")
    page.reload(wait_until="domcontentloaded", timeout=timeout * 1000)
    page.wait_for_function(_KERNEL_IDLE_JS, arg=name, timeout=timeout * 1000, polling=100)


_SAVE_JS = """
async () => {
  const w = window.jupyterapp.shell.currentWidget;
  await w.context.save();
}
"""

_KERNEL_ID_JS = """
() => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const kernel = w && w.sessionContext && w.sessionContext.session
    && w.sessionContext.session.kernel;
  return kernel ? kernel.id : null;
}
"""


def save_notebook(page: Page) -> None:
    """Save the current notebook (outputs included) to disk and wait until it is written.

    A reload shows only what the file holds: unsaved outputs are gone after it.
    """
    page.evaluate(_SAVE_JS)


def kernel_id(page: Page) -> str | None:
    """Id of the kernel the current notebook is connected to, or None."""
    return page.evaluate(_KERNEL_ID_JS)


def reload_notebook(page: Page, name: str, timeout: float = 90.0) -> None:
    """Reload the page (cells are NOT re-run) and wait until notebook ``name`` is open
    again and connected to its (still running) kernel, idle.

    In Lab the URL of :func:`open_notebook` has lost its ``?reset`` once the app started
    (seen with Lab 4.6.6), so the reload restores the workspace, which reopens the notebook.
    """
    page.reload(wait_until="domcontentloaded", timeout=timeout * 1000)
    page.wait_for_function(_KERNEL_IDLE_JS, arg=name, timeout=timeout * 1000, polling=100)


# State of the last run_all() is kept on `window.__jhRunAll`.
_RUN_ALL_JS = """
() => {
  const state = { done: false, error: null };
  window.__jhRunAll = state;
  // Do NOT return the promise: page.evaluate would wait for all cells to finish.
  window.jupyterapp.commands.execute('notebook:run-all-cells').then(
    () => { state.done = true; },
    (e) => { state.error = String(e); state.done = true; });
}
"""

_RUN_ALL_DONE_JS = "() => !!(window.__jhRunAll && window.__jhRunAll.done)"

# Idle = last run_all() settled (if any), no cell shows the "[*]" busy prompt
# and the kernel reports idle.
_IDLE_JS = """
() => {
  if (window.__jhRunAll && !window.__jhRunAll.done) return false;
  for (const p of document.querySelectorAll('.jp-Notebook .jp-InputArea-prompt')) {
    if (p.textContent.includes('*')) return false;
  }
  const app = window.jupyterapp;
  const w = app && app.shell && app.shell.currentWidget;
  const kernel = w && w.sessionContext && w.sessionContext.session
    && w.sessionContext.session.kernel;
  return !!kernel && kernel.status === 'idle';
}
"""


def run_all(page: Page) -> None:
    """Start ``notebook:run-all-cells`` and return at once (cells keep running)."""
    page.evaluate(_RUN_ALL_JS)


def run_all_done(page: Page) -> bool:
    """Whether the run started by :func:`run_all` has finished."""
    return bool(page.evaluate(_RUN_ALL_DONE_JS))


def wait_idle(page: Page, timeout: float = 120.0) -> None:
    """Wait until the notebook has finished executing; raise if run-all failed."""
    page.wait_for_function(_IDLE_JS, timeout=timeout * 1000, polling=100)
    error = page.evaluate("() => window.__jhRunAll ? window.__jhRunAll.error : null")
    if error:
        raise AssertionError(f"notebook:run-all-cells failed: {error}")


def sample_while_running(
    page: Page, probe_js: str, timeout: float = 120.0, interval: float = 0.05
) -> list[Any]:
    """Evaluate ``probe_js`` (a JS function expression, no arguments)
    repeatedly until the run started by :func:`run_all` finishes.

    Returns only the values observed while the run was still in progress: the
    probe and the "done" flag are read in the same evaluate call.
    """
    js = (
        "() => ({ done: !!(window.__jhRunAll && window.__jhRunAll.done),"
        f" value: ({probe_js})() }})"
    )
    samples: list[Any] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = page.evaluate(js)
        if result["done"]:
            return samples
        samples.append(result["value"])
        time.sleep(interval)
    raise AssertionError(f"run did not finish within {timeout} s; samples: {samples[-20:]}")


def cell_output_text(page: Page, index: int) -> str:
    """Rendered text of the outputs of code cell ``index`` (0-based)."""
    cell = page.locator(".jp-Notebook .jp-Cell").nth(index)
    return cell.locator(".jp-OutputArea").inner_text()


def cell_errors(page: Page) -> list[str]:
    """Text of every error/traceback output in the notebook."""
    return page.locator(
        ".jp-Notebook .jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"
    ).all_inner_texts()


# --------------------------------------------------------------------- screenshots


def save_screenshot(target: Page | Locator, directory: Path, name: str) -> Path:
    """Save a PNG of ``target`` (a page, or an element locator) as
    ``directory/name.png`` and return the path."""
    from playwright.sync_api import Page as RuntimePage

    path = directory / f"{name}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(target, RuntimePage):
        target.screenshot(path=str(path), full_page=True)
    else:
        target.screenshot(path=str(path))
    return path


@contextlib.contextmanager
def screenshot_on_failure(target: Page | Locator, directory: Path, name: str) -> Iterator[None]:
    """On an exception inside the block (a failed assert, a Playwright timeout),
    save a screenshot of ``target`` and re-raise the same exception with the
    PNG path added to its message (as a note, which pytest prints)."""
    try:
        yield
    except Exception as exc:
        try:
            where = f"screenshot: {save_screenshot(target, directory, name)}"
        except Exception as shot_exc:  # page may be gone; keep the original error
            where = f"screenshot failed: {shot_exc}"
        if hasattr(exc, "add_note"):  # Python >= 3.11
            exc.add_note(where)
            raise
        raise AssertionError(f"{exc}\n{where}") from exc
