"""The CUDA backend: every rung through clgemm/kernels/cl2cuda.h on a real GPU (marked `cuda`;
skipped without CuPy or a CUDA device), and the CPU-side pieces that need neither: choosing a
device by backend, the no-CuPy path and the NVIDIA ICD note."""

from __future__ import annotations

import json
import subprocess
import sys
from types import SimpleNamespace

import pytest

from clgemm.backends import install_hints, list_devices
from clgemm.core.errors import BuildError, LaunchError, UsageError
from clgemm.core.problem import Problem
from clgemm.devices.info import DeviceInfo, pick_device
from clgemm.measure.rung_runner import Workspace, run_rung
from clgemm.rungs import REGISTRY, get_rung


# -- CPU: selection by backend, discovery without CuPy, the ICD note ----------------------------
def _fake(index: int, backend: str, name: str, type_: str = "GPU") -> DeviceInfo:
    return DeviceInfo(index=index, backend=backend, platform=backend, name=name, type=type_,
                      vendor="x", compute_units=1, clock_mhz=1, global_mem_bytes=1,
                      local_mem_bytes=1, max_work_group_size=1, max_work_item_sizes=(1, 1, 1),
                      max_alloc_bytes=1, driver_version="1", version="1")


FAKES = [_fake(0, "opencl", "pthread-cpu", "CPU"), _fake(1, "opencl", "NVIDIA H100 80GB HBM3"),
         _fake(2, "cuda", "NVIDIA H100 80GB HBM3")]


def test_select_device_by_backend():
    assert pick_device(FAKES, None).index == 0
    assert pick_device(FAKES, None, backend="cuda").index == 2
    assert pick_device(FAKES, "H100", backend="cuda").index == 2
    assert pick_device(FAKES, "H100", backend="opencl").index == 1
    assert pick_device(FAKES, "2", backend="cuda").index == 2
    with pytest.raises(UsageError, match="matches several devices.*or a backend"):
        pick_device(FAKES, "H100")
    with pytest.raises(UsageError, match="H100 80GB HBM3 on the opencl backend, not cuda"):
        pick_device(FAKES, "1", backend="cuda")
    with pytest.raises(UsageError, match="no cuda device found.*CuPy"):
        pick_device(FAKES[:2], None, backend="cuda", hints=install_hints())
    with pytest.raises(UsageError, match="no such device"):
        pick_device(FAKES, "9", backend="cuda")


def test_cuda_discovers_nothing_without_cupy(monkeypatch):
    from clgemm.backends.cuda import backend as cuda

    monkeypatch.setattr(cuda, "cupy", None)
    assert cuda.discover() == []


def test_cuda_discover_reads_properties(monkeypatch):
    """Against a stand-in for CuPy's runtime module: properties CUDA 13 no longer has (clockRate,
    major) come from the device attributes instead."""
    from clgemm.backends.cuda import backend as cuda

    props = {"name": b"NVIDIA H100 80GB HBM3", "multiProcessorCount": 132,
             "totalGlobalMem": 80 * 2**30, "sharedMemPerBlock": 48 * 1024,
             "maxThreadsPerBlock": 1024, "maxThreadsDim": (1024, 1024, 64), "warpSize": 32,
             "minor": 0}
    attributes = {13: 1_980_000, 75: 9, 76: 0}
    runtime = SimpleNamespace(getDeviceCount=lambda: 1, driverGetVersion=lambda: 12080,
                              runtimeGetVersion=lambda: 12060,
                              getDeviceProperties=lambda i: props,
                              deviceGetAttribute=lambda a, i: attributes[a])
    monkeypatch.setattr(cuda, "cupy", SimpleNamespace(cuda=SimpleNamespace(runtime=runtime)))
    (d,) = cuda.discover()
    assert (d.backend, d.platform, d.type, d.name) == ("cuda", "CUDA", "GPU",
                                                       "NVIDIA H100 80GB HBM3")
    assert d.compute_units == 132 and d.clock_mhz == 1980 and d.handle == 0
    assert d.driver_version == "12.8 (runtime 12.6)" and d.version.endswith("9.0")
    assert d.local_mem_bytes == 48 * 1024 and d.max_work_item_sizes == (1024, 1024, 64)
    limits = d.limits()
    assert limits.has_extension("cl_khr_subgroup_shuffle") and limits.sub_group_sizes == (32,)


