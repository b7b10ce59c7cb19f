"""Whether a first call's trial leaves the repeated calls after it slower: microseconds per
call of gemm() into a given C on device arrays, the same call repeated, in a process whose
first call ran its trial (clgemm/library/trial.py) or not. Run in turns, one process each:
    python scripts/trial_after.py DEVICE BACKEND SIZE on|off"""

import statistics
import sys
import time

import numpy as np

import clgemm
from clgemm.library import gemm as api
from clgemm.library import trial
from clgemm.measure.call_bench import Side

dev, backend, n, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
trial.ENABLED = mode == "on"
be = api.backend_for(dev, backend)
side = Side(be, "device")
rng = np.random.default_rng(0)
a, b = (side.put(rng.standard_normal((n, n), dtype=np.float32)) for _ in range(2))
c = side.put(np.zeros((n, n), np.float32))
clgemm.gemm(a, b, c)
side.sync()
rounds = []
for _ in range(7):
    t0 = time.perf_counter()
    for _ in range(200):
        clgemm.gemm(a, b, c)
    side.sync()
    rounds.append((time.perf_counter() - t0) / 200 * 1e6)
print(f"{backend} {n}^3 trial {mode}: {statistics.median(rounds):.1f} us a call "
      f"(rounds: {', '.join(f'{r:.1f}' for r in rounds)})", flush=True)
