"""The tiled kernel's cp.async pipeline reading B where it lies, against the same configuration
behind the transpose of B that gemm() runs before it today, kernel only, in turns with cuBLAS.

With B itself (BT_FROM_B) a pipelined configuration gathers its k-major B tile one float a
cp.async down B's columns (tiled.cl's B_RUN), so that the product's loop stays as it is. (The
first form of this file measured an n-major B tile instead, one vector a copy, read WIDTH
steps of k at a time, with B_PAD floats after each column.) Both forms lost to the transpose
at 1024 cubed and above (results/h100/read-b-pipeline) and were taken out of tiled.cl again
after commits 7255d62 and a65a3fb, which this script ran at; at later commits the pipeline
refuses BT_FROM_B, and the script records the build's failure.

For each size: the stored configuration of the tiled kernel there (skipped where it has no
pipeline), measured ROUNDS rounds in turns: behind the transpose (the kernel's time, and with
the transpose's), then reading B as it lies; cuBLAS's SGEMM (FP32, TF32 off) between them. Every result is checked against float64 with C poisoned first
(`run_rung`). On the CUDA path the registers and spilled bytes of each form are printed.
Usage: python scripts/read_b_pipeline_sweep.py DEVICE BACKEND ROUNDS SIZE [SIZE...]"""

import statistics
import sys

from vendor_turns import backends, vendor_round, workspaces

from clgemm.configs import lookup
from clgemm.core.problem import Problem
from clgemm.measure import rung_runner
from clgemm.measure.rung_runner import run_rung
from clgemm.rungs.tiled import TILED, tiled_macros

dev, backend_name, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
sizes = [int(s) for s in sys.argv[4:]]
be, cuda = backends(dev, backend_name)

#: [reads B as it lies]
MODE = [False]
rung_runner.reads_b_as_gemm = lambda device, rung, params, shape: MODE[0]


def use(reads_b: bool) -> None:
    MODE[0] = reads_b


def registers(p: dict, reads_b: bool) -> str:
    if backend_name != "cuda":
        return ""
    knl = be.program(TILED.file, tiled_macros(p, reads_b=reads_b), TILED.kernel)
    return f"{knl.num_regs} registers, {knl.local_size_bytes} bytes spilled"


def text(p: dict) -> str:
    keys = ("TSM", "TSN", "TSK", "WPTM", "WPTN", "VWM", "VWN", "PIPELINE", "RASTER", "WARP_M")
    return " ".join(f"{k}={p[k]}" for k in keys)


VARIANTS = (("behind the transpose", False), ("B as it lies", True))
for size in sizes:
    problem = Problem(size, size, size)
    found = lookup.best(be.device, TILED, problem.as_tuple())
    p = TILED.resolve(dict(found.params)) if found else TILED.resolve({})
    if not p["PIPELINE"]:
        print(f"{size}^3: the stored configuration has no pipeline ({text(p)}): skipped",
              flush=True)
        continue
    for label, reads_b in VARIANTS:
        print(f"{size}^3 {label}: {registers(p, reads_b)}", flush=True)
    ws, ref_ws = workspaces(be, cuda, problem)
    kernel: dict[str, list[float]] = {}
    helper: list[float] = []
    vendor, vendor_runs = "vendor", {}
    for _ in range(rounds):
        vendor = vendor_round(cuda, ref_ws, vendor_runs)
        for label, reads_b in VARIANTS:
            use(reads_b)
            r = run_rung(be, ws, TILED, p, repeats=10, warmup=2)
            if not r.ok:
                print(f"  {label}: {r.status} {r.message[:160]}", flush=True)
                continue
            kernel.setdefault(label, []).append(r.ms or 0.0)
            if not reads_b and r.helper_ms:
                helper.append(r.helper_ms)
    use(False)
    cublas = statistics.median(vendor_runs["vendor"])
    print(f"{size}^3 ({text(p)}) in {rounds} rounds of turns: {vendor} median {cublas:,.0f} "
          f"GFLOP/s", flush=True)
    transpose = statistics.median(helper) if helper else 0.0
    for label, ms_list in kernel.items():
        ms = statistics.median(ms_list)
        with_transpose = ms + (transpose if label == "behind the transpose" else 0.0)
        g = problem.gflops(with_transpose)
        print(f"  {label:<22} kernel {ms * 1000:9.1f} us  with what it needs before it "
              f"{with_transpose * 1000:9.1f} us  {g:9,.0f} GFLOP/s  {g / cublas:.3f}x vendor  "
              f"(rounds, kernel us: {' '.join(f'{v * 1000:.1f}' for v in ms_list)})", flush=True)
    del ws, ref_ws
