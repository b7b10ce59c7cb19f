"""The skinny kernel (clgemm/kernels/skinny.cl) through the library on every device present:
N short and M short (the kernel then computes C^T), every transpose, both storage orders,
offsets and leading dimensions, alpha and beta, C poisoned where beta is 0, nothing outside C
written; several configurations, so that a mix-up of rows and lanes, of blocks of the short side
or of the last chunk of K shows; and C sharing memory with an operand through gemm()."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from layouts import embed, extract, rand, reference

import clgemm
from clgemm.backends import KINDS
from clgemm.configs.configuration import Config
from clgemm.library import gemm as api
from clgemm.rungs.skinny import SKINNY

#: the defaults, and the forms that verify runs too (`SKINNY.forms`: more rows per work-item
#: with one lane; blocks of the short side narrower than it, with many lanes and a chunk that K
#: does not divide; the short operand read from global; the next chunk loaded during this one)
PARAM_SETS = {"defaults": {}, **{name: dict(form) for name, form in SKINNY.forms.items()}}
#: N short, M short, both short, and sizes no block divides
SHAPES = [(300, 7, 150), (9, 261, 77), (5, 3, 400), (130, 33, 1)]


def _close(got: np.ndarray, want: np.ndarray) -> bool:
    scale = max(1.0, float(np.abs(want).max()))
    return bool(np.abs(got - want).max() <= 1e-4 * scale)


@pytest.mark.parametrize("order", ["F", "C"])
@pytest.mark.parametrize("name", PARAM_SETS)
def test_skinny_kernel_through_gemm_buffers(every_backend, name, order):
    _sweep(every_backend, SKINNY.resolve(PARAM_SETS[name]), order, SHAPES, name)


@pytest.mark.parametrize("order", ["F", "C"])
def test_skinny_kernel_with_k_split(every_backend, order):
    """SPLIT = 4: the batched form over 4 slices of K, whichever side is short and whatever the
    transposes, summed by one more launch into alpha*P + beta*C; at a K that 4 does not divide,
    no split."""
    params = SKINNY.resolve({**PARAM_SETS["lanes"], "SPLIT": 4})
    _sweep(every_backend, params, order, [(300, 7, 400), (9, 261, 84), (70, 5, 30)], "split")


def _sweep(be, params, order, shapes, name):
    for what, got, want, untouched in sweep_cases(be, params, order, shapes, name):
        assert _close(got, want), what
        assert untouched, what


def sweep_cases(be, params, order, shapes, name):
    """Each case of a sweep through gemm_buffers, run: what it is, C's result and the float64
    reference, and whether everything around C's matrix in its buffer was left as it was."""
    kind = KINDS[be.name]
    SKINNY.validate(params, be.device.limits())
    rng = np.random.default_rng(len(name))
    for (m, n, k), (ta, tb) in itertools.product(shapes,
                                                 itertools.product((False, True), repeat=2)):
        a = rand(rng, (k, m) if ta else (m, k))
        b = rand(rng, (n, k) if tb else (k, n))
        for alpha, beta in ((1.5, 0.0), (-0.5, 2.0)):
            c = rand(rng, (m, n)) if beta else np.full((m, n), np.nan, np.float32)
            lds = {x: (s[0] if order == "F" else s[1]) + 3 for x, s in
                   (("a", a.shape), ("b", b.shape), ("c", c.shape))}
            flats = {"a": embed(a, order, lds["a"], 5, np.nan),
                     "b": embed(b, order, lds["b"], 2, np.nan),
                     "c": embed(c, order, lds["c"], 11)}
            arrays = {x: kind.upload(be, f) for x, f in flats.items()}
            bufs = {x: kind.buffer_of(arr)[0] for x, arr in arrays.items()}
            clgemm.gemm_buffers(m, n, k, bufs["a"], bufs["b"], bufs["c"], alpha=alpha,
                                beta=beta, trans_a=ta, trans_b=tb, lda=lds["a"], ldb=lds["b"],
                                ldc=lds["c"], a_offset=5, b_offset=2, c_offset=11, order=order,
                                backend=be, rung=SKINNY.number, params=params)
            be.synchronize()
            got = kind.download(arrays["c"])
            inside = np.zeros(got.shape, bool)
            inside[11:].reshape(-1, lds["c"])[:, :(m if order == "F" else n)] = True
            yield ((name, order, (m, n, k), ta, tb, beta),
                   extract(got, (m, n), order, lds["c"], 11),
                   reference(a, b, c, alpha, beta, ta, tb),
                   np.array_equal(got[~inside], flats["c"][~inside]))


@pytest.mark.parametrize("shape", [(200, 8, 96), (8, 200, 96)])
def test_skinny_kernel_with_c_sharing_an_operand(every_backend, monkeypatch, shape):
    """gemm() with C the very array of A (C = A B with B square): the operand is copied
    before the one launch that reads it in place writes C."""
    be = every_backend
    kind = KINDS[be.name]
    m, n, _ = shape
    config = Config(SKINNY.number, SKINNY.resolve({"LR": 16, "LK": 4}), "user")
    monkeypatch.setattr(api.CACHE, "choose", lambda device, shape: config)
    api.clear_caches()
    try:
        rng = np.random.default_rng(3)
        a0 = rand(rng, (m, n))
        square = rand(rng, (n, n))
        want = reference(a0, square, None, 1.0, 0.0, False, False)
        a = kind.upload(be, a0)
        out = clgemm.gemm(a, kind.upload(be, square), a)
        be.synchronize()
        assert _close(kind.download(out), want)
    finally:
        api.clear_caches()
