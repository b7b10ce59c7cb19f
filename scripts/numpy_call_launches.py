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


def timed_calls(device: str, n: int, calls: int):
    """Square operands of side `n`, the wall times (ms) of `calls` calls after a first one, and
    the launch log's (kernel, ms) of one more call."""
    be = api.backend_for(device)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    clgemm.gemm(a, b, device=device)
    walls = []
    for _ in range(calls):
        t0 = time.perf_counter()
        clgemm.gemm(a, b, device=device)
        walls.append((time.perf_counter() - t0) * 1e3)
    with be.observe() as log:
        clgemm.gemm(a, b, device=device)
    return a, b, walls, log.times()


if __name__ == "__main__":
    device, n = sys.argv[1], int(sys.argv[2])
    _, _, walls, times = timed_calls(device, n, 12)
    launches = ", ".join(f"{name} {ms:.2f}" for name, ms in times)
    print(f"{n}^3 from {clgemm.__file__.rsplit('/', 3)[-3]}: call median "
          f"{statistics.median(walls):.2f} ms, fastest {min(walls):.2f}; launches (ms): "
          f"{launches}", flush=True)
