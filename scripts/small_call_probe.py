"""Where a small call's microseconds go: for each backend and size (N for N cubed, or MxNxK),
in the order given, gemm() on the bench's device arrays (C given) as `bench --call` times it
(`per_call_ms`, three times over), the remembered hot call's flags, and the top of a profile of
2000 calls. On the GPU machine after the prelude, from the repository root:
    python3 scripts/small_call_probe.py DEVICE BACKEND SIZES   e.g. H100 opencl 64,128,200x4000x64"""

import cProfile
import io
import pstats
import sys

import numpy as np

from clgemm.library import gemm as api
from clgemm.library.cache import CACHE
from clgemm.measure.call_bench import Side
from clgemm.measure.call_timing import per_call_ms


def probe(device: str, backend_name: str, m: int, n: int, k: int) -> None:
    backend = api.backend_for(device, backend_name)
    side = Side(backend, "device")
    rng = np.random.default_rng(0)
    a = side.put(rng.standard_normal((m, k), dtype=np.float32))
    b = side.put(rng.standard_normal((k, n), dtype=np.float32))
    c = side.put(np.zeros((m, n), np.float32))

    def call() -> None:
        api.gemm(a, b, c)

    call()
    side.sync()
    times = [per_call_ms(call, side.sync) * 1e3 for _ in range(3)]
    key = api._call_key(a, b, c, 1.0, 0.0, False, False, None, None)
    hot = CACHE.hot.get(key)
    flags = ("no hot call" if hot is None else
             f"quick={hot.quick is not None} steady={hot.steady} check_alias={hot.check_alias} "
             f"launches={len(hot.program.launches)}")
    print(f"{backend_name} {m}x{n}x{k}: {' '.join(f'{t:.1f}' for t in times)} us per call; {flags}")
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(2000):
        call()
    profile.disable()
    side.sync()
    out = io.StringIO()
    pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(8)
    print("\n".join(line for line in out.getvalue().splitlines()[4:] if line.strip()))


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    for size in sys.argv[3].split(","):
        sides = [int(x) for x in size.split("x")]
        if len(sides) not in (1, 3):
            sys.exit(f"{size}: give N or MxNxK")
        m, n, k = sides if len(sides) == 3 else sides * 3
        probe(sys.argv[1], sys.argv[2], m, n, k)
