"""What the tests share: kernels, browsers, synthetic streams, loops, signals.

No test module imports another; each imports what it shares from here.
"""

from pathlib import Path

#: The repository root.
ROOT = Path(__file__).resolve().parents[2]
