"""Where a loop runs side by side: vmap lanes inside the recording loop (``lanes``) and one loop
over several devices (``devices``). Traced JAX; under everything else of the device layer."""

from __future__ import annotations

from . import devices, lanes
from .lanes import as_bits, from_bits

__all__ = ["as_bits", "devices", "from_bits", "lanes"]
