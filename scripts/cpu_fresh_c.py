"""What a CPU device's gemm() call on NumPy arrays pays for a new C: the call allocating C, the
call into one C given every time, and the call into a C allocated and written by the host just
before (its pages made present in one thread, that time counted), beside NumPy's matmul; median
of 9 calls each, after one call of each. Usage: python scripts/cpu_fresh_c.py DEVICE SIZE [SIZE...]"""

import statistics
import sys
import time

import numpy as np

import clgemm

dev = sys.argv[1]


def median_ms(f) -> float:
    f()
    times = []
    for _ in range(9):
        t0 = time.perf_counter()
        f()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def prefaulted(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    c = np.empty((a.shape[0], b.shape[1]), np.float32)
    c.fill(0.0)
    return clgemm.gemm(a, b, c=c, device=dev)


for size in map(int, sys.argv[2:]):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((size, size), dtype=np.float32)
    b = rng.standard_normal((size, size), dtype=np.float32)
    given = np.empty((size, size), np.float32)
    rows = {"new C": lambda: clgemm.gemm(a, b, device=dev),
            "C given": lambda: clgemm.gemm(a, b, c=given, device=dev),
            "C written by the host first": lambda: prefaulted(a, b),
            "NumPy": lambda: a @ b}
    print(f"{size}^3: " + "; ".join(f"{k} {median_ms(f):.2f} ms" for k, f in rows.items()),
          flush=True)
