"""Where the project's data lives: the kernel sources and the committed results."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KERNELS = ROOT / "kernels"
RESULTS = ROOT / "results"
