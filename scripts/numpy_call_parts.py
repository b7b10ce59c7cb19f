"""Where the time of gemm() on NumPy arrays goes on a CPU device: the call's wall time, each
launch's device time (the launch log), and the host functions that take the most time
(cProfile). Usage: python scripts/numpy_call_parts.py DEVICE SIZE [SIZE...]"""

import cProfile
import pstats
import statistics
import sys

from numpy_call_launches import timed_calls

import clgemm
from clgemm.library import gemm as api

dev = sys.argv[1]
be = api.backend_for(dev)
for size in map(int, sys.argv[2:]):
    a, b, walls, launches = timed_calls(dev, size, 5)
    print(f"{size}^3 on {be.device.name}: call {statistics.median(walls):.1f} ms (median of 5: "
          f"{', '.join(f'{w:.1f}' for w in walls)}); launches "
          + ", ".join(f"{name} {ms:.2f} ms" for name, ms in launches)
          + f" (sum {sum(ms for _, ms in launches):.1f} ms)", flush=True)
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(3):
        clgemm.gemm(a, b, device=dev)
    prof.disable()
    pstats.Stats(prof).sort_stats("tottime").print_stats(8)
