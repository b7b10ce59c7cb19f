"""The tiled kernel's form without local memory or panels (the CPU_IN_PLACE block, and the
micro-kernel's 16 x 16 one without panels), kernel only, reading B as it lies (BT_FROM_B, as
gemm() runs it) and reading a BT packed before it (as gemm() ran it before), each checked
against float64 with C poisoned first (`run_rung`). Usage:
    python scripts/cpu_b_as_it_lies.py DEVICE SIZE [SIZE...]"""

import sys
import time

from clgemm.core.problem import Problem
from clgemm.library import gemm as api
from clgemm.measure import rung_runner
from clgemm.rungs.tiled import CPU_IN_PLACE, CPU_MICRO_KERNEL, TILED

be = api.backend_for(sys.argv[1], "opencl")
FORMS = {"32 x 8": CPU_IN_PLACE, "16 x 16": {**CPU_MICRO_KERNEL, "PANELS": 0}}
print(f"# {be.device.name}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; GFLOP/s of "
      f"the kernel alone", flush=True)
for size in map(int, sys.argv[2:]):
    ws = rung_runner.Workspace(be, Problem(size, size, size))
    for name, params in FORMS.items():
        line = [f"{size}^3 {name}:"]
        for label, reads in (("B as it lies", True), ("BT packed", False)):
            rung_runner.reads_b_as_gemm = (lambda *a, r=reads: r)  # type: ignore[assignment]
            r = rung_runner.run_rung(be, ws, TILED, TILED.resolve(dict(params)), repeats=5,
                                     warmup=2)
            line.append(f"{label} {r.gflops:.1f}" if r.ok else f"{label} {r.status}")
        print("  ".join(line), flush=True)
