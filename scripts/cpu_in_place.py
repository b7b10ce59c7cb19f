"""The tiled kernel's CPU forms as gemm() runs them on NumPy arrays (C-ordered, a new C per
call, the same call repeated), each forced in turn and its result checked against float64:
the micro-kernel on panels packed at every call, and the same register blocks reading the
caller's operands where they lie (no panels: A down its columns, B as it lies, C written by
the kernel itself, one launch), beside NumPy's matmul in the same window. Sizes are squares.
Usage: python scripts/cpu_in_place.py DEVICE SIZE [SIZE...]"""

import sys
import time

import numpy as np

import clgemm
from clgemm.configs.configuration import Config
from clgemm.library import gemm as api
from clgemm.measure.call_bench import Side, checked_error
from clgemm.measure.call_timing import per_call_ms
from clgemm.rungs.tiled import CPU_MICRO_KERNEL, TILED

be = api.backend_for(sys.argv[1], "opencl")
side = Side(be, "numpy")
original_choose = api.CACHE.choose


def block(tsm: int, tsn: int, panels: int) -> dict[str, int]:
    return {**CPU_MICRO_KERNEL, "TSM": tsm, "TSN": tsn, "WPTM": tsm, "WPTN": tsn,
            "PANELS": panels}


FORMS = {f"{'panels' if p else 'in place'} {m}x{n}": block(m, n, p)
         for p in (1, 0) for m, n in ((16, 16), (32, 8), (64, 4))}
rng = np.random.default_rng(0)
print(f"# {be.device.name}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; GFLOP/s "
      f"of the whole call, the launches it made", flush=True)
for size in map(int, sys.argv[2:]):
    a, b = (rng.standard_normal((size, size), dtype=np.float32) for _ in range(2))
    flop = 2.0 * size**3
    line = [f"{size}^3"]
    for name, params in [("gemm()", None), *FORMS.items()]:
        config = None if params is None else Config(TILED.number, TILED.resolve(params), "user")
        api.CACHE.choose = original_choose if config is None else (lambda d, s, c=config: c)
        api.clear_caches()
        with be.observe() as log:
            out = clgemm.gemm(a, b)
        launches = len(log.times())
        err = checked_error(a, b, out)
        ms = per_call_ms(lambda: clgemm.gemm(a, b), side.sync)
        flag = "" if err < 1e-4 else f" WRONG {err:.1e}"
        line.append(f"{name} {flop / ms / 1e6:.0f} ({launches}){flag}")
    api.CACHE.choose = original_choose
    np.matmul(a, b)
    ms = per_call_ms(lambda: np.matmul(a, b), lambda: None)
    line.append(f"NumPy {flop / ms / 1e6:.0f}")
    print("; ".join(line), flush=True)
