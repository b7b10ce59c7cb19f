"""Correctness: the float64 reference and the error measure every result is judged by."""

from __future__ import annotations

import numpy as np

#: relative Frobenius error above which a float32 result counts as wrong. Correct float32 GEMMs
#: land near 1e-7..1e-5 for K up to 8192 on random normal inputs; indexing errors land near 1.
TOLERANCE = 1e-4


def reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A @ B in float64 (inputs are float32, so this is exact to ~1e-16 per product)."""
    return a.astype(np.float64) @ b.astype(np.float64)


def relative_error(result: np.ndarray, ref: np.ndarray) -> float:
    """||result - ref||_F / ||ref||_F in float64; inf when any element is NaN or Inf (unwritten
    elements stay NaN because outputs are poisoned before each checked launch)."""
    result = np.asarray(result, dtype=np.float64)
    if not np.all(np.isfinite(result)):
        return float("inf")
    denom = np.linalg.norm(ref)
    diff = np.linalg.norm(result - ref)
    if denom == 0.0:
        return float(diff)
    return float(diff / denom)


def unwritten_count(result: np.ndarray) -> int:
    return int(np.count_nonzero(np.isnan(result)))
