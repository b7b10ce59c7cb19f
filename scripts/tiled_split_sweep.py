"""What splitting K on the tiled kernel would give gemm() at medium and skinny shapes, where its
tiles of C are too few to fill a large GPU but K is shorter than the split's present threshold:
each shape is timed end to end (device arrays, C-ordered, C given, the same call repeated) with
the tiled kernel's stored configuration forced at every split of K that divides K into whole
tiles, beside gemm()'s own choice and, on CUDA, cp.matmul. Shapes are the user's (M x N x K).
Usage: python scripts/tiled_split_sweep.py DEVICE BACKEND [--tiny | --shapes MxNxK,...]"""

import sys

import numpy as np

import clgemm
from clgemm.configs import choice, lookup
from clgemm.configs.configuration import from_found
from clgemm.library import gemm as api
from clgemm.measure.call_bench import Side
from clgemm.measure.call_timing import per_call_ms
from clgemm.rungs.tiled import TILED

SHAPES = [(768, 768, 768), (1024, 1024, 1024), (2048, 2048, 2048), (2048, 2048, 128),
          (2048, 2048, 512), (4096, 64, 4096), (512, 512, 4096), (1024, 1024, 4096)]
SPLITS = (1, 2, 4, 8, 16)
if "--tiny" in sys.argv:  # one small shape, to try the script on a CPU
    SHAPES = [(128, 128, 1024)]
if "--shapes" in sys.argv:
    SHAPES = [tuple(int(d) for d in shape.split("x"))  # type: ignore[misc]
              for shape in sys.argv[sys.argv.index("--shapes") + 1].split(",")]
dev, backend_name = sys.argv[1], sys.argv[2]
be = api.backend_for(dev, backend_name)
side = Side(be, "device")
rng = np.random.default_rng(0)
original_choose, original_split = api.CACHE.choose, choice.tiled_split


def per_call_us(call) -> float:
    return per_call_ms(call, side.sync) * 1e3


for m, n, k in SHAPES:
    a = side.put(rng.standard_normal((m, k), dtype=np.float32))
    b = side.put(rng.standard_normal((k, n), dtype=np.float32))
    c = side.put(np.zeros((m, n), np.float32))
    flop = 2.0 * m * n * k
    api.CACHE.choose, choice.tiled_split = original_choose, original_split
    api.clear_caches()
    own = per_call_us(lambda: clgemm.gemm(a, b, c))
    chosen = api.choose_kernel(be.device, n, m, k)  # C-ordered: the kernels see N x M
    line = [f"{backend_name} {m}x{n}x{k}: gemm() {own:.1f} us ({flop / own / 1e3:,.0f} GFLOP/s, "
            f"{chosen.describe().split(' (')[0]})"]
    found = lookup.best(be.device, TILED, (n, m, k))
    if found is not None:
        config = from_found(found)
        tk = TILED.size_multiples(TILED.resolve(dict(config.params)))[2]
        for split in SPLITS:
            if k % (split * tk) or (split > 1 and config.params.get("PANELS")):  # panels: whole K
                continue
            api.CACHE.choose = lambda device, shape: config
            choice.tiled_split = lambda device, cfg, shape, s=split: s
            api.clear_caches()
            us = per_call_us(lambda: clgemm.gemm(a, b, c))
            line.append(f"split {split} {us:.1f} us ({flop / us / 1e3:,.0f})")
    if backend_name == "cuda":
        import cupy
        us = per_call_us(lambda: cupy.matmul(a, b, out=c))
        line.append(f"cp.matmul {us:.1f} us ({flop / us / 1e3:,.0f})")
    print("; ".join(line), flush=True)
api.CACHE.choose, choice.tiled_split = original_choose, original_split
