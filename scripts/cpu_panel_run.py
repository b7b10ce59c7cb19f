"""How many columns of a panel each work-item of the panels' pack should copy
(`clgemm.configs.launch.PANEL_RUN`) on a CPU device: gemm(a, b, out=c) at N cubed on NumPy
arrays with each value of RUNS in turn, ROUNDS rounds of two warm calls and three observed
ones each; printed per value: the pack's device time (median, fastest) and the call's wall
time (median). The last result is checked against NumPy.
    python scripts/cpu_panel_run.py DEVICE RUNS N ROUNDS     e.g. xeon 64,256,1024 2048 6"""
import sys, time, statistics
import numpy as np
import clgemm
from clgemm.configs import launch
from clgemm.library import gemm as api
dev = sys.argv[1]; runs = [int(x) for x in sys.argv[2].split(",")]; n = int(sys.argv[3]); rounds = int(sys.argv[4])
be = api.backend_for(dev)
rng = np.random.default_rng(0)
a = rng.standard_normal((n, n), dtype=np.float32); b = rng.standard_normal((n, n), dtype=np.float32)
c = np.empty((n, n), np.float32)
packs = {r: [] for r in runs}; walls = {r: [] for r in runs}
for rnd in range(rounds):
    for run in runs:
        launch.PANEL_RUN = run; api.clear_caches()
        for _ in range(2): clgemm.gemm(a, b, out=c, device=dev)
        for _ in range(3):
            with be.observe() as log:
                t = time.perf_counter(); clgemm.gemm(a, b, out=c, device=dev); walls[run].append((time.perf_counter() - t) * 1e3)
            packs[run].append(log.times()[0][1])
assert np.allclose(c, a @ b, rtol=1e-3, atol=1e-2)
for run in runs:
    print(f"{n} PANEL_RUN={run}: pack median {statistics.median(packs[run]):.3f} ms (min {min(packs[run]):.3f}), call {statistics.median(walls[run]):.2f}")
