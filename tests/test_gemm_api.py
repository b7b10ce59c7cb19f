"""clgemm.gemm and clgemm.gemm_buffers against a float64 NumPy reference: layouts, transposes,
alpha/beta, edge sizes, in-place C, pyopencl arrays without a host round trip, BLAS-style
buffers, every refused input, and IEEE propagation of NaN and Inf."""

from __future__ import annotations

import dataclasses
import itertools
import json
import warnings

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
import pytest
from layouts import embed, extract, rand, reference
from transfers import refuse_host_transfers

import clgemm
from clgemm.backends import KINDS
from clgemm.backends.opencl import OpenCLBackend
from clgemm.configs import choice as kernel_choice
from clgemm.core.errors import UsageError
from clgemm.library import gemm as api
from clgemm.library import signatures
from clgemm.rungs.direct import CPU_DEFAULTS as DIRECT_CPU_DEFAULTS
from clgemm.rungs.direct import DIRECT
from clgemm.rungs.tiled import CPU_IN_PLACE, CPU_MICRO_KERNEL, TILED
from clgemm.rungs.tiled_any import TILED_ANY

TOL = 1e-5


@pytest.fixture(scope="module")
def be(device):
    """The process-wide backend gemm() itself uses for the test device."""
    return api.backend_for(device)


@pytest.fixture(scope="module")
def cl_be(be):
    """The test backend, for the tests that make their own OpenCL buffers: with
    CLGEMM_TEST_BACKEND=cuda they are skipped."""
    if be.name != "opencl":
        pytest.skip(f"needs OpenCL buffers; the test backend is {be.name}")
    return be


@pytest.fixture(scope="module")
def queue(be):
    """An OpenCL queue of the test device's context: the tests that take it build their own
    buffers, so with CLGEMM_TEST_BACKEND=cuda they are skipped."""
    if be.name != "opencl":
        pytest.skip(f"needs an OpenCL queue; the test backend is {be.name}")
    return cl.CommandQueue(be.context, be.device.handle)


def close(out, ref):
    out = np.asarray(out, dtype=np.float64)
    scale = max(1.0, float(np.abs(ref).max())) if ref.size else 1.0
    return out.shape == ref.shape and (out.size == 0 or np.abs(out - ref).max() / scale < TOL)


# -- NumPy arrays ------------------------------------------------------------------------------
SIZES = [(1, 1, 1), (7, 5, 3), (33, 17, 65), (64, 64, 64), (129, 7, 1)]


@pytest.mark.parametrize("m,n,k", SIZES, ids=[f"{m}x{n}x{k}" for m, n, k in SIZES])
def test_numpy_layouts_transposes_scalars(device, m, n, k):
    rng = np.random.default_rng(m * 100 + n * 10 + k)
    combos = itertools.product((False, True), (False, True), "CF", "CF", "CFSN",
                               [(1.0, 0.0), (3.14, 1.0), (0.0, 3.14), (-2.0, 0.5)])
    for ta, tb, oa, ob, oc, (alpha, beta) in combos:
        if oc == "N" and beta != 0:
            continue
        a = rand(rng, (k, m) if ta else (m, k), oa)
        b = rand(rng, (n, k) if tb else (k, n), ob)
        if oc == "S":  # a strided, offset view: written through, the rest left alone
            big = rand(rng, (2 * m + 1, n + 2))
            c = big[1::2, 1:n + 1]
        elif oc in "CF":
            big, c = None, rand(rng, (m, n), oc)
        else:
            big, c = None, None
        before_big = None if big is None else big.copy()
        ref = reference(a, b, None if c is None else c.copy(), alpha, beta, ta, tb)
        out = clgemm.gemm(a, b, c, alpha=alpha, beta=beta, trans_a=ta, trans_b=tb,
                          device=device)
        what = (ta, tb, oa, ob, oc, alpha, beta)
        assert isinstance(out, np.ndarray) and out.dtype == np.float32, what
        if c is not None:
            assert out is c, what
        assert close(out, ref), what
        if big is not None:
            mask = np.ones(big.shape, bool)
            mask[1::2, 1:n + 1] = False
            assert np.array_equal(big[mask], before_big[mask]), what


def test_result_is_c_ordered_without_c(device):
    rng = np.random.default_rng(1)
    out = clgemm.gemm(rand(rng, (5, 4), "F"), rand(rng, (4, 3), "F"), device=device)
    assert out.flags.c_contiguous and out.shape == (5, 3)


@pytest.mark.parametrize("m,n,k", [(0, 5, 3), (4, 0, 3), (0, 0, 0)])
def test_empty_output(device, m, n, k):
    a = np.ones((m, k), np.float32)
    b = np.ones((k, n), np.float32)
    out = clgemm.gemm(a, b, device=device)
    assert out.shape == (m, n) and out.dtype == np.float32
    c = np.ones((m, n), np.float32)
    assert clgemm.gemm(a, b, c, beta=2.0, device=device) is c


def test_k_zero_is_beta_c(device):
    rng = np.random.default_rng(2)
    a, b = np.ones((6, 0), np.float32), np.ones((0, 5), np.float32)
    c = rand(rng, (6, 5))
    c0 = c.copy()
    clgemm.gemm(a, b, c, alpha=2.0, beta=3.0, device=device)
    np.testing.assert_allclose(c, 3.0 * c0, rtol=1e-6)
    assert np.array_equal(clgemm.gemm(a, b, device=device), np.zeros((6, 5), np.float32))
    c[...] = np.nan  # beta == 0: C is not read, the empty product gives zeros
    clgemm.gemm(a, b, c, beta=0.0, device=device)
    assert np.array_equal(c, np.zeros((6, 5), np.float32))


def test_beta_zero_does_not_read_c(device):
    rng = np.random.default_rng(3)
    a, b = rand(rng, (9, 4)), rand(rng, (4, 11))
    c = np.full((9, 11), np.nan, np.float32)
    clgemm.gemm(a, b, c, alpha=2.0, beta=0.0, device=device)
    assert np.isfinite(c).all()
    assert close(c, 2.0 * (a.astype(np.float64) @ b))


@pytest.mark.parametrize("alpha", [1.0, 2.0, 0.0])
def test_beta_zero_does_not_read_c_on_device(be, queue, alpha):
    """NumPy's C is never uploaded when beta == 0, so the kernels' own promise is tested on
    device-resident C: a pyopencl array and a buffer full of NaN."""
    rng = np.random.default_rng(3)
    a, b = rand(rng, (9, 4)), rand(rng, (4, 11))
    ref = reference(a, b, None, alpha, 0.0, False, False)
    c = cla.to_device(queue, np.full((9, 11), np.nan, np.float32))
    clgemm.gemm(cla.to_device(queue, a), cla.to_device(queue, b), c, alpha=alpha, beta=0.0)
    assert np.isfinite(c.get()).all() and close(c.get(), ref)
    mf = cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR
    bufs = [cl.Buffer(be.context, mf, hostbuf=np.asfortranarray(x).ravel(order="F"))
            for x in (a, b, np.full((9, 11), np.nan, np.float32))]
    clgemm.gemm_buffers(9, 11, 4, *bufs, alpha=alpha, beta=0.0, backend=be)
    out = np.empty(99, np.float32)
    cl.enqueue_copy(be.queue, out, bufs[2]).wait()
    assert np.isfinite(out).all() and close(out.reshape((9, 11), order="F"), ref)


