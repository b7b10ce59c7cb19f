"""Fewer local loads per FMA in the tiled kernel, kernel only, against cuBLAS in turns. Under
Nsight Compute the tiled kernel lost to cuBLAS's kernel only in its instruction mix: 0.097 local
loads per FMA instruction against 0.047 (results/h100/gap-account). A larger register block per
work-item, or wider reads of A, issues fewer. This script measures such configurations near the
stored one.

First round: the stored configuration at the first size, then every legal configuration of
the blocks below, with each width of A's reads, two tile depths and two cp.async pipelines
(the stored order of tiles), once each. Then the stored configuration and the first round's best, ROUNDS
rounds in turns at every size, with cuBLAS's SGEMM (FP32, TF32 off) timed through the CUDA
backend between them in the same process. Every result is checked against float64 with C
poisoned first (`run_rung`, `vendor_reference`). The times are the tiled kernel's own, without
the transpose of B that gemm() runs before it (`clgemm bench` adds that).
Usage: python scripts/register_block_sweep.py DEVICE BACKEND ROUNDS SIZE [SIZE...]"""

import itertools
import statistics
import sys

from vendor_turns import backends, vendor_round, workspaces

from clgemm.configs import lookup
from clgemm.core.problem import Problem
from clgemm.measure.rung_runner import Workspace, run_rung
from clgemm.model.inner_loops import step_for
from clgemm.rungs.tiled import TILED, warp_block_fits

dev, backend_name, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
sizes = [int(s) for s in sys.argv[4:]]
be, cuda = backends(dev, backend_name)

#: (TSM, TSN, WPTM, WPTN): the stored block's, and blocks of 128 sums per work-item
BLOCKS = [(64, 64, 8, 8), (128, 64, 16, 8), (64, 128, 8, 16), (128, 128, 16, 8),
          (128, 128, 8, 16), (256, 128, 16, 8), (128, 256, 8, 16)]


def legal(p: dict) -> bool:
    full = TILED.resolve(p)
    return warp_block_fits(full) and TILED.first_violation(full, be.device.limits()) is None


def loads_per_fma(p: dict) -> float:
    step = step_for(TILED, TILED.resolve(p)).in_loads_of(4)
    return step.loads / step.fmas


def text(p: dict) -> str:
    full = TILED.resolve(p)
    keys = ("TSM", "TSN", "TSK", "WPTM", "WPTN", "VWM", "VWN", "PIPELINE", "RASTER", "UNROLL_K")
    return " ".join(f"{k}={full[k]}" for k in keys)


def measure(ws: Workspace, p: dict, repeats: int) -> float:
    r = run_rung(be, ws, TILED, p, repeats=repeats, warmup=2)
    if not r.ok:
        print(f"  {r.status:>15}  {text(p)}: {r.message[:100]}", flush=True)
        return 0.0
    return r.gflops or 0.0


def candidates(base: dict) -> list[dict]:
    out = []
    for (tm, tn, wm, wn), vm, tk, stages in itertools.product(BLOCKS, (2, 4, 8), (8, 16), (2, 3)):
        p = {**base, "TSM": tm, "TSN": tn, "WPTM": wm, "WPTN": wn, "VWM": vm,
             "VWN": min(8, wn), "TSK": tk, "PIPELINE": stages, "UNROLL_K": 1, "WARP_M": 0}
        if vm <= wm and legal(p) and p not in out:
            out.append(p)
    return out


first = Problem(sizes[0], sizes[0], sizes[0])
found = lookup.best(be.device, TILED, first.as_tuple())
stored = TILED.resolve(dict(found.params)) if found else TILED.resolve({})
ws = Workspace(be, first)
trials = candidates(stored)
print(f"{sizes[0]}^3, first round: the stored configuration and {len(trials)} others", flush=True)
scored = [(measure(ws, stored, 5), stored)]
print(f"  {scored[0][0]:9,.0f} GFLOP/s  {loads_per_fma(stored):.3f} loads/FMA  stored  "
      f"{text(stored)}", flush=True)
for p in trials:
    g = measure(ws, p, 5)
    if g:
        scored.append((g, p))
        print(f"  {g:9,.0f} GFLOP/s  {loads_per_fma(p):.3f} loads/FMA  {text(p)}", flush=True)
del ws
best = [p for _, p in sorted(scored[1:], key=lambda s: -s[0])[:5]]
for size in sizes:
    problem = Problem(size, size, size)
    ws, ref_ws = workspaces(be, cuda, problem)
    runs: dict[str, list[float]] = {}
    vendor = "vendor"
    for _ in range(rounds):
        vendor = vendor_round(cuda, ref_ws, runs)
        for i, p in enumerate([stored, *best]):
            runs.setdefault(f"{'stored' if not i else i}|{text(p)}", []).append(
                measure(ws, p, 10))
    cublas = statistics.median(runs.pop("vendor"))
    print(f"{size}^3 in {rounds} rounds of turns: {vendor} median {cublas:,.0f} GFLOP/s",
          flush=True)
    for key, values in runs.items():
        label, config = key.split("|")
        med = statistics.median(values)
        print(f"  {med:9,.0f} GFLOP/s  {med / cublas:.3f}x vendor  {label:<6}  {config}  "
              f"(rounds: {' '.join(f'{v:,.0f}' for v in values)})", flush=True)
    del ws, ref_ws
