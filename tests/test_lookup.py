"""The lookup chain: a device's own tuning, then another driver's, its family's, its type's; a
configuration that leaves compute units idle loses to one that fills them; stale entries are
counted, never used."""

from __future__ import annotations

import dataclasses

import pytest

from clgemm import lookup
from clgemm.database import Entry, database_path, load
from clgemm.devices import DeviceInfo
from clgemm.family import family_of, nvidia_compute_capability, pocl_cpu_target
from clgemm.paths import TUNING
from clgemm.rungs import REGISTRY, get_rung

GPU = DeviceInfo(index=0, backend="opencl", platform="NVIDIA CUDA",
                 name="NVIDIA H100 80GB HBM3", type="GPU", vendor="NVIDIA Corporation",
                 compute_units=132, clock_mhz=1980, global_mem_bytes=80 << 30,
                 local_mem_bytes=48 << 10, max_work_group_size=1024,
                 max_work_item_sizes=(1024, 1024, 64), max_alloc_bytes=20 << 30,
                 driver_version="999.0", version="OpenCL 3.0 CUDA", compute_capability="9.0")
CPU = dataclasses.replace(GPU, platform="Portable Computing Language", type="CPU",
                          name="pthread-icelake-server-Intel(R) Xeon(R) Platinum 8375C",
                          vendor="GenuineIntel", compute_units=2, local_mem_bytes=1 << 20,
                          max_work_group_size=4096, max_work_item_sizes=(4096, 4096, 4096),
                          driver_version="3.1+debian", compute_capability="")


def test_family_keys():
    assert pocl_cpu_target("pthread-skylake-avx512-AMD EPYC") == "skylake-avx512"
    assert pocl_cpu_target("cpu-x86-64-v3-AMD Ryzen 7") == "x86-64-v3"
    assert pocl_cpu_target("NVIDIA H200") is None
    assert nvidia_compute_capability("NVIDIA H200") == "9.0"
    assert nvidia_compute_capability("NVIDIA A100-SXM4-40GB") == "8.0"
    assert GPU.family == "opencl-nvidia-sm90"
    assert family_of("opencl", "NVIDIA Corporation", "NVIDIA H200", "GPU") == GPU.family
    assert CPU.family == "opencl-cpu-icelake-server"
    assert family_of("opencl", "Acme", "Acme Widget", "ACCELERATOR") == \
        "opencl-acme-accelerator"


def test_an_h100_runs_the_h200s_tuning_by_family(monkeypatch):
    """The shipped H200 database applies to an H100 of another driver (same GH100 chip)."""
    monkeypatch.delenv("CLGEMM_RESULTS", raising=False)
    assert database_path("opencl-nvidia-corporation-nvidia-h200-580.159.04", TUNING).exists()
    found = lookup.best(GPU, get_rung(13), (4096, 4096, 4096))   # the tiled kernel, any size
    assert found is not None and found.label in ("family: NVIDIA H200",
                                                 "tuned (driver 580.159.04)")
    assert found.level in ("family", "driver")


def test_an_untuned_cpu_runs_cpu_shaped_configurations(monkeypatch):
    monkeypatch.delenv("CLGEMM_RESULTS", raising=False)
    found = lookup.best(CPU, get_rung(12), (1024, 1024, 1024))   # the tiled kernel
    assert found is not None and found.label == "default: CPU"
    # CPU-shaped: the committed CPU tuning reads the operands straight from global memory.
    assert found.params["CACHE_A"] == 0 and found.params["VWM"] >= 8


def _store(tmp_path, device, entries):
    db = load(device, database_path(device.key, tmp_path))
    db.entries = list(entries)
    db.save()
    lookup.forget()


def _entry(rung, shape, gflops, **params):
    r = REGISTRY[rung]
    return Entry(rung, list(shape), "opencl", {**r.defaults(), **params}, 1.0, gflops)


def test_levels_in_order(tmp_path):
    other_driver = dataclasses.replace(GPU, driver_version="1.0")
    same_family = dataclasses.replace(GPU, name="NVIDIA H200", driver_version="2.0")
    _store(tmp_path, same_family, [_entry(3, (512,) * 3, 99.0, TS=16, WPT=4)])
    assert lookup.best(GPU, REGISTRY[3], (512,) * 3, [tmp_path]).label == "family: NVIDIA H200"
    _store(tmp_path, other_driver, [_entry(3, (512,) * 3, 1.0, TS=32, WPT=8)])
    found = lookup.best(GPU, REGISTRY[3], (512,) * 3, [tmp_path])
    assert (found.label, found.params["TS"]) == ("tuned (driver 1.0)", 32)
    _store(tmp_path, GPU, [_entry(3, (512,) * 3, 0.5, TS=8, WPT=8)])
    found = lookup.best(GPU, REGISTRY[3], (512,) * 3, [tmp_path])
    assert (found.label, found.params["TS"]) == ("tuned", 8)
    cuda = dataclasses.replace(GPU, backend="cuda")
    assert lookup.best(cuda, REGISTRY[3], (512,) * 3, [tmp_path]) is None