def test_alpha_zero_is_blas_no_product(device):
    """As reference BLAS: alpha == 0 means A and B are not read (NaN there does not show)."""
    rng = np.random.default_rng(4)
    a = np.full((5, 4), np.nan, np.float32)
    b = rand(rng, (4, 3))
    c = rand(rng, (5, 3))
    c0 = c.copy()
    clgemm.gemm(a, b, c, alpha=0.0, beta=2.0, device=device)
    np.testing.assert_allclose(c, 2.0 * c0, rtol=1e-6)
    clgemm.gemm(a, b, c, alpha=0.0, beta=1.0, device=device)  # a no-op
    np.testing.assert_allclose(c, 2.0 * c0, rtol=1e-6)


def test_c_may_share_memory_with_a(device):
    rng = np.random.default_rng(5)
    a = rand(rng, (8, 8))
    b = rand(rng, (8, 8))
    ref = reference(a, b, a.copy(), 1.0, 1.0, False, False)
    clgemm.gemm(a, b, a, beta=1.0, device=device)
    assert close(a, ref)


def test_kernel_built_once_and_backend_shared(device, be):
    rng = np.random.default_rng(6)
    a, b = rand(rng, (20, 10)), rand(rng, (10, 30))
    clgemm.gemm(a, b, device=device)
    assert api.backend_for(device) is be
    built = len(be._kernels)
    for _ in range(3):
        clgemm.gemm(a, b, device=device)
        clgemm.gemm(a, b, device=device.index)
    assert len(be._kernels) == built


@pytest.mark.no_shipped_tuning
def test_default_choices(device, tmp_path, monkeypatch):
    """Untuned: the rungs' fallback is the tiled kernel for any size (13) at its defaults; the
    direct kernel runs small products (with its CPU defaults on a CPU)."""
    monkeypatch.setenv("CLGEMM_RESULTS", str(tmp_path))
    api.clear_caches()
    try:
        fallback = kernel_choice.default_config(device)
        assert fallback.rung == 13 and fallback.source == "default"
        assert dict(fallback.params) == clgemm.rungs.get_rung(13).defaults()
        choice = api.choose_kernel(device, 7, 129, 65)
        assert (choice.rung, choice.source) == (DIRECT.number, "default")
        if device.is_cpu:
            assert dict(choice.params) == DIRECT_CPU_DEFAULTS
        assert api.choose_kernel(device, 4096, 4096, 4096).rung == 13
    finally:
        api.clear_caches()


@pytest.mark.no_shipped_tuning
def test_tuned_choice_nearest_that_fits(device, tmp_path, monkeypatch):
    database = pytest.importorskip("clgemm.configs.database")
    monkeypatch.setenv("CLGEMM_RESULTS", str(tmp_path))
    # the packing kernels at every size
    monkeypatch.setattr(kernel_choice, "crossover", kernel_choice.no_crossover)
    api.clear_caches()
    rung3 = clgemm.rungs.get_rung(3)
    params = {"TS": 16, "WPT": 4}
    assert set(params) == set(rung3.param_names())
    db = database.load(device)
    db.record(database.Entry(rung=3, shape=[256, 256, 256], backend=device.backend,
                             params=params, ms=1.0, gflops=1.0))
    db.save()
    api.clear_caches()
    try:
        tuned = api.choose_kernel(device, 128, 128, 128)
        assert (tuned.rung, dict(tuned.params), tuned.source) == (3, params, "tuned")
        # 7 is no multiple of 16: rung 3's tuned tiles cannot do it, kernel 13's defaults can.
        assert api.choose_kernel(device, 7, 128, 128).rung == 13
        rng = np.random.default_rng(7)
        a, b = rand(rng, (128, 128)), rand(rng, (128, 128))
        assert close(clgemm.gemm(a, b, device=device), reference(a, b, None, 1, 0, 0, 0))
    finally:
        api.clear_caches()


#: a tiled configuration through local memory, with tiles of C of 32 x 32: the form a GPU runs
LOCAL_TILES = {"TSM": 32, "TSN": 32, "TSK": 16, "WPTM": 4, "WPTN": 4, "WIDTH": 4, "VWM": 4,
               "VWN": 4, "CACHE_A": 1, "CACHE_B": 1, "PANELS": 0}


@pytest.mark.no_shipped_tuning
@pytest.mark.parametrize("form", ["panels", "local"])
@pytest.mark.parametrize("m,n,k,trans_a,trans_b", [(50, 37, 29, False, False),
                                                  (33, 70, 17, True, False),
                                                  (70, 33, 45, False, True)])
def test_tiled_runs_sizes_its_tiles_do_not_divide_padded(device, tmp_path, monkeypatch, form,
                                                         m, n, k, trans_a, trans_b):
    """The tiled kernel stored at a size its tiles divide also takes products they do not,
    padded: the panel form (a CPU's micro-kernel) by its packs, the form through local memory
    (a GPU's) by padded copies of A and B and an epilogue into C. Chosen there, and right, with
    C poisoned first (or, with beta, C's own values), whatever the operands' transposes."""
    database = pytest.importorskip("clgemm.configs.database")
    monkeypatch.setenv("CLGEMM_RESULTS", str(tmp_path))
    monkeypatch.setattr(kernel_choice, "crossover", kernel_choice.no_crossover)
    params = TILED.resolve(CPU_MICRO_KERNEL if form == "panels" else LOCAL_TILES)
    if TILED.first_violation(params, device.limits(), stages=("divisibility", "device")):
        pytest.skip(f"the {form} form does not fit this device")
    api.clear_caches()
    db = database.load(device)
    db.record(database.Entry(rung=TILED.number, shape=[64, 64, 64], backend=device.backend,
                             params=params, ms=1.0, gflops=1e6))
    db.save()
    api.clear_caches()
    try:
        chosen = api.choose_kernel(device, n, m, k)  # C-ordered: the kernels see N x M
        assert chosen.rung == TILED.number and chosen.params == params
        rng = np.random.default_rng(11)
        a = rand(rng, (k, m) if trans_a else (m, k))
        b = rand(rng, (n, k) if trans_b else (k, n))
        if form == "panels":
            c = np.full((m, n), np.nan, np.float32)
            got = clgemm.gemm(a, b, c, trans_a=trans_a, trans_b=trans_b, device=device)
            assert close(got, reference(a, b, None, 1, 0, trans_a, trans_b))
        else:
            c = rand(rng, (m, n))
            want = reference(a, b, c, 1.5, -0.5, trans_a, trans_b)
            got = clgemm.gemm(a, b, c, alpha=1.5, beta=-0.5, trans_a=trans_a,
                              trans_b=trans_b, device=device)
            assert close(got, want)
    finally:
        api.clear_caches()


# -- pyopencl arrays ---------------------------------------------------------------------------
@pytest.fixture
def no_host_transfers(monkeypatch):
    """Fail on any host<->device copy through the backend: pyopencl operands stay on device."""
    refuse_host_transfers(monkeypatch, OpenCLBackend, "host round trip")


