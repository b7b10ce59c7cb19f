"""What the gemm tests of both backends share: random operands, the float64 BLAS reference, and
matrices laid out in flat buffers as BLAS addresses them (storage order, leading dimension,
offset). Everything outside an embedded matrix holds `fill`, so a test can tell that nothing
outside C was written."""

from __future__ import annotations

import numpy as np


def embed(x: np.ndarray, order: str, ld: int, offset: int, fill: float = -7.0) -> np.ndarray:
    rows, cols = x.shape
    inner, outer = (rows, cols) if order == "F" else (cols, rows)
    flat = np.full(offset + ld * outer, fill, np.float32)
    flat[offset:].reshape(outer, ld)[:, :inner] = x.T if order == "F" else x
    return flat


def extract(flat: np.ndarray, shape: tuple[int, int], order: str, ld: int,
            offset: int) -> np.ndarray:
    rows, cols = shape
    inner, outer = (rows, cols) if order == "F" else (cols, rows)
    v = flat[offset:offset + ld * outer].reshape(outer, ld)[:, :inner]
    return v.T if order == "F" else v


def rand(rng: np.random.Generator, shape: tuple[int, ...], order: str = "C") -> np.ndarray:
    return np.asarray(rng.standard_normal(shape, dtype=np.float32), order=order)


def starting_at(x: np.ndarray, byte: int = 0) -> np.ndarray:
    """A copy of the contiguous array `x` whose first element lies `byte` bytes past a 64-byte
    boundary (NumPy's own arrays start on 16 bytes, wherever the allocator puts them)."""
    order = "C" if x.flags.c_contiguous else "F"
    raw = np.empty(x.size + 32, np.float32)
    skip = ((-raw.ctypes.data) % 64 + byte) // 4
    out = raw[skip:skip + x.size].reshape(x.shape, order=order)  # type: ignore[call-overload]
    out[...] = x
    assert out.ctypes.data % 64 == byte
    return out


def reference(a, b, c, alpha, beta, ta, tb) -> np.ndarray:
    """alpha*op(A)*op(B) + beta*C in float64, with BLAS's special cases (C unread at beta 0)."""
    a = a.astype(np.float64).T if ta else a.astype(np.float64)
    b = b.astype(np.float64).T if tb else b.astype(np.float64)
    out = np.zeros((a.shape[0], b.shape[1]))
    if alpha != 0 and a.shape[1] > 0:
        out += np.float64(np.float32(alpha)) * (a @ b)
    if beta != 0:
        out += np.float64(np.float32(beta)) * c.astype(np.float64)
    return out
