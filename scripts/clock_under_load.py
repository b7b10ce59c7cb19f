"""The GPU's SM clock, power and throttle reasons while an SGEMM runs back to back: cuBLAS
through CuPy, and gemm() on the CUDA path and through OpenCL, each for a few seconds at one
size, with nvidia-smi sampling beside it. The bound (`clgemm model`) counts the device's
highest clock; what each kernel sustains under its own load is part of where its last fifth
goes. Usage: python scripts/clock_under_load.py DEVICE SIZE [SIZE...] (SECONDS=4 each)"""

import os
import statistics
import subprocess
import sys
import time

import cupy as cp
import numpy as np

import clgemm
from clgemm.library import gemm as api
from clgemm.measure.call_bench import Side

FIELDS = "clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active"
seconds = float(os.environ.get("SECONDS_EACH", "4"))


def sampled(run, sync):
    """Calls per second of `run` over `seconds`, and the nvidia-smi samples taken meanwhile."""
    for _ in range(3):
        run()
    sync()
    smi = subprocess.Popen(["nvidia-smi", f"--query-gpu={FIELDS}", "--format=csv,noheader,nounits",
                            "-lms", "50"], stdout=subprocess.PIPE, text=True)
    time.sleep(0.3)
    calls, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for _ in range(5):
            run()
        calls += 5
        sync()
    wall = time.perf_counter() - t0
    smi.terminate()
    out, _ = smi.communicate()
    rows = [r.split(", ") for r in out.strip().splitlines() if r.count(",") == 3]
    # the samples of the busy window: the first and last few straddle its edges
    rows = rows[4:-2] if len(rows) > 8 else rows
    return calls / wall, rows


def report(label, size, per_s, rows):
    mhz = [float(r[0]) for r in rows]
    watts = [float(r[1]) for r in rows]
    reasons = sorted({r[3] for r in rows})
    tflops = 2 * size**3 * per_s / 1e12
    print(f"{size}^3 {label:<22} {tflops:6.2f} TFLOP/s  SM clock median {statistics.median(mhz):6.0f} "
          f"MHz (min {min(mhz):.0f}, max {max(mhz):.0f})  power median {statistics.median(watts):5.0f} W"
          f"  temperature {rows[-1][2]} C  throttle reasons {' '.join(reasons)}  "
          f"({len(rows)} samples)", flush=True)


dev = sys.argv[1]
for size in map(int, sys.argv[2:]):
    rng = np.random.default_rng(0)
    ha = rng.standard_normal((size, size), dtype=np.float32)
    hb = rng.standard_normal((size, size), dtype=np.float32)
    a, b, c = cp.asarray(ha), cp.asarray(hb), cp.empty((size, size), cp.float32)
    sync = cp.cuda.Device().synchronize
    report("cuBLAS (cp.matmul)", size, *sampled(lambda: cp.matmul(a, b, out=c), sync))
    report("gemm(), CUDA path", size, *sampled(lambda: clgemm.gemm(a, b, c), sync))
    del a, b, c
    cp.get_default_memory_pool().free_all_blocks()
    side = Side(api.backend_for(dev, "opencl"), "device")
    oa, ob, oc = side.put(ha), side.put(hb), side.put(np.zeros((size, size), np.float32))
    report("gemm(), OpenCL", size, *sampled(lambda: clgemm.gemm(oa, ob, oc), side.sync))
    del oa, ob, oc