def test_pyopencl_in_pyopencl_out(queue):
    rng = np.random.default_rng(10)
    a, b = rand(rng, (37, 19)), rand(rng, (19, 23))
    da, db = cla.to_device(queue, a), cla.to_device(queue, b)
    with pytest.MonkeyPatch.context() as mp:
        refuse_host_transfers(mp, OpenCLBackend, "host round trip")
        out = clgemm.gemm(da, db)
    assert isinstance(out, cla.Array) and out.context == queue.context
    assert close(out.get(), reference(a, b, None, 1, 0, 0, 0))


def test_pyopencl_views_in_place(queue, no_host_transfers):
    rng = np.random.default_rng(11)
    a, b = rand(rng, (40, 30), "F"), rand(rng, (25, 30))
    big = rand(rng, (42, 20))
    da, db, dbig = (cla.to_device(queue, x) for x in (a, b, big))
    c = dbig[1:41, 3:11]  # offset view with a leading dimension of 20 (row-major)
    # a.T is an F-ordered view; db[2:10, :] an offset slice; the product is 40 x 8.
    out = clgemm.gemm(da.T, db[2:10, :], c, alpha=1.5, beta=-1.0, trans_a=True, trans_b=True)
    assert out is c
    got = dbig.get()
    ref = reference(a, b[2:10, :], big[1:41, 3:11].copy(), 1.5, -1.0, False, True)
    assert close(got[1:41, 3:11], ref)
    mask = np.ones(big.shape, bool)
    mask[1:41, 3:11] = False
    assert np.array_equal(got[mask], big[mask])


def test_pyopencl_mixed_with_numpy(queue):
    rng = np.random.default_rng(12)
    a, b = rand(rng, (6, 5)), rand(rng, (5, 4))
    out = clgemm.gemm(a, cla.to_device(queue, b))
    assert isinstance(out, cla.Array)
    assert close(out.get(), reference(a, b, None, 1, 0, 0, 0))
    c = np.zeros((6, 4), np.float32)
    assert clgemm.gemm(cla.to_device(queue, a), cla.to_device(queue, b), c) is c
    assert close(c, reference(a, b, None, 1, 0, 0, 0))


def test_pyopencl_empty_and_k_zero(queue):
    out = clgemm.gemm(cla.zeros(queue, (0, 3), np.float32), cla.zeros(queue, (3, 4), np.float32))
    assert isinstance(out, cla.Array) and out.shape == (0, 4)
    c = cla.to_device(queue, np.full((3, 4), 2.0, np.float32))
    clgemm.gemm(cla.zeros(queue, (3, 0), np.float32), cla.zeros(queue, (0, 4), np.float32), c,
                beta=0.5)
    assert np.array_equal(c.get(), np.ones((3, 4), np.float32))


# -- gemm_buffers ------------------------------------------------------------------------------




PANEL_PARAMS = {"TSM": 32, "TSN": 16, "TSK": 16, "WPTM": 16, "WPTN": 8, "WIDTH": 8, "VWM": 16,
                "CACHE_A": 0, "CACHE_B": 0, "PANELS": 1}


@pytest.mark.parametrize("exact", [True, False], ids=["tile-multiples", "padded"])
@pytest.mark.parametrize("order", "FC")
def test_gemm_with_panels_packs_both_operands(be, queue, exact, order):
    """Rung 12 with PANELS reads A and BT in panels, which gemm() packs in one pass each
    straight from the caller's layout: every transpose, offset and leading dimension, sizes
    that are tile multiples or not, K over more than one of the pack's blocks of columns
    (PANEL_RUN), alpha and beta, and nothing outside C written."""
    rng = np.random.default_rng(23)
    m, n, k = (64, 32, 160) if exact else (45, 23, 131)
    mf = cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR
    for ta, tb in itertools.product((False, True), repeat=2):
        a = rand(rng, (k, m) if ta else (m, k))
        b = rand(rng, (n, k) if tb else (k, n))
        c = rand(rng, (m, n))
        lds = {name: (x.shape[0] if order == "F" else x.shape[1]) + 3
               for name, x in (("a", a), ("b", b), ("c", c))}
        flat = {name: embed(x, order, lds[name], 5) for name, x in (("a", a), ("b", b), ("c", c))}
        bufs = {name: cl.Buffer(be.context, mf, hostbuf=x) for name, x in flat.items()}
        clgemm.gemm_buffers(m, n, k, bufs["a"], bufs["b"], bufs["c"], alpha=1.5, beta=-0.5,
                            trans_a=ta, trans_b=tb, lda=lds["a"], ldb=lds["b"], ldc=lds["c"],
                            a_offset=5, b_offset=5, c_offset=5, order=order, queue=queue,
                            rung=12, params=PANEL_PARAMS)
        got = np.empty_like(flat["c"])
        cl.enqueue_copy(queue, got, bufs["c"]).wait()
        want = embed(reference(a, b, c, 1.5, -0.5, ta, tb).astype(np.float32), order,
                     lds["c"], 5)
        inside = embed(np.ones_like(c), order, lds["c"], 5, fill=0.0).astype(bool)
        assert close(extract(got, (m, n), order, lds["c"], 5),
                     reference(a, b, c, 1.5, -0.5, ta, tb)), (ta, tb)
        assert np.array_equal(got[~inside], want[~inside]), "written outside C"


def test_gemm_buffers_defaults_and_context_from_buffer(cl_be):
    be = cl_be
    rng = np.random.default_rng(21)
    a, b = rand(rng, (4, 3), "F"), rand(rng, (3, 2), "F")
    mf = cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR
    ba = cl.Buffer(be.context, mf, hostbuf=a.ravel(order="F"))
    bb = cl.Buffer(be.context, mf, hostbuf=b.ravel(order="F"))
    bc = cl.Buffer(be.context, cl.mem_flags.READ_WRITE, size=4 * 8)
    clgemm.gemm_buffers(4, 2, 3, ba, bb, bc)
    out = np.empty(8, np.float32)
    cl.enqueue_copy(be.queue, out, bc).wait()
    assert close(out.reshape((4, 2), order="F"), reference(a, b, None, 1, 0, 0, 0))


# -- IEEE special values -----------------------------------------------------------------------
def ieee_reference(a, b):
    """Products summed one by one in float64, so NaN and Inf arise exactly as IEEE says."""
    with np.errstate(invalid="ignore"):  # Inf * 0 and Inf - Inf are the point here
        return (a.astype(np.float64)[:, :, None] * b.astype(np.float64)[None, :, :]).sum(axis=1)


def same_specials(out, ref):
    out = np.asarray(out, np.float64)
    return (np.array_equal(np.isnan(out), np.isnan(ref))
            and np.array_equal(np.isposinf(out), np.isposinf(ref))
            and np.array_equal(np.isneginf(out), np.isneginf(ref)))


