"""How fast gemm() multiplies a stack of products on the tiled kernel's batched form with each
configuration stored for the device, beside the one it chooses (that of one product's shape) and,
on CUDA, cp.matmul: device arrays, C-ordered, C given, the same call repeated.
Usage: python scripts/stack_tiled_sweep.py DEVICE BACKEND [--tiny]"""

import sys

import numpy as np

import clgemm
from clgemm.configs import lookup
from clgemm.configs.configuration import Config
from clgemm.library import gemm as api
from clgemm.library import stack_tiled
from clgemm.measure.call_bench import Side
from clgemm.measure.call_timing import per_call_ms
from clgemm.rungs.tiled import TILED

STACKS = [(100, 256), (10, 1024)]
if "--tiny" in sys.argv:  # one small stack, to try the script on a CPU
    STACKS = [(4, 256)]
dev, backend_name = sys.argv[1], sys.argv[2]
be = api.backend_for(dev, backend_name)
side = Side(be, "device")
rng = np.random.default_rng(0)
chooses = stack_tiled.stack_params


def suits(params: dict, s: int) -> bool:
    tm, tn, tk = TILED.size_multiples(params)
    return (params["CACHE_A"] and params["CACHE_B"] and not params["PANELS"]
            and s % tm == 0 and s % tn == 0 and s % tk == 0)


for count, s in STACKS:
    a = side.put(rng.standard_normal((count, s, s), dtype=np.float32))
    b = side.put(rng.standard_normal((count, s, s), dtype=np.float32))
    c = side.put(np.zeros((count, s, s), np.float32))
    flop = 2.0 * count * s**3

    def us_per_call() -> float:
        api.clear_caches()
        return per_call_ms(lambda: clgemm.gemm(a, b, c), side.sync) * 1e3

    stack_tiled.stack_params = chooses
    own = us_per_call()
    mine = chooses(be, s, s, s, count)
    print(f"{backend_name} {count} x {s}^3: gemm() {own:.1f} us ({flop / own / 1e3:,.0f} "
          f"GFLOP/s) with {TILED.params_text(mine[0].params) if mine[0] else 'the direct kernel'}",
          flush=True)
    seen = set()
    for found in lookup.candidates(be.device, TILED, (s, s, s)):
        params = TILED.resolve(dict(found.params))
        key = tuple(sorted(params.items()))
        if key in seen or not suits(params, s):
            continue
        seen.add(key)
        forced = Config(TILED.number, params, "user")
        stack_tiled.stack_params = lambda *_, p=forced: (p, False)
        us = us_per_call()
        print(f"  {us:8.1f} us ({flop / us / 1e3:6,.0f})  stored at "
              f"{'x'.join(map(str, found.shape))}: {TILED.params_text(params)}", flush=True)
    stack_tiled.stack_params = chooses
    if backend_name == "cuda":
        import cupy
        us = per_call_ms(lambda: cupy.matmul(a, b, out=c), side.sync) * 1e3
        print(f"  cp.matmul {us:.1f} us ({flop / us / 1e3:,.0f})", flush=True)
