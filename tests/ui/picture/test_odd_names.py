"""Any str is a name: a title, run name, leaf name or lane label holding a control character
(an ANSI colour code, a NUL), a lone surrogate (what ``os.fsdecode`` makes of a Latin-1 file
name) or U+FFFE is drawn, shown in the saved picture and carried by the widget's messages.

Before, one such character made the static SVG invalid XML (a broken image in every saved
notebook), `save_svg` raised on a surrogate, and the widget's state could not be sent.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import ipywidgets
import jax.numpy as jnp
import pytest

import jaxhist_widget as jhw

from ...helpers.static import SVG, picture

ODD = ["\x1b[31mred\x1b[0m", "nul\x00", "caf\udce9", "hi\ud800", "bom\ufffe", "tab\there"]


def _descendants(widget: ipywidgets.Widget) -> list[ipywidgets.Widget]:
    """``widget`` and every widget its state refers to (children, marks, scales, axes)."""
    seen: dict[int, ipywidgets.Widget] = {}
    todo = [widget]
    while todo:
        w = todo.pop()
        if id(w) in seen:
            continue
        seen[id(w)] = w
        for name in w.keys:
            value = getattr(w, name, None)
            values = value if isinstance(value, (list, tuple)) else [value]
            todo += [v for v in values if isinstance(v, ipywidgets.Widget)]
    return list(seen.values())


@pytest.mark.parametrize("odd", ODD)
def test_an_odd_name_is_drawn_saved_and_sent(odd, tmp_path):
    live = jhw.LivePlot(title=f"title {odd}", keep_runs=True, lane_labels=[odd, "b"])
    record = lambda c: {f"loss {odd}": c, f"x {odd}": jnp.stack([c, -c])}  # noqa: E731
    with live.named(f"run {odd}"):
        jhw.while_loop(lambda c: c < 3.0, lambda c: c + 1.0, 0.0, max_steps=4, record=record)
    with live.named(f"run {odd}"):  # a second run of that name, and a run list
        jhw.while_loop(lambda c: c < 2.0, lambda c: c + 1.0, 0.0, max_steps=4, record=record)

    bundle, root = picture(live)  # parses: valid XML
    words = " ".join("".join(t.itertext()) for t in root.iter(f"{SVG}text"))
    shown = odd.encode("unicode_escape").decode() if odd != "tab\there" else odd
    for name in (f"title {shown}", f"run {shown}", f"loss {shown}"):
        assert name in words, (name, words[:400])
    ET.parse(live.save_svg(tmp_path / "odd.svg"))
    assert f"loss {shown}" in bundle["text/plain"]
    # the data keep the names as given
    assert f"loss {odd}" in live.history()
    assert f"loss {odd}" in live.to_pandas().columns

    # the display message encodes (jupyter_client's own encoder: where a kernel runs), and so
    # does every widget's state
    json_packer = pytest.importorskip("jupyter_client.session").json_packer
    json_packer(bundle)
    for widget in [*_descendants(live.charts), live.panel]:
        json_packer(widget.get_state())


def test_names_that_differ_only_in_a_control_character_stay_apart():
    live = jhw.LivePlot()
    record = lambda c: {"a\x01": c, "a\x02": 2 * c}  # noqa: E731
    with live:
        jhw.while_loop(lambda c: c < 2.0, lambda c: c + 1.0, 0.0, max_steps=4, record=record)
    _, root = picture(live)
    titles = [g.get("data-title") for g in root.iter(f"{SVG}g") if g.get("class") == "jhw-chart"]
    assert titles == ["a\\x01", "a\\x02"]
