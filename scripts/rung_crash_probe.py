"""One rung's configuration on one device, in steps, printing each before it starts so that a
process the driver kills shows how far it got: "build" builds the kernel alone; "launch" builds
it and runs it once at SIZE cubed through `run_rung` (checked against float64). Usage:
    python scripts/rung_crash_probe.py DEVICE RUNG SIZE build|launch NAME=VALUE [...]"""

import sys

from clgemm.core.problem import Problem
from clgemm.library import gemm as api
from clgemm.measure.rung_runner import Workspace, measured_macros, run_rung
from clgemm.rungs import get_rung


def main(device: str, number: int, size: int, step: str, given: list[str]) -> None:
    be = api.backend_for(device, "opencl")
    rung = get_rung(number)
    params = rung.resolve({k: int(v) for k, v in (p.split("=") for p in given)})
    problem = Problem(size, size, size)
    print(f"{be.device.name}: rung {number} {rung.params_text(params)} at {size}^3", flush=True)
    print("building", flush=True)
    be.program(rung.file, measured_macros(be.device, rung, params, problem), rung.kernel)
    print("built", flush=True)
    if step == "launch":
        print("launching", flush=True)
        result = run_rung(be, Workspace(be, problem), rung, params, repeats=1, warmup=0)
        print(f"ran: {result.status}, {result.gflops:.1f} GFLOP/s, error {result.rel_error}",
              flush=True)


if __name__ == "__main__":
    if len(sys.argv) < 5 or sys.argv[4] not in ("build", "launch"):
        sys.exit(__doc__)
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5:])
