"""Where the host time of one gemm() call goes, on device arrays: cProfile over repeated calls,
per backend and shape. Usage: python scripts/profile_call.py DEVICE BACKEND M N K [CALLS] [c]
($ROWS: how many rows of the profile to show, 14 by default). What the launches alone cost, by
each way a backend offers to queue them, is scripts/launch_floor.py's."""

import cProfile
import os
import pstats
import sys
import time

import numpy as np

import clgemm
from clgemm.library import gemm as api
from clgemm.measure.call_bench import Side

dev, backend_name, m, n, k = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:6])
calls = int(sys.argv[6]) if len(sys.argv) > 6 else 300
#: "c": every call writes into one C it is given; else each call makes a new C
given = len(sys.argv) > 7 and sys.argv[7] == "c"
be = api.backend_for(dev, backend_name)
side = Side(be, "device")
rng = np.random.default_rng(0)
a = side.put(rng.standard_normal((m, k), dtype=np.float32))
b = side.put(rng.standard_normal((k, n), dtype=np.float32))
c = side.put(np.zeros((m, n), np.float32)) if given else None
for _ in range(5):
    clgemm.gemm(a, b, c)
side.sync()
t0 = time.perf_counter()
for _ in range(calls):
    clgemm.gemm(a, b, c)
host = time.perf_counter() - t0
side.sync()
total = time.perf_counter() - t0
print(f"{backend_name} {m}x{n}x{k}: host {host / calls * 1e6:.1f} us per call, "
      f"with the device drained {total / calls * 1e6:.1f} us per call")
prof = cProfile.Profile()
prof.enable()
for _ in range(calls):
    clgemm.gemm(a, b, c)
prof.disable()
side.sync()
pstats.Stats(prof).sort_stats("tottime").print_stats(int(os.environ.get("ROWS", "14")))