@pytest.mark.parametrize("m,n,k", [(9, 7, 5), (64, 64, 64)])
def test_nan_and_inf_propagate(device, queue, m, n, k):
    rng = np.random.default_rng(30)
    a = np.abs(rand(rng, (m, k))) + 0.5
    b = np.abs(rand(rng, (k, n))) + 0.5
    a[1, 2] = np.nan      # row 1 of C: NaN
    a[3, 0] = np.inf      # row 3: +Inf ...
    b[0, 2] = 0.0         # ... except column 2, where Inf * 0 = NaN
    a[4, 1] = np.inf      # row 4: Inf + (-Inf) = NaN everywhere
    a[4, 3] = -np.inf
    b[4, 5] = -np.inf     # column 5: -Inf, but NaN in rows 1 and 4
    ref = ieee_reference(a, b)
    assert np.isnan(ref).any() and np.isinf(ref).any()
    assert same_specials(clgemm.gemm(a, b, device=device), ref)
    assert same_specials(clgemm.gemm(np.asfortranarray(a.T), b, trans_a=True, device=device), ref)
    da, db = cla.to_device(queue, a), cla.to_device(queue, b)
    assert same_specials(clgemm.gemm(da, db).get(), ref)
    c = rand(rng, (m, n))
    c[0, 0] = np.inf
    ref_c = ref + c.astype(np.float64)
    out = clgemm.gemm(a, b, c.copy(), beta=1.0, device=device)
    assert same_specials(out, ref_c)
    finite = np.isfinite(ref_c)
    assert np.allclose(out[finite], ref_c[finite], rtol=1e-4, atol=1e-4)


# -- refused inputs ----------------------------------------------------------------------------
def refused(match, fn, *args, **kwargs):
    with pytest.raises(UsageError, match=match) as info:
        fn(*args, **kwargs)
    return str(info.value)


def test_mismatched_shapes_named(device):
    a, b = np.ones((3, 4), np.float32), np.ones((5, 6), np.float32)
    msg = refused("inner sizes 4 and 5 differ", clgemm.gemm, a, b, device=device)
    assert "(3, 4)" in msg and "(5, 6)" in msg
    refused(r"op\(a\) is 4 x 3", clgemm.gemm, a, b, trans_a=True, device=device)
    c = np.zeros((3, 5), np.float32)
    c0 = c.copy()
    refused(r"c has shape \(3, 5\), but op\(a\) @ op\(b\) is 3 x 6", clgemm.gemm, a,
            np.ones((4, 6), np.float32), c, device=device)
    assert np.array_equal(c, c0)


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.float16, np.complex64])
def test_wrong_dtype_named(device, dtype):
    good = np.ones((3, 3), np.float32)
    bad = np.ones((3, 3), dtype)
    for args in ((bad, good), (good, bad), (good, good, bad)):
        msg = refused("float32 only", clgemm.gemm, *args, device=device)
        assert str(np.dtype(dtype)) in msg


def test_pyopencl_wrong_dtype(queue):
    refused("float32 only", clgemm.gemm, cla.zeros(queue, (2, 2), np.float64),
            cla.zeros(queue, (2, 2), np.float32))


@pytest.mark.parametrize("shape", [(3,), ()])
def test_not_2d(device, shape):
    refused("must be 2-D", clgemm.gemm, np.ones(shape, np.float32), np.ones((3, 3), np.float32),
            device=device)


def test_not_an_array(device):
    refused("a NumPy array or a pyopencl.array.Array or a cupy.ndarray, got list", clgemm.gemm,
            [[1.0]], np.ones((1, 1), np.float32), device=device)


def test_bad_scalars_and_flags(device):
    a = np.ones((2, 2), np.float32)
    refused("alpha must be a real number", clgemm.gemm, a, a, alpha=1j, device=device)
    refused("beta must be a real number", clgemm.gemm, a, a, a.copy(), beta="1", device=device)
    refused("trans_a must be True or False", clgemm.gemm, a, a, trans_a="T", device=device)
    refused("beta=2.0 needs c", clgemm.gemm, a, a, beta=2.0, device=device)


def test_read_only_c(device):
    a = np.ones((2, 2), np.float32)
    c = np.zeros((2, 2), np.float32)
    c.flags.writeable = False
    refused("c is read-only", clgemm.gemm, a, a, c, device=device)


def test_unhandled_pyopencl_view(queue):
    d = cla.to_device(queue, np.ones((8, 8), np.float32))
    c = cla.to_device(queue, np.zeros((4, 4), np.float32))
    msg = refused("cannot read in place", clgemm.gemm, d[::2, ::2], d[:4, :4], c, beta=1.0)
    assert "strides" in msg
    assert np.array_equal(c.get(), np.zeros((4, 4), np.float32))


def test_arrays_from_different_contexts(device, queue):
    other_ctx = cl.Context([device.handle])
    other_q = cl.CommandQueue(other_ctx)
    a = cla.to_device(queue, np.ones((3, 3), np.float32))
    b = cla.to_device(other_q, np.ones((3, 3), np.float32))
    refused("a and b live in different OpenCL contexts", clgemm.gemm, a, b)
    refused("a and c live in different OpenCL contexts", clgemm.gemm, a,
            np.ones((3, 3), np.float32), cla.zeros(other_q, (3, 3), np.float32))
    # arrays of one context, a backend (or its device) of another
    refused("another OpenCL context than the backend", clgemm.gemm, b, b,
            backend=api.backend_for(device))


def test_backend_and_device_disagree(device):
    fake = dataclasses.replace(device, handle=None, name="elsewhere")
    be = type(api.backend_for(device))(device)
    with pytest.raises(UsageError):
        clgemm.gemm(np.ones((2, 2), np.float32), np.ones((2, 2), np.float32), backend=be,
                    device=fake)


def test_too_large_checked_before_any_copy(device):
    """Broadcast views take no memory; copying one first would need more host memory than the
    device has, so the size check must come before any copy or upload."""
    side = 1 << 16
    while 4 * side * side <= device.global_mem_bytes:   # A alone must not fit the device
        side <<= 1
    a = np.broadcast_to(np.float32(1), (side, side))
    c = np.zeros((side, 1), np.float32)
    msg = refused("GiB", clgemm.gemm, a, np.ones((side, 1), np.float32), c, device=device)
    assert device.name in msg
    assert not c.any()


def test_too_large_for_device_memory(device):
    tiny = dataclasses.replace(device, global_mem_bytes=2**20)
    be = type(api.backend_for(device))(tiny)
    rng = np.random.default_rng(41)
    a, b = rand(rng, (300, 300)), rand(rng, (300, 300))
    c = np.zeros((300, 300), np.float32)
    msg = refused("of device memory", clgemm.gemm, a, b, c, beta=1.0, backend=be)
    assert "has 1.00 MiB" in msg and "a (uploaded)" in msg
    assert not c.any()


def test_too_large_for_one_allocation(device):
    small = dataclasses.replace(device, max_alloc_bytes=4096)
    be = type(api.backend_for(device))(small)
    rng = np.random.default_rng(40)
    a, b = rand(rng, (64, 64)), rand(rng, (64, 64))
    c = np.zeros((64, 64), np.float32)
    refused("per allocation", clgemm.gemm, a, b, c, beta=1.0, backend=be)
    assert not c.any()
    out = clgemm.gemm(a[:16, :16], b[:16, :16], backend=be)  # 1 KiB buffers still fit
    assert close(out, reference(a[:16, :16], b[:16, :16], None, 1, 0, 0, 0))


