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
