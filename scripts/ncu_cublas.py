"""cuBLAS's FP32 SGEMM (TF32 off) at SIZE cubed through CuPy, C-ordered, C given, three calls,
for Nsight Compute to profile one of them beside the tiled kernel (`ncu_large.py`): the same
sections for both, so the issue slots, instructions and occupancy of the two can be set side by
side. From the repository root on an NVIDIA machine:

    ncu --kernel-name regex:gemm --launch-skip 1 --launch-count 1 --section SpeedOfLight \\
        --section Occupancy --section LaunchStats --section WarpStateStats \\
        --section SchedulerStats --section InstructionStats --section ComputeWorkloadAnalysis \\
        --section MemoryWorkloadAnalysis python3 scripts/ncu_cublas.py [SIZE]

SIZE: the product's M = N = K (default 4096).
"""

import sys

import cupy as cp

size = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
a = cp.random.rand(size, size, dtype=cp.float32)
b = cp.random.rand(size, size, dtype=cp.float32)
c = cp.empty((size, size), cp.float32)
for _ in range(3):
    cp.matmul(a, b, out=c)
cp.cuda.Device().synchronize()
