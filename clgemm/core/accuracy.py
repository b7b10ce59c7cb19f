"""Correctness: the float64 reference and the error measure every result is judged by."""

from __future__ import annotations

import numpy as np

#: relative Frobenius error above which a float32 result counts as wrong. Correct float32 GEMMs
#: land near 1e-7..1e-5 for K up to 8192 on random normal inputs; indexing errors land near 1.
TOLERANCE = 1e-4


def reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A @ B in float64 (inputs are float32, so this is exact to ~1e-16 per product)."""
    return a.astype(np.float64) @ b.astype(np.float64)


#: elements a piece of `relative_error` converts to float64 at a time: a piece and its
#: difference stay in the cache, where converting a whole large output at once wrote and read
#: two float64 copies of it in memory on every check
_PIECE = 1 << 15


def _sum_of_squares(x: np.ndarray) -> float:
    """The sum of squares of a 1-D float64 array, single-threaded. `np.dot` hands this to the
    BLAS, which wakes its whole thread pool for every piece of a check; on a host busy with
    compilers (a tune's builders, or two tunes at once) each wake-up waits for threads that are
    not running, and the checks of a large output took seconds an evaluation
    (results/h100/fresh-tune/fifth). NumPy's own `einsum` loop is as fast alone and never
    waits."""
    return float(np.einsum("i,i->", x, x))


def relative_error(result: np.ndarray, ref: np.ndarray,
                   magnitude: np.ndarray | None = None) -> float:
    """||result - ref||_F / ||ref||_F in float64; inf when any element is NaN or Inf (unwritten
    elements stay NaN because outputs are poisoned before each checked launch). With
    `magnitude` (of ref's shape, at least |ref| everywhere: the absolute values of the terms
    ref sums), over ||magnitude||_F instead, so that terms which cancel in ref are judged by
    the rounding their own size allows."""
    result = np.asarray(result)
    if not np.all(np.isfinite(result)):
        return float("inf")
    want = np.asarray(ref, dtype=np.float64)
    if result.shape != want.shape:
        raise ValueError(f"a result of shape {result.shape} checked against a reference of "
                         f"shape {want.shape}")
    got, want = result.reshape(-1), want.reshape(-1)
    squares = 0.0
    for at in range(0, got.size, _PIECE):
        diff = got[at:at + _PIECE].astype(np.float64)
        diff -= want[at:at + _PIECE]
        squares += _sum_of_squares(diff)
    diff_norm = float(np.sqrt(squares))
    scale = want if magnitude is None else np.asarray(magnitude, dtype=np.float64).reshape(-1)
    if scale.shape != want.shape:
        raise ValueError(f"a magnitude of {scale.size} elements for a reference of {want.size}")
    denom = float(np.sqrt(_sum_of_squares(scale)))
    if denom == 0.0:
        return diff_norm
    return diff_norm / denom


def unwritten_count(result: np.ndarray) -> int:
    return int(np.count_nonzero(np.isnan(result)))
