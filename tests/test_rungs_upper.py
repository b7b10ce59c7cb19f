"""Rungs 6-10 and the tiled kernels (12, 13) on the default device: correct at their defaults and
at other valid parameter sets, rung 10 and kernel 13 on shapes no tile divides, constraint
violations refused by name, and the defaults valid on a GPU-sized device as well as here."""

from __future__ import annotations

import dataclasses
import itertools
import shutil
import subprocess

import numpy as np
import pytest

from clgemm.configs.splits import reads_b_as_gemm
from clgemm.core.errors import ConstraintError
from clgemm.core.problem import Problem
from clgemm.core.kernel_sources import kernel_source
from clgemm.core.paths import KERNELS
from clgemm.devices.limits import DeviceLimits
from clgemm.measure.rung_runner import run_rung
from clgemm.rungs import get_rung
from clgemm.tuner.space import build_space

#: the limits the defaults must also fit: an NVIDIA H100 as OpenCL/CUDA reports it
H100 = DeviceLimits(max_work_group_size=1024, max_work_item_sizes=(1024, 1024, 64),
                    local_mem_bytes=48 * 1024, device_type="GPU")

# (rung, parameters, sizes M N K that are multiples of its tiles)
CASES = [
    (6, {}, [(128, 128, 128), (256, 128, 48)]),
    (6, {"TSM": 64, "TSN": 32, "TSK": 8, "WPTM": 4, "WPTN": 2, "PAD": 0}, [(128, 64, 64)]),
    (6, {"TSM": 32, "TSN": 64, "TSK": 32, "WPTM": 2, "WPTN": 8, "PAD": 2}, [(64, 128, 96)]),
    (6, {"TSM": 16, "TSN": 16, "TSK": 16, "WPTM": 1, "WPTN": 1}, [(48, 32, 16)]),
    (7, {}, [(128, 128, 128), (128, 256, 32)]),
    (7, {"TSM": 64, "TSN": 64, "TSK": 16, "WPTM": 4, "WPTN": 8, "WIDTH": 8}, [(128, 64, 64)]),
    (7, {"TSM": 32, "TSN": 128, "TSK": 16, "WPTM": 2, "WPTN": 8, "WIDTH": 2, "PAD": 0},
     [(64, 128, 48)]),
    (7, {"TSM": 64, "TSN": 64, "TSK": 16, "WPTM": 8, "WPTN": 8, "WIDTH": 1}, [(64, 128, 32)]),
    (8, {}, [(128, 128, 128), (256, 128, 64)]),
    (8, {"TSM": 64, "TSN": 32, "TSK": 16, "WPTM": 4, "WPTN": 4, "WIDTH": 2}, [(128, 96, 32)]),
    (8, {"TSM": 128, "TSN": 64, "TSK": 32, "WPTM": 16, "WPTN": 4, "WIDTH": 8, "PAD": 2},
     [(128, 128, 64)]),
    # rung 9: K = TSK runs the prologue's tiles alone; odd tile counts end on either buffer
    (9, {}, [(128, 128, 128), (256, 128, 16), (128, 256, 48)]),
    (9, {"TSM": 64, "TSN": 32, "TSK": 16, "WPTM": 4, "WPTN": 4, "WIDTH": 2}, [(128, 96, 80)]),
    (9, {"TSM": 128, "TSN": 64, "TSK": 16, "WPTM": 16, "WPTN": 4, "WIDTH": 8, "PAD": 2},
     [(128, 128, 96)]),   # within 48 KiB of local memory (an NVIDIA GPU's) though doubled
    (9, {"TSM": 64, "TSN": 64, "TSK": 8, "WPTM": 8, "WPTN": 8, "WIDTH": 1, "PAD": 0},
     [(64, 128, 40)]),
    (10, {}, [(128, 128, 128), (256, 128, 64)]),
    (10, {"TSM": 64, "TSN": 32, "TSK": 8, "WPTM": 4, "WPTN": 4, "WIDTH": 2}, [(128, 96, 40)]),
    (10, {"TSM": 32, "TSN": 64, "TSK": 16, "WPTM": 2, "WPTN": 8, "WIDTH": 4, "PAD": 2},
     [(64, 128, 64)]),
    # the library's tiled kernels (12, 13)
    (12, {}, [(128, 128, 128), (256, 128, 16)]),   # K = TSK: the prologue's tile alone
    (12, {"TSM": 64, "TSN": 64, "TSK": 16, "WPTM": 4, "WPTN": 4, "WIDTH": 4}, [(128, 64, 80)]),
    (12, {"TSM": 32, "TSN": 128, "TSK": 32, "WPTM": 4, "WPTN": 8, "WIDTH": 8}, [(64, 128, 96)]),
    (12, {"VWM": 4, "VWN": 4}, [(128, 256, 48)]),
    (12, {"TSM": 64, "TSN": 32, "TSK": 8, "WPTM": 16, "WPTN": 4, "VWM": 16, "VWN": 2,
          "CACHE_B": 0}, [(128, 64, 24)]),
    (12, {"TSM": 16, "TSN": 16, "TSK": 16, "WPTM": 16, "WPTN": 8, "WIDTH": 1, "VWM": 16,
          "CACHE_A": 0, "CACHE_B": 0}, [(32, 48, 32)]),   # no local memory, no barrier
    (12, {"TSM": 32, "TSN": 16, "TSK": 8, "WPTM": 16, "WPTN": 8, "WIDTH": 1, "VWM": 16, "VWN": 2,
          "CACHE_A": 0, "CACHE_B": 0, "PANELS": 1}, [(64, 48, 40)]),   # operands in panels
    (12, {"TSM": 64, "TSN": 16, "TSK": 8, "WPTM": 16, "WPTN": 8, "WIDTH": 1, "VWM": 16,
          "CACHE_A": 0, "CACHE_B": 0, "PANELS": 1, "LOCKSTEP": 1}, [(128, 32, 24)]),
    (13, {}, [(128, 128, 128), (256, 128, 64)]),
    (13, {"TSM": 64, "TSN": 32, "TSK": 8, "WPTM": 4, "WPTN": 4, "WIDTH": 2}, [(128, 96, 40)]),
    (13, {"TSM": 32, "TSN": 64, "TSK": 16, "WPTM": 2, "WPTN": 8, "WIDTH": 4, "VWN": 8},
     [(64, 128, 64)]),
    (13, {"VWM": 8, "VWN": 2, "CACHE_A": 0}, [(128, 128, 32)]),
]