def test_gemm_buffers_refusals(cl_be, device):
    be = cl_be
    mf = cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR
    c_host = np.arange(40, dtype=np.float32)

    def bufs():
        return (cl.Buffer(be.context, mf, hostbuf=np.ones(40, np.float32)),
                cl.Buffer(be.context, mf, hostbuf=np.ones(40, np.float32)),
                cl.Buffer(be.context, mf, hostbuf=c_host))

    a, b, c = bufs()
    refused("lda=3 is smaller than the 4 rows of a", clgemm.gemm_buffers, 4, 2, 3, a, b, c,
            lda=3)
    refused("ldb=1 is smaller than the 2 columns of b", clgemm.gemm_buffers, 4, 2, 3, a, b, c,
            ldb=1, order="C")
    refused("lda=2 is smaller than the 3 rows", clgemm.gemm_buffers, 4, 2, 3, a, b, c, lda=2,
            trans_a=True)
    refused("a_offset=-1 must be between 0", clgemm.gemm_buffers, 4, 2, 3, a, b, c, a_offset=-1)
    refused("m must be a non-negative integer", clgemm.gemm_buffers, 4.0, 2, 3, a, b, c)
    refused("n=-2 must be between 0", clgemm.gemm_buffers, 4, -2, 3, a, b, c)
    refused("buffer c holds 40 floats", clgemm.gemm_buffers, 4, 2, 3, a, b, c, ldc=30,
            c_offset=20, beta=1.0)
    refused("buffer a holds 40 floats", clgemm.gemm_buffers, 8, 2, 6, a, b, c)
    refused("order must be 'F'", clgemm.gemm_buffers, 4, 2, 3, a, b, c, order="R")
    refused("must be a pyopencl.Buffer", clgemm.gemm_buffers, 4, 2, 3, np.ones(12), b, c)
    other = cl.Context([device.handle])
    foreign = cl.Buffer(other, mf, hostbuf=np.ones(40, np.float32))
    refused("buffer b belongs to another OpenCL context", clgemm.gemm_buffers, 4, 2, 3, a,
            foreign, c, backend=be)
    out = np.empty(40, np.float32)
    cl.enqueue_copy(be.queue, out, c).wait()
    assert np.array_equal(out, c_host)  # nothing was written by any refused call


def test_errors_are_usage_errors_for_cli_style_reporting():
    assert issubclass(UsageError, clgemm.core.errors.ClgemmError)
    assert json.dumps({"ok": True})  # the package imports cleanly with the API exported
    assert clgemm.gemm is api.gemm and clgemm.gemm_buffers is api.gemm_buffers


# -- Python exception classes: values are ValueErrors, types TypeErrors -------------------------
@pytest.mark.parametrize("call, error", [
    (lambda a, dev: clgemm.gemm([[1.0]], a, device=dev), TypeError),
    (lambda a, dev: clgemm.gemm(a.astype(np.float64), a, device=dev), TypeError),
    (lambda a, dev: clgemm.gemm(a, a, alpha="2", device=dev), TypeError),
    (lambda a, dev: clgemm.gemm(a, a, trans_a=1, device=dev), TypeError),
    (lambda a, dev: clgemm.gemm(a, a, backend=3, device=dev), TypeError),
    (lambda a, dev: clgemm.gemm(a, np.ones((3, 2), np.float32), device=dev), ValueError),
    (lambda a, dev: clgemm.gemm(a, a, beta=1.0, device=dev), ValueError),
    (lambda a, dev: clgemm.gemm(a, a, backend="vulkan", device=dev), ValueError),
    (lambda a, dev: clgemm.gemm(a, a, device="no-such-device-anywhere"), ValueError),
])
def test_errors_are_value_or_type_errors(device, call, error):
    a = np.ones((2, 2), np.float32)
    with pytest.raises(error) as info:
        call(a, device)
    assert isinstance(info.value, UsageError)  # still one line, still exit 2 at the CLI
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("alpha", [10**400, -10**40, 1e39])
def test_alpha_beyond_float32_refused(device, alpha):
    a = np.ones((2, 2), np.float32)
    c = np.zeros((2, 2), np.float32)
    msg = refused("outside float32's range", clgemm.gemm, a, a, c, alpha=alpha, device=device)
    assert msg.startswith("alpha=")
    refused("outside float32's range", clgemm.gemm, a, a, c, beta=alpha, device=device)
    assert not c.any()


def test_library_messages_do_not_name_cli_options(device):
    msg = refused("no device name contains it", clgemm.gemm, np.ones((1, 1), np.float32),
                  np.ones((1, 1), np.float32), device="no-such-device-anywhere")
    assert "--" not in msg


# -- the library path queues its work and reuses its memory -----------------------------------
def test_device_arrays_never_wait_for_launches(be, queue, monkeypatch):
    """gemm() on pyopencl arrays queues its launches on the arrays' queue: the timed launch
    (which waits for its event) and plain allocation are for the measuring code only."""
    rng = np.random.default_rng(41)
    a, b = rand(rng, (37, 29)), rand(rng, (29, 23))

    def refuse(*args, **kwargs):
        raise AssertionError("the library path must not wait for a launch or allocate anew")

    monkeypatch.setattr(be, "launch", refuse)
    monkeypatch.setattr(be, "alloc", refuse)
    da, db = cla.to_device(queue, a), cla.to_device(queue, b)
    out = clgemm.gemm(da, db)
    assert out.queue == queue
    assert close(out.get(), reference(a, b, None, 1.0, 0.0, False, False))  # ordered after gemm
    c = cla.to_device(queue, rand(rng, (37, 23)))
    c0 = c.get()
    clgemm.gemm(da, db, c, alpha=0.5, beta=2.0, trans_a=False)
    assert close(c.get(), reference(a, b, c0, 0.5, 2.0, False, False))


@pytest.mark.parametrize("order", ["C", "F"])
def test_repeated_calls_allocate_nothing_new(be, queue, order):
    rng = np.random.default_rng(42)
    a = cla.to_device(queue, np.asarray(rand(rng, (70, 50)), order=order))
    b = cla.to_device(queue, np.asarray(rand(rng, (50, 90)), order=order))
    c = cla.zeros(queue, (70, 90), np.float32)
    pool = be.pool(queue)
    clgemm.gemm(a, b, c, alpha=2.0, beta=0.5)
    queue.finish()
    held = pool.managed_bytes
    for _ in range(5):
        clgemm.gemm(a, b, c, alpha=2.0, beta=0.5)
    queue.finish()
    assert pool.managed_bytes == held


