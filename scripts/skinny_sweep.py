"""How fast the skinny kernel could run the skinny products of `bench --call`'s classes if its
configuration and its split of K were chosen together: the configuration gemm() would run and a
sample of those the tuner's funnel keeps, each timed at every split of K (SPLIT: the batched
kernel over the slices plus the sum of the slices, prepared as the tuner prepares them; device
events, median of 5), beside gemm()'s own split and, on CUDA, cuBLAS's SGEMM on the same
buffers. Shapes are the user's (C-ordered M x N x K); the kernels see N x M x K, as gemm() runs
them. Usage:
    python scripts/skinny_sweep.py DEVICE BACKEND [SAMPLE] [--tiny]
(--tiny: one small shape, to try the script on a CPU)"""

import random
import statistics
import sys

import numpy as np

from clgemm.backends import vendor_blas
from clgemm.configs import choice, lookup
from clgemm.configs.configuration import Config
from clgemm.configs.launch import prepare
from clgemm.core.errors import BuildError, LaunchError
from clgemm.core.problem import Problem
from clgemm.library import gemm as api
from clgemm.rungs import kernel_label
from clgemm.rungs.skinny import SKINNY
from clgemm.tuner.space import build_space

CLASSES = [(4096, 16, 4096), (4096, 32, 4096), (4096, 64, 4096), (16, 4096, 4096),
           (32, 4096, 4096), (64, 4096, 4096)]
SHAPES = [(512, 16, 2048)] if "--tiny" in sys.argv else CLASSES
SPLITS = (1, 2, 4, 8, 16)
dev, backend_name = sys.argv[1], sys.argv[2]
sample = int(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[3].isdigit() else 30
be = api.backend_for(dev, backend_name)
rng = np.random.default_rng(0)
buffers: dict[int, object] = {}  # the partial products, one buffer per size


def scratch(name: str, count: int) -> object:
    if count not in buffers:
        buffers[count] = be.alloc(count)
    return buffers[count]


def timed(params, split, m, n, k, bufs) -> float | None:
    """ms of one product M x N x K (column-major, no transposes) with K in `split` slices: the
    configuration with SPLIT = `split` as the tuner and gemm() run it (`prepare`)."""
    try:
        prepared = prepare(be, SKINNY, {**params, "SPLIT": split}, m, n, k, *bufs, [], scratch)
        return statistics.median(prepared.time_main(be) for _ in range(5))
    except (BuildError, LaunchError):
        return None


for um, un, k in SHAPES:
    m, n = un, um  # C-ordered: the kernels compute C^T = B^T A^T
    bufs = [be.to_device(rng.standard_normal(m * k, dtype=np.float32)),
            be.to_device(rng.standard_normal(k * n, dtype=np.float32)), be.alloc(m * n)]
    flop = 2.0 * m * n * k
    runs = api.choose_kernel(be.device, m, n, k)
    found = lookup.best(be.device, SKINNY, (m, n, k))
    stored = None if found is None else Config(SKINNY.number, found.params, "tuned")
    space = build_space(SKINNY, be.device.limits(), Problem(m, n, k))
    picks = [dict(zip(space.names, c)) for c in
             random.Random(m * n).sample(space.configs, min(sample, len(space.configs)))]
    if stored is not None:
        picks.insert(0, dict(stored.params))
    results = []
    for params in picks:
        for s in SPLITS:
            if k % s:
                continue
            ms = timed(params, s, m, n, k, bufs)
            if ms is not None:
                results.append((ms, s, params))
    results.sort(key=lambda r: r[0])
    best_ms, best_split, best = results[0]
    line = f"{backend_name} {um}x{un}x{k} (gemm() runs {kernel_label(runs.rung)}):"
    if stored is not None:  # gemm() runs it unsplit (choice.split_for)
        own_split = choice.split_for(be.device, stored, (m, n, k))
        by_split = {s: ms for ms, s, p in results if p == dict(stored.params)}
        line += (f" stored {dict(stored.params)} at gemm()'s split {own_split} "
                 f"{flop / by_split[own_split] / 1e6:,.0f} GFLOP/s, at each split "
                 + ", ".join(f"{s}: {flop / ms / 1e6:,.0f}" for s, ms in sorted(by_split.items()))
                 + ";")
    line += (f" best of {len(results)} (configuration, split) {best} split {best_split} "
             f"{flop / best_ms / 1e6:,.0f} GFLOP/s ({best_ms * 1e3:.1f} us)")
    if backend_name == "cuda":  # the vendor's SGEMM on the same column-major buffers
        sgemm = vendor_blas("cuda").timed_sgemm(be, m, n, k, *bufs)
        ms = statistics.median(sgemm() for _ in range(5))
        line += f"; cuBLAS SGEMM {flop / ms / 1e6:,.0f} ({ms * 1e3:.1f} us)"
    print(line, flush=True)
