"""Whether a first call's trial leaves the repeated calls after it slower: microseconds per
call of gemm() into a given C on device arrays, the same call repeated, in a process whose
first call ran its trial (clgemm/library/trial.py) or not. Run in turns, one process each:
    python scripts/trial_after.py DEVICE BACKEND SIZE on|off"""

import statistics
import sys
import time

from square_call import square_call

import clgemm
from clgemm.library import trial

dev, backend, n, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
trial.ENABLED = mode == "on"
side, a, b, c = square_call(dev, backend, n)
rounds = []
for _ in range(7):
    t0 = time.perf_counter()
    for _ in range(200):
        clgemm.gemm(a, b, c)
    side.sync()
    rounds.append((time.perf_counter() - t0) / 200 * 1e6)
print(f"{backend} {n}^3 trial {mode}: {statistics.median(rounds):.1f} us a call "
      f"(rounds: {', '.join(f'{r:.1f}' for r in rounds)})", flush=True)
