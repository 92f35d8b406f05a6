"""Each chart's download, as the page asks for it (a ``download`` control) and as the kernel
answers (a custom message carrying the file as its buffer): the chart's CSV holds every row of
every run and lane drawn on it, as `LivePlot.to_pandas` has them; the SVG is the plot's picture.

Synthetic runs (`FakeLoop` through the hub, as the traced loop's host calls): milliseconds.
"""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from typing import Any

import numpy as np
import pandas as pd
import pytest

import jaxhist_widget as jhw
from jaxhist_widget.ui.plot import _download

from ...helpers.synthetic import FakeLoop, layout

SVG = "{http://www.w3.org/2000/svg}"


def sweep(live: jhw.LivePlot, name: str = "sweep", lanes: int = 3, steps: int = 40) -> None:
    """A vmapped run of ``loss`` and a 3-component ``w``, lanes of different lengths."""
    rng = np.random.default_rng(0)
    with live.named(name):
        loop = FakeLoop(layout(("loss", "w"), [(), (3,)]), lanes=lanes)
        counts = [steps - 5 * k for k in range(lanes)]
        loop.send(
            loss=[rng.random(n) for n in counts],
            w=[rng.random((n, 3)) for n in counts],
        )
        loop.end()


def ask(live: jhw.LivePlot, chart: str, fmt: str, rid: int = 1) -> tuple[dict, list[Any]]:
    """What the page gets for its ``download`` control: the panel's message and buffers."""
    sent: list[tuple[dict, list[Any]]] = []
    live.panel.send = lambda content, buffers=None: sent.append((content, buffers or []))
    value = {"id": rid, "chart": chart, "format": fmt}
    live.panel._on_view_message(live.panel, {"jhw_control": "download", "value": value}, [])
    live._downloads.last.result(timeout=30)
    assert len(sent) == 1
    return sent[0]


def read_csv(buffers: list[Any]) -> pd.DataFrame:
    assert len(buffers) == 1
    # The default parser of pandas 3.0 can be off by an ulp; pandas 3.1 deprecates the option
    # (its default parser reads every float exactly).
    version = tuple(int(v) for v in pd.__version__.split(".")[:2])
    exact = {"float_precision": "round_trip"} if version < (3, 1) else {}
    return pd.read_csv(io.BytesIO(bytes(buffers[0])), **exact)


def test_a_charts_csv_holds_every_row_of_every_lane_as_to_pandas() -> None:
    live = jhw.LivePlot(title="lr sweep")
    sweep(live)
    table = live.to_pandas()
    content, buffers = ask(live, "w", "csv", rid=7)
    assert content == {
        "jhw_download": 7,
        "format": "csv",
        "error": "",
        "name": "lr_sweep-w.csv",
        "mime": "text/csv",
        "size": len(buffers[0]),
    }
    got = read_csv(buffers)
    assert list(got.columns) == ["run", "lane", "step", "wall_time", "w[0]", "w[1]", "w[2]"]
    assert len(got) == len(table) == 40 + 35 + 30  # every row, not the drawn points
    assert set(got["run"]) == {"sweep"}
    for column in ("lane", "step", "w[0]", "w[1]", "w[2]"):
        np.testing.assert_array_equal(got[column].to_numpy(), table[column].to_numpy())
    assert np.all(np.isfinite(got["wall_time"])) and got["wall_time"].min() > 1.7e9  # epoch s
    loss = read_csv(ask(live, "loss", "csv")[1])
    assert list(loss.columns) == ["run", "lane", "step", "wall_time", "loss"]
    np.testing.assert_array_equal(loss["loss"].to_numpy(), table["loss"].to_numpy())


def test_a_charts_csv_holds_each_shown_run_and_a_vectors_components() -> None:
    live = jhw.LivePlot(keep_runs=True, vectors="band")
    for name, values in (("adam", [3.0, 2.0, 1.0]), ("sgd", [4.0, 3.5])):
        with live.named(name):
            loop = FakeLoop(layout(("loss", "w"), [(), (2, 2)]))
            loop.send(loss=values, w=np.arange(4 * len(values)).reshape(-1, 2, 2))
            loop.end()
    # A band is drawn of the median: the file holds the rows, every component.
    got = read_csv(ask(live, "w", "csv")[1])
    assert list(got.columns) == ["run", "step", "wall_time", "w[0,0]", "w[0,1]", "w[1,0]", "w[1,1]"]
    assert got["run"].tolist() == ["adam"] * 3 + ["sgd"] * 2
    assert got["step"].tolist() == [0, 1, 2, 0, 1]
    np.testing.assert_array_equal(got["w[1,1]"], [3, 7, 11, 3, 7])
    live.show_run("adam", visible=False)  # a hidden run is not drawn: not in the file either
    assert read_csv(ask(live, "loss", "csv")[1])["run"].tolist() == ["sgd"] * 2


def test_the_shared_chart_holds_every_field_and_a_norm_its_values() -> None:
    live = jhw.LivePlot(charts="shared", fields=["loss", "|w|"])
    with live:
        loop = FakeLoop(layout(("loss", "w"), [(), (2,)]))
        loop.send(loss=[1.0, 0.5], w=[[3.0, 4.0], [6.0, 8.0]])
        loop.end()
    content, buffers = ask(live, "", "csv")
    assert content["name"] == "chart.csv"
    got = read_csv(buffers)
    assert list(got.columns) == ["run", "step", "wall_time", "loss", "|w|"]
    assert got["|w|"].tolist() == [5.0, 10.0]


def test_the_svg_is_the_plots_picture(tmp_path) -> None:
    live = jhw.LivePlot(title="sweep / 1")
    sweep(live)
    content, buffers = ask(live, "loss", "svg")
    assert (content["name"], content["mime"], content["error"]) == (
        "sweep_1.svg",
        "image/svg+xml",
        "",
    )
    text = bytes(buffers[0]).decode("utf-8")
    root = ET.fromstring(text)
    assert root.tag == f"{SVG}svg" and float(root.get("width")) > 0
    assert text == live.save_svg(tmp_path / "p.svg").read_text(encoding="utf-8")


def test_a_file_over_the_limit_is_refused_with_what_to_do(monkeypatch: pytest.MonkeyPatch) -> None:
    live = jhw.LivePlot()
    sweep(live)
    monkeypatch.setattr(_download, "MAX_DOWNLOAD_BYTES", 1000)
    content, buffers = ask(live, "w", "csv")
    assert buffers == []
    assert "live.to_csv(path)" in content["error"]


def test_a_value_that_is_no_request_is_ignored() -> None:
    live = jhw.LivePlot()
    sent: list[Any] = []
    live.panel.send = lambda content, buffers=None: sent.append(content)
    for value in (None, {"id": 1, "chart": "loss", "format": "pdf"}, {"chart": "x"}, [1, 2]):
        live.panel._on_view_message(live.panel, {"jhw_control": "download", "value": value}, [])
    assert live._downloads.last is None and sent == []
