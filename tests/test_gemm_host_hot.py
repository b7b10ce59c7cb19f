"""Repeated calls on NumPy arrays on a CPU device: the second call of a signature goes through
the remembered HostCall, and must still read its own operands, write its own C, and give way
to the full path wherever that signature does not settle what the call does (C sharing memory
with an operand, events to wait for, another device named by the environment)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from forced import force_direct, stored_rung3_failing_to_launch
from layouts import rand, reference

import clgemm
from clgemm.library import gemm as api
from clgemm.library.hot_host import HostCall, host_key


@pytest.fixture
def cpu(backend):
    if not backend.device.is_cpu:
        pytest.skip("NumPy operands are read where they lie only on a CPU device")
    api.clear_caches()
    yield backend
    api.clear_caches()


def _hosts() -> list[HostCall]:
    return [h for h in api.CACHE.hot.values() if isinstance(h, HostCall)]


def _close(got, want) -> bool:
    got = np.asarray(got, dtype=np.float64)
    return bool(np.isfinite(got).all()
                and np.abs(got - want).max() < 1e-4 * max(1.0, float(np.abs(want).max())))


@pytest.mark.parametrize("orders", ["CCC", "FFF", "CFC", "FCF"])
@pytest.mark.parametrize("trans", [(False, False), (True, False), (False, True)])
def test_repeated_numpy_calls_read_their_own_operands(cpu, orders, trans):
    rng = np.random.default_rng(7)
    m, n, k = 40, 24, 56
    ta, tb = trans
    oa, ob, oc = orders
    shape_a, shape_b = ((k, m) if ta else (m, k)), ((n, k) if tb else (k, n))
    for i in range(4):  # the first call is the full path, the others the remembered one
        a, b = rand(rng, shape_a, oa), rand(rng, shape_b, ob)
        c = np.asarray(np.full((m, n), np.nan, np.float32), order=oc)
        got = clgemm.gemm(a, b, out=c, trans_a=ta, trans_b=tb, device=cpu.device,
                          backend=cpu)
        assert got is c
        assert _close(c, reference(a, b, None, 1.0, 0.0, ta, tb)), i
        new = clgemm.gemm(a, b, trans_a=ta, trans_b=tb, device=cpu.device, backend=cpu)
        assert new is not c and new.flags.c_contiguous
        assert _close(new, reference(a, b, None, 1.0, 0.0, ta, tb)), i
    assert len(_hosts()) == 2  # C given, and a new C


def test_the_remembered_call_is_taken(cpu, monkeypatch):
    """Without a HostCall every call would check its arguments again: made to fail here."""
    rng = np.random.default_rng(1)
    a, b = rand(rng, (32, 48)), rand(rng, (48, 16))
    clgemm.gemm(a, b, device=cpu.device, backend=cpu)
    assert len(_hosts()) == 1

    def refused(*args, **kwargs):
        raise AssertionError("the full path ran")
    monkeypatch.setattr(api, "_check_call", refused)
    a2, b2 = rand(rng, (32, 48)), rand(rng, (48, 16))
    assert _close(clgemm.gemm(a2, b2, device=cpu.device, backend=cpu),
                  reference(a2, b2, None, 1.0, 0.0, False, False))


def test_c_sharing_memory_with_an_operand_goes_the_whole_way(cpu, monkeypatch):
    """On the direct kernel, which reads A and B while it writes C: the signature of a C of
    its own is also that of a C that is A or B, which must be read before C is written."""
    force_direct(monkeypatch)
    api.clear_caches()
    rng = np.random.default_rng(2)
    n = 300
    a, b = rand(rng, (n, n)), rand(rng, (n, n))
    c = np.zeros((n, n), np.float32)
    clgemm.gemm(a, b, out=c, device=cpu.device, backend=cpu)
    assert len(_hosts()) == 1
    want = reference(a, b, None, 1.0, 0.0, False, False)
    got = clgemm.gemm(a, b, out=a, device=cpu.device, backend=cpu)  # C is A: same signature
    assert got is a and _close(a, want)
    b_before = b.copy()
    got = clgemm.gemm(b_before, b, out=b, device=cpu.device, backend=cpu)  # C is B
    assert _close(b, reference(b_before, b_before, None, 1.0, 0.0, False, False))


def test_what_the_signature_does_not_settle_is_no_key(cpu):
    rng = np.random.default_rng(3)
    a, b = rand(rng, (8, 8)), rand(rng, (8, 8))
    assert host_key(a, b, None, 1.0, 0.0, False, False, None, None) is not None
    assert host_key(a[:, ::2], b[::2], None, 1.0, 0.0, False, False, None, None) is None
    assert host_key(a, b, None, np.float32(1), 0.0, False, False, None, None) is None
    assert host_key(a, b, None, 1.0, 0.0, np.bool_(False), False, None, None) is None
    assert host_key(a.astype(np.float64), b, None, 1.0, 0.0, False, False, None, None) is None
    assert host_key(a, b, None, 1.0, 0.0, False, False, object(), None) is None
    ro = a.copy()
    ro.flags.writeable = False
    assert (host_key(a, b, ro, 1.0, 0.0, False, False, 0, None)
            != host_key(a, b, a.copy(), 1.0, 0.0, False, False, 0, None))


def test_a_read_only_c_is_refused_on_every_call(cpu):
    rng = np.random.default_rng(4)
    a, b = rand(rng, (8, 8)), rand(rng, (8, 8))
    c = np.zeros((8, 8), np.float32)
    clgemm.gemm(a, b, out=c, device=cpu.device, backend=cpu)
    c.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        clgemm.gemm(a, b, out=c, device=cpu.device, backend=cpu)


def test_the_environment_names_the_device_of_a_call_without_one(cpu, monkeypatch):
    """A call that names no device is keyed by $CLGEMM_DEVICE as it is now: a new value is
    a new signature, which checks that device again."""
    rng = np.random.default_rng(5)
    a, b = rand(rng, (8, 8)), rand(rng, (8, 8))
    monkeypatch.setenv("CLGEMM_DEVICE", str(cpu.device.index))
    clgemm.gemm(a, b)
    monkeypatch.setenv("CLGEMM_DEVICE", "no device has this name")
    with pytest.raises(ValueError, match="CLGEMM_DEVICE"):
        clgemm.gemm(a, b)


@pytest.mark.no_shipped_tuning
def test_after_a_launch_fails_the_remembered_call_is_the_one_that_ran(cpu, tmp_path,
                                                                      monkeypatch):
    """A stored configuration that fails to launch is dropped and the call runs on the next
    choice: the call remembered for the signature is that next choice's, so the repeated call
    neither launches the failed kernel again nor warns again."""
    device = cpu.device
    tries = stored_rung3_failing_to_launch(api.backend_for(device), tmp_path, monkeypatch)
    assert api.choose_kernel(device, 64, 64, 64).rung == 3
    rng = np.random.default_rng(9)
    a, b = rand(rng, (64, 64)), rand(rng, (64, 64))
    with pytest.warns(RuntimeWarning, match="rung 3 .* failed"):
        first = clgemm.gemm(a, b, device=device)
    assert _close(first, reference(a, b, None, 1.0, 0.0, False, False)) and len(tries) == 1
    assert len(_hosts()) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a, b = rand(rng, (64, 64)), rand(rng, (64, 64))
        assert _close(clgemm.gemm(a, b, device=device),
                      reference(a, b, None, 1.0, 0.0, False, False))
    assert len(tries) == 1


def test_pocl_cpu_results_need_no_map(cpu, monkeypatch):
    """PoCL's CPU drivers store into a USE_HOST_PTR buffer's host array itself, so C comes
    back by waiting for the queue (a map queued there fails this test), and is whole when the
    call returns (poisoned with NaN first)."""
    from clgemm.backends.opencl import backend as opencl_backend
    if (not hasattr(cpu, "_stores_reach_host") or cpu._kernels_write_host is False
            or not cpu._stores_reach_host()):
        pytest.skip("only PoCL's CPU devices skip the map")

    def no_map(*args, **kwargs):
        raise AssertionError("C was mapped")

    monkeypatch.setattr(opencl_backend.cl, "enqueue_map_buffer", no_map)
    rng = np.random.default_rng(3)
    for size in (64, 200, 384):
        a, b = rand(rng, (size, size), "C"), rand(rng, (size + 8, size), "C")[:size]
        a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
        for _ in range(3):  # the full path, then the remembered one
            c = np.full((size, size), np.nan, np.float32)
            clgemm.gemm(a, b, out=c, device=cpu.device, backend=cpu)
            assert _close(c, reference(a, b, None, 1.0, 0.0, False, False)), size


def test_a_driver_whose_stores_miss_the_host_array_is_mapped(cpu, monkeypatch):
    """Where the once-made check finds a fill of a buffer made over a host array unseen by the
    host (a driver that keeps its own copy), C comes back through a map, right."""
    if not hasattr(cpu, "_stores_reach_host"):
        pytest.skip("an OpenCL backend's check")
    monkeypatch.setattr(cpu, "_kernels_write_host", None)
    monkeypatch.setattr(cpu, "_stores_reach_host", lambda: False)
    rng = np.random.default_rng(4)
    a, b = rand(rng, (96, 80), "C"), rand(rng, (80, 72), "C")
    c = np.full((96, 72), np.nan, np.float32)
    clgemm.gemm(a, b, out=c, device=cpu.device, backend=cpu)
    assert cpu._kernels_write_host is False
    assert _close(c, reference(a, b, None, 1.0, 0.0, False, False))
