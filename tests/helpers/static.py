"""Reading a LivePlot's static picture (its SVG) as a reader without a kernel sees it."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import jaxhist_widget as jhw

SVG = "{http://www.w3.org/2000/svg}"


def picture(live: jhw.LivePlot) -> tuple[dict[str, str], ET.Element]:
    bundle = live._repr_mimebundle_()
    return bundle, ET.fromstring(bundle["image/svg+xml"])


def texts(root: ET.Element, cls: str) -> list[ET.Element]:
    return [t for t in root.iter(f"{SVG}text") if t.get("class") == cls]
