"""A PNG file from an RGBA array, with the standard library only (zlib, struct).

Numpy only. A heatmap chart (`._histogram`) is drawn as one small image: the widget shows it in
a bqplot `Image` mark and the static picture embeds the same bytes (``data:image/png``), so both
draw the same pixels and no image library is needed.
"""

from __future__ import annotations

import struct
import zlib

import numpy as np

__all__ = ["encode_png"]

_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _chunk(kind: bytes, data: bytes) -> bytes:
    crc = zlib.crc32(kind + data) & 0xFFFFFFFF
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)


def encode_png(rgba: np.ndarray, level: int = 6) -> bytes:
    """The PNG of ``rgba`` (``(height, width, 4)`` uint8, top row first).

    Examples
    --------
    >>> import numpy as np
    >>> png = encode_png(np.zeros((2, 3, 4), np.uint8))
    >>> png[:8] == _SIGNATURE, png[12:16], struct.unpack(">II", png[16:24])
    (True, b'IHDR', (3, 2))
    """
    rgba = np.ascontiguousarray(rgba, dtype=np.uint8)
    if rgba.ndim != 3 or rgba.shape[2] != 4 or not rgba.shape[0] or not rgba.shape[1]:
        raise ValueError(f"encode_png takes a (height, width, 4) array, got {rgba.shape}.")
    height, width = rgba.shape[:2]
    # Each scanline starts with its filter type: 0 (none), which suits flat colour cells.
    raw = np.zeros((height, 1 + 4 * width), np.uint8)
    raw[:, 1:] = rgba.reshape(height, 4 * width)
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return (
        _SIGNATURE
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(raw.tobytes(), level))
        + _chunk(b"IEND", b"")
    )
