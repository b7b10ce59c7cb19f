"""gemm(a, b) on NumPy arrays on a CPU device, a new C per call: the median and fastest of 12
calls, then each launch's device time in one more (the launch log), from whichever package
is first on PYTHONPATH. Run in turns with two packages to compare them on a noisy machine:
    python scripts/numpy_call_launches.py DEVICE SIZE"""

import statistics
import sys
import time

import numpy as np

import clgemm
from clgemm.library import gemm as api

device, n = sys.argv[1], int(sys.argv[2])
be = api.backend_for(device)
rng = np.random.default_rng(0)
a = rng.standard_normal((n, n), dtype=np.float32)
b = rng.standard_normal((n, n), dtype=np.float32)
clgemm.gemm(a, b, device=device)
walls = []
for _ in range(12):
    t0 = time.perf_counter()
    clgemm.gemm(a, b, device=device)
    walls.append((time.perf_counter() - t0) * 1e3)
with be.observe() as log:
    clgemm.gemm(a, b, device=device)
launches = ", ".join(f"{name} {ms:.2f}" for name, ms in log.times())
print(f"{n}^3 from {clgemm.__file__.rsplit('/', 3)[-3]}: call median {statistics.median(walls):.2f} "
      f"ms, fastest {min(walls):.2f}; launches (ms): {launches}", flush=True)