#: the any-size kernels' parameter sets for the shapes no tile divides
ANY_SIZE_PARAMS = [(c[0], c[1]) for c in CASES if c[0] in (10, 13)] + [
    (10, {"TSM": 32, "TSN": 32, "TSK": 16, "WPTM": 4, "WPTN": 4, "WIDTH": 8}),
    (10, {"TSM": 64, "TSN": 64, "TSK": 16, "WPTM": 8, "WPTN": 8, "WIDTH": 1, "PAD": 0}),
    (13, {"TSM": 32, "TSN": 32, "TSK": 16, "WPTM": 4, "WPTN": 4, "WIDTH": 8}),
    (13, {"TSM": 64, "TSN": 64, "TSK": 16, "WPTM": 8, "WPTN": 8, "WIDTH": 1}),
    (13, {"TSM": 32, "TSN": 32, "TSK": 8, "WPTM": 8, "WPTN": 4, "WIDTH": 2, "VWM": 4, "VWN": 4}),
    (13, {"TSM": 16, "TSN": 16, "TSK": 16, "WPTM": 16, "WPTN": 4, "WIDTH": 1, "VWM": 16,
          "VWN": 2, "CACHE_A": 0, "CACHE_B": 0}),
]
ODD_SHAPES = [(1, 1, 1), (7, 5, 3), (33, 65, 17), (129, 1, 257)]
# M or N a multiple of 4 (and 8) but not of any tile: the guarded vector path, next to scalar ones
EDGE_SHAPES = [(100, 36, 20), (96, 130, 33), (72, 200, 8)]


def _random_shapes(count: int, seed: int = 20240601) -> list[tuple[int, int, int]]:
    rng = np.random.default_rng(seed)
    return [tuple(int(x) for x in rng.integers(1, 300, size=3)) for _ in range(count)]


def _check(backend, ws, rung, params):
    res = run_rung(backend, ws, rung, params, repeats=1, warmup=0)
    p = ws.problem
    assert res.status == "ok", (rung.number, p.m, p.n, p.k, params, res.status, res.message)
    assert res.rel_error < 1e-5
    return res


@pytest.mark.parametrize("number,overrides,sizes", CASES,
                         ids=[f"rung{c[0]}-{c[1] or 'defaults'}" for c in CASES])
def test_rung_correct(backend, workspace_for, number, overrides, sizes):
    rung = get_rung(number)
    params = rung.resolve(overrides)
    rung.validate(params, backend.device.limits())
    for m, n, k in sizes:
        res = _check(backend, workspace_for(m, n, k), rung, params)
        assert res.ms > 0 and res.gflops > 0
        if reads_b_as_gemm(backend.device, rung.number, params, (m, n, k)):
            assert res.helper_ms is None  # B read as it lies, as gemm() reads it there
        else:
            assert res.helper_ms is not None and res.helper_ms > 0   # the transpose of B


@pytest.mark.parametrize("number,overrides", ANY_SIZE_PARAMS,
                         ids=[f"rung{n}-params{i}" for i, (n, _) in enumerate(ANY_SIZE_PARAMS)])
def test_any_size_odd_shapes(backend, workspace_for, number, overrides):
    rung = get_rung(number)
    params = rung.resolve(overrides)
    for m, n, k in ODD_SHAPES + EDGE_SHAPES:
        _check(backend, workspace_for(m, n, k), rung, params)


