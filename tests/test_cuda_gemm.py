"""clgemm.gemm, clgemm.gemm_buffers and `clgemm verify` on the CUDA backend.

The tests marked `cuda` need CuPy and a CUDA device and are skipped without them: NumPy arrays
through the GPU and CuPy arrays in place, against a float64 reference with poisoned outputs
(NaN where C must not be read, a sentinel around C that must not change), transposes, both
storage orders, alpha and beta, sizes 0, 1 and odd, every refused input, kernels built once,
the CUDA tuning database, and the quick verify sweep through the command line.

The others run anywhere: pyopencl arrays refused on CUDA, the backend argument, the kernel choice
from the committed CUDA database of the H100, the error without a CUDA device, and the CuPy
adapter's reading of views, against a stand-in for CuPy that only carries array metadata.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from layouts import embed, extract, rand, reference
from transfers import refuse_host_transfers

import clgemm
from clgemm.backends import KINDS, list_devices
from clgemm.backends.cuda import arrays as cuda_arrays
from clgemm.backends.cuda import backend as cuda_module
from clgemm.configs import choice as kernel_choice
from clgemm.configs.launch import helper_block, pack_tile
from clgemm.core.errors import UsageError
from clgemm.core.paths import RESULTS, TUNING
from clgemm.devices.info import DeviceInfo, pick_device
from clgemm.library import gemm as api
from clgemm.rungs import REGISTRY, get_rung

TOL = 1e-5


def refused(match, fn, *args, **kwargs) -> str:
    with pytest.raises(UsageError, match=match) as info:
        fn(*args, **kwargs)
    return str(info.value)


def assert_close(out, ref, what) -> None:
    """out matches the float64 reference to TOL relative to its largest element; on failure the
    message says which case, how far off, and whether NaN (unwritten or wrongly read) appeared."""
    out = np.asarray(out, dtype=np.float64)
    assert out.shape == ref.shape, f"{what}: shape {out.shape}, expected {ref.shape}"
    if not out.size:
        return
    nan = int(np.isnan(out).sum())
    assert nan == 0, f"{what}: {nan} of {out.size} elements NaN (unwritten, or C read at beta=0)"
    scale = max(1.0, float(np.abs(ref).max()))
    err = float(np.abs(out - ref).max()) / scale
    assert err < TOL, f"{what}: max error {err:.2e} (relative to {scale:.2f}) > {TOL:.0e}"


# == anywhere: no GPU needed ===================================================================
@pytest.fixture(scope="module")
def cl_device() -> DeviceInfo:
    """An OpenCL device (the first CPU one where there is one), for the cross-backend checks."""
    found = [d for d in list_devices() if d.backend == "opencl"]
    if not found:
        pytest.skip("needs an OpenCL device")
    return pick_device(found, None)


@pytest.fixture(scope="module")
def cl_queue(cl_device):
    import pyopencl as cl

    return cl.CommandQueue(api.backend_for(cl_device).context, cl_device.handle)


def test_pyopencl_arrays_refused_on_cuda(cl_device, cl_queue):
    import pyopencl as cl
    import pyopencl.array as cla

    a = cla.to_device(cl_queue, np.ones((3, 3), np.float32))
    msg = refused("a is a pyopencl array, which lives on the opencl backend, but the cuda "
                  "backend was asked for", clgemm.gemm, a, a, backend="cuda")
    assert "NumPy or CuPy arrays" in msg
    fake_gpu = dataclasses.replace(cl_device, backend="cuda", name="some GPU", handle=0)
    refused("is on the cuda backend", clgemm.gemm, np.ones((3, 3), np.float32), a,
            device=fake_gpu)
    buf = cl.Buffer(api.backend_for(cl_device).context, cl.mem_flags.READ_WRITE, size=64)
    refused("a is a pyopencl buffer, which lives on the opencl backend, but the cuda backend",
            clgemm.gemm_buffers, 2, 2, 2, buf, buf, buf, backend="cuda")


@pytest.mark.parametrize("bad", ["metal", 3, True])
def test_backend_argument_checked(bad):
    one = np.ones((2, 2), np.float32)
    refused("backend must be one of 'opencl', 'cuda' or a clgemm backend object",
            clgemm.gemm, one, one, backend=bad)


def _cuda_devices() -> list[DeviceInfo]:
    return [d for d in list_devices() if d.backend == "cuda"]


def test_no_cuda_device_is_a_clear_error():
    if _cuda_devices():
        pytest.skip("a CUDA device is present")
    one = np.ones((2, 2), np.float32)
    refused("no cuda device found.*CuPy", clgemm.gemm, one, one, backend="cuda")
    r = subprocess.run([sys.executable, "-m", "clgemm", "verify", "--backend", "cuda", "--quick"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.startswith("error: ") and "no cuda device found" in r.stderr
    assert "Traceback" not in r.stderr


def _h100_cuda() -> DeviceInfo:
    """The H100 the committed CUDA database was tuned on, as its ladder run recorded it."""
    recorded = json.loads((RESULTS / "h100" / "ladder-cuda-4096-tuned.json").read_text())["device"]
    fields = {f.name for f in dataclasses.fields(DeviceInfo)}
    info = DeviceInfo(**{k: v for k, v in recorded.items() if k in fields})
    info.max_work_item_sizes = tuple(info.max_work_item_sizes)
    info.sub_group_sizes = tuple(info.sub_group_sizes)
    info.extensions = cuda_module.CUDA_PROVIDES
    assert info.key == recorded["key"]
    return info


def test_kernel_choice_from_the_cuda_database(monkeypatch):
    """gemm() on CUDA takes its kernel from the CUDA databases through the lookup chain, as
    OpenCL does from its own: the H100's own tuning (by the plain `clgemm tune`) and its family's
    (the H200's, the same GH100 chip) compete by expected speed, and the winner is the fastest
    configuration measured at this very shape by the most trusted level that measured it there
    (the H100's own outranks the H200's faster entry at its slot)."""
    from clgemm.configs import database, lookup

    monkeypatch.delenv("CLGEMM_RESULTS", raising=False)
    info = _h100_cuda()
    db = database.load(info, database.database_path(info.key, TUNING))
    assert db.path.exists(), db.path
    api.clear_caches()
    try:
        shape = (4096, 4096, 4096)
        choice = api.choose_kernel(info, *shape)
        assert choice.rung in (12, 13) and choice.source in ("tuned", "family: NVIDIA H200")
        same_chip = [f for n in (*range(1, 11), 12, 13)
                     for f in lookup.candidates(info, get_rung(n), shape)
                     if f.level != "type" and f.shape == shape]
        trusted = min(f.rank for f in same_chip)
        fastest = max((f for f in same_chip if f.rank == trusted), key=lambda f: f.gflops)
        assert (choice.rung, dict(choice.params)) == (fastest.rung, fastest.params), \
            choice.describe()
        # no tile divides 4097: the tiled kernel runs padded, expected faster there than the
        # tiled kernel for any size (results/h100/padded), on the configuration tuned at the
        # padded size of 64 x 64 tiles (results/h100/grown-block): the 128 x 128 tiles of
        # 4096 cubed would pad it to five waves of work-groups, the last a quarter full
        odd = api.choose_kernel(info, 4097, 4097, 4097)
        padded = [f for f in lookup.candidates(info, get_rung(12), None)
                  if f.level == "tuned" and f.shape == (4160, 4160, 4160)]
        assert len(padded) == 1, padded
        assert (odd.rung, dict(odd.params)) == (12, padded[0].params), odd.describe()
    finally:
        api.clear_caches()


class FakeCupyArray:
    """Stands in for cupy.ndarray where only an array's metadata is read: shape, strides, dtype,
    its data pointer and device. Made as CuPy would make a flat alias, too (memptr=...)."""

    def __init__(self, shape, dtype=np.float32, memptr=None, strides=None, ptr=4096, device=0):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.ndim = len(self.shape)
        self.size = int(np.prod(self.shape))
        self.strides = strides or np.empty(self.shape, self.dtype).strides
        self.data = memptr if memptr is not None else SimpleNamespace(ptr=ptr, device_id=device)
        self.device = SimpleNamespace(id=device)


@pytest.fixture
def fake_cupy(monkeypatch):
    fake = SimpleNamespace(ndarray=FakeCupyArray, float32=np.float32)
    monkeypatch.setattr(cuda_module, "cupy", fake)
    monkeypatch.setattr(cuda_arrays, "cupy", fake)


@pytest.mark.parametrize("shape,strides,c_order,ld,span", [
    ((5, 3), (4, 20), False, 5, 15),        # F-contiguous
    ((5, 3), (12, 4), True, 3, 15),         # C-contiguous
    ((4, 3), (40, 4), True, 10, 33),        # rows of a wider C-ordered array
    ((4, 3), (4, 28), False, 7, 18),        # columns of a taller F-ordered array
    ((1, 6), (-8, 4), False, 1, 6),         # a single row: its row stride does not matter
    ((6, 1), (4, 0), False, 6, 6),          # a single column
])
def test_cupy_views_read_in_place(fake_cupy, shape, strides, c_order, ld, span):
    x = FakeCupyArray(shape, strides=strides)
    op = KINDS["cuda"].in_place("a", x)
    assert (op.c_order, op.ld, op.offset) == (c_order, ld, 0)
    assert op.buf.shape == (span,) and op.buf.data is x.data  # an alias from x's first element


def test_cupy_views_refused(fake_cupy):
    kind = KINDS["cuda"]
    refused("cannot read in place", kind.in_place, "b", FakeCupyArray((4, 4), strides=(8, 64)))
    refused("cannot read in place", kind.in_place, "b", FakeCupyArray((4, 4), strides=(4, -16)))
    refused("not on a float boundary", kind.in_place, "a", FakeCupyArray((2, 2), ptr=4098))


def test_cupy_arrays_checked_before_the_gpu(fake_cupy, cl_device, cl_queue):
    """Refusals that need no GPU: arrays on two devices, CuPy with an OpenCL backend, CuPy and
    pyopencl arrays in one call, bad dtype or rank, buffers gemm_buffers cannot address."""
    import pyopencl.array as cla

    a, b1 = FakeCupyArray((3, 3)), FakeCupyArray((3, 3), device=1)
    refused("a is on CUDA device 0 and b on CUDA device 1", clgemm.gemm, a, b1)
    refused("a is a CuPy array, which lives on the cuda backend, but the opencl backend",
            clgemm.gemm, a, a, backend="opencl")
    refused("a is a CuPy array, which lives on the cuda backend, but the opencl backend",
            clgemm.gemm, a, a, backend=api.backend_for(cl_device))
    refused("on the cuda backend, but device .* is on the opencl backend", clgemm.gemm, a, a,
            device=cl_device)
    refused("a is a CuPy array and b a pyopencl array", clgemm.gemm, a,
            cla.to_device(cl_queue, np.ones((3, 3), np.float32)))
    refused("float32 only", clgemm.gemm, a, FakeCupyArray((3, 3), np.float64))
    refused("must be 2-D", clgemm.gemm, a, FakeCupyArray((9,)))
    flat = FakeCupyArray((40,))
    refused("must be a flat \\(1-D\\) CuPy array", clgemm.gemm_buffers, 2, 2, 2, flat,
            FakeCupyArray((4, 10)), flat)
    refused("float32 buffers only", clgemm.gemm_buffers, 2, 2, 2, flat,
            FakeCupyArray((40,), np.float64), flat)
    refused("strided CuPy view", clgemm.gemm_buffers, 2, 2, 2, flat,
            FakeCupyArray((20,), strides=(8,)), flat)
    refused("b on CUDA device 1", clgemm.gemm_buffers, 2, 2, 2, flat,
            FakeCupyArray((40,), device=1), flat)
    refused("queue is an OpenCL command queue", clgemm.gemm_buffers, 2, 2, 2, flat, flat, flat,
            queue=cl_queue)
    refused("must be a pyopencl.Buffer, or on the CUDA backend a flat CuPy array, got "
            "numpy.ndarray", clgemm.gemm_buffers, 2, 2, 2, flat, np.ones(40, np.float32), flat)


# == on a CUDA GPU =============================================================================
@pytest.fixture(scope="module")
def cp():
    return pytest.importorskip("cupy")


@pytest.fixture(scope="module")
def cuda_device(cp) -> DeviceInfo:
    devices = _cuda_devices()
    if not devices:
        pytest.skip("no CUDA device")
    return devices[0]


@pytest.fixture(scope="module")
def cuda_be(cuda_device):
    """The process-wide backend gemm() itself uses on the CUDA device."""
    be = api.backend_for(cuda_device)
    assert be.name == "cuda", f"gemm's backend for a CUDA device is {type(be).__name__}"
    return be


@pytest.fixture
def no_host_transfers(monkeypatch):
    """Fail on any host<->device copy through the CUDA backend: CuPy operands stay on the GPU."""
    refuse_host_transfers(monkeypatch, cuda_module.CUDABackend,
                          "host round trip: gemm copied through the host with CuPy operands")


SIZES = [(1, 1, 1), (7, 5, 3), (33, 17, 65), (64, 64, 64), (129, 7, 1), (1, 129, 64),
         (0, 5, 3), (4, 0, 3), (5, 4, 0)]
SCALARS = [(1.0, 0.0), (3.14, 1.0), (0.0, 3.14), (-2.0, 0.5)]


@pytest.mark.cuda
@pytest.mark.parametrize("m,n,k", SIZES, ids=[f"{m}x{n}x{k}" for m, n, k in SIZES])
def test_numpy_through_the_gpu(cuda_device, cuda_be, m, n, k):
    """NumPy in, NumPy out, through the GPU: every transpose pair, C/F-ordered operands, C as C-
    or F-ordered array, strided view or absent, and alpha/beta with their BLAS special cases.
    C is NaN wherever beta == 0 (it must not be read)."""
    rng = np.random.default_rng(m * 100 + n * 10 + k)
    for ta, tb, oa, ob, oc, (alpha, beta) in itertools.product(
            (False, True), (False, True), "CF", "CF", "CFSN", SCALARS):
        if oc == "N" and beta != 0:
            continue
        a = rand(rng, (k, m) if ta else (m, k), oa)
        b = rand(rng, (n, k) if tb else (k, n), ob)
        big = None
        if oc == "S":  # a strided, offset view: written through, the rest left alone
            big = rand(rng, (2 * m + 1, n + 2))
            c = big[1::2, 1:n + 1]
        elif oc in "CF":
            c = rand(rng, (m, n), oc)
        else:
            c = None
        if c is not None and beta == 0:
            c[...] = np.nan
        before = None if big is None else big.copy()
        ref = reference(a, b, None if c is None else c.copy(), alpha, beta, ta, tb)
        what = (f"gemm {m}x{n}x{k} trans_a={ta} trans_b={tb} a:{oa} b:{ob} c:{oc} "
                f"alpha={alpha} beta={beta}")
        out = clgemm.gemm(a, b, c, alpha=alpha, beta=beta, trans_a=ta, trans_b=tb,
                          backend="cuda", device=cuda_device)
        assert isinstance(out, np.ndarray) and out.dtype == np.float32, \
            f"{what}: returned {type(out).__name__}"
        if c is not None:
            assert out is c, f"{what}: did not return c itself"
        assert_close(out, ref, what)
        if big is not None:
            mask = np.ones(big.shape, bool)
            mask[1::2, 1:n + 1] = False
            assert np.array_equal(big[mask], before[mask]), f"{what}: wrote outside c"


@pytest.mark.cuda
@pytest.mark.parametrize("m,n,k", SIZES, ids=[f"{m}x{n}x{k}" for m, n, k in SIZES])
def test_cupy_in_cupy_out(cp, cuda_device, cuda_be, no_host_transfers, m, n, k):
    """CuPy in, CuPy out on the same GPU, with no copy through the host; C given (C- or
    F-ordered, NaN where beta == 0) or made by gemm (C-ordered)."""
    rng = np.random.default_rng(m * 7 + n * 3 + k)
    for ta, tb, oc, (alpha, beta) in itertools.product((False, True), (False, True), "CFN",
                                                        SCALARS):
        if oc == "N" and beta != 0:
            continue
        a = rand(rng, (k, m) if ta else (m, k))
        b = rand(rng, (n, k) if tb else (k, n), "F")
        c = None if oc == "N" else rand(rng, (m, n), oc)
        if c is not None and beta == 0:
            c[...] = np.nan
        ref = reference(a, b, c, alpha, beta, ta, tb)
        da, db = cp.asarray(a), cp.asarray(b)
        dc = None if c is None else cp.array(c, order=oc)
        what = f"gemm(CuPy) {m}x{n}x{k} trans_a={ta} trans_b={tb} c:{oc} alpha={alpha} beta={beta}"
        out = clgemm.gemm(da, db, dc, alpha=alpha, beta=beta, trans_a=ta, trans_b=tb)
        assert isinstance(out, cp.ndarray), f"{what}: returned {type(out).__name__}"
        assert out.device.id == cuda_device.handle, f"{what}: result on device {out.device.id}"
        if dc is not None:
            assert out is dc, f"{what}: did not return c itself"
        else:
            assert out.flags.c_contiguous and out.dtype == np.float32, what
        assert_close(cp.asnumpy(out), ref, what)


@pytest.mark.cuda
def test_cupy_views_in_place(cp, cuda_be, no_host_transfers):
    """A transposed view, an offset slice and C as a window into a larger array are read and
    written where they lie; the rest of the larger array is untouched."""
    rng = np.random.default_rng(11)
    a, b = rand(rng, (40, 30), "F"), rand(rng, (25, 30))
    big = rand(rng, (42, 20))
    da, db, dbig = cp.asarray(a), cp.asarray(b), cp.asarray(big)
    c = dbig[1:41, 3:11]  # offset view with a leading dimension of 20 (row-major)
    out = clgemm.gemm(da.T, db[2:10, :], c, alpha=1.5, beta=-1.0, trans_a=True, trans_b=True)
    assert out is c
    got = cp.asnumpy(dbig)
    ref = reference(a, b[2:10, :], big[1:41, 3:11].copy(), 1.5, -1.0, False, True)
    assert_close(got[1:41, 3:11], ref, "gemm on CuPy views")
    mask = np.ones(big.shape, bool)
    mask[1:41, 3:11] = False
    assert np.array_equal(got[mask], big[mask]), "gemm wrote outside the view c"


@pytest.mark.cuda
@pytest.mark.parametrize("skip", [0, 1, 4])
def test_cupy_views_off_the_vector(cp, cuda_be, skip):
    """Contiguous views that start `skip` floats into their allocation, at sizes the tiled
    kernel reads in place with float4 and float8 loads: a view off those is read through a
    copy (a load off its size is a fault that ends the CUDA context), every call of the
    signature, and a stack and gemm_buffers' flat operands likewise; C is written where it
    lies."""
    rng = np.random.default_rng(12)
    n = 512
    for _ in range(3):
        ha, hb = rand(rng, (n, n)), rand(rng, (n, n))
        fa, fb, fc = (cp.zeros(n * n + 8, cp.float32) for _ in range(3))
        a, b, c = (f[skip:skip + n * n].reshape(n, n) for f in (fa, fb, fc))
        a[...], b[...] = cp.asarray(ha), cp.asarray(hb)
        assert clgemm.gemm(a, b, c) is c
        assert_close(cp.asnumpy(c), reference(ha, hb, None, 1.0, 0.0, False, False),
                     f"views {skip} floats in")
    hs, ht = rand(rng, (8, 64, 64)), rand(rng, (8, 64, 64))
    fs, ft = (cp.zeros(8 * 64 * 64 + 8, cp.float32) for _ in range(2))
    s, t = (f[skip:skip + hs.size].reshape(hs.shape) for f in (fs, ft))
    s[...], t[...] = cp.asarray(hs), cp.asarray(ht)
    got = cp.asnumpy(clgemm.gemm(s, t))
    assert_close(got, np.einsum("zmk,zkn->zmn", hs.astype(np.float64), ht),
                 f"stacks {skip} floats in")
    flat = (cp.zeros(n * n + 8, cp.float32) for _ in range(2))
    x, y = (f[skip:skip + n * n] for f in flat)
    x[...], y[...] = cp.asarray(ha).ravel(), cp.asarray(hb).ravel()
    out = cp.zeros(n * n, cp.float32)
    clgemm.gemm_buffers(n, n, n, x, y, out, order="C")
    assert_close(cp.asnumpy(out).reshape(n, n),
                 reference(ha, hb, None, 1.0, 0.0, False, False), f"buffers {skip} floats in")
    cp.cuda.Device().synchronize()


@pytest.mark.cuda
def test_cupy_mixed_with_numpy(cp, cuda_be):
    rng = np.random.default_rng(12)
    a, b = rand(rng, (6, 5)), rand(rng, (5, 4))
    out = clgemm.gemm(a, cp.asarray(b))
    assert isinstance(out, cp.ndarray), "NumPy a with CuPy b must give a CuPy result"
    assert_close(cp.asnumpy(out), reference(a, b, None, 1, 0, 0, 0), "NumPy a, CuPy b")
    c = np.zeros((6, 4), np.float32)
    assert clgemm.gemm(cp.asarray(a), cp.asarray(b), c) is c
    assert_close(c, reference(a, b, None, 1, 0, 0, 0), "CuPy a and b, NumPy c")


@pytest.mark.cuda
def test_cupy_blas_special_cases(cp, cuda_be):
    """Empty results, K == 0 (beta*C), alpha == 0 (A and B not read: NaN there does not show),
    beta == 0 (C not read), and a no-op at alpha == 0, beta == 1."""
    out = clgemm.gemm(cp.zeros((0, 3), cp.float32), cp.zeros((3, 4), cp.float32))
    assert isinstance(out, cp.ndarray) and out.shape == (0, 4)
    c = cp.full((3, 4), 2.0, cp.float32)
    clgemm.gemm(cp.zeros((3, 0), cp.float32), cp.zeros((0, 4), cp.float32), c, beta=0.5)
    assert np.array_equal(cp.asnumpy(c), np.ones((3, 4), np.float32)), "K == 0: C := beta*C"
    rng = np.random.default_rng(4)
    nan_a = cp.full((5, 4), np.nan, cp.float32)
    b, c0 = rand(rng, (4, 3)), rand(rng, (5, 3))
    c = cp.asarray(c0)
    clgemm.gemm(nan_a, cp.asarray(b), c, alpha=0.0, beta=2.0)
    np.testing.assert_allclose(cp.asnumpy(c), 2.0 * c0, rtol=1e-6,
                               err_msg="alpha == 0 must not read A")
    clgemm.gemm(nan_a, cp.asarray(b), c, alpha=0.0, beta=1.0)
    np.testing.assert_allclose(cp.asnumpy(c), 2.0 * c0, rtol=1e-6, err_msg="alpha=0 beta=1: no-op")
    a = rand(rng, (9, 4))
    c = cp.full((9, 3), np.nan, cp.float32)
    clgemm.gemm(cp.asarray(a), cp.asarray(b), c, alpha=2.0, beta=0.0)
    assert_close(cp.asnumpy(c), reference(a, b, None, 2.0, 0, 0, 0), "beta == 0 must not read C")


@pytest.mark.cuda
def test_nan_and_inf_propagate_on_cuda(cp, cuda_be):
    rng = np.random.default_rng(30)
    a = np.abs(rand(rng, (9, 5))) + 0.5
    b = np.abs(rand(rng, (5, 7))) + 0.5
    a[1, 2] = np.nan
    a[3, 0] = np.inf
    b[0, 2] = 0.0
    a[4, 1], a[4, 3] = np.inf, -np.inf
    with np.errstate(invalid="ignore"):
        ref = (a.astype(np.float64)[:, :, None] * b.astype(np.float64)[None]).sum(axis=1)
    for out in (clgemm.gemm(a, b, backend="cuda"),
                cp.asnumpy(clgemm.gemm(cp.asarray(a), cp.asarray(b)))):
        for test in (np.isnan, np.isposinf, np.isneginf):
            assert np.array_equal(test(out), test(ref)), f"{test.__name__} pattern differs"


@pytest.mark.cuda
def test_kernels_built_once_and_backend_shared(cp, cuda_device, cuda_be):
    rng = np.random.default_rng(6)
    a, b = rand(rng, (20, 10)), rand(rng, (10, 30))
    clgemm.gemm(a, b, device=cuda_device)
    clgemm.gemm(cp.asarray(a), cp.asarray(b))
    assert api.backend_for(cuda_device) is cuda_be
    assert api.backend_for(cuda_device.index) is cuda_be
    built = len(cuda_be._kernels)
    for _ in range(3):
        clgemm.gemm(a, b, device=cuda_device)
        clgemm.gemm(a, b, device=cuda_device.index)
        clgemm.gemm(cp.asarray(a), cp.asarray(b))
    assert len(cuda_be._kernels) == built, "a kernel was built again for the same source"


@pytest.mark.no_shipped_tuning
@pytest.mark.cuda
def test_tuned_choice_from_cuda_database(cuda_device, tmp_path, monkeypatch):
    from clgemm.configs import database

    monkeypatch.setenv("CLGEMM_RESULTS", str(tmp_path))
    # the packing kernels at every size
    monkeypatch.setattr(kernel_choice, "crossover", kernel_choice.no_crossover)
    api.clear_caches()
    params = {"TS": 16, "WPT": 4}
    db = database.load(cuda_device)
    assert db.path.name.startswith("cuda-"), db.path
    db.record(database.Entry(rung=3, shape=[256, 256, 256], backend="cuda", params=params,
                             ms=1.0, gflops=1.0))
    db.save()
    api.clear_caches()
    try:
        tuned = api.choose_kernel(cuda_device, 128, 128, 128)
        assert (tuned.rung, dict(tuned.params), tuned.source) == (3, params, "tuned")
        assert api.choose_kernel(cuda_device, 7, 128, 128).rung == kernel_choice.ANY_SIZE_RUNG
        rng = np.random.default_rng(7)
        a, b = rand(rng, (128, 128)), rand(rng, (128, 128))
        assert_close(clgemm.gemm(a, b, device=cuda_device), reference(a, b, None, 1, 0, 0, 0),
                     "gemm with the tuned rung 3")
    finally:
        api.clear_caches()






@pytest.mark.cuda
def test_gemm_buffers_refusals_on_cuda(cp, cuda_be):
    c_host = np.arange(40, dtype=np.float32)
    a, b, c = cp.ones(40, cp.float32), cp.ones(40, cp.float32), cp.asarray(c_host)
    refused("lda=3 is smaller than the 4 rows of a", clgemm.gemm_buffers, 4, 2, 3, a, b, c,
            lda=3)
    refused("ldb=1 is smaller than the 2 columns of b", clgemm.gemm_buffers, 4, 2, 3, a, b, c,
            ldb=1, order="C")
    refused("a_offset=-1 must be between 0", clgemm.gemm_buffers, 4, 2, 3, a, b, c, a_offset=-1)
    refused("buffer c holds 40 floats", clgemm.gemm_buffers, 4, 2, 3, a, b, c, ldc=30,
            c_offset=20, beta=1.0)
    refused("buffer a holds 40 floats", clgemm.gemm_buffers, 8, 2, 6, a, b, c)
    refused("order must be 'F'", clgemm.gemm_buffers, 4, 2, 3, a, b, c, order="R")
    refused("must be a pyopencl.Buffer, or on the CUDA backend a flat CuPy array",
            clgemm.gemm_buffers, 4, 2, 3, np.ones(12, np.float32), b, c)
    refused("must be a flat \\(1-D\\) CuPy array", clgemm.gemm_buffers, 2, 2, 2, a,
            b.reshape(4, 10), c)
    refused("float32 buffers only", clgemm.gemm_buffers, 2, 2, 2, a, b.astype(cp.float64), c)
    refused("strided CuPy view", clgemm.gemm_buffers, 2, 2, 2, a, b[::2], c)
    refused("opencl backend was asked for", clgemm.gemm_buffers, 2, 2, 2, a, b, c,
            backend="opencl")
    assert np.array_equal(cp.asnumpy(c), c_host), "a refused call wrote into c"


@pytest.mark.cuda
def test_refused_inputs_on_cuda(cp, cuda_device, cuda_be):
    """Every check of the OpenCL path, on CUDA: named, before anything runs, c untouched."""
    good = cp.ones((3, 4), cp.float32)
    c = cp.zeros((3, 5), cp.float32)
    msg = refused("inner sizes 4 and 5 differ", clgemm.gemm, good, cp.ones((5, 6), cp.float32))
    assert "(3, 4)" in msg and "(5, 6)" in msg
    refused(r"c has shape \(3, 5\), but op\(a\) @ op\(b\) is 3 x 6", clgemm.gemm, good,
            cp.ones((4, 6), cp.float32), c)
    for dtype in (cp.float64, cp.int32, cp.float16):
        refused("float32 only", clgemm.gemm, good, cp.ones((4, 4), dtype))
    refused("must be 2-D", clgemm.gemm, cp.ones(3, cp.float32), good)
    refused("alpha must be a real number", clgemm.gemm, good, good.T, alpha=1j)
    refused("beta=2.0 needs c", clgemm.gemm, good, good.T, beta=2.0)
    d = cp.ones((8, 8), cp.float32)
    c4 = cp.zeros((4, 4), cp.float32)
    msg = refused("cannot read in place", clgemm.gemm, d[::2, ::2], d[:4, :4], c4, beta=1.0)
    assert "strides" in msg
    refused("the opencl backend was asked for", clgemm.gemm, good, good.T, backend="opencl")
    elsewhere = dataclasses.replace(cuda_device, handle=cuda_device.handle + 1, name="other GPU")
    refused("not on the device asked for", clgemm.gemm, good, good.T, device=elsewhere)
    assert not cp.asnumpy(c).any() and not cp.asnumpy(c4).any(), "a refused call wrote into c"


@pytest.mark.cuda
def test_too_large_for_the_gpu(cp, cuda_device, monkeypatch):
    """Sizes beyond the device's memory or largest allocation are refused by name before any
    copy (a broadcast view would need 16 GiB of host memory to copy), with c untouched. The
    rungs run here: the direct kernel reads device arrays in place and needs no memory."""
    monkeypatch.setattr(kernel_choice, "direct_config", lambda *args: None)
    api.clear_caches()
    tiny = cuda_module.CUDABackend(dataclasses.replace(cuda_device, global_mem_bytes=2**20))
    rng = np.random.default_rng(41)
    a, b = rand(rng, (600, 600)), rand(rng, (600, 600))
    c = np.zeros((600, 600), np.float32)
    msg = refused("of device memory", clgemm.gemm, a, b, c, beta=1.0, backend=tiny)
    assert "has 1.00 MiB" in msg and "a (uploaded)" in msg
    dc = cp.zeros((600, 600), cp.float32)
    refused("of device memory", clgemm.gemm, cp.asarray(a), cp.asarray(b), dc, backend=tiny)
    assert not c.any() and not cp.asnumpy(dc).any()
    small = cuda_module.CUDABackend(dataclasses.replace(cuda_device, max_alloc_bytes=2**30))
    side = 1 << 16
    huge = np.broadcast_to(np.float32(1), (side, side))
    c = np.zeros((side, 1), np.float32)
    refused("per allocation", clgemm.gemm, huge, np.ones((side, 1), np.float32), c, backend=small)
    assert not c.any()


def _too_many_groups(backend) -> None:
    """A 16 x (65536 blocks) product into an F-ordered C, scaled by alpha: the epilogue (one
    work-group per block of C, `helper_block`) needs 65536 work-groups along dimension 1, one
    more than CUDA's grid allows."""
    n = 65536 * helper_block(backend, "epilogue")[0]
    a = np.ones((16, 1), np.float32)
    b = np.broadcast_to(np.float32(1), (1, n))
    c = np.zeros((16, n), np.float32, order="F")
    refused("too large for the .* backend: the .* kernel would need .* work-groups along "
            "dimension 1, and .* allows at most 65535", clgemm.gemm, a, b, c, alpha=2.0,
            backend=backend)
    assert not c.any()


@pytest.mark.no_shipped_tuning
def test_grid_limit_refused_before_launch(cl_device, monkeypatch):
    """The check behind CUDA's grid limit, on an OpenCL backend given the same limit (through
    the rungs: the direct kernel's tiles would fit this product; without shipped tuning, so
    that no stored skinny kernel takes the product in one launch of its own)."""
    from clgemm.backends.opencl import OpenCLBackend

    monkeypatch.setattr(kernel_choice, "crossover", kernel_choice.no_crossover)

    api.clear_caches()
    be = OpenCLBackend(cl_device)
    be.max_groups = cuda_module.MAX_GRID
    if pack_tile(be) != 16:
        pytest.skip("the device's work-groups are smaller than the case assumes")
    _too_many_groups(be)


@pytest.mark.cuda
def test_grid_limit_refused_on_cuda(cuda_be, monkeypatch):
    """CUDA allows 65535 blocks along y: a product that would need more is refused by name
    instead of failing at launch."""
    monkeypatch.setattr(kernel_choice, "crossover", kernel_choice.no_crossover)
    api.clear_caches()
    _too_many_groups(cuda_be)


@pytest.mark.cuda
def test_several_gpus(cp):
    """Arrays on the second GPU run there, the caller's current device stays current, and
    arrays on two GPUs are refused."""
    devices = _cuda_devices()
    if len(devices) < 2:
        pytest.skip("needs two CUDA devices")
    rng = np.random.default_rng(50)
    a, b = rand(rng, (33, 17)), rand(rng, (17, 9))
    current = cp.cuda.Device().id
    with cp.cuda.Device(devices[1].handle):
        da, db = cp.asarray(a), cp.asarray(b)
    out = clgemm.gemm(da, db)
    assert cp.cuda.Device().id == current, "gemm changed the current CUDA device"
    assert out.device.id == devices[1].handle
    with cp.cuda.Device(devices[1].handle):
        assert_close(cp.asnumpy(out), reference(a, b, None, 1, 0, 0, 0), "gemm on GPU 1")
    refused("on CUDA device", clgemm.gemm, cp.asarray(a), db)


@pytest.mark.cuda
def test_kept_buffers_follow_the_stream_of_the_arrays_gpu(cp, split_call_watched):
    """A call of several launches (K in slices, then their sum) on the second GPU, made while
    the caller's current device is the first, keeps its scratch buffers for the stream of the
    second GPU it ran on: once that GPU's current stream is another, the call takes buffers of
    its own, though the current device's stream did not change; right each time."""
    devices = _cuda_devices()
    if len(devices) < 2:
        pytest.skip("needs two CUDA devices")
    gpu = devices[1].handle
    if cp.cuda.Device().id == gpu:
        pytest.skip("the second GPU is the current device already")
    a, b, want, (tn, tm), taken = split_call_watched(api.backend_for(devices[1]), 43)
    with cp.cuda.Device(gpu):
        da, db = cp.asarray(a), cp.asarray(b)
        other = cp.cuda.Stream(non_blocking=True)
    try:
        for name in ("first", "first again", "kept", "other stream"):
            if name == "other stream":
                with cp.cuda.Device(gpu):
                    other.use()  # the second GPU's current stream; the current device's stays
            taken.clear()
            with cp.cuda.Device(gpu):
                dc = cp.full((tn, tm), cp.nan, dtype=cp.float32)
                cp.cuda.get_current_stream().synchronize()
            clgemm.gemm(da, db, dc)
            with cp.cuda.Device(gpu):
                cp.cuda.get_current_stream().synchronize()
                got = cp.asnumpy(dc)
            assert_close(got, want, name)
            if name == "kept":
                assert not taken, "a repeated call on its stream takes nothing from the pool"
            if name == "other stream":
                assert taken, "on the GPU's other stream the call takes buffers of its own"
    finally:
        with cp.cuda.Device(gpu):
            cp.cuda.Stream.null.use()
        api.clear_caches()


@pytest.mark.cuda
def test_verify_quick_on_cuda(cuda_device, tmp_path):
    """`clgemm verify --backend cuda --quick` through the command line: every rung at its
    default and tuned configurations and gemm() on NumPy and CuPy arrays, all passing."""
    failures = tmp_path / "failures.json"
    r = subprocess.run([sys.executable, "-m", "clgemm", "verify", "--device",
                        str(cuda_device.index), "--backend", "cuda", "--quick", "--failures",
                        str(failures)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"verify failed (exit {r.returncode}):\n{r.stdout}\n{r.stderr}"
    for n in REGISTRY:
        assert f"rung {n} " in r.stdout, f"no row for rung {n}:\n{r.stdout}"
    assert "gemm() numpy" in r.stdout and "gemm() cupy" in r.stdout, r.stdout
    assert "FAILED" not in r.stdout, r.stdout
    assert json.loads(Path(failures).read_text())["cases"] == []
