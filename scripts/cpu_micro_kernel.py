"""The tiled kernel's CPU micro-kernel beside the configuration a CPU's tune stored before it,
kernel only, each checked against float64 with C poisoned first (`run_rung`), with NumPy's
matmul in the same window: a 16 x 16 (or 32 x 8) block of sums per work-item in 16-float
vectors, one work-item a group, A and BT read from panels. Run it with the kernel file as it
is and as it was before its register block was unrolled to see what the unrolling gives.
Usage: python scripts/cpu_micro_kernel.py DEVICE SIZE [SIZE...]"""

import sys
import time

import numpy as np

from clgemm.core.problem import Problem
from clgemm.library import gemm as api
from clgemm.measure.rung_runner import Workspace, run_rung
from clgemm.rungs.tiled import CPU_MICRO_KERNEL, TILED

be = api.backend_for(sys.argv[1], "opencl")
PANELS = {"CACHE_A": 0, "CACHE_B": 0, "PANELS": 1, "LOCKSTEP": 0, "VWN": 1, "WIDTH": 4}
CONFIGS = {
    "micro-kernel 16x16 (the tune's CPU seed)": CPU_MICRO_KERNEL,
    "micro-kernel 16x16, TSK=16": {**CPU_MICRO_KERNEL, "TSK": 16},
    "micro-kernel 32x8": {**PANELS, "TSM": 32, "TSN": 8, "TSK": 32, "WPTM": 32, "WPTN": 8,
                          "VWM": 16},
    "stored before, 64x16 blocks of 8x16 (LOCKSTEP)": {
        **PANELS, "TSM": 64, "TSN": 16, "TSK": 32, "WPTM": 8, "WPTN": 16, "VWM": 8,
        "WIDTH": 8, "LOCKSTEP": 1},
}
print(f"# {be.device.name}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}", flush=True)
for size in map(int, sys.argv[2:]):
    ws = Workspace(be, Problem(size, size, size))
    for name, params in CONFIGS.items():
        r = run_rung(be, ws, TILED, TILED.resolve(dict(params)), repeats=5, warmup=2)
        got = f"{r.gflops:7.1f} GFLOP/s" if r.ok else f"{r.status}: {r.message[:80]}"
        print(f"{size}^3  {name:<48} {got}", flush=True)
    a = np.random.default_rng(0).standard_normal((size, size), dtype=np.float32)
    np.matmul(a, a)
    t0 = time.perf_counter()
    for _ in range(3):
        np.matmul(a, a)
    print(f"{size}^3  {'NumPy matmul':<48} {2 * size**3 * 3 / (time.perf_counter() - t0) / 1e9:7.1f}"
          f" GFLOP/s", flush=True)
