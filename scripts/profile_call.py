"""Where the host time of one gemm() call goes, on device arrays: cProfile over repeated calls,
per backend and shape. Usage: python scripts/profile_call.py DEVICE BACKEND M N K [CALLS] [c]
($ROWS: how many rows of the profile to show, 14 by default)"""

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

# The floor under any call in Python: the remembered program's launches alone, queued with
# their arguments already bound, as many times, and drained once.
hot = next(iter(api.CACHE.hot.values()), None)
if hot is not None and c is not None:
    kind = hot.kind
    x, y = (b, a) if hot.swap else (a, b)
    bound = {"a": kind.kernel_arg(x), "b": kind.kernel_arg(y), "c": kind.kernel_arg(c)}
    steps = []
    for launch, slots in zip(hot.program.launches, hot.program.slots):
        args = list(launch.args)
        for i, slot in slots:
            args[i] = bound.get(slot.name, args[i])
        steps.append((launch.kernel, launch.global_size, launch.local_size, args))
    if not hot.program.scratch:
        queue = kind.queue_for(be, [("a", a), ("b", b), ("c", c)])
        side.sync()
        t0 = time.perf_counter()
        for _ in range(calls):
            for step in steps:
                be.enqueue(*step, queue)
        side.sync()
        print(f"{backend_name} {m}x{n}x{k}: the {len(steps)} launch(es) alone "
              f"{(time.perf_counter() - t0) / calls * 1e6:.1f} us per call")
