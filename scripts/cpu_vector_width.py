"""What each CPU database's tiled kernel runs at on this CPU: for every database of a CPU that
the lookup reads (the shipped ones and $CLGEMM_RESULTS), the configuration it would give at
SIZE cubed (its best by the lookup's expected speed), measured here kernel only (checked
against float64 with C poisoned first, `run_rung`), beside the vector width of the CPU it was
measured on and what gemm() itself chooses. Usage:
    python scripts/cpu_vector_width.py DEVICE SIZE [SIZE...]"""

import sys
import time

from clgemm.configs import lookup
from clgemm.core.problem import Problem
from clgemm.devices.hardware import cpu_vector_floats
from clgemm.library import gemm as api
from clgemm.measure.rung_runner import Workspace, run_rung
from clgemm.rungs.tiled import TILED


def main(device: str, sizes: list[int]) -> None:
    be = api.backend_for(device, "opencl")
    dev = be.device
    print(f"# {dev.name} ({cpu_vector_floats(dev.name)} floats a vector), "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; tiled kernel alone, "
          f"GFLOP/s, median of 5", flush=True)
    names = {db.path: who.name for db, who in lookup.stored_databases()}
    for size in sizes:
        shape = (size, size, size)
        ws = Workspace(be, Problem(*shape))
        chosen = api.choose_kernel(dev, *shape)
        print(f"{size}^3: gemm() chooses {chosen.describe()}", flush=True)
        per_db: dict = {}
        for f in lookup.candidates(dev, TILED, shape):
            score = lookup.expected_gflops(dev, TILED, f, shape)
            if f.path not in per_db or score > per_db[f.path][0]:
                per_db[f.path] = (score, f)
        for _, f in sorted(per_db.values(), key=lambda sf: -sf[0]):
            r = run_rung(be, ws, TILED, f.params, repeats=5, warmup=2)
            got = f"{r.gflops:7.1f}" if r.ok else f"{r.status}: {r.message[:60]}"
            name = names.get(f.path, f.path.name)
            print(f"{size}^3  {name[:44]:<44} {cpu_vector_floats(name):>2} floats  "
                  f"stored {f.gflops:6.1f} at {'x'.join(map(str, f.shape))}  here {got}  "
                  f"{TILED.params_text(f.params)}", flush=True)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], [int(s) for s in sys.argv[2:]])
