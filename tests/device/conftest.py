"""The device tests' shared setting: matrix products at full float32 precision.

Their steps are small matrix products, compared with eager references or with ``lax`` loops. A
TPU's default makes a float32 product of bfloat16 passes, whose rounding differs between an
eager call and a compiled loop (values agreed to ~1e-3 only); on a CPU this changes nothing.
"""

from __future__ import annotations

import jax
import pytest


@pytest.fixture(autouse=True)
def exact_products():
    with jax.default_matmul_precision("highest"):
        yield