@pytest.mark.no_shipped_tuning
@pytest.mark.parametrize("failure", ["build", "launch"])
def test_stored_choice_that_fails_falls_back(device, be, tmp_path, monkeypatch, failure):
    """A database entry that fails to build or launch here costs one warning, never the call."""
    from clgemm.configs import database
    from clgemm.core.errors import BuildError, LaunchError

    monkeypatch.setenv("CLGEMM_RESULTS", str(tmp_path))
    # the packing kernels at every size
    monkeypatch.setattr(kernel_choice, "crossover", kernel_choice.no_crossover)
    api.clear_caches()
    rung3 = clgemm.rungs.get_rung(3)
    db = database.load(device)
    db.record(database.Entry(rung=3, shape=[64, 64, 64], backend=device.backend,
                             params={"TS": 16, "WPT": 4}, ms=1.0, gflops=1.0))
    db.save()
    api.clear_caches()
    program, enqueue, prepare = be.program, be.enqueue, be.prepare

    def bad_program(filename, defines, kernel):
        if kernel == rung3.kernel and failure == "build":
            raise BuildError("build failed: made to fail by the test")
        return program(filename, defines, kernel)

    def bad_enqueue(knl, gsize, lsize, args, queue=None, **kwargs):
        if be.kernel_name(knl) == rung3.kernel and failure == "launch":
            raise LaunchError("launch failed: made to fail by the test")
        return enqueue(knl, gsize, lsize, args, queue, **kwargs)

    def bad_prepare(knl, gsize, lsize, args, slots):
        launch = prepare(knl, gsize, lsize, args, slots)
        if be.kernel_name(knl) != rung3.kernel or failure != "launch":
            return launch

        def fail(buffers, queue, wait_for):
            raise LaunchError("launch failed: made to fail by the test")
        return fail

    monkeypatch.setattr(be, "program", bad_program)
    monkeypatch.setattr(be, "enqueue", bad_enqueue)
    monkeypatch.setattr(be, "prepare", bad_prepare)
    try:
        assert api.choose_kernel(device, 64, 64, 64).rung == 3
        rng = np.random.default_rng(8)
        a, b, c = rand(rng, (64, 64)), rand(rng, (64, 64)), rand(rng, (64, 64))
        want = reference(a, b, c, 2.0, 0.5, 0, 0)
        with pytest.warns(RuntimeWarning, match="rung 3 .* failed"):
            out = clgemm.gemm(a, b, c.copy(), alpha=2.0, beta=0.5, device=device)
        assert close(out, want)
        assert api.choose_kernel(device, 64, 64, 64).rung != 3  # dropped for the process
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert close(clgemm.gemm(a, b, c.copy(), alpha=2.0, beta=0.5, device=device), want)
    finally:
        api.clear_caches()


def test_alternating_operands_of_one_shape(queue):
    """Launches set only the arguments that changed since the kernel's last launch: operands
    that alternate between calls of one shape must each give their own product."""
    rng = np.random.default_rng(43)
    pairs = [(rand(rng, (48, 40)), rand(rng, (40, 56))) for _ in range(3)]
    dev = [(cla.to_device(queue, a), cla.to_device(queue, b)) for a, b in pairs]
    for rnd in range(3):
        for (a, b), (da, db) in zip(pairs, dev):
            alpha = 1.0 + rnd
            out = clgemm.gemm(da, db, alpha=alpha)
            assert close(out.get(), reference(a, b, None, alpha, 0.0, False, False))
    fresh = [clgemm.gemm(cla.to_device(queue, a), cla.to_device(queue, b)).get()
             for a, b in pairs]  # new buffers each call, freed right after
    for (a, b), out in zip(pairs, fresh):
        assert close(out, reference(a, b, None, 1.0, 0.0, False, False))


def test_shapes_that_share_a_kernel_alternate(device, queue):
    """A repeated call sets only the buffers of its kernel's arguments, the sizes and scalars
    having stayed from its last launch: where calls of other shapes launch the same kernel
    object in between, with their own sizes, each call must still be given its own."""
    rng = np.random.default_rng(44)
    # (M, K, N): the largest group of these that the device's lookup gives one kernel
    groups: dict = {}
    for m, k, n in [(48, 40, 56), (40, 24, 32), (17, 33, 9), (56, 48, 40), (33, 65, 17),
                    (96, 80, 72), (24, 20, 40)]:
        chosen = api.choose_kernel(device, m, n, k)
        groups.setdefault((chosen.rung, tuple(sorted(chosen.params.items()))), []).append(
            (m, k, n))
    shapes = max(groups.values(), key=len)
    assert len(shapes) >= 2, f"no two of the shapes share a kernel here: {groups}"
    shapes = shapes + shapes[:1]  # the first again, after the others changed the sizes
    cases = []
    for m, k, n in shapes:
        a, b, c = rand(rng, (m, k)), rand(rng, (k, n)), rand(rng, (m, n))
        cases.append((a, b, c, [cla.to_device(queue, x) for x in (a, b, c)]))
    for rnd in range(3):
        for i, (a, b, c, (da, db, dc)) in enumerate(cases):
            alpha, beta = 1.0 + rnd + i, 0.5 * rnd
            dc.set(c)
            clgemm.gemm(da, db, dc, alpha=alpha, beta=beta)
            assert close(dc.get(), reference(a, b, c, alpha, beta, False, False)), (rnd, i)


def test_numpy_operands_read_where_they_lie_on_a_cpu(device):
    """On a CPU device the kernels work in the NumPy arrays themselves (no copy in, and a C that
    is not read, no copy out); the answers stay right where C is A, where C is a strided view,
    and where beta reads C."""
    rng = np.random.default_rng(21)
    a, b = rng.standard_normal((96, 64), dtype=np.float32), rng.standard_normal((64, 80),
                                                                                 dtype=np.float32)
    want = a.astype(np.float64) @ b
    c = np.full((96, 80), np.nan, np.float32)
    assert clgemm.gemm(a, b, c, device=device) is c and np.abs(c - want).max() < 1e-3
    cf = np.full((96, 80), np.nan, np.float32, order="F")
    clgemm.gemm(a, b, cf, device=device)
    assert np.abs(cf - want).max() < 1e-3
    s = rng.standard_normal((64, 64), dtype=np.float32)
    s0 = s.astype(np.float64)
    clgemm.gemm(s, s.copy(), s, device=device)  # C is A: A must be read as it was
    assert np.abs(s - s0 @ s0).max() < 1e-3
    big = np.full((96, 160), 5.0, np.float32)
    view = big[:, ::2]
    clgemm.gemm(a, b, view, alpha=2.0, beta=0.5, device=device)
    assert np.abs(view - (2 * want + 2.5)).max() < 1e-3 and (big[:, 1::2] == 5.0).all()


@pytest.mark.parametrize("form", [CPU_IN_PLACE, TILED.forms["self-packing"]],
                         ids=["in-place", "self-packing"])
def test_the_cpu_in_place_form_reads_every_operand_where_it_lies(every_backend, forced_tiled,
                                                                 form):
    """The tiled kernel's forms without local memory and without panels (a CPU's micro-kernel
    on the caller's operands, and the form that copies its own blocks of them) read a
    C-ordered call's operands where they lie whatever `read_b_pays` says: one launch that
    writes C itself, an epilogue only for alpha and beta, a pack only of an operand that is
    not tight. Right every way, C poisoned first; K over several of the copies' depths."""
    be = every_backend
    kind = KINDS[be.name]
    in_place = forced_tiled(be, form, pays=False)
    tm, tn, tk = TILED.size_multiples(in_place.params)
    rng = np.random.default_rng(31)
    m, n, k = 2 * tn, tm, 3 * tk  # C-ordered: the kernels see n x m
    a, b = rand(rng, (m, k)), rand(rng, (k, n))

    def run(a, b, c, **kw):
        with be.observe() as log:
            out = clgemm.gemm(a, b, c, **kw)
        be.synchronize()
        return kind.download(out), [name for name, _ in log.times()]

    poisoned = np.full((m, n), np.nan, np.float32)
    got, names = run(kind.upload(be, a), kind.upload(be, b), kind.upload(be, poisoned))
    assert names == ["gemm_tiled"], names
    assert close(got, reference(a, b, None, 1, 0, False, False))
    c = rand(rng, (m, n))
    got, names = run(kind.upload(be, a), kind.upload(be, b), kind.upload(be, c),
                     alpha=1.5, beta=-0.5)
    assert names == ["gemm_tiled", "epilogue"], names
    assert close(got, reference(a, b, c, 1.5, -0.5, False, False))
    at = np.ascontiguousarray(a.T)  # the kernels' BT itself: read where it lies too
    got, names = run(kind.upload(be, at), kind.upload(be, b), kind.upload(be, poisoned),
                     trans_a=True)
    assert names == ["gemm_tiled"], names
    assert close(got, reference(at, b, None, 1, 0, True, False))
    wide = rand(rng, (m, k + 4))  # not tight: packed into BT first
    got, names = run(kind.upload(be, wide)[:, :k], kind.upload(be, b), kind.upload(be, poisoned))
    assert names == ["pack_transpose", "gemm_tiled"], names
    assert close(got, reference(wide[:, :k], b, None, 1, 0, False, False))
    api.clear_caches()


