"""One body per behaviour of the library path, run on every device present (OpenCL and CUDA
alike) through the `every_backend` fixture: the backends differ only in their adapters."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from layouts import embed, extract, rand, reference

import clgemm
from clgemm.backends import KINDS


def _close(got: np.ndarray, want: np.ndarray) -> bool:
    scale = max(1.0, float(np.abs(want).max()))
    return bool(np.abs(got - want).max() <= 1e-4 * scale)


@pytest.mark.parametrize("order", ["F", "C"])
@pytest.mark.parametrize("rung", [None, 5])
def test_gemm_buffers_ld_and_offsets(every_backend, order, rung):
    """Flat buffers with leading dimensions larger than the matrix, element offsets, both
    transposes, beta != 0; rung 5 at sizes its tiles do not divide is padded with zeros. Nothing
    outside C is written."""
    be = every_backend
    kind = KINDS[be.name]
    rng = np.random.default_rng(20)
    m, n, k = 13, 9, 21
    for ta, tb in itertools.product((False, True), repeat=2):
        a = rand(rng, (k, m) if ta else (m, k))
        b = rand(rng, (n, k) if tb else (k, n))
        c = rand(rng, (m, n))
        lds = {x: (s[0] if order == "F" else s[1]) + 3 for x, s in
               (("a", a.shape), ("b", b.shape), ("c", c.shape))}
        flats = {"a": embed(a, order, lds["a"], 5), "b": embed(b, order, lds["b"], 2),
                 "c": embed(c, order, lds["c"], 11)}
        arrays = {x: kind.upload(be, f) for x, f in flats.items()}
        bufs = {x: kind.buffer_of(arr)[0] for x, arr in arrays.items()}
        clgemm.gemm_buffers(m, n, k, bufs["a"], bufs["b"], bufs["c"], alpha=0.5, beta=2.0,
                            trans_a=ta, trans_b=tb, lda=lds["a"], ldb=lds["b"], ldc=lds["c"],
                            a_offset=5, b_offset=2, c_offset=11, order=order, backend=be,
                            rung=rung)
        be.synchronize()
        got = kind.download(arrays["c"])
        want = reference(a, b, c, 0.5, 2.0, ta, tb)
        assert _close(extract(got, (m, n), order, lds["c"], 11), want), (order, rung, ta, tb)
        inside = np.zeros(got.shape, bool)
        inside[11:].reshape(-1, lds["c"])[:, :(m if order == "F" else n)] = True
        assert np.array_equal(got[~inside], flats["c"][~inside]), (order, rung, ta, tb)


@pytest.mark.parametrize("shape", [(1, 1, 1), (37, 50, 23), (128, 64, 96)])
@pytest.mark.parametrize("arrays", ["numpy", "device"])
def test_gemm_on_arrays(every_backend, shape, arrays):
    """gemm() on NumPy arrays (through the device) and on the device's own arrays, C-ordered
    and Fortran-ordered operands, alpha and beta, C poisoned first."""
    be = every_backend
    kind = KINDS[be.name]
    rng = np.random.default_rng(sum(shape))
    m, n, k = shape
    a, b = rand(rng, (m, k)), rand(rng, (k, n), order="F")
    c0 = rand(rng, (m, n))
    want = reference(a, b, c0, 1.5, -0.5, False, False)
    put = (lambda x: x) if arrays == "numpy" else (lambda x: kind.upload(be, x))
    get = (lambda x: x) if arrays == "numpy" else kind.download
    dev = be.device if arrays == "numpy" else None
    c = put(c0.copy())
    out = clgemm.gemm(put(a), put(b), c, alpha=1.5, beta=-0.5, device=dev)
    be.synchronize()
    assert _close(get(out), want)
    poisoned = put(np.full((m, n), np.nan, np.float32))
    out = clgemm.gemm(put(a), put(b), poisoned, device=dev)
    be.synchronize()
    assert _close(get(out), reference(a, b, c0, 1.0, 0.0, False, False))
