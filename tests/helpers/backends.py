"""Where the tests run: the backend JAX compiles for (CPU in CI; a TPU or GPU when a
contributor runs the suite there, `scripts/accelerator.sh`)."""

from __future__ import annotations

import jax
import pytest

#: JAX's default backend: "cpu", "tpu", "gpu".
BACKEND = jax.default_backend()
ON_TPU = BACKEND == "tpu"

#: A test of a fact of the CPU's compiled program (its callback custom call, its executors);
#: on an accelerator host calls lower to other operations, and a counterpart test says what
#: must hold there.
cpu_only = pytest.mark.skipif(BACKEND != "cpu", reason="checks the CPU's compiled program")

#: A test of a fact of an accelerator's compiled program.
accelerator_only = pytest.mark.skipif(
    BACKEND == "cpu", reason="checks an accelerator's compiled program (scripts/accelerator.sh)"
)

#: A test of a fact of a TPU's compiled program.
tpu_only = pytest.mark.skipif(
    BACKEND != "tpu", reason="checks a TPU's compiled program (scripts/accelerator.sh)"
)

#: What a TPU up to v5 refuses to record (`checks.check_chip_dtypes`): it has no float8 or
#: float4 storage and no arrays of 2-bit integers.
REFUSED_ON_TPU = ("float8_", "float4_", "int2", "uint2")


def records_here(dtype_name: str) -> bool:
    """Whether this backend's chip can record ``dtype_name`` exactly (a TPU refuses some)."""
    return not (ON_TPU and dtype_name.startswith(REFUSED_ON_TPU))


#: Where a dtype's bit patterns start on this backend (`loops.bit_pattern_loop`): a TPU flushes
#: bfloat16 subnormals to zero when it moves them (its own arithmetic never makes one), so
#: there they start at 1.0 (0x3F80), all normal numbers.
PATTERN_BASE = {"bfloat16": 0x3F80} if ON_TPU else {}

#: A test of what follows when a host callback raises. A TPU's runtime cannot raise it: the
#: error is logged and the program goes on with the callback's output undefined (equinox's
#: runtime errors say the same there), so the loop ends as if nothing had happened.
callback_errors_raise = pytest.mark.skipif(
    ON_TPU, reason="a TPU's runtime does not raise a host callback's error"
)
