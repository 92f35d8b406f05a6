"""A `TensorBoard` sink's runs opened in TensorBoard itself: ``tensorboard --logdir`` on localhost
(its frontend served from the pip package, offline), its Scalars page in headless Chromium lists
the runs (a vmap run as one run per lane) and draws the scalar's chart. TensorBoard reads them
here with its fast loader (the Rust data server) where the platform has it; the host tests read
them with its Python readers."""

from __future__ import annotations

import json
import re
import urllib.parse
import urllib.request
from typing import TYPE_CHECKING

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxhist_widget as jhw

from ..helpers.tensorboard import tensorboard_server

if TYPE_CHECKING:
    from pathlib import Path

    from playwright.sync_api import Page

pytest.importorskip("tensorboard")
expect = pytest.importorskip("playwright.sync_api").expect
pytestmark = pytest.mark.ui


def decay(rate):
    return jhw.while_loop(
        lambda c: c[0] < 50,
        lambda c: (c[0] + 1, c[1] * rate),
        (jnp.int32(0), jnp.float32(3.0)),
        max_steps=60,
        record=lambda c: {"i": c[0], "loss": c[1]},
    )


def test_tensorboard_lists_the_runs_and_draws_their_scalars(tmp_path: Path, page: Page) -> None:
    logdir = tmp_path / "logs"
    with jhw.TensorBoard(logdir).named("adam"), jhw.Recorder() as rec:
        decay(0.9)
    with jhw.TensorBoard(logdir).named("sweep"):
        jax.vmap(decay)(jnp.array([0.8, 0.95]))
    runs = ["adam", "sweep/lane 0", "sweep/lane 1"]
    with tensorboard_server(logdir) as url:
        with urllib.request.urlopen(f"{url}/data/runs", timeout=30) as r:
            assert sorted(json.load(r)) == runs
        query = urllib.parse.urlencode({"run": "adam", "tag": "loss"})
        with urllib.request.urlopen(f"{url}/data/plugin/scalars/scalars?{query}") as r:
            served = json.load(r)  # [wall time, step, value] per row, as the chart gets them
        assert [s for _, s, _ in served] == list(range(51))
        want = rec.runs[-1].history()["loss"]
        np.testing.assert_array_equal(np.array([v for *_, v in served], np.float32), want)

        page.goto(f"{url}/#scalars")
        selector = page.locator("tf-runs-selector")
        for run in runs:
            selector.get_by_text(run, exact=True).wait_for()
        card = page.locator("tf-scalar-card").filter(has_text="loss").first
        card.wait_for()
        # A run's line drawn through its steps: its path is M, then L for each further vertex
        # (the chart leaves out the points its view does not need: about 50 of 51 here).
        line = card.locator("vz-line-chart2 path.line").first
        expect(line).to_have_attribute("d", re.compile(r"^M[^L]+(L[^L]+){40,}$"), timeout=60_000)
