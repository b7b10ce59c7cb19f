"""How fast the direct kernel could run the skinny and long-K products of `bench --call`'s
classes if its configuration and its split of K were chosen together: a sample of the
configurations the tuner's funnel keeps at each shape, each timed at every split of K gemm()
could use (the batched direct kernel over the slices plus the sum of the slices; device events,
median of 5), beside gemm()'s own choice and split and, on CUDA, cuBLAS's SGEMM on the same buffers.
Shapes are the user's (C-ordered M x N x K); the kernels see N x M x K, as gemm() runs them.
Usage: python scripts/split_sweep.py DEVICE BACKEND [SAMPLE] [--tiny] (--tiny: one small shape,
to try the script on a CPU)"""

import random
import statistics
import sys

import numpy as np

from clgemm.backends import vendor_blas
from clgemm.configs import choice
from clgemm.core.errors import BuildError, LaunchError
from clgemm.core.problem import Problem
from clgemm.library import gemm as api
from clgemm.configs.launch import sum_of_slices
from clgemm.rungs import get_rung
from clgemm.rungs.direct import DIRECT, batched_geometry, direct_macros
from clgemm.tuner.space import build_space

CLASSES = [(4096, 16, 4096), (4096, 32, 4096), (4096, 64, 4096), (16, 4096, 4096),
           (32, 4096, 4096), (64, 4096, 4096), (256, 256, 16384), (512, 512, 16384)]
SHAPES = [(512, 16, 2048)] if "--tiny" in sys.argv else CLASSES
SPLITS = (1, 2, 4, 8, 16, 32, 64)
dev, backend_name = sys.argv[1], sys.argv[2]
sample = int(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[3].isdigit() else 30
be = api.backend_for(dev, backend_name)
rng = np.random.default_rng(0)


def timed(params, split, m, n, k, bufs, partial) -> float | None:
    """ms of one product M x N x K (column-major, no transposes) with K in `split` slices."""
    depth = k // split
    try:
        knl = be.program(DIRECT.file, direct_macros(params, False, False, batched=True),
                         DIRECT.kernel)
        gsize, lsize = batched_geometry(params, m, n, split)
        args = [m, n, depth, np.float32(1), np.float32(0), bufs[0], 0, m, bufs[1], 0, k,
                partial if split > 1 else bufs[2], 0, m, depth * m, depth, m * n]
        total = sum_of_slices(be, m, n, split, partial, bufs[2])
        times = []
        for _ in range(5):
            ms = be.launch(knl, gsize, lsize, args)
            if split > 1:
                ms += total.timed(be)
            times.append(ms)
        return statistics.median(times)
    except (BuildError, LaunchError):
        return None


for um, un, k in SHAPES:
    m, n = un, um  # C-ordered: the kernels compute C^T = B^T A^T
    bufs = [be.to_device(rng.standard_normal(m * k, dtype=np.float32)),
            be.to_device(rng.standard_normal(k * n, dtype=np.float32)), be.alloc(m * n)]
    partial = be.alloc(max(SPLITS) * m * n)
    flop = 2.0 * m * n * k
    runs = api.choose_kernel(be.device, m, n, k)
    found = choice.direct_config(be.device, (m, n, k))
    if found is None:
        print(f"{backend_name} {um}x{un}x{k}: the direct kernel does not fit", flush=True)
        continue
    chosen = found[0]
    split = choice.split_of(be.device, chosen.params, (m, n, k))
    own = timed(chosen.params, split, m, n, k, bufs, partial)
    space = build_space(DIRECT, be.device.limits(), Problem(m, n, k))
    picks = random.Random(m * n).sample(space.configs, min(sample, len(space.configs)))
    results = []
    for config in picks:
        params = dict(zip(space.names, config))
        for s in SPLITS:
            if k % s or k // s < 64:
                continue
            ms = timed(params, s, m, n, k, bufs, partial)
            if ms is not None:
                results.append((ms, s, params))
    results.sort(key=lambda r: r[0])
    best_ms, best_split, best = results[0]
    line = (f"{backend_name} {um}x{un}x{k} (gemm() runs the {get_rung(runs.rung).slug} "
            f"kernel): the direct kernel as chosen {chosen.params} split {split} "
            f"{flop / own / 1e6 if own else 0:,.0f} GFLOP/s; best of {len(results)} "
            f"(configuration, split) {best} split {best_split} {flop / best_ms / 1e6:,.0f}")
    if backend_name == "cuda":  # the vendor's SGEMM on the same column-major buffers
        sgemm = vendor_blas("cuda").timed_sgemm(be, m, n, k, *bufs)
        line += (f"; cuBLAS SGEMM "
                 f"{flop / statistics.median(sgemm() for _ in range(5)) / 1e6:,.0f}")
    print(line, flush=True)