def test_cuda_backend_build_and_launch_calls(monkeypatch):
    """What the backend hands CuPy, against a stand-in: the translated source with -D options,
    a 3D grid of work-groups, and 32-bit ints and floats; a timed launch queued behind a hold."""
    import numpy as np

    from clgemm.backends.cuda import backend as cuda

    calls = {}

    class Module:
        def __init__(self, code, options):
            calls["code"], calls["options"] = code, options

        def get_function(self, name):
            return lambda grid, block, args: calls.update(grid=grid, block=block, args=args)

    class Event:
        def record(self):
            pass

        def synchronize(self):
            pass

    def hold_kernel(code, name):
        return lambda grid, block, args: calls.setdefault("holds", []).append(
            (name, args, "grid" in calls))

    fake = SimpleNamespace(
        RawModule=Module, RawKernel=hold_kernel,
        cuda=SimpleNamespace(Device=lambda i: SimpleNamespace(use=lambda: None), Event=Event,
                             get_elapsed_time=lambda a, b: 1.5,
                             compiler=SimpleNamespace(CompileException=RuntimeError)))
    monkeypatch.setattr(cuda, "cupy", fake)
    backend = cuda.CUDABackend(FAKES[2])
    knl = backend.build("x = (float4)(a, b, c, d);", {"TS": 16}, "k")
    assert calls["code"] == "x = float4(a, b, c, d);" and calls["options"] == ("-DTS=16",)
    assert backend.build("x = (float4)(a, b, c, d);", {"TS": 16}, "k") is knl  # cached
    assert backend.launch(knl, (64, 32), (16, 8), [3, 2.5, "buf"]) == 1.5
    assert calls["grid"] == (4, 4, 1) and calls["block"] == (16, 8, 1)
    assert [type(a) for a in calls["args"]] == [np.int32, np.float32, str]
    # the timed launch waits behind a kernel that holds the device, queued before it
    assert calls["holds"] == [("clgemm_hold", (np.int64(cuda.HOLD_CYCLES),), False)]


def test_nvidia_icd_note(monkeypatch, tmp_path):
    from clgemm.backends.opencl import backend as opencl

    (tmp_path / opencl.NVIDIA_OPENCL_LIB).write_bytes(b"")
    monkeypatch.setenv("LD_LIBRARY_PATH", str(tmp_path))
    platforms = [SimpleNamespace(name="Portable Computing Language")]
    monkeypatch.setattr(opencl, "cl", SimpleNamespace(get_platforms=lambda: platforms))
    note = opencl.nvidia_icd_note()
    assert note and str(tmp_path) in note
    assert "/etc/OpenCL/vendors/nvidia.icd" in note and "OCL_ICD_VENDORS" in note
    platforms.append(SimpleNamespace(name="NVIDIA CUDA"))
    assert opencl.nvidia_icd_note() is None


# -- GPU ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def cuda_backend():
    pytest.importorskip("cupy")
    from clgemm.backends import open_backend

    devices = [d for d in list_devices() if d.backend == "cuda"]
    if not devices:
        pytest.skip("no CUDA device")
    b = open_backend(devices[0])
    yield b
    b.release()


@pytest.fixture(scope="module")
def cuda_workspace(cuda_backend):
    cache: dict = {}

    def get(m: int, n: int, k: int) -> Workspace:
        if (m, n, k) not in cache:
            cache[(m, n, k)] = Workspace(cuda_backend, Problem(m, n, k), seed=m + 3 * n + 7 * k)
        return cache[(m, n, k)]

    return get