@pytest.mark.parametrize("number", [10, 13])
def test_any_size_large_odd_and_random(backend, workspace_for, number):
    rung = get_rung(number)
    params = rung.defaults()
    for m, n, k in [(1000, 1023, 517)] + _random_shapes(6):
        _check(backend, workspace_for(m, n, k), rung, params)


@pytest.mark.parametrize("number", [6, 7, 8, 9, 12])
def test_sizes_off_the_tiles_unsupported(backend, workspace_for, number):
    rung = get_rung(number)
    params = rung.defaults()
    tm, tn = rung.output_tile(params)
    tk = rung.k_step(params)
    for m, n, k in [(tm + 1, tn, tk), (tm, tn * 2 - 4, tk), (tm, tn, tk + 1), (7, 5, 3)]:
        res = run_rung(backend, workspace_for(m, n, k), rung, params, repeats=1, warmup=0)
        assert res.status == "unsupported-size", (m, n, k, res.status)
        assert "not a multiple of" in res.message


@pytest.mark.parametrize("number", [10, 13])
def test_any_size_declared(number):
    rung = get_rung(number)
    assert rung.any_size and rung.size_multiples(rung.defaults()) == (1, 1, 1)
    assert rung.size_problem(rung.defaults(), 7, 5, 3) is None
    assert "bounds-checked" in rung.adds
    assert "transpose only" in rung.teaches
    prose = " ".join(ln.strip().lstrip("/ ") for ln in (KERNELS / rung.file).read_text()
                     .splitlines() if ln.strip().startswith("//"))
    assert "ceil(K / TSK)" in prose and "only the outputs inside C are stored" in prose
    assert "transpose of B" in prose


def test_rung_9_and_10_add_one_idea_each():
    """Rung 9 is rung 8's record with twice its local memory; rung 10 is rung 9's for any size:
    the same parameters, defaults, candidates and constraints all the way down."""
    r8, r9, r10 = get_rung(8), get_rung(9), get_rung(10)
    assert r9.params == r8.params and r10.params == r9.params
    assert [c.name for c in r9.all_constraints()] == [c.name for c in r8.all_constraints()]
    assert [c.name for c in r10.all_constraints()] == [c.name for c in r9.all_constraints()]
    p = r8.defaults()
    assert r9.local_mem_bytes(p) == 2 * r8.local_mem_bytes(p) == r10.local_mem_bytes(p)
    assert r9.derive(p) == r8.derive(p) == r10.derive(p)
    assert r9.helpers == r8.helpers == r10.helpers and not r9.any_size and r10.any_size
    assert r9.k_step(p) == p["TSK"] and r10.k_step(p) == 1
    # the device constraint sees the doubled local memory: a set rung 8 fits, rung 9 does not
    small = DeviceLimits(local_mem_bytes=r8.local_mem_bytes(p))
    r8.validate(p, small)
    with pytest.raises(ConstraintError, match="local memory"):
        r9.validate(p, small)
    text = (KERNELS / r9.file).read_text()
    assert "One barrier per tile is enough" in text and "Prologue" in text


@pytest.mark.parametrize("number", [6, 7, 8, 9, 10, 12, 13])
def test_defaults_fit_here_and_on_a_gpu(backend, number):
    rung = get_rung(number)
    params = rung.defaults()
    rung.validate(params, backend.device.limits())
    rung.validate(params, H100)
    assert rung.local_mem_bytes(params) <= 49152
    assert rung.transposed_b and [h.kernel for h in rung.helpers] == ["transpose"]
    assert len(rung.adds) < 60
    for p in rung.params:
        assert p.default in p.candidates, (number, p.name)


