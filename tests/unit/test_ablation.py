"""The techniques taken out of a stored configuration one at a time (clgemm.tuner.ablation)
and the beyond page's table read back from a run's report (clgemm.course.ablation)."""

from __future__ import annotations

from pathlib import Path

from clgemm.course.ablation import ablation_block
from clgemm.tuner.ablation import MEASURED, TECHNIQUES, variants
from clgemm.rungs.tiled import CPU_MICRO_KERNEL, TILED

GPU_STORED = {"TSM": 64, "TSN": 64, "TSK": 16, "WPTM": 8, "WPTN": 8, "WIDTH": 4, "VWM": 2,
              "VWN": 8, "CACHE_A": 1, "CACHE_B": 1, "PIPELINE": 2, "RASTER": 8, "UNROLL_K": 1}


def _labels(params: dict) -> list[str]:
    return [t.label for t, _ in variants(TILED.resolve(params))]


def test_a_gpu_configuration_loses_each_of_its_techniques_and_only_those():
    assert _labels(GPU_STORED) == [
        "register vectors (VWM, VWN)", "wide loads (WIDTH)", "local memory (CACHE_A, CACHE_B)",
        "cp.async pipeline (PIPELINE)", "orders (RASTER, WARP_M)",
        "tile depth unrolled (UNROLL_K)"]


def test_a_cpu_micro_kernel_loses_its_own_techniques():
    # no local memory, so its WIDTH (the width of loads into local memory) reads nothing
    assert _labels(CPU_MICRO_KERNEL) == ["register vectors (VWM, VWN)", "no local memory",
                                         "panels (PANELS)"]


def test_each_variant_differs_from_the_stored_one_and_is_a_valid_configuration():
    for stored in (GPU_STORED, CPU_MICRO_KERNEL, {**CPU_MICRO_KERNEL, "LOCKSTEP": 1}):
        full = TILED.resolve(stored)
        for technique, without in variants(full):
            resolved = TILED.resolve(without)
            assert resolved != full, technique.label
            assert not technique.uses(resolved), technique.label
            assert TILED.first_violation(resolved, None) is None, technique.label


RUN = """# pthread-some-cpu (PoCL 3.1, 2 cores), 2026-11-27, at commit abc: python scripts/...
# pthread-some-cpu (opencl), 2026-11-27 03:40 UTC, 3 rounds
1024^3: CLBlast SGEMM 14 GFLOP/s (ok)
        150 GFLOP/s  stored :: TSM=16 PANELS=1 :: rounds 140 150 160
         30 GFLOP/s  without: register vectors (VWM, VWN) :: TSM=16 VWM=1 :: rounds 30 31 29
        100 GFLOP/s  without: panels (PANELS) :: TSM=16 PANELS=0 :: rounds 90 100 110
     build-failed  without: no local memory :: TSM=16 CACHE_A=1: error
2048^3: CLBlast SGEMM 9 GFLOP/s (ok)
        999 GFLOP/s  stored :: TSM=16 PANELS=1 :: rounds 999
"""


def test_the_table_gives_what_each_technique_adds_at_the_first_size(tmp_path: Path):
    (tmp_path / "results" / "cpu").mkdir(parents=True)
    (tmp_path / "results" / "cpu" / "ablation-2core-abc.txt").write_text(RUN)
    block = ablation_block(tmp_path)
    row = next(line for line in block.splitlines() if line.startswith("| pthread-some-cpu"))
    cells = dict(zip(["device", "size", "stored", *(t.label for t in TECHNIQUES), "run"],
                     (c.strip() for c in row.strip("|").split("|"))))
    assert (cells["device"], cells["size"], cells["stored"]) == (
        "pthread-some-cpu (OpenCL)", "1024³", "150")
    assert cells["register vectors (VWM, VWN)"] == "30 (5.00×)"
    assert cells["panels (PANELS)"] == "100 (1.50×)"
    assert cells["no local memory"] == "build-failed"
    assert cells["cp.async pipeline (PIPELINE)"] == ""
    assert "(../results/cpu/ablation-2core-abc.txt)" in cells["run"]


def test_a_measured_line_keeps_its_rounds():
    m = MEASURED.match("        150 GFLOP/s  stored :: TSM=16 PANELS=1 :: rounds 140 150 160")
    assert m is not None and m.group(4) == "TSM=16 PANELS=1" and m.group(5) == "140 150 160"


def test_no_run_says_so(tmp_path: Path):
    (tmp_path / "results").mkdir()
    assert "No run" in ablation_block(tmp_path)
