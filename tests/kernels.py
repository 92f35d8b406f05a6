"""Start a real Jupyter kernel (jupyter_client + ipykernel) on this interpreter.

Shared by the kernel tests (`conftest.py`) and `benchmarks/liveview.py`; needs no pytest.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def start_kernel(tmp: Path, ready_timeout: float = 60) -> tuple[Any, Any]:
    """A running kernel and a connected client: ``(KernelManager, BlockingKernelClient)``.

    The kernelspec is written under ``tmp`` for *this* interpreter, whatever "python3" points
    to on the machine; the kernel starts in the repository root.
    """
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    spec_dir = tmp / "kernels" / "jhw-test"
    spec_dir.mkdir(parents=True, exist_ok=True)
    (spec_dir / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "jhw test",
                "language": "python",
                "env": {"JAX_PLATFORMS": os.environ.get("JAX_PLATFORMS", "cpu")},
            }
        )
    )
    km = KernelManager(
        kernel_name="jhw-test",
        kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(tmp / "kernels")]),
    )
    km.start_kernel(cwd=str(ROOT))
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=ready_timeout)
    return km, kc