@pytest.mark.parametrize("number,overrides,constraint", [
    (6, {"TSM": 64, "WPTM": 3}, "TSM % WPTM == 0"),
    (6, {"TSN": 64, "WPTN": 3}, "TSN % WPTN == 0"),
    (6, {"TSM": 16, "TSN": 16, "TSK": 8, "WPTM": 1, "WPTN": 1},
     "TSK*TSM % work-items == 0 (whole A-tile loads)"),
    (6, {"TSM": 64, "TSN": 16, "TSK": 8, "WPTM": 4, "WPTN": 1},
     "TSK*TSN % work-items == 0 (whole B-tile loads)"),
    (6, {"PAD": 0, "TSK": 0}, "parameters within their minimum values"),
    (7, {"WIDTH": 3}, "WIDTH is 1, 2, 4 or 8"),
    (7, {"WIDTH": 16}, "WIDTH is 1, 2, 4 or 8"),
    (7, {"TSM": 4, "WPTM": 1, "WIDTH": 8}, "TSM % WIDTH == 0"),
    (9, {"TSM": 8, "TSN": 4, "WPTM": 1, "WPTN": 1, "WIDTH": 8}, "TSN % WIDTH == 0"),
    (12, {"TSM": 8, "TSN": 4, "WPTM": 1, "WPTN": 1, "WIDTH": 8}, "TSN % WIDTH == 0"),
    (7, {"TSM": 64, "TSN": 64, "TSK": 8, "WPTM": 4, "WPTN": 4, "WIDTH": 4},
     "TSK*TSM/WIDTH % work-items == 0 (whole vector A-tile loads)"),
    (10, {"TSM": 128, "TSN": 32, "TSK": 8, "WPTM": 8, "WPTN": 2, "WIDTH": 2},
     "TSK*TSN/WIDTH % work-items == 0 (whole vector B-tile loads)"),
    (12, {"VWM": 3}, "VWM is 1, 2, 4, 8 or 16"),
    (13, {"VWN": 16, "WPTN": 16, "TSN": 128}, "VWN is 1, 2, 4 or 8"),
    (12, {"WPTM": 4, "VWM": 8}, "WPTM % VWM == 0"),
    (13, {"WPTN": 4, "VWN": 8}, "WPTN % VWN == 0"),
    (12, {"CACHE_A": 2}, "CACHE_A and CACHE_B are 0 or 1"),
    (12, {"PANELS": 2}, "PANELS is 0 or 1"),
    (12, {"LOCKSTEP": 2}, "LOCKSTEP is 0 or 1"),
    (12, {"LOCKSTEP": 1, "CACHE_A": 0},
     "LOCKSTEP=0 or CACHE_A = CACHE_B = 0 (with local memory the barrier is there)"),
    (12, {"PANELS": 1, "CACHE_B": 0},
     "PANELS=0 or CACHE_A = CACHE_B = 0 (panels are read straight from global)"),
    (8, {"USE_SHUFFLE": 2}, "USE_SHUFFLE is 0 or 1"),
    (9, {"USE_SHUFFLE": 2}, "USE_SHUFFLE is 0 or 1"),
    (10, {"USE_SHUFFLE": 1}, "USE_SHUFFLE=0 or RTSM % SGS == 0 (a sub-group within one column)"),
    (8, {"USE_SHUFFLE": 1}, "USE_SHUFFLE=0 or RTSM % SGS == 0 (a sub-group within one column)"),
    (8, {"USE_SHUFFLE": 1, "TSM": 64, "TSN": 64, "TSK": 8, "WPTM": 1, "WPTN": 16, "WIDTH": 1,
         "SGS": 8}, "USE_SHUFFLE=0 or SGS % WPTN == 0 (whole steps per sub-group read)"),
])
def test_constraint_refused_by_name(number, overrides, constraint):
    rung = get_rung(number)
    with pytest.raises(ConstraintError) as info:
        rung.validate(rung.resolve(overrides))
    assert info.value.constraint == constraint
    assert constraint in str(info.value)


@pytest.mark.parametrize("number", [9, 12])
def test_device_limits_refused_by_name(number):
    rung = get_rung(number)
    with pytest.raises(ConstraintError) as info:
        rung.validate(rung.resolve({"TSK": 32}), H100)   # two buffers of 32 KiB or more
    assert info.value.constraint == "local memory <= device local memory"
    with pytest.raises(ConstraintError) as info:
        rung.validate(rung.resolve({"WPTM": 2, "WPTN": 4, "TSK": 32, "WIDTH": 2}), H100)  # 64 x 32
    assert info.value.constraint == "work-group size <= device maximum"


def test_slices_of_k_are_refused_where_their_tiles_and_sums_do_not_fit():
    """Two slices of 64 x 64 tiles 16 deep keep two pairs of double tiles (32 KiB) and one
    slice's sums (16 KiB) in local memory: 48 KiB, which fits; four keep 112 KiB, which does
    not, where one slice alone needs 16. The tuner's space (its heuristics aside) leaves the
    four out too."""
    rung = get_rung(12)
    whole = rung.resolve({"TSM": 64, "TSN": 64, "TSK": 16, "WPTM": 4, "WPTN": 4})
    rung.validate(whole, H100)
    rung.validate({**whole, "KSPLIT": 2}, H100)
    with pytest.raises(ConstraintError) as info:
        rung.validate({**whole, "KSPLIT": 4}, H100)
    assert info.value.constraint.startswith("KSPLIT > 1")
    only = {name: (value,) for name, value in whole.items() if name != "KSPLIT"}
    space = build_space(rung, H100, Problem(512, 512, 512), heuristics=False, only=only)
    assert sorted(space.params(c)["KSPLIT"] for c in space.configs) == [1, 2]


# -- the opt-in shuffle path of rung 8 -----------------------------------------------------------
SHUFFLE_SETS = [
    {"USE_SHUFFLE": 1, "TSM": 128, "TSN": 64, "TSK": 16, "WPTM": 4, "WPTN": 8, "SGS": 32},
    {"USE_SHUFFLE": 1, "TSM": 64, "TSN": 64, "TSK": 16, "WPTM": 4, "WPTN": 4, "SGS": 16},
    {"USE_SHUFFLE": 1, "TSM": 64, "TSN": 64, "TSK": 8, "WPTM": 8, "WPTN": 8, "SGS": 8,
     "WIDTH": 2},
]
NO_SHUFFLE = "USE_SHUFFLE=0 or the device has sub-group shuffles " \
             "(cl_khr_subgroup_shuffle or cl_intel_subgroups)"