@pytest.mark.parametrize("pays", [True, False])
def test_the_tiled_kernel_reads_b_where_it_lies(every_backend, forced_tiled, pays):
    """Where `read_b_pays` says so, the tiled kernel reads the kernels' B (a C-ordered A) where
    it lies and transposes it tile by tile, with no pack of it, whether or not C's rows suit
    its tiles; elsewhere B is packed into BT first, as it is wherever it is not tight, and a C
    that is that B gets B copied first. Right every way, C read or not."""
    be = every_backend
    kind = KINDS[be.name]
    tiled = forced_tiled(be, {"PANELS": 0, "CACHE_A": 1, "CACHE_B": 1}, pays)
    tm, tn, tk = TILED.size_multiples(tiled.params)
    rng = np.random.default_rng(29)

    def run(a, b, c=None, alpha=1.0, beta=0.0):
        with be.observe() as log:
            out = clgemm.gemm(a, b, c, alpha=alpha, beta=beta)
        be.synchronize()
        return out, [name for name, _ in log.times()]

    m, n, k = tn, tm, 2 * tk  # C-ordered: the kernels see n x m, and A^T is their B
    a, b = rand(rng, (m, k)), rand(rng, (k, n))
    out, names = run(kind.upload(be, a), kind.upload(be, b))
    assert names == (["gemm_tiled"] if pays else ["pack_transpose", "gemm_tiled"])
    assert close(kind.download(out), reference(a, b, None, 1, 0, False, False))
    b_odd, c = rand(rng, (k, tm + 3)), rand(rng, (m, tm + 3))  # the kernels' A padded
    out, names = run(kind.upload(be, a), kind.upload(be, b_odd), kind.upload(be, c), 1.5, 0.5)
    assert ("pack_transpose" in names) != pays and names[-2:] == ["gemm_tiled", "epilogue"]
    assert close(kind.download(out), reference(a, b_odd, c, 1.5, 0.5, False, False))
    wide = rand(rng, (m, k + 4))
    out, names = run(kind.upload(be, wide)[:, :k], kind.upload(be, b))
    assert names == ["pack_transpose", "gemm_tiled"]
    assert close(kind.download(out), reference(wide[:, :k], b, None, 1, 0, False, False))
    side = max(tm, tn, tk)
    assert side % tm == side % tn == side % tk == 0
    square, other = rand(rng, (side, side)), rand(rng, (side, side))
    ds = kind.upload(be, square)  # C is A: A (the kernels' B) must be read as it was
    _, names = run(ds, kind.upload(be, other), ds)
    assert names == (["pack_copy", "gemm_tiled"] if pays else ["pack_transpose", "gemm_tiled"])
    assert close(kind.download(ds), reference(square, other, None, 1, 0, False, False))
    assert close(clgemm.gemm(a, b_odd, backend=be), reference(a, b_odd, None, 1, 0, False,
                                                              False))
    api.clear_caches()


@pytest.mark.parametrize("split", [4, 5])
@pytest.mark.parametrize("pays", [True, False])
@pytest.mark.parametrize("trans", [(False, False), (True, False), (False, True), (True, True)])
def test_split_k_on_the_tiled_kernel(every_backend, monkeypatch, forced_tiled, trans, pays,
                                     split):
    """K split into 4 or 5 slices on the tiled kernel at multiples of its tiles (a long K with
    few tiles of C on a large GPU; any count dividing K's tiles): its batched form multiplies
    the slices into partial products, one launch sums them into alpha*P + beta*C; right for
    every transposition, with C read or not, on device and NumPy arrays, and with the kernels'
    B read as it lies (a C-ordered A not transposed) where `read_b_pays`, each slice a run of
    rows down B's columns."""
    be = every_backend
    monkeypatch.setattr(kernel_choice, "tiled_split", lambda device, config, shape: split)
    tiled = forced_tiled(be, {"PANELS": 0, "CACHE_A": 1, "CACHE_B": 1}, pays)
    ta, tb = trans
    tm, tn, tk = TILED.size_multiples(tiled.params)
    for names in _split_calls(be, (tm, 2 * tn, 2 * split * tk), trans, 19):
        assert names[-2:] == ["gemm_tiled", "reduce_splits"], names
        # C-ordered, the kernels' A is op(B)^T and their B is op(A)^T: each is transposed
        # into place where it is not stored so, but for B where it is read as it lies
        assert names.count("pack_transpose") == tb + (not ta and not pays), names
    api.clear_caches()


@pytest.mark.parametrize("pays", [True, False])
@pytest.mark.parametrize("trans", [(False, False), (True, True)])
def test_split_k_on_the_tiled_kernel_padded(every_backend, monkeypatch, forced_tiled, trans, pays):
    """K split into 4 slices on the tiled kernel at sizes its tiles do not divide: the product
    padded to its tiles (the kernels' M alone, its B then read as it lies where that pays; and
    every size), partial products of the padded size, of which the sum takes the first M x N
    into alpha*P + beta*C; right with C read or not, on device and NumPy arrays."""
    be = every_backend
    monkeypatch.setattr(kernel_choice, "tiled_split", lambda device, config, shape: 4)
    tiled = forced_tiled(be, {"PANELS": 0, "CACHE_A": 1, "CACHE_B": 1}, pays)
    tm, tn, tk = TILED.size_multiples(tiled.params)
    # C-ordered, the kernels' M is the caller's N and their N the caller's M
    for shape in [(2 * tn, tm + 3, 8 * tk), (2 * tn + 5, tm + 3, 8 * tk - 3)]:
        for names in _split_calls(be, shape, trans, 31):
            assert names[-2:] == ["gemm_tiled", "reduce_splits"], names
    api.clear_caches()


#: the tiled kernel with its work-groups in two slices of K, tiles small enough for any device
SLICED = {"PANELS": 0, "CACHE_A": 1, "CACHE_B": 1, "TSM": 32, "TSN": 32, "TSK": 16, "WPTM": 4,
          "WPTN": 4, "WIDTH": 4, "VWM": 4, "VWN": 4, "KSPLIT": 2}


