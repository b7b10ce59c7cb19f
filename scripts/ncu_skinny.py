"""The skinny kernel as gemm() runs it at 4096x32x4096 (C-ordered CuPy arrays, C given), three
calls, for Nsight Compute to profile one of them. From the repository root on an NVIDIA machine:

    PYTHONPATH=$PWD:$PYTHONPATH ncu --kernel-name regex:gemm_skinny --launch-skip 1 \\
        --launch-count 1 --section SpeedOfLight --section Occupancy --section LaunchStats \\
        --section MemoryWorkloadAnalysis --section WarpStateStats \\
        --section ComputeWorkloadAnalysis --section SchedulerStats python3 scripts/ncu_skinny.py
"""

import cupy as cp

import clgemm

a = cp.random.rand(4096, 4096, dtype=cp.float32)
b = cp.random.rand(4096, 32, dtype=cp.float32)
c = cp.empty((4096, 32), cp.float32)
for _ in range(3):
    clgemm.gemm(a, b, c)
cp.cuda.Device().synchronize()
