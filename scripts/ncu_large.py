"""The tiled kernel as gemm() runs it at SIZE cubed (C-ordered CuPy arrays, C given), three calls,
for Nsight Compute to profile one of them: where the issue slots of the last fifth below the
bound go. From the repository root on an NVIDIA machine:

    PYTHONPATH=$PWD:$PYTHONPATH ncu --kernel-name regex:gemm_tiled --launch-skip 1 \\
        --launch-count 1 --section SpeedOfLight --section Occupancy --section LaunchStats \\
        --section WarpStateStats --section SchedulerStats --section InstructionStats \\
        --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \\
        python3 scripts/ncu_large.py [SIZE]

SIZE: the product's M = N = K (default 4096).
"""

import sys

import cupy as cp

import clgemm

size = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
a = cp.random.rand(size, size, dtype=cp.float32)
b = cp.random.rand(size, size, dtype=cp.float32)
c = cp.empty((size, size), cp.float32)
for _ in range(3):
    clgemm.gemm(a, b, c)
cp.cuda.Device().synchronize()
