"""What the tests share: kernels, browsers and the page's charts, synthetic streams and
sweeps, loops, signals, colours.

No test module imports another; each imports what it shares from here
(`tests/test_test_imports.py` holds it).
"""

from pathlib import Path

#: The repository root.
ROOT = Path(__file__).resolve().parents[2]