def test_shuffle_refused_without_the_extension(backend, workspace_for):
    rung = get_rung(8)
    params = rung.resolve(SHUFFLE_SETS[0])
    rung.validate(params)                                    # geometry alone is fine
    bare = DeviceLimits(extensions=frozenset({"cl_khr_fp64"}))
    with pytest.raises(ConstraintError) as info:
        rung.validate(params, bare)
    assert info.value.constraint == NO_SHUFFLE
    khr = DeviceLimits(extensions=frozenset({"cl_khr_subgroup_shuffle"}))
    rung.validate(params, khr)                               # sizes unknown: left to the kernel
    rung.validate(params, dataclasses.replace(khr, sub_group_sizes=(16, 32)))
    intel = DeviceLimits(extensions=frozenset({"cl_intel_subgroups"}), sub_group_sizes=(8, 16))
    with pytest.raises(ConstraintError) as info:
        rung.validate(params, intel)
    assert info.value.constraint == "USE_SHUFFLE=0 or SGS is a sub-group size of the device"

    limits = backend.device.limits()
    if not any(limits.has_extension(e) for e in ("cl_khr_subgroup_shuffle", "cl_intel_subgroups")):
        res = run_rung(backend, workspace_for(128, 64, 16), rung, params, repeats=1, warmup=0)
        assert res.status == "exceeds-device" and res.message == NO_SHUFFLE


@pytest.mark.parametrize("number", [8, 9])
def test_shuffle_leaves_tsk_whole_steps(number):
    """TSK % (SGS/WPTN) == 0 has no constraint of its own: it follows from the others."""
    rung = get_rung(number)
    grid = itertools.product((32, 64, 128), (32, 64, 128), (8, 16, 32), (1, 2, 4, 8),
                             (1, 2, 4, 8, 16), (1, 2, 4, 8), (8, 16, 32, 64))
    valid = 0
    for tsm, tsn, tsk, wm, wn, w, sgs in grid:
        p = rung.resolve(dict(TSM=tsm, TSN=tsn, TSK=tsk, WPTM=wm, WPTN=wn, WIDTH=w, SGS=sgs,
                              USE_SHUFFLE=1))
        if rung.first_violation(p, None) is None:
            valid += 1
            assert tsk % rung.all_macros(p)["KPS"] == 0, p
    assert valid > 10


# A stand-in for sub-group hardware, so the shuffle path's bookkeeping runs on any device: lanes
# are cut from the linear local id, a lane's own value is the real `v`, and what it "receives"
# from another lane is read from where that lane read it. SG_SIZE() may be set off SGS to send
# the kernel down its fallback path.
EMULATION = """
#define SG_SIZE() EMULATED_SG_SIZE
#define SG_LANE() ((int)((get_local_id(1) * RTSM + get_local_id(0)) % SGS))
#define SHUFFLE(v, lane) ((lane) == SG_LANE() ? (v) \\
    : EMULATED_TILE[tidn + ((lane) % WPTN) * RTSN][kc + (lane) / WPTN])
"""
#: the B tile the shuffle path reads, per rung (rung 9's has a buffer index in front)
EMULATED_TILE = {8: "Btile", 9: "Btile[cur]", 10: "Btile[cur]"}


class _EmulatedSubgroups:
    """The real backend, but with sub-group shuffles reported and the emulation prepended."""

    def __init__(self, real, sg_size: str, number: int):
        self._real = real
        exts = tuple(real.device.extensions) + ("cl_khr_subgroup_shuffle",)
        self.device = dataclasses.replace(real.device, extensions=exts)
        self._header = (f"#define EMULATED_SG_SIZE ({sg_size})\n"
                        f"#define EMULATED_TILE {EMULATED_TILE[number]}\n" + EMULATION)

    def header(self) -> str:
        return self._header

    def program(self, filename: str, defines, kernel: str):
        """Built with this header (the real backend's `program` would use its own)."""
        return self._real.build(kernel_source(self._header, filename), defines, kernel)

    def __getattr__(self, name):
        return getattr(self._real, name)


@pytest.mark.parametrize("number", [8, 9, 10])
@pytest.mark.parametrize("sg_size", ["SGS", "(SGS / 2)"], ids=["shuffle", "fallback"])
def test_shuffle_path_with_emulated_subgroups(backend, workspace_for, sg_size, number):
    if backend.name != "opencl":  # the emulation replaces an OpenCL header; CUDA has real warps
        pytest.skip("emulated sub-groups are an OpenCL-source stand-in")
    fake = _EmulatedSubgroups(backend, sg_size, number)
    rung = get_rung(number)
    shapes = [(128, 128, 32)] + ([(100, 70, 37)] if rung.any_size else [])
    for overrides in SHUFFLE_SETS:
        params = rung.resolve(overrides)
        rung.validate(params, fake.device.limits())
        for m, n, k in shapes:
            _check(fake, workspace_for(m, n, k), rung, params)