def test_idle_compute_units_lose_to_a_filling_configuration(tmp_path):
    """At 1024^2 a 128 x 128 tile gives 64 work-groups to 132 compute units; a 64 x 64 tile
    gives 256 and is chosen, though it was slower where it was measured; at 8192^2 both fill
    and the faster one, measured nearer, wins."""
    big = _entry(6, (4096,) * 3, 40000.0, TSM=128, TSN=128, TSK=16, WPTM=8, WPTN=8)
    small = _entry(6, (2048,) * 3, 30000.0, TSM=64, TSN=64, TSK=16, WPTM=4, WPTN=4)
    _store(tmp_path, GPU, [big, small])
    found = lookup.best(GPU, REGISTRY[6], (1024,) * 3, [tmp_path])
    assert (found.params["TSM"], found.params["TSN"]) == (64, 64)
    found = lookup.best(GPU, REGISTRY[6], (8192,) * 3, [tmp_path])
    assert found.params["TSM"] == 128
    found = lookup.best_over_rungs(GPU, (1024,) * 3, [6], roots=[tmp_path])
    assert found.params["TSM"] == 64


def test_a_measurement_at_the_shape_beats_a_faster_one_far_away(tmp_path):
    near = _entry(6, (1024,) * 3, 26000.0, TSM=64, TSN=64, TSK=16, WPTM=4, WPTN=4)
    far = _entry(6, (4096,) * 3, 46000.0, TSM=64, TSN=128, TSK=16, WPTM=8, WPTN=8)
    _store(tmp_path, GPU, [near, far])
    assert lookup.best(GPU, REGISTRY[6], (1024,) * 3, [tmp_path]).params["TSN"] == 64
    assert lookup.best(GPU, REGISTRY[6], (4096,) * 3, [tmp_path]).params["TSN"] == 128


def test_stale_entries_counted_not_used(tmp_path):
    tiled = get_rung(12)
    stale = Entry(12, [512] * 3, "opencl", {**tiled.defaults(), "PAD": 1}, 1.0, 9e9)
    _store(tmp_path, GPU, [stale])
    assert lookup.stale_entries(GPU, tiled, [tmp_path]) == 1
    assert lookup.best(GPU, tiled, (512,) * 3, [tmp_path]) is None


def test_user_results_live_outside_the_checkout(monkeypatch, tmp_path):
    from clgemm import database

    monkeypatch.delenv("CLGEMM_RESULTS", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert database.results_dir() == tmp_path / "clgemm" / "results"
    assert database.read_roots() == [tmp_path / "clgemm" / "results", TUNING]
    monkeypatch.setenv("CLGEMM_RESULTS", str(tmp_path / "mine"))
    assert database.read_roots() == [tmp_path / "mine"]


@pytest.fixture(autouse=True)
def _fresh():
    lookup.forget()
    yield
    lookup.forget()


def test_tuning_starts_from_the_family_and_type(tmp_path, monkeypatch):
    """The plain tune's seeds: what the chain knows for other devices, best expected first."""
    from clgemm.tuner.plan import default_plan, estimated_minutes, seeds

    monkeypatch.setenv("CLGEMM_RESULTS", str(tmp_path))
    sibling = dataclasses.replace(GPU, name="NVIDIA H200", driver_version="2.0")
    _store(tmp_path, sibling, [_entry(3, (512,) * 3, 99.0, TS=16, WPT=4),
                               _entry(3, (2048,) * 3, 1.0, TS=32, WPT=8)])
    assert seeds(GPU, REGISTRY[3], (512,) * 3)[0] == {"TS": 16, "WPT": 4}
    assert seeds(CPU, REGISTRY[3], (512,) * 3) == []  # nothing for a CPU from a GPU
    assert seeds(CPU, lookup.get_rung(11), (256,) * 3)[0]["WPTM"] == 64  # its CPU defaults
    for dev, limit in ((GPU, 10), (CPU, 15)):
        assert estimated_minutes(dev, default_plan(dev)) <= limit


def test_bound_seeds_rank_by_the_model(device):
    """Where nothing is stored, the plain tune measures first the sampled configurations the
    performance model bounds highest."""
    from clgemm.hardware import hardware_for_device
    from clgemm.model import bound
    from clgemm.problem import Problem
    from clgemm.tuner.plan import bound_seeds
    from clgemm.tuner.space import build_space

    rung, shape = REGISTRY[6], (256, 256, 256)
    space = build_space(rung, device.limits(), Problem(*shape), heuristics=True, only={})
    picked = bound_seeds(device, rung, space, shape, count=3, sample=len(space))
    hw = hardware_for_device(device)
    bounds = sorted((bound(rung, space.params(c), Problem(*shape), hw).gflops
                     for c in space.configs), reverse=True)
    got = [bound(rung, p, Problem(*shape), hw).gflops for p in picked]
    assert len(picked) == 3 and got == bounds[:3]
