"""NumPy operands on a CPU device, read where they lie by a tiled kernel that reads vectors
through vector pointers: PoCL compiles those to aligned loads, which fault at an address off
the vector, and NumPy starts an array on 16 bytes (a large one seldom on 32). An operand that
does not start on the kernel's vector is copied; one that does is read in place; the answer is
right either way, on the first call of a signature, on the remembered one and on stacks."""

from __future__ import annotations

import numpy as np
import pytest
from layouts import reference, starting_at

import clgemm
from clgemm.configs import database
from clgemm.configs.configuration import Config
from clgemm.core.errors import LaunchError
from clgemm.library import gemm as api
from clgemm.rungs import get_rung

#: the tiled kernel with both operands through local memory in vectors of 8 floats (32 bytes)
WIDE = dict(TSM=16, TSN=16, TSK=32, WPTM=4, WPTN=2, WIDTH=8, VWM=4, VWN=1, CACHE_A=1,
            CACHE_B=1, PANELS=0, LOCKSTEP=0, PIPELINE=0, WARP_M=0, RASTER=0, UNROLL_K=0)


@pytest.fixture
def wide(backend, monkeypatch):
    """The CPU backend, gemm() made to run WIDE at every shape, and a record of the copies."""
    if not backend.device.is_cpu:
        pytest.skip("NumPy operands are read where they lie only on a CPU device")
    api.clear_caches()
    monkeypatch.setattr(api.CACHE, "choose", lambda device, shape: Config(12, WIDE, "user"))
    copied: list[int] = []
    to_device = backend.to_device

    def counted(host):
        copied.append(host.size)
        return to_device(host)
    monkeypatch.setattr(backend, "to_device", counted)
    yield backend, copied
    api.clear_caches()


@pytest.mark.parametrize("order", ["C", "F"])
def test_operands_off_the_vector_are_copied_and_the_answer_is_right(wide, order):
    be, copied = wide
    rng = np.random.default_rng(3)
    # aligned first, so the signature's remembered call meets the others
    for byte in (0, 16, 4, 0, 32, 16):
        a, b = (starting_at(np.asarray(rng.random((64, 64), np.float32), order=order), byte)
                for _ in range(2))
        c = np.asarray(np.full((64, 64), np.nan, np.float32), order=order)
        copied.clear()
        assert clgemm.gemm(a, b, c, backend=be) is c
        want = reference(a, b, None, 1.0, 0.0, False, False)
        assert np.abs(c - want).max() < 1e-4 * np.abs(want).max(), byte
        assert copied == ([] if byte % 32 == 0 else [a.size, b.size]), byte


def test_a_stack_off_the_vector_is_copied_and_right(wide, tmp_path, monkeypatch):
    """The stack's tiled kernel is the stored one for its slot (a stack is tuned apart)."""
    be, copied = wide
    monkeypatch.setenv("CLGEMM_RESULTS", str(tmp_path))
    api.clear_caches()
    db = database.load(be.device)
    for rung, params, gflops in ((12, WIDE, 100.0), (11, {}, 1.0)):
        db.record(database.Entry(rung=rung, shape=[32, 32, 32], backend=be.device.backend,
                                 params=dict(params), ms=1.0, gflops=gflops, batch=4))
    db.save()
    api.clear_caches()
    rng = np.random.default_rng(4)
    for byte in (0, 16, 4, 0):
        a, b = (starting_at(rng.random((4, 32, 32), np.float32), byte) for _ in range(2))
        c = np.full((4, 32, 32), np.nan, np.float32)
        copied.clear()
        with be.observe() as log:
            assert clgemm.gemm(a, b, c, backend=be) is c
        assert [name for name, _ in log.times()] == ["gemm_tiled"]
        want = np.einsum("zmk,zkn->zmn", a.astype(np.float64), b)
        assert np.abs(c - want).max() < 1e-4 * np.abs(want).max(), byte
        # the operands' copies (the kernel's first launch may copy a trial's operands too)
        assert copied.count(a.size) == (0 if byte % 32 == 0 else 2), (byte, copied)