def _clang() -> str | None:
    return shutil.which("clang-15")


@pytest.mark.skipif(_clang() is None, reason="needs clang-15 for an offline OpenCL syntax check")
@pytest.mark.parametrize("number", [8, 9, 10])
@pytest.mark.parametrize("flavour", ["khr", "intel"])
def test_shuffle_path_compiles_for_real_extensions(tmp_path, flavour, number):
    """PoCL has no sub-groups, so the real extension spellings are checked with clang instead."""
    rung = get_rung(number)
    params = rung.resolve(SHUFFLE_SETS[0])
    src = tmp_path / "k.cl"
    src.write_text((KERNELS / "common.h").read_text() + (KERNELS / rung.file).read_text())
    defines = [f"-D{k}={v}" for k, v in rung.macros(params).items()]
    cmd = [_clang(), "-x", "cl", "-cl-std=CL2.0", "-target", "spir64", "-fsyntax-only",
           "-Werror"]
    if flavour == "khr":
        cmd += ["-Xclang", "-finclude-default-header", "-Xclang", "-fdeclare-opencl-builtins",
                "-Xclang", "-cl-ext=-cl_intel_subgroups"]
    else:
        header = subprocess.run([_clang(), "-print-resource-dir"], capture_output=True,
                                text=True, check=True).stdout.strip() + "/include/opencl-c.h"
        cmd += ["-Xclang", "-cl-ext=+cl_intel_subgroups", "-Dcl_intel_required_subgroup_size=1",
                "-include", header]
    out = subprocess.run(cmd + defines + [str(src)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_show_prints_rung_9(capsys):
    """The build options are the parameters alone; the kernel derives the rest itself."""
    from clgemm.cli import main

    assert main(["show", "9"]) == 0
    text = capsys.readouterr().out
    options = text.split("// build options:")[1].split("//")[0]
    assert "#define TSM 128" in options and "VTSM" not in options
    assert "#define VTSM (TSM / WIDTH)" in text and "gemm_prefetch" in text
    assert "One barrier" in text


def test_stored_parameter_sets_are_completed_or_refused():
    """Tuning entries made before a parameter was added read it at its default (which keeps the
    earlier kernel); entries naming a parameter the rung no longer has do not apply."""
    rung = get_rung(12)
    before_panels = {k: v for k, v in rung.defaults().items() if k != "PANELS"}
    assert rung.complete(before_panels) == rung.defaults()
    assert rung.complete({**before_panels, "PAD": 1}) is None
    assert rung.complete({"TSM": "x"}) is None


# -- the tiled kernel's orders and its cp.async pipeline ----------------------------------------
#: the work-item and tile orders: the grids leave a band of RASTER tile rows short, and the
#: warp blocks cover groups of 64 to 256 work-items
ORDER_SETS = [
    ({"TSM": 64, "TSN": 32, "TSK": 16, "WPTM": 4, "WPTN": 4, "WARP_M": 4}, (320, 96, 48)),
    ({"TSM": 128, "TSN": 64, "TSK": 16, "WPTM": 8, "WPTN": 4, "WARP_M": 8}, (256, 128, 32)),
    ({"TSM": 32, "TSN": 32, "TSK": 16, "WPTM": 4, "WPTN": 4, "RASTER": 3}, (160, 96, 32)),
    ({"TSM": 64, "TSN": 64, "TSK": 16, "WPTM": 8, "WPTN": 4, "WARP_M": 4, "RASTER": 8,
      "VWM": 4, "VWN": 2}, (192, 320, 64)),
]


@pytest.mark.parametrize("overrides,shape", ORDER_SETS, ids=[str(o) for o, _ in ORDER_SETS])
def test_tiled_orders_correct(backend, workspace_for, overrides, shape):
    """Both orders only relabel work: every output still written once, and right."""
    rung = get_rung(12)
    params = rung.resolve(overrides)
    rung.validate(params)   # legal anywhere; the tuner leaves them out on CPUs only
    _check(backend, workspace_for(*shape), rung, params)


#: cp.async pipelines: K of one tile (fewer tiles than stages), of as many tiles as stages and
#: of more; WIDTH 4 copies 16 bytes through L2, 1 and 2 through L1
PIPELINE_SETS = [(s, w) for s in (2, 3, 4) for w in (1, 4)] + [(3, 2)]


@pytest.mark.parametrize("number", [12, 13])
@pytest.mark.parametrize("stages,width", PIPELINE_SETS)
def test_tiled_pipeline_correct(backend, workspace_for, stages, width, number):
    rung = get_rung(number)
    params = rung.resolve({"TSM": 64, "TSN": 64, "TSK": 16, "WPTM": 8, "WPTN": 4,
                           "WIDTH": width, "VWM": 2, "PIPELINE": stages})
    limits = backend.device.limits()
    if not limits.compute_capability_at_least(8):
        with pytest.raises(ConstraintError) as info:
            rung.validate(params, limits)
        assert "cp.async" in info.value.constraint
        pytest.skip("cp.async needs an NVIDIA GPU of compute capability 8.0 or newer")
    rung.validate(params, limits)
    for k in (16, 16 * stages, 16 * stages + 48):
        _check(backend, workspace_for(128, 192, k), rung, params)
    if number == 13:   # the edges: zero-filled copies, vector and float by float
        for shape in ODD_SHAPES + EDGE_SHAPES + [(130, 70, 16 * stages + 5)]:
            _check(backend, workspace_for(*shape), rung, params)


@pytest.mark.parametrize("overrides,constraint", [
    ({"PIPELINE": 1}, "PIPELINE is 0, 2, 3 or 4"),
    ({"PIPELINE": 2, "CACHE_B": 0},
     "PIPELINE=0 or CACHE_A = CACHE_B = 1 and WIDTH 1, 2 or 4 (one copy per vector)"),
    ({"PIPELINE": 2, "WIDTH": 8},
     "PIPELINE=0 or CACHE_A = CACHE_B = 1 and WIDTH 1, 2 or 4 (one copy per vector)"),
    ({"WARP_M": 16}, "WARP_M = 0 or a W x (32/W) block of work-items that changes the order"),
    ({"WARP_M": 3}, "WARP_M = 0 or a W x (32/W) block of work-items that changes the order"),
])
def test_tiled_variants_refused_by_name(overrides, constraint):
    rung = get_rung(12)
    with pytest.raises(ConstraintError) as info:
        rung.validate(rung.resolve(overrides))
    assert info.value.constraint == constraint


def test_pipeline_local_memory_counts_every_stage():
    rung = get_rung(12)
    fits = rung.resolve({"TSM": 64, "TSN": 128, "TSK": 16, "WPTM": 8, "WPTN": 16, "PIPELINE": 4})
    rung.validate(fits, DeviceLimits(local_mem_bytes=48 * 1024, compute_capability="9.0"))
    with pytest.raises(ConstraintError) as info:   # four stages of 12 KiB and more
        rung.validate({**fits, "TSK": 32},
                      DeviceLimits(local_mem_bytes=48 * 1024, compute_capability="9.0"))
    assert info.value.constraint == "local memory <= device local memory"


def _small_tiles(backend):
    """The tiled kernel with 32 x 32 tiles through local memory, which can read B as it lies;
    skipped where it does not fit the device."""
    rung = get_rung(12)
    params = rung.resolve({"TSM": 32, "TSN": 32, "TSK": 16, "WPTM": 4, "WPTN": 4, "WIDTH": 4,
                           "VWM": 4, "VWN": 4})
    if rung.first_violation(params, backend.device.limits(), stages=("device",)):
        pytest.skip("the configuration does not fit this device")
    return rung, params


def _counted_sums(monkeypatch) -> list[int]:
    """The slices of every sum of slices a measurement prepares from now on, in order."""
    from clgemm.configs import launch

    sums: list[int] = []
    real = launch.sum_of_slices

    def counted(backend_, m, n, slices, *args, **kwargs):
        sums.append(slices)
        return real(backend_, m, n, slices, *args, **kwargs)

    monkeypatch.setattr(launch, "sum_of_slices", counted)
    return sums


def test_the_tiled_kernel_is_measured_with_the_split_of_k_gemm_runs(backend, workspace_for,
                                                                    monkeypatch):
    """Where gemm() splits K for the tiled kernel (few tiles of C along a long K, or fewer
    still along a shorter one), its measurement (the tuner's, the bench's) runs the same
    slices and their sum, and the result is right; where gemm() splits nothing, the
    measurement is one launch."""
    from clgemm.configs import splits

    rung, params = _small_tiles(backend)
    sums = _counted_sums(monkeypatch)
    shape = (64, 64, 2048)
    expected = splits.tiled_slices(backend.device.compute_units, params, shape)
    assert expected > 1
    res = run_rung(backend, workspace_for(*shape), rung, params, repeats=1, warmup=0)
    assert res.status == "ok", res.message
    assert sums and set(sums) == {expected}
    sums.clear()
    # along a shorter K, only where the tiles leave most compute units idle (a GPU's, here)
    shape = (64, 64, 1024)
    expected = splits.tiled_slices(backend.device.compute_units, params, shape)
    res = run_rung(backend, workspace_for(*shape), rung, params, repeats=1, warmup=0)
    assert res.status == "ok", res.message
    assert set(sums) == ({expected} if expected > 1 else set())
    sums.clear()
    res = run_rung(backend, workspace_for(64, 64, 256), rung, params, repeats=1, warmup=0)
    assert res.status == "ok", res.message
    assert not sums


def test_the_tiled_kernel_for_any_size_is_measured_in_the_slices_gemm_runs(
        backend, workspace_for, monkeypatch):
    """Where gemm() splits K for the tiled kernel for any size, its measurement runs the same
    slices, whole tiles deep but the last, and their sum, and the result is right at sizes
    nothing divides: M and N off the vector width and on it."""
    from clgemm.configs import splits

    rung = get_rung(13)
    params = rung.resolve({"TSM": 32, "TSN": 32, "TSK": 16, "WPTM": 4, "WPTN": 4, "WIDTH": 4,
                           "VWM": 4, "VWN": 4})
    if rung.first_violation(params, backend.device.limits(), stages=("device",)):
        pytest.skip("the configuration does not fit this device")
    sums = _counted_sums(monkeypatch)
    monkeypatch.setattr(splits, "any_size_slices", lambda units, p, shape: 3)
    for shape in ((45, 70, 131), (64, 36, 200)):
        sums.clear()
        res = run_rung(backend, workspace_for(*shape), rung, params, repeats=1, warmup=0)
        assert res.status == "ok", (shape, res.message)
        assert sums == [3], shape


def _recorded_builds(backend, monkeypatch) -> list[dict]:
    """Every kernel the backend builds from now on, with its macros, in order."""
    built: list[dict] = []
    real = type(backend).program

    def recorded(self, file, macros, kernel):
        built.append({"kernel": kernel, **macros})
        return real(self, file, macros, kernel)

    monkeypatch.setattr(type(backend), "program", recorded)
    return built


def test_the_tiled_kernel_is_measured_reading_b_where_gemm_reads_it(backend, workspace_for,
                                                                    monkeypatch):
    """Where gemm() has the tiled kernel read B as it lies (few rows of C: `read_b_pays`), its
    measurement builds that form (BT_FROM_B) with no transpose before it, alone and with K in
    slices, and is right; where gemm() packs B, the measurement transposes it first."""
    from clgemm.configs import choice, splits

    rung, params = _small_tiles(backend)
    built = _recorded_builds(backend, monkeypatch)
    for pays, shape in ((True, (32, 64, 256)), (True, (32, 64, 4096)), (False, (32, 64, 256))):
        monkeypatch.setattr(choice, "read_b_pays", lambda device, s, pays=pays: pays)
        monkeypatch.setattr(splits, "read_b_pays", lambda device, s, pays=pays: pays)
        built.clear()
        res = run_rung(backend, workspace_for(*shape), rung, params, repeats=1, warmup=0)
        assert res.status == "ok", (shape, pays, res.message)
        mains = [b for b in built if b["kernel"] == rung.kernel]
        assert mains and all(b.get("BT_FROM_B", 0) == int(pays) for b in mains), (shape, mains)
        assert any(b["kernel"] == "transpose" for b in built) != pays
        split = (splits.slices_gemm_decides(backend.device, rung.number, params, shape) or 1) > 1
        assert all(b.get("BATCHED", 0) == int(split) for b in mains), (shape, mains)
        assert split == (shape[2] == 4096 and pays)


def test_the_cpu_in_place_form_is_measured_reading_b_as_it_lies(backend, workspace_for,
                                                               monkeypatch):
    """The tiled kernel's form without local memory or panels is measured as gemm() runs it,
    B read where it lies with no transpose before it, even where `read_b_pays` says no; the
    panel form behind gemm()'s one pack of both operands (B read where it lies there too),
    whose time its measured time counts; both right."""
    from clgemm.configs import choice, splits
    from clgemm.rungs.tiled import CPU_IN_PLACE, CPU_MICRO_KERNEL

    rung = get_rung(12)
    built = _recorded_builds(backend, monkeypatch)
    monkeypatch.setattr(choice, "read_b_pays", lambda device, s: False)
    monkeypatch.setattr(splits, "read_b_pays", lambda device, s: False)
    for form, reads in ((CPU_IN_PLACE, True), (CPU_MICRO_KERNEL, False)):
        params = rung.resolve(dict(form))
        if rung.first_violation(params, backend.device.limits(), stages=("device",)):
            pytest.skip("the CPU forms do not fit this device")
        built.clear()
        res = run_rung(backend, workspace_for(64, 64, 128), rung, params, repeats=1, warmup=0)
        assert res.status == "ok", (form, res.message)
        mains = [b for b in built if b["kernel"] == rung.kernel]
        assert mains and all(b.get("BT_FROM_B", 0) == int(reads) for b in mains), mains
        assert not any(b["kernel"] == "transpose" for b in built)
        assert any(b["kernel"] == "pack_panels_pair" for b in built) != reads
        assert (res.helper_ms is None) == reads
        if not reads:  # each timing is the pack's and the kernel's: none below the pack alone
            assert res.ms is not None and res.ms >= 0.5 * res.helper_ms
