"""The static picture has a budget: however many runs, lanes or components a plot draws, its
SVG stays under ~200 kB (it is saved in the notebook and redrawn at every run end), drawn from
decimated points (a spike survives), the latest runs first, what it leaves out said in a note.

Before, it drew every point of every line: a `keep_runs=True` sweep of 200 runs of 1,000 steps
and 3 fields gave ~9 MB, one run of twelve 10-component vectors ~240 kB.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np

import jaxhist_widget as jhw
from jaxhist_widget.ui.picture import PICTURE_LINES

from ...helpers.static import SVG, picture, texts
from ...helpers.synthetic import feed

BUDGET = 200_000  # bytes of SVG


def _lines(root: ET.Element) -> list[ET.Element]:
    return [p for p in root.iter(f"{SVG}path") if p.get("class") == "jhw-line"]


def test_a_sweep_of_200_kept_runs_stays_within_budget_and_draws_the_latest():
    live = jhw.LivePlot(keep_runs=True)
    rng = np.random.default_rng(0)
    for _ in range(200):
        feed(live, {k: np.cumsum(rng.normal(size=1001)) for k in "abc"}, max_steps=1000)
    bundle, root = picture(live)
    assert len(bundle["image/svg+xml"].encode()) < BUDGET
    labels = [p.get("data-label") for p in _lines(root)]
    assert len(labels) <= PICTURE_LINES
    assert "a · run 200" in labels and "c · run 200" in labels and "a · run 1" not in labels
    notes = " ".join("".join(t.itertext()) for t in texts(root, "jhw-note"))
    assert "draws the latest" in notes and "of 600 lines" in notes, notes
    runs = [g for g in root.iter(f"{SVG}g") if g.get("class") == "jhw-run"]
    assert 2 <= len(runs) <= 12 and runs[-1].get("data-name") == "run 200"
    (more,) = texts(root, "jhw-runs-more")
    assert "earlier runs" in "".join(more.itertext())


def test_many_vector_components_stay_within_budget():
    live = jhw.LivePlot(vectors="lines")
    rng = np.random.default_rng(1)
    values = {f"v{i}": rng.normal(size=(2001, 10)) for i in range(12)}
    feed(live, values, shapes=[(10,)] * 12, max_steps=2000)
    bundle, root = picture(live)
    assert len(bundle["image/svg+xml"].encode()) < BUDGET
    assert len(_lines(root)) == 120  # every component drawn, each with fewer points


def test_many_lanes_stay_within_budget():
    live = jhw.LivePlot()
    rng = np.random.default_rng(2)
    loss = np.cumsum(rng.normal(size=(512, 2001)), axis=1)
    feed(live, {"loss": loss}, lanes=512, max_steps=2000)
    bundle, _ = picture(live)
    assert len(bundle["image/svg+xml"].encode()) < BUDGET


def test_a_spike_survives_the_pictures_decimation():
    live = jhw.LivePlot(keep_runs=True)
    y = np.zeros(100_001)
    y[77_777] = 1e3
    for _ in range(60):  # many lines: each gets a few points only
        feed(live, {"a": y, "b": -y, "c": y}, max_steps=100_000)
    _, root = picture(live)
    ys = [
        float(v)
        for p in _lines(root)
        if p.get("data-label") == "a · run 60"
        for v in p.get("d").replace("M", " ").replace("L", " ").split()[1::2]
    ]
    assert len(ys) < 200 and max(ys) - min(ys) > 50  # the spike is drawn (pixels span it)