def test_a_fallback_the_operands_do_not_fit_is_an_error_not_a_fault(wide, monkeypatch):
    """A stored configuration that fails to launch gives way to the next choice; where that
    one would read an operand placed for the first at an address off its vectors, the call
    raises the launch's failure (C untouched) and the next call plans anew, right."""
    be, _ = wide
    direct = Config(11, {"TSM": 16, "TSN": 16, "TSK": 16, "WPTM": 2, "WPTN": 2}, "tuned")
    tiled = Config(12, WIDE, "tuned")
    monkeypatch.setattr(api.CACHE, "choose", lambda device, shape: (
        tiled if api.CACHE.rejected(device, direct.rung, direct.params) else direct))
    prepare = be.prepare

    def failing(knl, gsize, lsize, args, slots):
        launch = prepare(knl, gsize, lsize, args, slots)
        if be.kernel_name(knl) != get_rung(11).kernel:
            return launch

        def fail(buffers, queue, wait_for):
            launches.append(1)
            if len(launches) == 1:  # the configuration's trial, on buffers of its own
                return launch(buffers, queue, wait_for)
            raise LaunchError("launch failed: made to fail by the test")
        return fail
    launches: list[int] = []
    monkeypatch.setattr(be, "prepare", failing)
    rng = np.random.default_rng(5)
    a, b = (starting_at(rng.random((64, 64), np.float32), 16) for _ in range(2))
    c = np.full((64, 64), np.nan, np.float32)
    with pytest.raises(LaunchError, match="made to fail"):
        clgemm.gemm(a, b, c, backend=be)
    assert np.isnan(c).all()
    assert clgemm.gemm(a, b, c, backend=be) is c
    want = reference(a, b, None, 1.0, 0.0, False, False)
    assert np.abs(c - want).max() < 1e-4 * np.abs(want).max()


def _host_buffer(be, x: np.ndarray):
    """A buffer the caller made over its own host array (USE_HOST_PTR)."""
    cl = pytest.importorskip("pyopencl")
    return cl.Buffer(be.context, cl.mem_flags.READ_WRITE | cl.mem_flags.USE_HOST_PTR, hostbuf=x)


@pytest.mark.parametrize("order", ["F", "C"])
def test_buffers_made_over_host_arrays_off_the_vector_are_copied(wide, order, monkeypatch):
    """gemm_buffers on buffers the caller made over host arrays: PoCL's kernels read them at
    the array's own address, so one that starts off the kernel's vectors is copied first (the
    kernel's aligned loads killed the process there), and one that starts on them is not."""
    be, _ = wide
    if be.name != "opencl":
        pytest.skip("host buffers are OpenCL's")
    copies: list[int] = []
    copy_buffer = be.copy_buffer

    def counted(dst, src, nbytes, queue, wait_for):
        copies.append(nbytes)
        return copy_buffer(dst, src, nbytes, queue, wait_for)
    monkeypatch.setattr(be, "copy_buffer", counted)
    rng = np.random.default_rng(6)
    for byte in (0, 4, 16, 32):
        a, b = (starting_at(rng.random((64, 64), np.float32), byte) for _ in range(2))
        c = starting_at(np.full((64, 64), np.nan, np.float32), byte)
        copies.clear()
        clgemm.gemm_buffers(64, 64, 64, _host_buffer(be, a), _host_buffer(be, b),
                            _host_buffer(be, c), order=order, backend=be, rung=12,
                            params=WIDE)
        be.sync_host(_host_buffer(be, c), c)
        a64, b64, got = (x.reshape(-1).reshape(64, 64, order=order) for x in (a, b, c))
        want = a64.astype(np.float64) @ b64
        assert np.abs(got - want).max() < 1e-4 * want.max(), byte
        assert copies == ([] if byte % 32 == 0 else [4 * 64 * 64] * 2), byte


def test_pyopencl_arrays_over_host_arrays_off_the_vector_are_copied(wide):
    """gemm() on pyopencl arrays over such buffers: the same, the first call and the next."""
    be, _ = wide
    if be.name != "opencl":
        pytest.skip("host buffers are OpenCL's")
    cla = pytest.importorskip("pyopencl.array")
    rng = np.random.default_rng(7)
    for byte in (4, 0, 16, 16):
        a = starting_at(rng.random((64, 64), np.float32), byte)
        da = cla.Array(be.queue, (64, 64), np.float32, data=_host_buffer(be, a))
        db = cla.to_device(be.queue, rng.random((64, 64), np.float32))
        got = clgemm.gemm(da, db).get()
        want = a.astype(np.float64) @ db.get()
        assert np.abs(got - want).max() < 1e-4 * want.max(), byte
