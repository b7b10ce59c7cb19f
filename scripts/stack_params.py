"""How fast the direct kernel multiplies a stack with the parameters gemm() chooses for it (a
stack's entry where one is stored, else those of one product's shape), and with others of its
space: a sample of the configurations the tuner's funnel keeps for one product, each timed on
the whole stack (device events, median of 5), beside the array library's own batched product
where there is one (cp.matmul on CUDA).
Usage: python scripts/stack_params.py DEVICE BACKEND [SAMPLE|all] [SECONDS] [COUNTxSIZE,...]
[TSK,...]: SECONDS bounds each stack's sweep (its configurations in random order), the stacks
default to the three of `bench --call --sizes stacks`, and TSK replaces the tile depths the
space offers (64 lets a 64 cubed product take its whole K in one tile)."""

import random
import statistics
import sys
import time

import numpy as np

from clgemm.configs.launch import prepare_stack
from clgemm.core.errors import BuildError, LaunchError
from clgemm.core.problem import Problem
from clgemm.library import gemm as api
from clgemm.library.stack_launch import stack_kernel
from clgemm.rungs.direct import DIRECT
from clgemm.tuner.space import build_space

STACKS = [(1000, 64), (100, 256), (10, 1024)]
dev, backend_name = sys.argv[1], sys.argv[2]
sample = (10 ** 9 if sys.argv[3] == "all" else int(sys.argv[3])) if len(sys.argv) > 3 else 40
seconds = float(sys.argv[4]) if len(sys.argv) > 4 else float("inf")
if len(sys.argv) > 5:
    STACKS = [tuple(map(int, x.split("x"))) for x in sys.argv[5].split(",")]
only = {"TSK": tuple(map(int, sys.argv[6].split(",")))} if len(sys.argv) > 6 else None
be = api.backend_for(dev, backend_name)
rng = np.random.default_rng(0)


def timed(params, count, s, bufs) -> float | None:
    try:
        stack = prepare_stack(be, DIRECT, params, s, s, s, count, *bufs)
        return statistics.median(stack.time_main(be) for _ in range(5))
    except (BuildError, LaunchError):
        return None


for count, s in STACKS:
    floats = count * s * s
    bufs = [be.to_device(rng.standard_normal(floats, dtype=np.float32)) for _ in range(2)]
    bufs.append(be.alloc(floats))
    flop = 2.0 * count * s ** 3
    chosen = stack_kernel(be, s, s, s, count).params
    space = build_space(DIRECT, be.device.limits(), Problem(s, s, s), only=only)
    picks = random.Random(s).sample(space.configs, min(sample, len(space.configs)))
    results = []
    t0 = time.perf_counter()
    for config in picks:
        if time.perf_counter() - t0 > seconds:
            break
        params = dict(zip(space.names, config))
        ms = timed(params, count, s, bufs)
        if ms is not None:
            results.append((ms, params))
    results.sort(key=lambda r: r[0])
    ms = timed(chosen, count, s, bufs)
    line = (f"{backend_name} {count} x {s}^3: chosen {chosen} {flop / ms / 1e6:,.0f} GFLOP/s; "
            f"best of {len(results)} timed (of {len(picks)} drawn from {len(space.configs)}) "
            f"{results[0][1]} {flop / results[0][0] / 1e6:,.0f}")
    for r_ms, r_params in results[1:5]:
        line += f"\n    next: {r_params} {flop / r_ms / 1e6:,.0f}"
    if backend_name == "cuda":
        import cupy
        a = cupy.asarray(rng.standard_normal((count, s, s), dtype=np.float32))
        b = cupy.asarray(rng.standard_normal((count, s, s), dtype=np.float32))
        c = cupy.empty((count, s, s), dtype=cupy.float32)
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        times = []
        for _ in range(5):
            start.record()
            cupy.matmul(a, b, out=c)
            end.record()
            end.synchronize()
            times.append(cupy.cuda.get_elapsed_time(start, end))
        line += f"; cp.matmul {flop / statistics.median(times) / 1e6:,.0f}"
    print(line, flush=True)