# 512 is a multiple of every rung's default tiles.
TILED = 512
CASES = [(n, {}) for n in sorted(REGISTRY) + [12, 13]] + [
    (4, {"WIDTH": 8}), (4, {"WIDTH": 2}), (7, {"WIDTH": 8}), (7, {"WIDTH": 1}),
    (8, {"USE_SHUFFLE": 1, "WPTM": 4}),  # the warp as the sub-group
    (9, {"USE_SHUFFLE": 1, "WPTM": 4}), (9, {"WIDTH": 2}), (12, {"WIDTH": 2}),
]


@pytest.mark.cuda
@pytest.mark.parametrize("number,overrides", CASES,
                         ids=[f"rung{c[0]}-{c[1] or 'defaults'}" for c in CASES])
def test_rung_on_cuda(cuda_backend, cuda_workspace, number, overrides):
    rung = get_rung(number)
    params = rung.resolve(overrides)
    rung.validate(params, cuda_backend.device.limits())
    res = run_rung(cuda_backend, cuda_workspace(TILED, TILED, TILED), rung, params, repeats=2)
    assert res.status == "ok", res.message
    assert res.rel_error < 1e-5
    assert res.ms > 0 and res.gflops > 0


@pytest.mark.cuda
@pytest.mark.parametrize("size", [(1, 1, 1), (67, 45, 33), (129, 257, 31), (1000, 999, 17),
                                  (130, 66, 515)])
@pytest.mark.parametrize("overrides", [{}, {"WIDTH": 1}, {"WIDTH": 2}])
def test_rung10_odd_sizes_on_cuda(cuda_backend, cuda_workspace, size, overrides):
    rung = get_rung(10)
    params = rung.resolve(overrides)
    res = run_rung(cuda_backend, cuda_workspace(*size), rung, params, repeats=1, warmup=0)
    assert res.status == "ok", res.message
    assert res.rel_error < 1e-5


@pytest.mark.cuda
def test_cuda_device_facts(cuda_backend):
    d = cuda_backend.device
    assert d.backend == "cuda" and d.type == "GPU" and d.platform == "CUDA"
    assert d.compute_units > 0 and d.clock_mhz > 0 and d.max_work_group_size >= 1024
    assert d.local_mem_bytes == 48 * 1024
    assert "runtime" in d.driver_version and d.sub_group_sizes == (32,)


@pytest.mark.cuda
def test_cuda_build_and_launch_errors(cuda_backend):
    with pytest.raises(BuildError):
        cuda_backend.build("__kernel void broken(int x) { this is not C }", {}, "broken")
    knl = cuda_backend.build(cuda_backend.header() + "\n__kernel void nop(const int n) {}",
                             {}, "nop")
    assert cuda_backend.launch(knl, (64, 1), (32, 1), [1]) >= 0
    with pytest.raises(LaunchError, match="not a multiple"):
        cuda_backend.launch(knl, (65, 1), (32, 1), [1])


@pytest.mark.cuda
def test_cublas_reference(cuda_backend, cuda_workspace):
    from clgemm.measure import references as refs

    for size in [(256, 256, 256), (67, 45, 33)]:
        row = refs.vendor_reference(cuda_backend, cuda_workspace(*size), warmup=1, repeats=3)
        assert row["status"] == "ok", row
        assert "TF32 off" in row["name"]
        assert row["rel_error"] < 1e-5 and row["gflops"] > 0


@pytest.mark.cuda
def test_ladder_command_on_cuda(cuda_backend, tmp_path):
    out = tmp_path / "cuda.json"
    r = subprocess.run([sys.executable, "-m", "clgemm", "ladder", "--backend", "cuda", "--size",
                        "512", "--repeats", "2", "--json", str(out), "--wide"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    data = json.loads(out.read_text())
    assert data["device"]["backend"] == "cuda"
    assert [row["status"] for row in data["rows"]] == ["ok"] * len(REGISTRY)
    assert data["pct_of_reference_base"].startswith("cuBLAS")
    assert all(row["pct_of_reference"] > 0 for row in data["rows"])
    assert "cuBLAS" in r.stdout and "% ref" in r.stdout
