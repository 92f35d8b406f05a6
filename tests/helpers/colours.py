"""How two colours read apart: WCAG 2.x contrast (a line against its background) and the
CIELAB distance (two lines against each other), for the palette's tests in Python and in the
page alike. Colours are ``"#rrggbb"``.
"""

from __future__ import annotations


def _linear(channel: float) -> float:
    """An sRGB channel in [0, 1], gamma removed."""
    return channel / 12.92 if channel <= 0.04045 else ((channel + 0.055) / 1.055) ** 2.4


def _rgb(color: str) -> tuple[float, float, float]:
    r, g, b = (_linear(int(color[i : i + 2], 16) / 255) for i in (1, 3, 5))
    return r, g, b


def luminance(color: str) -> float:
    """WCAG's relative luminance of an sRGB colour."""
    r, g, b = _rgb(color)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    """WCAG's contrast ratio of two colours (1 to 21; 3 is its minimum for graphics)."""
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def lab(color: str) -> tuple[float, float, float]:
    """CIELAB (D65) of an sRGB colour: a distance under ~30 reads as one colour in a legend."""
    r, g, b = _rgb(color)
    xyz = (
        (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047,
        0.2126 * r + 0.7152 * g + 0.0722 * b,
        (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883,
    )
    fx, fy, fz = (t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116 for t in xyz)
    return 116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)
