"""What the browser tests share: the notebook they open (`Notebook`, made by the ``notebook``
fixture of ``tests/browser/conftest.py``), first cells, DOM probes and checks of a LivePlot in
a real JupyterLab / Notebook 7 page.

Playwright is only imported for type checking: the browser tests are skipped, not errored, where
it is missing (``tests/browser/conftest.py``).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .jupyter_browser import (
    UI,
    BrowserLog,
    JupyterServer,
    cell_errors,
    cell_output_text,
    open_notebook,
    run_all,
    save_screenshot,
    wait_idle,
)

if TYPE_CHECKING:
    from playwright.sync_api import Page

#: JupyterLab's default theme (a test that switches the theme switches back to it).
LIGHT = "JupyterLab Light"


@dataclass
class Notebook:
    """A notebook in a real JupyterLab (or Notebook 7) page: what every browser test sets up.

    The ``notebook`` fixture makes one per test, on the test's `page` (a fresh browser context,
    its console in `log`). `open` writes the notebook, opens it on the session's server for its
    front end, switches the theme and runs every cell; `idle` waits for the kernel and checks
    that no cell raised. After the test the theme is switched back and the kernels are stopped;
    on a failure the report holds a screenshot of the widget (`failure_screenshot`).
    """

    page: Page
    log: BrowserLog
    tmp_path: Path
    servers: Callable[[UI], JupyterServer]  #: the session's server for a front end
    server: JupyterServer | None = None  #: the server of the notebook opened
    theme: str = LIGHT

    def open(
        self,
        cells: list[str],
        name: str,
        *,
        ui: UI = "lab",
        theme: str | None = None,
        viewport: tuple[int, int] | None = None,
        run: bool = True,
    ) -> Page:
        """Open a notebook of ``cells`` named ``name`` in ``ui``, in ``theme`` (a JupyterLab
        theme's name) in a ``viewport`` (width, height), and run every cell (``run``)."""
        if viewport is not None:
            self.page.set_viewport_size({"width": viewport[0], "height": viewport[1]})
        self.server = self.servers(ui)
        open_notebook(self.page, self.server, cells, name=name, ui=ui)
        if theme is not None:
            set_theme(self.page, theme)
            self.theme = theme
        if run:
            run_all(self.page)
        return self.page

    def idle(self, timeout: float = 60.0) -> None:
        """Wait until the kernel is idle and every cell ran; no cell may have raised."""
        wait_idle(self.page, timeout=timeout)
        assert cell_errors(self.page) == []

    def errors(self) -> list[str]:
        """The browser console's errors (the known harmless ones aside)."""
        return self.log.errors()

    def close(self) -> None:
        """After the test: the theme back to JupyterLab's default, the kernels stopped."""
        try:
            if self.theme != LIGHT:
                set_theme(self.page, LIGHT)
        finally:
            if self.server is not None:
                self.server.shutdown_kernels()

    def failure_screenshot(self) -> Path:
        """A PNG of the LivePlot widget (the whole page when there is none)."""
        widget = self.page.locator(".jhw-liveplot").first
        target = widget if widget.count() else self.page
        return save_screenshot(target, self.tmp_path, "widget-failure")


# ------------------------------------------------------------------------------ notebook code

#: A first cell: every step of its loops (`descend`, `forever`) sleeps STEP_SLEEP_S in a host
#: callback, so a run of a few hundred steps lasts seconds whatever the machine.
SLOW_SETUP = """\
import sys
import time
from functools import partial

import jax
import jax.numpy as jnp
import jaxhist_widget as jhw

STEP_SLEEP_S = 0.003


def _sleep(x):
    time.sleep(STEP_SLEEP_S)
    return x


def slow(x):
    return jax.pure_callback(_sleep, jax.ShapeDtypeStruct(x.shape, x.dtype), x)


A = jnp.array([[3.0, 0.5], [0.5, 1.0]])


def loss_fn(x):
    return 0.5 * x @ A @ x


@partial(jax.jit, static_argnames="max_steps")
def descend(x0, lr=0.01, tol=1e-4, max_steps=2000):
    # Gradient descent on a quadratic: converges (loss < tol) after ~600 steps, ~2-3 s.
    def body(x):
        return slow(x - lr * jax.grad(loss_fn)(x))

    def record(x):
        return {"loss": loss_fn(x), "grad_norm": jnp.linalg.norm(jax.grad(loss_fn)(x))}

    return jhw.while_loop(lambda x: loss_fn(x) > tol, body, x0, max_steps=max_steps,
                          record=record)


@partial(jax.jit, static_argnames="max_steps")
def forever(x0, max_steps=100_000):
    # Never converges: 100k slow steps would take ~5 minutes unless stopped.
    return jhw.while_loop(lambda x: x < 1e9, lambda x: slow(0.99 * x + 1.0), x0,
                          max_steps=max_steps)


print("PYTHON", sys.executable)
"""

#: A first cell: `train(lr)`, 400 steps of gradient descent whose loss jitters and spikes.
TRAIN_SETUP = """\
import ipywidgets
import jax
import jax.numpy as jnp
import jaxhist_widget as jhw
from IPython.display import display


@jax.jit
def train(lr):
    # Gradient descent on w**2; the recorded loss jitters and spikes every 97 steps (1%).
    def record(c):
        k, w = c
        jitter = 0.3 * jnp.sin(k * 12.9898)
        spike = jnp.where(k % 97 == 50, 40.0, 0.0)
        return {"loss": w * w + 0.5 + jitter + spike, "lr": lr + 0.0 * w}

    return jhw.while_loop(
        lambda c: c[0] < 400, lambda c: (c[0] + 1, c[1] - lr * 2 * c[1]),
        (jnp.int32(0), jnp.float32(2.0)), max_steps=400, record=record)
"""

#: Three kept runs of `train`, named three ways: a named block, `live.run`'s call, ``run N``.
THREE_RUNS = """\
with live.named("sgd lr=0.01"):
    train(0.01)
live.run(train, 0.003)
with live:
    train(0.001)
"""

# -------------------------------------------------------------------------------- DOM probes

# Step counter, status and a digest of every plotted line's `d` (the paths are long).
LIVE_PROBE_JS = """
() => {
  const step = document.querySelector('.jhw-step');
  const panel = document.querySelector('.jhw-panel');
  const paths = [...document.querySelectorAll('.jhw-figure g.curve path.line')]
    .map((p) => p.getAttribute('d') || '').join('|');
  let hash = 5381;
  for (let i = 0; i < paths.length; i++) hash = ((hash * 33) ^ paths.charCodeAt(i)) >>> 0;
  return {
    step: step ? Number(step.dataset.step) : null,
    status: panel ? panel.dataset.status : null,
    d: paths.length ? `${paths.length}:${hash}` : null,
  };
}
"""

# Everything one LivePlot view shows (the last one on the page): the panel, and per drawn line
# its number of distinct points (the coordinate pairs of its `d`; a point repeated to pad a short
# lane counts once) and its stroke color. The cell it sits in too.
VIEW_STATE_JS = """
() => {
  const views = document.querySelectorAll('.jhw-liveplot');
  const view = views[views.length - 1];
  if (!view) return null;
  const q = (s) => view.querySelector(s);
  const cells = [...document.querySelectorAll('.jp-Notebook .jp-Cell')];
  const lanes = q('.jhw-lanes');
  return {
    views: views.length,
    cell: cells.findIndex((c) => c.contains(view)),
    title: q('.jhw-title') && q('.jhw-title').textContent,
    status: q('.jhw-panel') && q('.jhw-panel').dataset.status,
    step: q('.jhw-step') && Number(q('.jhw-step').dataset.step),
    maxSteps: q('.jhw-step') && Number(q('.jhw-step').dataset.maxSteps),
    progress: q('.jhw-progress') && q('.jhw-progress').getAttribute('aria-valuenow'),
    stopDisabled: q('.jhw-stop') ? q('.jhw-stop').disabled : null,
    lanes: lanes && !lanes.hidden ? lanes.textContent : null,
    fields: Object.fromEntries([...view.querySelectorAll('.jhw-field')].map(
      (f) => [f.dataset.field, f.querySelector('.jhw-field-value').dataset.value])),
    lines: [...view.querySelectorAll('.jhw-figure g.curve path.line')].map((p) => ({
      points: new Set((p.getAttribute('d') || '').split(/[ML]/).filter((xy) => xy)).size,
      stroke: getComputedStyle(p).stroke,
    })),
  };
}
"""

# WCAG 2.x contrast of each matching element's text against its effective background: the
# background colors of the element and its ancestors, composited from the first opaque one up
# (the page canvas is white), and the text color composited over that.
CONTRAST_JS = """
(selector) => {
  const parse = (c) => {
    const m = c.match(/^rgba?\\(([^)]+)\\)$/);
    if (!m) throw new Error(`unparsed color ${c}`);
    const p = m[1].split(/[\\s,/]+/).filter(Boolean).map(Number);
    return { r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1 };
  };
  const over = (top, bottom) => ({
    r: top.r * top.a + bottom.r * (1 - top.a),
    g: top.g * top.a + bottom.g * (1 - top.a),
    b: top.b * top.a + bottom.b * (1 - top.a),
    a: 1,
  });
  const lum = (c) => {
    const ch = (v) => {
      const s = v / 255;
      return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    };
    return 0.2126 * ch(c.r) + 0.7152 * ch(c.g) + 0.0722 * ch(c.b);
  };
  const hex = (c) => '#' + [c.r, c.g, c.b]
    .map((v) => Math.round(v).toString(16).padStart(2, '0')).join('');
  return [...document.querySelectorAll(selector)].map((el) => {
    const layers = [];
    for (let node = el; node; node = node.parentElement) {
      const bg = parse(getComputedStyle(node).backgroundColor);
      if (bg.a > 0) layers.push(bg);
      if (bg.a >= 1) break;
    }
    let bg = { r: 255, g: 255, b: 255, a: 1 };
    for (const layer of layers.reverse()) bg = over(layer, bg);
    const fg = over(parse(getComputedStyle(el).color), bg);
    const [hi, lo] = [lum(fg), lum(bg)].sort((a, b) => b - a);
    const panel = el.closest('.jhw-panel');
    return {
      el: el.className,
      status: panel ? panel.dataset.status : null,
      text: el.textContent,
      fg: hex(fg),
      bg: hex(bg),
      bgLuminance: lum(bg),
      ratio: (hi + 0.05) / (lo + 0.05),
    };
  });
}
"""

MIN_CONTRAST = 4.5  # WCAG AA, normal text
#: jaxhist_widget.ui.panel.STATUSES (not imported: collecting this module needs no widget stack).
STATUS_NAMES = (
    "idle",
    "compiling",
    "running",
    "converged",
    "max_steps",
    "stopped",
    "interrupted",
    "error",
)

# Each chart's y tick labels, by title.
Y_LABELS_JS = """
() => Object.fromEntries([...document.querySelectorAll('.jhw-charts .jhw-figure')].map((fig) =>
  [(fig.querySelector('.jhw-chart-title')
    || fig.querySelector('text.mainheading') || {}).textContent || '',
   [...fig.querySelectorAll('g.axis')].slice(-1).flatMap((a) =>
     [...a.querySelectorAll('.tick text')].map((t) => t.textContent))]))
"""


# Each chart's x tick labels, by title.
X_LABELS_JS = """
() => Object.fromEntries([...document.querySelectorAll('.jhw-charts .jhw-figure')].map((fig) =>
  [(fig.querySelector('.jhw-chart-title')
    || fig.querySelector('text.mainheading') || {}).textContent || '',
   [...fig.querySelectorAll('g.axis')].slice(0, 1).flatMap((a) =>
     [...a.querySelectorAll('.tick text')].map((t) => t.textContent))]))
"""


# Per chart (by title): the computed stroke and opacity of each shown line, in drawing order.
LINES_JS = """
() => Object.fromEntries([...document.querySelectorAll('.jhw-charts .jhw-figure')].map((fig) =>
  [(fig.querySelector('.jhw-chart-title')
    || fig.querySelector('text.mainheading') || {}).textContent || '',
   [...fig.querySelectorAll('g.curve path.line')].filter((p) => p.getClientRects().length > 0)
     .map((p) => ({ stroke: getComputedStyle(p).stroke,
                    opacity: Number(getComputedStyle(p).opacity) }))]))
"""

#: The value the spinning runs of the hover and zoom tests record, per step: a saw of this period.
SAW = 97


def saw(step: int) -> float:
    """The value the run records at ``step`` (float32 arithmetic, as on the device)."""
    return float(np.float32(step % SAW) / np.float32(SAW))


# Client coordinates of the vertex at `frac` of the way along the first drawn line whose name
# ("field · run k", "field · lane · run k": its `g.curve` carries bqplot's data) starts with
# `prefix`.
VERTEX_JS = """
([prefix, frac]) => {
  for (const path of document.querySelectorAll('.jhw-figure g.curve path.line')) {
    const curve = path.parentNode.__data__;
    if (!curve || !String(curve.name).startsWith(prefix)) continue;
    const pts = [...path.getAttribute('d').matchAll(/[ML]([-\\d.e]+),([-\\d.e]+)/g)];
    if (pts.length < 10) return null;
    const [, x, y] = pts[Math.floor(frac * (pts.length - 1))];
    const p = new DOMPoint(Number(x), Number(y)).matrixTransform(path.getScreenCTM());
    return { x: p.x, y: p.y, points: pts.length };
  }
  return null;
}
"""

# The read-out shown (in whichever LivePlot), plus the status of that LivePlot's run when read.
READOUT_JS = """
() => {
  const tip = [...document.querySelectorAll('.jhw-liveplot .jhw-hover')].find((t) => !t.hidden);
  if (!tip) return null;
  const box = tip.closest('.jhw-liveplot');
  const r = box.querySelector('.jhw-hover-dot').getBoundingClientRect();
  return {
    lines: [...tip.children].map((c) => c.textContent),
    step: tip.dataset.step, value: tip.dataset.value,
    dot: { x: r.left + r.width / 2, y: r.top + r.height / 2 },
    status: box.querySelector('.jhw-panel').dataset.status,
  };
}
"""


# ----------------------------------------------------------------------------------- checks


def distinct_in_order(values: list[Any]) -> list[Any]:
    """``values`` without consecutive repeats and without None."""
    out: list[Any] = []
    for v in values:
        if v is not None and (not out or v != out[-1]):
            out.append(v)
    return out


def output_line(page: Page, cell: int, tag: str) -> list[str]:
    """The words after ``tag`` on the line of cell ``cell``'s output that starts with it."""
    text = cell_output_text(page, cell)
    match = re.search(rf"^{tag} (.*)$", text, flags=re.MULTILINE)
    assert match, f"no {tag!r} line in the output of cell {cell}: {text!r}"
    return match.group(1).split()


def assert_live_updates(page: Page, samples: list[dict[str, Any]]) -> None:
    """While the cell ran, the step counter and the drawn line changed several times."""
    running = [s for s in samples if s["status"] == "running"]
    steps = distinct_in_order([s["step"] for s in running])
    lines = distinct_in_order([s["d"] for s in running])
    summary = f"{len(samples)} samples, {len(running)} while running; steps seen: {steps}"
    assert len(steps) >= 5, f"step counter updated too rarely while running: {summary}"
    assert steps == sorted(steps), f"step counter went backwards: {steps}"
    assert len(lines) >= 5, f"line changed {len(lines)} times while running: {summary}"


def assert_final_panel(page: Page, final_step: int, status: str) -> None:
    panel = page.locator(".jhw-panel")
    assert panel.get_attribute("data-status") == status
    assert page.locator(".jhw-status").get_attribute("data-status") == status
    step = page.locator(".jhw-step")
    assert step.get_attribute("data-step") == str(final_step)
    assert page.locator(".jhw-progress").get_attribute("aria-valuenow") == str(final_step)
    assert page.locator(".jhw-stop").is_disabled(), "Stop stays enabled after the run"


def hover_until_read_out(
    page: Page, prefix: str, frac: float, timeout: float = 90.0
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Point at the vertex at ``frac`` of the line named ``prefix`` until a read-out shows;
    return the vertex pointed at and the read-out.

    The line moves while the run goes on (new rows, a rescaled axis): by the time the pointer
    arrives, the vertex may have moved out of the read-out's radius, and a pointer that stays
    still sends no more events. So each try looks the vertex up again and moves onto it anew.
    """
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    deadline = time.monotonic() + timeout
    while True:
        vertex = page.evaluate(VERTEX_JS, [prefix, frac])
        assert vertex is not None, f"no drawn {prefix!r} line with points"
        page.mouse.move(vertex["x"] + 3, vertex["y"] + 3)
        page.mouse.move(vertex["x"], vertex["y"])
        try:
            # The read-out as the poll saw it: a second look could find it gone (a new row
            # redraws the line and hides it until the pointer moves again).
            shown = page.wait_for_function(f"() => ({READOUT_JS})()", timeout=2_000, polling=50)
        except PlaywrightTimeout:
            assert time.monotonic() < deadline, f"no read-out at {prefix!r} {frac} in {timeout} s"
            continue
        return vertex, shown.json_value()


def wait_lines(page: Page, per_chart: int) -> None:
    """Wait until every chart, titled (a chart made anew is untitled for a frame or two: read
    by title, it would be missed), draws ``per_chart`` lines."""
    page.wait_for_function(
        f"(n) => Object.entries(({LINES_JS})())"
        ".every(([title, lines]) => title !== '' && lines.length === n)",
        arg=per_chart,
        timeout=30_000,
    )


def set_theme(page: Page, theme: str) -> None:
    """Switch JupyterLab's theme by command and wait until it is applied."""
    page.evaluate(
        "(theme) => { window.jupyterapp.commands.execute('apputils:change-theme', { theme }); }",
        theme,
    )
    page.wait_for_function(
        "(theme) => document.body.dataset.jpThemeName === theme", arg=theme, timeout=30_000
    )


def block_outside(page: Page) -> list[str]:
    """Make ``page`` offline: every request but a ``file:`` one is aborted. Returns the list
    the blocked URLs are appended to (a page that works offline leaves it empty)."""
    blocked: list[str] = []

    def offline(route: Any) -> None:
        if route.request.url.startswith("file:"):
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    page.route("**/*", offline)
    return blocked
