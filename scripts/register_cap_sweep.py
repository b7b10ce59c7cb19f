"""The tiled kernel with its registers capped, kernel only, against cuBLAS in turns. Under
Nsight Compute the 128 x 128 block of 16 x 8 sums used 207 registers a work-item, which held
two work-groups of 128 on a unit and left 14% of the issue slots empty
(results/h100/gap-account). At 168 registers or fewer a third work-group fits.

A cap is asked for as REGISTERS a work-item (0: none). On the CUDA path it goes through the
launch bounds, as the work-groups per unit that many registers allow (cl2cuda.h's
CL2CUDA_MIN_BLOCKS: NVRTC's --maxrregcount gives way to launch bounds, which every kernel
has); through NVIDIA's OpenCL as -cl-nv-maxrregcount. Both are added to the backend's build by
this script alone, each cap with its own cache of built kernels.

For each configuration (the stored one at SIZE, and the CUDA path's stored one there: at 4096
cubed its 128 x 128 block of 16 x 8 sums) and each cap: the registers and spilled bytes the compiler reports, then ROUNDS rounds in
turns with cuBLAS's SGEMM (FP32, TF32 off). Every result is checked against float64 with C
poisoned first (`run_rung`). Times are the tiled kernel's own, without the transpose of B that
gemm() runs before it.
Usage: python scripts/register_cap_sweep.py DEVICE BACKEND ROUNDS SIZE REGISTERS [REGISTERS...]"""

import re
import statistics
import sys

from vendor_turns import backends, vendor_round, workspaces

from clgemm.backends.cuda import backend as cuda_backend
from clgemm.backends.opencl import backend as opencl_backend
from clgemm.configs import lookup
from clgemm.core.kernel_sources import kernel_source
from clgemm.core.problem import Problem
from clgemm.measure.rung_runner import run_rung
from clgemm.rungs.tiled import TILED

dev, backend_name, rounds, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
caps = [int(c) for c in sys.argv[5:]]
be, cuda = backends(dev, backend_name)
NVIDIA = "nvidia" in be.device.vendor.lower()

#: [registers a work-item asked for, work-items per group of the configuration being built]
CAP = [0, 1]
_plain = {m: m.define_options for m in (cuda_backend, opencl_backend)}
_caches: dict[tuple[int, int], dict] = {}


def _cuda_options(defines):
    extra = [f"-DCL2CUDA_MIN_BLOCKS={max(1, 65536 // (CAP[0] * CAP[1]))}"] if CAP[0] else []
    return _plain[cuda_backend](defines) + extra


def _opencl_options(defines):
    extra = []
    if CAP[0]:
        extra.append(f"-cl-nv-maxrregcount={CAP[0]}")
    if NVIDIA:
        extra.append("-cl-nv-verbose")  # ptxas's register report into the build log
    return _plain[opencl_backend](defines) + extra


cuda_backend.define_options = _cuda_options
opencl_backend.define_options = _opencl_options


def use_cap(registers: int, p: dict) -> None:
    """Builds from now on at this cap, from this cap's own cache of built kernels."""
    every = TILED.all_macros(TILED.resolve(dict(p)))
    CAP[0], CAP[1] = registers, every["RTSM"] * every["RTSN"]
    be.__dict__["_programs"] = _caches.setdefault((registers, CAP[1]), {})



def text(p: dict) -> str:
    keys = ("TSM", "TSN", "TSK", "WPTM", "WPTN", "VWM", "VWN", "PIPELINE", "RASTER")
    return " ".join(f"{k}={p[k]}" for k in keys)


def registers(p: dict) -> str:
    """What the compiler reports for the configuration at the current cap."""
    full = TILED.resolve(dict(p))
    knl = be.build(kernel_source(be.header(), TILED.file), TILED.macros(full), TILED.kernel)
    if backend_name == "cuda":
        return f"{knl.num_regs} registers, {knl.local_size_bytes} bytes spilled"
    import pyopencl as cl  # noqa: PLC0415 - the OpenCL path only
    if not NVIDIA:
        return "no register report off NVIDIA"
    log = knl.program.get_build_info(be.device.handle, cl.program_build_info.LOG)
    used = re.findall(r"Used (\d+) registers", log)
    spill = re.findall(r"(\d+) bytes spill stores", log)
    return f"{'/'.join(used) or '?'} registers, {'/'.join(spill) or '?'} bytes spilled"


problem = Problem(size, size, size)
found = lookup.best(be.device, TILED, problem.as_tuple())
# the CUDA path's stored configuration there: the grown block its tune found
# (`tuner.plan.grown_blocks`), measured through OpenCL too
grown = lookup.best(cuda.device, TILED, problem.as_tuple())
configs = {"stored": TILED.resolve(dict(found.params)) if found else TILED.resolve({}),
           "grown": TILED.resolve(dict(grown.params)) if grown else TILED.resolve({})}
for name, p in configs.items():
    for cap in caps:
        use_cap(cap, p)
        try:
            print(f"{name} cap {cap or 'none'}: {registers(p)}  {text(p)}", flush=True)
        except Exception as exc:  # noqa: BLE001 - a report, not a result
            print(f"{name} cap {cap or 'none'}: no register report ({type(exc).__name__}: "
                  f"{str(exc)[:120]})", flush=True)

ws, ref_ws = workspaces(be, cuda, problem)
runs: dict[str, list[float]] = {}
vendor = "vendor"
for _ in range(rounds):
    vendor = vendor_round(cuda, ref_ws, runs)
    for name, p in configs.items():
        for cap in caps:
            use_cap(cap, p)
            r = run_rung(be, ws, TILED, p, repeats=10, warmup=2)
            if not r.ok:
                print(f"  {name} cap {cap}: {r.status} {r.message[:120]}", flush=True)
            runs.setdefault(f"{name} cap {cap or 'none'}", []).append(r.gflops or 0.0 if r.ok
                                                                       else 0.0)
cublas = statistics.median(runs.pop("vendor"))
print(f"{size}^3 in {rounds} rounds of turns: {vendor} median {cublas:,.0f} GFLOP/s", flush=True)
for key, values in runs.items():
    med = statistics.median(values)
    print(f"  {med:9,.0f} GFLOP/s  {med / cublas:.3f}x vendor  {key:<16}  "
          f"(rounds: {' '.join(f'{v:,.0f}' for v in values)})", flush=True)
