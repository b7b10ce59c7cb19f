"""The lookup chain: a device's own tuning, then another driver's, its family's, its type's; a
configuration that leaves compute units idle loses to one that fills them; stale entries are
counted, never used."""

from __future__ import annotations

import dataclasses

import pytest

from clgemm.configs import lookup
from clgemm.configs.database import Entry, database_path, load
from clgemm.core.errors import UsageError
from clgemm.core.paths import TUNING
from clgemm.devices.family import family_of, nvidia_compute_capability, pocl_cpu_target
from clgemm.devices.info import DeviceInfo
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
    r = get_rung(rung)
    return Entry(rung, list(shape), "opencl", {**r.defaults(), **params}, 1.0, gflops)


def test_an_untuned_cpu_takes_its_type_from_cpus_of_its_vector_width(tmp_path):
    """Among other CPUs' entries, those of CPUs whose vectors are as wide as this one's come
    first though slower where measured: a register block sized for AVX-512's registers spills
    on AVX2's. Where no CPU of its width measured the kernel, the others still count."""
    avx2 = dataclasses.replace(CPU, name="pthread-haswell-AMD EPYC")
    other_avx2 = dataclasses.replace(CPU, name="pthread-znver3-AMD Ryzen 7 5800X")
    shape = (1024,) * 3
    wide = _entry(12, shape, 150.0, TSM=16, TSN=16, TSK=32, WPTM=16, WPTN=16, VWM=16,
                  CACHE_A=0, CACHE_B=0, PANELS=1)
    narrow = _entry(12, shape, 90.0, TSM=16, TSN=16, TSK=8, WPTM=16, WPTN=4, VWM=8,
                    CACHE_A=0, CACHE_B=0, PANELS=1)
    _store(tmp_path, CPU, [wide])
    found = lookup.best(avx2, get_rung(12), shape, [tmp_path])
    assert (found.label, found.params["VWM"]) == ("default: CPU", 16)
    _store(tmp_path, other_avx2, [narrow])
    found = lookup.best(avx2, get_rung(12), shape, [tmp_path])
    assert (found.label, found.params["VWM"]) == ("default: CPU", 8)
    wider = dataclasses.replace(CPU, name="pthread-skylake-avx512-AMD EPYC")
    assert lookup.best(wider, get_rung(12), shape, [tmp_path]).params["VWM"] == 16
    # where only the wide CPU's own family measured the kernel, the narrow CPU's entry, though
    # faster where it was measured, is still left out
    apart = tmp_path / "apart"
    family = dataclasses.replace(CPU, name="pthread-skylake-avx512-Intel(R) Xeon(R)")
    _store(apart, family, [_entry(12, (2048,) * 3, 60.0, TSM=16, TSN=16, TSK=32, WPTM=16,
                                  WPTN=16, VWM=16, CACHE_A=0, CACHE_B=0, PANELS=1)])
    _store(apart, other_avx2, [narrow])
    found = lookup.best(wider, get_rung(12), shape, [apart])
    assert (found.label, found.params["VWM"]) == ("family: " + family.name, 16)


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
    """$CLGEMM_RESULTS says where results go; the shipped databases are read beside them unless
    $CLGEMM_SHIPPED_TUNING is 0."""
    from clgemm.configs import database

    monkeypatch.delenv("CLGEMM_RESULTS", raising=False)
    monkeypatch.delenv("CLGEMM_SHIPPED_TUNING", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert database.results_dir() == tmp_path / "clgemm" / "results"
    assert database.read_roots() == [tmp_path / "clgemm" / "results", TUNING]
    monkeypatch.setenv("CLGEMM_RESULTS", str(tmp_path / "mine"))
    assert database.results_dir() == tmp_path / "mine"
    assert database.read_roots() == [tmp_path / "mine", TUNING]
    for off in ("0", "no", "off"):
        monkeypatch.setenv("CLGEMM_SHIPPED_TUNING", off)
        assert database.read_roots() == [tmp_path / "mine"]
    monkeypatch.setenv("CLGEMM_SHIPPED_TUNING", "1")
    assert database.read_roots() == [tmp_path / "mine", TUNING]
    monkeypatch.setenv("CLGEMM_RESULTS", str(TUNING))  # one folder named twice is read once
    assert database.read_roots() == [TUNING]
    monkeypatch.setenv("CLGEMM_SHIPPED_TUNING", "maybe")
    with pytest.raises(UsageError, match="CLGEMM_SHIPPED_TUNING='maybe': give 0"):
        database.read_roots()


@pytest.fixture(autouse=True)
def _fresh():
    lookup.forget()
    yield
    lookup.forget()


def test_tuning_starts_from_the_family_and_type(tmp_path, monkeypatch, no_shipped_tuning):
    """The plain tune's seeds: what the chain knows for other devices, best expected first."""
    from clgemm.tuner.plan import default_plan, estimated_minutes, seeds

    monkeypatch.setenv("CLGEMM_RESULTS", str(tmp_path))
    sibling = dataclasses.replace(GPU, name="NVIDIA H200", driver_version="2.0")
    _store(tmp_path, sibling, [_entry(3, (512,) * 3, 99.0, TS=16, WPT=4),
                               _entry(3, (2048,) * 3, 1.0, TS=32, WPT=8)])
    assert seeds(GPU, REGISTRY[3], (512,) * 3)[0] == {"TS": 16, "WPT": 4}
    assert seeds(CPU, REGISTRY[3], (512,) * 3) == []  # nothing for a CPU from a GPU
    assert seeds(CPU, lookup.get_rung(11), (256,) * 3)[0]["WPTM"] == 64  # its CPU defaults
    micro = seeds(CPU, lookup.get_rung(12), (2048,) * 3)[0]  # the tiled kernel's micro-kernel
    assert (micro["PANELS"], micro["LOCKSTEP"], micro["VWM"], micro["WPTM"]) == (1, 0, 16, 16)
    assert all(s.get("PANELS") != 1 for s in seeds(GPU, lookup.get_rung(12), (2048,) * 3))
    for dev, limit in ((GPU, 10), (CPU, 15)):
        assert estimated_minutes(dev, default_plan(dev)) <= limit
    # a GPU tunes the kernel for any size where gemm() runs it: M and N off every tile of 32
    # or more (the large tiles a product of thousands runs on), every side off 16 at long K
    any_size = [s.shape for s in default_plan(GPU) if s.rung == 13]
    assert any_size and all(side % 32 for shape in any_size for side in shape[:2])
    assert all(side % 16 for shape in any_size if shape[2] > 128 for side in shape)
    # the tiled kernel at columns of C above the skinny kernel's widest step; the direct
    # kernel at a square below 512 as well as at 512
    steps = {(s.rung, s.shape) for s in default_plan(GPU)}
    widest_skinny = max(shape[1] for rung, shape in steps if rung == 14)
    assert any(rung == 12 and shape[1] > widest_skinny and shape[0] > shape[1]
               for rung, shape in steps)
    # the tiled kernel at both ends of the small-K class on 2048 squares (reading B there)
    assert {(2048, 2048, 64), (2048, 2048, 128)} <= {shape for rung, shape in steps if rung == 12}
    # the tiled kernel at every square of the small calls from 512 up, 768 between the others
    squares = {shape[0] for rung, shape in steps if rung == 12 and len(set(shape)) == 1}
    assert {512, 768, 1024, 2048} <= squares
    # and the kernel for any size at a short K as well as at long ones
    assert min(shape[2] for shape in any_size) <= 128
    direct_squares = sorted(shape[0] for rung, shape in steps
                            if rung == 11 and len(set(shape)) == 1)
    assert direct_squares[0] < 512 <= direct_squares[-1]


def test_a_tune_starts_from_the_same_gpu_under_the_other_backend(tmp_path, monkeypatch,
                                                                   no_shipped_tuning):
    """The same GPU's entries under CUDA are an OpenCL tune's second seed at their slot (the
    kernels are one source), never a choice of the OpenCL lookup; another GPU's CUDA entries
    are neither."""
    from clgemm.tuner.plan import seeds

    monkeypatch.setenv("CLGEMM_RESULTS", str(tmp_path))
    cuda = dataclasses.replace(GPU, backend="cuda", platform="CUDA", vendor="NVIDIA")
    tiled = get_rung(12)
    shape = (32, 4096, 4096)
    _store(tmp_path, GPU, [_entry(12, shape, 14.0, TSM=32, TSN=16, WPTM=4, WPTN=4)])
    _store(tmp_path, cuda, [dataclasses.replace(
        _entry(12, shape, 20.0, TSM=32, TSN=64, WPTM=4, WPTN=8), backend="cuda")])
    other = lookup.other_backends(GPU, tiled, shape)
    assert [(f.shape, f.params["TSN"]) for f in other] == [(shape, 64)]
    assert [s["TSN"] for s in seeds(GPU, tiled, shape)[:2]] == [16, 64]
    assert all(f.params["TSN"] != 64 for f in lookup.ranked(GPU, tiled, shape))
    assert lookup.other_backends(dataclasses.replace(GPU, name="NVIDIA A100"), tiled,
                                 shape) == []
    lookup.forget()


def test_a_stack_tune_starts_from_the_stacks_of_both_backends(tmp_path, monkeypatch,
                                                               no_shipped_tuning):
    """A stack's tune measures first what was measured on stacks: this backend's stack entry,
    then the other backend's (its nearest count first), before any one product's; a tune of
    one product never starts from a stack's."""
    from clgemm.tuner.plan import seeds

    monkeypatch.setenv("CLGEMM_RESULTS", str(tmp_path))
    cuda = dataclasses.replace(GPU, backend="cuda", platform="CUDA", vendor="NVIDIA")
    tiled = get_rung(12)
    shape = (256, 256, 256)

    def stack(entry, batch, backend="opencl"):
        return dataclasses.replace(entry, batch=batch, backend=backend)

    _store(tmp_path, GPU, [_entry(12, shape, 30.0, TSM=32, TSN=32, WPTM=4, WPTN=4),
                           stack(_entry(12, shape, 20.0, TSM=64, TSN=32, WPTM=4, WPTN=4), 100)])
    _store(tmp_path, cuda, [
        stack(_entry(12, shape, 25.0, TSM=64, TSN=64, WPTM=4, WPTN=8), 100, "cuda"),
        stack(_entry(12, shape, 99.0, TSM=128, TSN=64, WPTM=8, WPTN=8), 10000, "cuda"),
        dataclasses.replace(_entry(12, shape, 40.0, TSM=16, TSN=16, WPTM=2, WPTN=2),
                            backend="cuda")])
    first = [(s["TSM"], s["TSN"]) for s in seeds(GPU, tiled, shape, batch=100)]
    assert first[:2] == [(64, 32), (64, 64)]  # the count nearest 100, not the fastest
    assert [(s["TSM"], s["TSN"]) for s in seeds(GPU, tiled, shape)[:2]] == [(32, 32), (16, 16)]
    lookup.forget()


def test_bound_seeds_rank_by_the_model(device):
    """Where nothing is stored, the plain tune measures first the sampled configurations the
    performance model bounds highest."""
    from clgemm.core.problem import Problem
    from clgemm.devices.hardware import hardware_for_device
    from clgemm.model.bound import bound
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


# -- the user's and the shipped databases together ----------------------------------------------
#: a CPU of another family and the same type: its database is the `default: CPU` level for CPU
OTHER_CPU = dataclasses.replace(CPU, name="pthread-znver4-AMD EPYC 9654", vendor="AuthenticAMD",
                                driver_version="5.0")
TILED = dict(TSM=64, TSN=16, TSK=16, WPTM=8, WPTN=16, WIDTH=4, VWM=8, VWN=1)


def test_two_databases_of_one_device_both_count(tmp_path):
    """The user's file and the shipped one for the same device are both read: the entry with
    the higher expected speed wins, whichever folder holds it."""
    mine, shipped = tmp_path / "mine", tmp_path / "shipped"
    _store(mine, GPU, [_entry(3, (512,) * 3, 10.0, TS=16, WPT=4)])
    _store(shipped, GPU, [_entry(3, (512,) * 3, 90.0, TS=32, WPT=8),
                          _entry(4, (512,) * 3, 50.0, TS=32, WIDTH=4)])
    roots = [mine, shipped]
    assert len(lookup.stored_databases(roots)) == 2
    found = lookup.best(GPU, REGISTRY[3], (512,) * 3, roots)
    assert (found.params["TS"], found.label, found.path.parent) == (32, "tuned", shipped)
    assert lookup.best(GPU, REGISTRY[4], (512,) * 3, roots) is not None  # only shipped has it
    _store(mine, GPU, [_entry(3, (512,) * 3, 99.0, TS=16, WPT=4)])
    found = lookup.best(GPU, REGISTRY[3], (512,) * 3, roots)
    assert (found.params["TS"], found.path.parent) == (16, mine)
    # one folder reached twice (named twice, or through a link) is read once
    (tmp_path / "again").symlink_to(shipped)
    assert len(lookup.stored_databases([mine, shipped, tmp_path / "again"])) == 2


def test_a_tune_at_a_small_shape_takes_no_choice_away(tmp_path):
    """Own entries of rung 3 and of the tiled kernel at 128^3 beside another CPU's tiled kernel
    (the `default: CPU` level): gemm()'s choice at every shape is what it was without them or
    one of them, never a third; rung 3 itself keeps the other CPU's entry measured nearer a
    shape, where it is faster."""
    other = tmp_path / "other"
    _store(other, OTHER_CPU, [_entry(12, (s,) * 3, g, **TILED)
                              for s, g in ((256, 7.0), (512, 44.0), (1024, 70.0), (2048, 100.0))]
           + [_entry(3, (512,) * 3, 7.6, TS=32, WPT=16)])
    shapes = [(s,) * 3 for s in (64, 128, 256, 512, 1024, 2048, 4096)] + [(2048, 2048, 128)]
    before = {s: lookup.best_over_rungs(CPU, s, roots=[other]) for s in shapes}
    assert {f.rung for f in before.values()} == {12}
    mine = tmp_path / "mine"
    own = [_entry(3, (128,) * 3, 4.7, TS=8, WPT=8),
           _entry(12, (128,) * 3, 24.0, **{**TILED, "TSM": 32})]
    _store(mine, CPU, own)
    roots = [mine, other]
    for shape in shapes:
        after = lookup.best_over_rungs(CPU, shape, roots=roots)
        assert after == before[shape] or (after.path.parent == mine
                                          and after.shape == (128,) * 3), shape
        if shape[0] >= 512:  # far from 128^3: the faster kernel measured nearer, as before
            assert after == before[shape], shape
    found = lookup.best(CPU, get_rung(3), (1024,) * 3, roots)
    assert (found.params, found.label) == ({"TS": 32, "WPT": 16}, "default: CPU")
    found = lookup.best(CPU, get_rung(3), (128,) * 3, roots)  # measured here, and faster here
    assert (found.params, found.label) == ({"TS": 8, "WPT": 8}, "tuned")


def test_an_own_measurement_takes_its_slot_from_another_device(tmp_path, monkeypatch):
    """Where the device measured a rung at a shape itself, another device's entry of that slot
    is not used, however fast it was there; an entry of another shape still competes. The
    plain tune's seeds follow the chain's order, the slot's other entry last."""
    from clgemm.tuner.plan import seeds

    other, mine = tmp_path / "other", tmp_path / "mine"
    _store(other, OTHER_CPU, [_entry(12, (1024,) * 3, 900.0, **TILED),
                              _entry(12, (2048,) * 3, 500.0, **{**TILED, "TSM": 128})])
    _store(mine, CPU, [_entry(12, (1024,) * 3, 30.0, **{**TILED, "TSM": 32})])
    roots = [mine, other]
    ranked = lookup.ranked(CPU, get_rung(12), (1024,) * 3, roots)
    assert [(f.label, f.params["TSM"]) for f in ranked] == [
        ("default: CPU", 128), ("tuned", 32), ("default: CPU", 64)]
    found = lookup.best(CPU, get_rung(12), (512,) * 3, roots)
    assert (found.label, found.params["TSM"]) == ("default: CPU", 128)
    _store(mine, CPU, [_entry(12, (1024,) * 3, 30.0, **{**TILED, "TSM": 32}),
                       _entry(12, (2048,) * 3, 40.0, **{**TILED, "TSM": 32})])
    found = lookup.best(CPU, get_rung(12), (1024,) * 3, roots)
    assert (found.label, found.params["TSM"]) == ("tuned", 32)
    monkeypatch.setattr(lookup, "read_roots", lambda: roots)
    # what the chain would run first (its own entry at the slot), then the CPU's micro-kernel
    # (16 rows), its form in place (32 rows, no panels) and its self-packing form (128 rows,
    # PACK_K), then the rest of what is stored
    got = seeds(CPU, get_rung(12), (1024,) * 3)
    assert got[0] == ranked[1].params
    assert [(p["TSM"], p["PANELS"], p["PACK_K"]) for p in got] == [
        (32, 0, 0), (16, 1, 0), (32, 0, 0), (128, 0, 8), (64, 0, 0), (128, 0, 0)]


def test_a_broken_file_is_skipped_and_a_program_error_is_not(tmp_path, monkeypatch):
    _store(tmp_path, GPU, [_entry(3, (512,) * 3, 9.0)])
    (tmp_path / "broken.json").write_text('{"format": "clgemm-tuning-database", ')
    with pytest.warns(RuntimeWarning, match=r"broken\.json skipped .*not valid JSON"):
        assert len(lookup.stored_databases([tmp_path])) == 1
    lookup.forget()

    def bug(path, text=None):
        raise TypeError("a mistake in clgemm itself")

    monkeypatch.setattr(lookup, "read_any", bug)
    with pytest.raises(TypeError, match="a mistake in clgemm itself"):
        lookup.stored_databases([tmp_path])


def test_a_tune_at_a_slot_beats_its_own_database_s_estimates_there(tmp_path):
    """The direct kernel stored at 512 cubed and at 256 cubed in one database, the first far
    faster where it was measured: at 256 cubed the entry tuned there runs (its tune measured
    the other there and beat it); at 192 cubed, measured by neither, the estimates decide.
    Stored in another database, the entry of 256 cubed was measured against nothing there and
    competes by its speed."""
    direct = get_rung(11)
    large = _entry(11, (512,) * 3, 8700.0, TSM=16, TSN=32, TSK=32, WPTM=2, WPTN=2)
    small = _entry(11, (256,) * 3, 2800.0, TSM=16, TSN=16, TSK=16, WPTM=1, WPTN=1)
    _store(tmp_path, GPU, [large, small])

    def chosen(shape, roots):
        return lookup.best(GPU, direct, shape, roots).params["TSN"]

    assert chosen((256,) * 3, [tmp_path]) == 16
    assert chosen((192,) * 3, [tmp_path]) == 32
    assert lookup.expected_gflops(GPU, direct, lookup.best(GPU, direct, (256,) * 3, [tmp_path]),
                                  (256,) * 3) == 2800.0  # the measured speed, not the lifted one
    mine, shipped = tmp_path / "mine", tmp_path / "shipped"
    _store(mine, GPU, [small])
    _store(shipped, GPU, [large])
    assert chosen((256,) * 3, [mine, shipped]) == 32
