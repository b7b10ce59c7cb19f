"""The tiled kernel as gemm() runs it at 4096 cubed (C-ordered CuPy arrays, C given), three calls,
for Nsight Compute to profile one of them: where the issue slots of the last fifth below the
bound go. From the repository root on an NVIDIA machine:

    PYTHONPATH=$PWD:$PYTHONPATH ncu --kernel-name regex:gemm_tiled --launch-skip 1 \\
        --launch-count 1 --section SpeedOfLight --section Occupancy --section LaunchStats \\
        --section WarpStateStats --section SchedulerStats --section InstructionStats \\
        --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \\
        python3 scripts/ncu_large.py
"""

import cupy as cp

import clgemm

a = cp.random.rand(4096, 4096, dtype=cp.float32)
b = cp.random.rand(4096, 4096, dtype=cp.float32)
c = cp.empty((4096, 4096), cp.float32)
for _ in range(3):
    clgemm.gemm(a, b, c)
cp.cuda.Device().synchronize()
