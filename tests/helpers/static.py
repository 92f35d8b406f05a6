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


_FROM_SUPERSCRIPT = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")


def label_value(text: str) -> float:
    """The number an axis label writes: ``20,000``, ``2.5e-3``, and a log axis' ``10⁻³``,
    ``3×10⁻²`` (`jaxhist_widget.ui.look.ticks.log_label`)."""
    text = text.replace(",", "")
    mantissa, times, power = text.rpartition("×")[0], "×" in text, text.rpartition("×")[2]
    exponent = power[2:]
    if power.startswith("10") and exponent and exponent.translate(_FROM_SUPERSCRIPT) != exponent:
        value = 10.0 ** int(exponent.translate(_FROM_SUPERSCRIPT))
        return float(mantissa) * value if times else value
    return float(text)
