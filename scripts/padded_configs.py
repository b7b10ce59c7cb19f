"""Every tiled-kernel configuration stored for a device, run on a product no tile divides as
gemm()'s padded path runs it (the problem rounded up to the configuration's multiples), kernel
only, each result checked against float64 with C poisoned first; beside what the lookup expects
of each there (`lookup.expected_gflops`) and which one it chooses. GFLOP/s count the product's
own work, not the padding's. Sizes are the kernel's M x N x K (a C-ordered call of M x N x K
runs the kernel at N x M x K).
Usage: python scripts/padded_configs.py DEVICE BACKEND MxNxK [MxNxK...]"""

import sys
import time

from clgemm.configs import lookup
from clgemm.core.problem import Problem
from clgemm.library import gemm as api
from clgemm.measure.rung_runner import Workspace, run_rung
from clgemm.rungs.tiled import TILED


def main(device: str, backend_name: str, shapes: list[str]) -> None:
    be = api.backend_for(device, backend_name)
    print(f"# {be.device.name} ({backend_name}), "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}", flush=True)
    for text in shapes:
        m, n, k = (int(v) for v in text.split("x"))
        found = lookup.ranked(be.device, TILED, (m, n, k), fit=False)
        print(f"{m}x{n}x{k}: {len(found)} stored configurations, the lookup's first first")
        spaces: dict[tuple[int, int, int], Workspace] = {}
        for rank, f in enumerate(found):
            mm, nn, kk = TILED.size_multiples(dict(f.params))
            padded = (-(-m // mm) * mm, -(-n // nn) * nn, -(-k // kk) * kk)
            if padded not in spaces:
                spaces.clear()
                spaces[padded] = Workspace(be, Problem(*padded))
            r = run_rung(be, spaces[padded], TILED, dict(f.params), repeats=7, warmup=2)
            expected = lookup.expected_gflops(be.device, TILED, f, (m, n, k))
            own = 2 * m * n * k / (r.ms * 1e6) if r.ok and r.ms else 0.0
            print(f"  {'chosen' if rank == 0 else '':6s} {own:9,.0f} GFLOP/s "
                  f"(expected {expected:9,.0f}; {r.status}) stored at "
                  f"{'x'.join(map(str, f.shape))}, padded to {'x'.join(map(str, padded))}: "
                  f"{TILED.params_text(TILED.resolve(dict(f.params)))}", flush=True)


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