@pytest.mark.parametrize("pays", [True, False])
@pytest.mark.parametrize("trans", [(False, False), (True, True)])
def test_slices_of_k_in_a_group_under_gemms_own_split(every_backend, monkeypatch, forced_tiled,
                                                      trans, pays):
    """A configuration whose groups walk K in two slices (KSPLIT) under gemm()'s own split of
    K in four, its B read as it lies where that pays: K a multiple of both (the kernel's K
    step is the two slices' tiles), and padded to them; right for both transposes, C read or
    not, on device and NumPy arrays."""
    be = every_backend
    monkeypatch.setattr(kernel_choice, "tiled_split", lambda device, config, shape: 4)
    tiled = forced_tiled(be, SLICED, pays)
    tm, tn, tk = TILED.size_multiples(tiled.params)
    assert tk == 2 * SLICED["TSK"]
    for shape in [(tm, 2 * tn, 8 * tk), (2 * tn + 5, tm + 3, 8 * tk - 3)]:
        for names in _split_calls(be, shape, trans, 43):
            assert names[-2:] == ["gemm_tiled", "reduce_splits"], names
    api.clear_caches()


def _split_calls(be, shape, trans, seed):
    """gemm() at `shape` with the transposes `trans`, on device arrays with alpha 1 and beta 0
    and again with C read, each result checked against float64, then on NumPy arrays: the
    launches' kernel names of each device-array call."""
    kind = KINDS[be.name]
    (m, n, k), (ta, tb) = shape, trans
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((k, m) if ta else (m, k), dtype=np.float32)
    b = rng.standard_normal((n, k) if tb else (k, n), dtype=np.float32)
    c = rng.standard_normal((m, n), dtype=np.float32)
    op_a, op_b = (a.T if ta else a).astype(np.float64), b.T if tb else b
    calls = []
    for alpha, beta in [(1.0, 0.0), (1.5, -0.5)]:
        with be.observe() as log:
            out = clgemm.gemm(kind.upload(be, a), kind.upload(be, b), kind.upload(be, c),
                              alpha=alpha, beta=beta, trans_a=ta, trans_b=tb)
        be.synchronize()
        calls.append([name for name, _ in log.times()])
        assert close(kind.download(out), alpha * (op_a @ op_b) + beta * c), shape
    assert close(clgemm.gemm(a, b, trans_a=ta, trans_b=tb, backend=be), op_a @ op_b), shape
    return calls


def _forced_tiled_any(be, monkeypatch, form, split):
    """gemm() on the tiled kernel for any size, 32 x 32 x 16 tiles of 4 x 4 sums in vectors of
    4, with `form` over that, and K in `split` slices; skipped where the device cannot run it."""
    params = {**TILED_ANY.forms["registers"], **form}
    if TILED_ANY.first_violation(TILED_ANY.resolve(params), be.device.limits()) is not None:
        pytest.skip("the configuration does not fit this device")
    config = api.user_config(be.device, TILED_ANY.number, params)
    monkeypatch.setattr(api.CACHE, "choose", lambda device, shape: config)
    monkeypatch.setattr(kernel_choice, "tiled_split", lambda device, config, shape: split)


@pytest.mark.parametrize("form", [{}, {"PIPELINE": 3}, {"RASTER": 8, "UNROLL_K": 1}],
                         ids=["registers", "pipeline", "bands-unrolled"])
@pytest.mark.parametrize("trans", [(False, False), (True, True)])
def test_split_k_on_the_tiled_kernel_for_any_size(every_backend, monkeypatch, trans, form):
    """K split into 3 slices on the tiled kernel for any size where nothing divides the sizes:
    each slice whole tiles deep but the last, which takes what is left; the batched form
    multiplies them into partial products and one launch sums them into alpha*P + beta*C; right
    with C read or not, with M and N off the vector width (float by float) and on it (vectors),
    through registers and through a cp.async pipeline where the device has one, with the tiles
    in bands and the depth unrolled, on device and NumPy arrays."""
    be = every_backend
    _forced_tiled_any(be, monkeypatch, form, 3)
    api.clear_caches()
    for shape in [(45, 70, 131), (64, 36, 200)]:
        for names in _split_calls(be, shape, trans, 23):
            assert names[-2:] == ["gemm_tiled_any", "reduce_splits"], names
    api.clear_caches()


@pytest.mark.parametrize("split", [1, 3])
@pytest.mark.parametrize("form", list(TILED_ANY.forms.values()), ids=list(TILED_ANY.forms))
@pytest.mark.parametrize("trans", [(False, False), (True, True)])
def test_the_tiled_kernel_for_any_size_reads_packs_whole_vectors_apart(every_backend, monkeypatch,
                                                                       trans, form, split):
    """Off the vector width, where padding pays, gemm() packs A and BT with their columns
    rounded up to whole vectors (zeros between) and the kernel for any size reads vectors:
    right at sizes nothing divides, M, N or both off the width, K whole or in slices, through
    registers, a cp.async pipeline where the device has one, bands of tiles and straight from
    global memory, with C read or not, on device and NumPy arrays; an operand it would read in
    place is packed for it."""
    be = every_backend
    _forced_tiled_any(be, monkeypatch, form, split)
    monkeypatch.setattr(signatures, "padding_pays", lambda device, shape, extra: True)
    api.clear_caches()
    for shape in [(45, 70, 131), (64, 37, 200), (33, 29, 17)]:
        # C-ordered, the kernel's A has N rows and its BT M: each off the width is packed
        off = sum(rows % 4 != 0 for rows in shape[:2])
        for names in _split_calls(be, shape, trans, 29):
            packs = names.index("gemm_tiled_any")
            assert packs >= off and all(name.startswith("pack_") for name in names[:packs]), names
            assert ("reduce_splits" in names) == (split > 1), names
    api.clear_caches()


@pytest.mark.parametrize("trans", [(False, False), (True, False), (False, True), (True, True)])
def test_split_k_on_the_direct_kernel(every_backend, monkeypatch, trans):
    """K split into 4 slices (what the device's compute units would ask for a skinny product
    on a large GPU): one batched launch of the direct kernel into partial products, one launch
    summing them into alpha*P + beta*C; right for every transposition, on NumPy and device
    arrays, and with C read or not."""
    be = every_backend
    kind = KINDS[be.name]
    monkeypatch.setattr(kernel_choice, "split_of",
                        lambda device, params, shape: 4 if shape[2] % 4 == 0 else 1)
    monkeypatch.setattr(kernel_choice, "crossover",
                        lambda device: kernel_choice.Crossover(2**62, "test"))
    api.clear_caches()
    ta, tb = trans
    rng = np.random.default_rng(17)
    m, n, k = 37, 9, 512
    a = rng.standard_normal((k, m) if ta else (m, k), dtype=np.float32)
    b = rng.standard_normal((n, k) if tb else (k, n), dtype=np.float32)
    c = rng.standard_normal((m, n), dtype=np.float32)
    op_a = a.T if ta else a
    op_b = b.T if tb else b
    want = 1.5 * (op_a.astype(np.float64) @ op_b) - 0.5 * c
    with be.observe() as log:
        out = clgemm.gemm(kind.upload(be, a), kind.upload(be, b), kind.upload(be, c),
                          alpha=1.5, beta=-0.5, trans_a=ta, trans_b=tb)
    be.synchronize()
    assert [name for name, _ in log.times()] == ["gemm_direct", "reduce_splits"]
    assert np.abs(kind.download(out) - want).max() < 1e-3
    got = clgemm.gemm(a, b, trans_a=ta, trans_b=tb, backend=be)
    assert np.abs(got - op_a.astype(np.float64) @ op_b).max() < 1e-3
    api.clear_caches()
