"""What the benchmark scripts share: the machine line, the ``--budget`` they size repeats by,
and the markdown tables they print.

Every script prints first where it ran (`machine`): numbers from a GPU and from a 2-core CPU
differ by orders of magnitude, and a table without its machine cannot be compared with another.
"""

from __future__ import annotations

import argparse
import platform


def arguments(doc: str) -> argparse.ArgumentParser:
    """A parser with the flags every script takes: ``--quick`` (tiny sizes: the script runs)
    and ``--budget SECONDS`` (repeats sized to end in about that long)."""
    p = argparse.ArgumentParser(description=doc.strip().splitlines()[0])
    p.add_argument("--quick", action="store_true", help="tiny sizes: check that it runs")
    p.add_argument(
        "--budget",
        type=float,
        default=None,
        metavar="SECONDS",
        help="size the repeats to end in about this long (default: the script's own)",
    )
    return p


def machine() -> str:
    """Where the numbers come from: JAX's version, its backend and device, and the host."""
    import jax

    device = jax.devices()[0]
    return (
        f"jax {jax.__version__} on {device.platform} ({device.device_kind}), "
        f"{jax.device_count()} device(s); host {platform.machine()}, "
        f"Python {platform.python_version()}"
    )


def on_accelerator() -> bool:
    """Whether JAX runs on a GPU or TPU (sizes made for a 2-core CPU would take minutes)."""
    import jax

    return jax.default_backend() != "cpu"


def rounds(budget: float | None, seconds_per_round: float, default: int, low: int = 2) -> int:
    """Rounds that fit ``budget`` seconds when one round takes ``seconds_per_round``
    (``default`` without a budget), never fewer than ``low``.

    >>> rounds(None, 1.0, 7), rounds(10, 1.0, 7), rounds(1, 1.0, 7)
    (7, 10, 2)
    """
    if budget is None:
        return default
    return max(low, int(budget / max(seconds_per_round, 1e-9)))


def print_table(head, rows) -> None:
    """A right-aligned markdown table (docs/performance.md pastes it as printed)."""
    widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(len(head))]

    def line(r):
        return "| " + " | ".join(str(c).rjust(w) for c, w in zip(r, widths, strict=True)) + " |"

    print(line(head))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        print(line(r))
