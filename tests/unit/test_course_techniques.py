"""The beyond page's table of techniques, read from sweep files as scripts/large_tile_sweep.py
writes them."""

from __future__ import annotations

from pathlib import Path

from clgemm.course.techniques import techniques_block

SWEEP = """# header line of the committed file
# Some GPU (cuda), 2026-11-25 04:05 UTC
4096^3: cuBLAS SGEMM (FP32, TF32 off) 50,000 GFLOP/s (ok)
     40,000 GFLOP/s  stored       TSM=64 TSN=128 PIPELINE=0
 the order of the tiles and of the work-items, on the stored configuration:
     41,000 GFLOP/s  R0 W4        TSM=64 TSN=128 WARP_M=4 PIPELINE=0
 block tiles of 256 x 128 and 128 x 256:
     39,000 GFLOP/s  256x128      TSM=256 TSN=128 PIPELINE=0
 cp.async pipelines (PIPELINE stages), on the stored configuration and on the best:
     44,000 GFLOP/s  P2           TSM=64 TSN=128 PIPELINE=2
 best of 4 at 4096^3:
     99,000 GFLOP/s (1.100x stored)  P2  TSM=64 TSN=128 PIPELINE=2
8192^3: cuBLAS SGEMM (FP32, TF32 off) 52,000 GFLOP/s (ok)
     60,000 GFLOP/s  stored       TSM=64 TSN=128 PIPELINE=0
"""


def test_each_technique_against_the_stored_configuration(tmp_path: Path):
    (tmp_path / "results" / "gpu").mkdir(parents=True)
    (tmp_path / "results" / "gpu" / "sweep-cuda-abc.txt").write_text(SWEEP)
    block = techniques_block(tmp_path)
    row = next(line for line in block.splitlines() if line.startswith("| Some GPU"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[:3] == ["Some GPU (CUDA)", "4096³", "40,000"]
    assert cells[3:6] == ["41,000 (1.02×)", "39,000 (0.97×)", "44,000 (1.10×)"]
    # the summary's repeated lines and the next size are not the sweep's own measurements
    assert cells[6:9] == ["44,000", "cuBLAS SGEMM (FP32, TF32 off): 50,000", "0.88×"]
    assert "(../results/gpu/sweep-cuda-abc.txt)" in cells[9]


def test_no_sweep_says_so(tmp_path: Path):
    (tmp_path / "results").mkdir()
    assert "No sweep" in techniques_block(tmp_path)
