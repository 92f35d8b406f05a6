"""Host code computes in IEEE arithmetic, whatever thread XLA runs it on.

XLA's CPU runtime runs its computations, and the host calls made from them, with the CPU's
flush-to-zero and denormals-are-zero modes on, and a thread started from a host call inherits
them for its whole life. In such a thread ``np.ldexp(1.0, -1074)`` is ``0.0`` and any
arithmetic reads a subnormal as zero: a sink's ``on_rows`` computed with a value of 1e-310 sees
0, and a store whose file was first made there wrote 0 for the powers of two its SQL view
decodes subnormal and small float64 values with (so they read back as 0). So the hub's entry
points run their code with the default floating-point environment (`ieee`, which puts back
what XLA had), and the worker's threads start with it (`use_ieee`), so the threads made inside
a host call do not keep XLA's modes.

The modes are set with C's ``fesetenv`` through ctypes, on Linux and macOS; elsewhere nothing
is changed.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import sys
from collections.abc import Iterator

__all__ = ["flushing", "ieee", "use_ieee"]

# The smallest subnormal, read at run time (a literal product would be folded when compiled).
_TINY = 5e-324
_TWO = 2.0


def flushing() -> bool:
    """Whether this thread's arithmetic flushes subnormals to zero (either mode does)."""
    return _TINY * _TWO == 0.0


def _fenv() -> tuple[ctypes.CDLL, ctypes.c_void_p] | None:
    """C's floating-point environment functions and ``FE_DFL_ENV``, or None where unknown."""
    try:
        if sys.platform.startswith("linux"):
            # glibc and musl both define FE_DFL_ENV as ((const fenv_t *) -1)
            libm = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
            return libm, ctypes.c_void_p(-1)
        if sys.platform == "darwin":
            libc = ctypes.CDLL(None)
            default = ctypes.c_char.in_dll(libc, "_FE_DFL_ENV")
            return libc, ctypes.c_void_p(ctypes.addressof(default))
    except (OSError, ValueError, AttributeError):
        pass
    return None


_FENV = _fenv()
# Room for any platform's fenv_t (32 bytes on x86-64, 8 on arm64).
_ENV_BYTES = 64


def use_ieee() -> None:
    """Give this thread the default floating-point environment for good (a thread of ours)."""
    if _FENV is not None and flushing():
        libm, default = _FENV
        libm.fesetenv(default)


@contextlib.contextmanager
def ieee() -> Iterator[None]:
    """Run the block with the default floating-point environment, then put back the one it
    had (XLA's, inside a host call). Costs one multiplication where nothing flushes."""
    if _FENV is None or not flushing():
        yield
        return
    libm, default = _FENV
    saved = ctypes.create_string_buffer(_ENV_BYTES)
    libm.fegetenv(saved)
    libm.fesetenv(default)
    try:
        yield
    finally:
        libm.fesetenv(saved)
