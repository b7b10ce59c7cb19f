"""Matrices laid out in flat buffers as BLAS addresses them (storage order, leading dimension,
offset), for the gemm_buffers tests of both backends. Everything outside the matrix holds
`fill`, so a test can tell that nothing outside C was written."""

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
