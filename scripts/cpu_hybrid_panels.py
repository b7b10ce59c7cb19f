"""Whether the CPU's micro-kernel could leave B where it lies and pack only A: on the first
PoCL device, at N^3, REPS rounds, the pack of both panels and the tiled kernel on them (the
shipped 2-core configuration) beside the pack of A's panels alone and the kernel reading A from
panels and B down its columns (BT_FROM_B, which the kernel file refuses with PANELS: that
refusal is taken out of the source here, for this measurement only), with 16 x 32 and 16 x 16
tiles. Each result is checked against float64. Device times from the launch events.
    python scripts/cpu_hybrid_panels.py N REPS"""
import sys, statistics, numpy as np, pyopencl as cl
from clgemm.core.kernel_sources import kernel_source, kernel_file
from clgemm.rungs.tiled import TILED
n = int(sys.argv[1]); reps = int(sys.argv[2])
ctx = cl.Context([p for p in cl.get_platforms() if 'Portable' in p.name][0].get_devices())
q = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
base = {'TSM': 16, 'TSN': 32, 'TSK': 8, 'WPTM': 16, 'WPTN': 16, 'WIDTH': 8, 'VWM': 16, 'VWN': 8, 'CACHE_A': 0, 'CACHE_B': 0, 'PANELS': 1, 'LOCKSTEP': 0, 'PIPELINE': 0, 'WARP_M': 0, 'RASTER': 0, 'UNROLL_K': 0}
src = kernel_source("", "tiled.cl").replace('#error "BT_FROM_B without CACHE_B needs VWN = 1 and PANELS = 0"', '')
def build(params, extra):
    macros = {**TILED.macros(dict(params)), **extra}
    opts = [f"-D{k}={v}" for k, v in macros.items()]
    return cl.Kernel(cl.Program(ctx, src).build(options=opts), "gemm_tiled")
panels = build(base, {})
hyb = build({**base, 'VWN': 1}, {'BT_FROM_B': 1})
hyb8 = build({**base, 'VWN': 1, 'TSN': 16, 'WPTN': 8}, {'BT_FROM_B': 1})
helpers = cl.Program(ctx, kernel_file("blas_helpers.cl")).build(options=["-DPANEL_A=16", "-DPANEL_B=32", "-DPANEL_RUN=64"])
pack = cl.Kernel(helpers, "pack_panels_pair")
rng = np.random.default_rng(0)
A = rng.standard_normal((n, n), dtype=np.float32)  # column-major M x K: A[i + k*n] (the array's memory)
B = rng.standard_normal((n, n), dtype=np.float32)  # column-major K x N: B[k + j*n]
mf = cl.mem_flags
bA = cl.Buffer(ctx, mf.READ_ONLY | mf.USE_HOST_PTR, hostbuf=A); bB = cl.Buffer(ctx, mf.READ_ONLY | mf.USE_HOST_PTR, hostbuf=B)
pA = cl.Buffer(ctx, mf.READ_WRITE, size=A.nbytes); pBT = cl.Buffer(ctx, mf.READ_WRITE, size=A.nbytes)
C = np.empty(n * n, np.float32); bC = cl.Buffer(ctx, mf.READ_WRITE | mf.USE_HOST_PTR, hostbuf=C)
i32 = np.int32; runs = n // 64
def do_pack(with_b):
    ba = n // 16 * runs; bb = n // 32 * runs if with_b else 0
    pack.set_args(i32(n), i32(n), i32(n), bA, i32(0), i32(n), i32(0), pA, i32(ba), i32(n), i32(n), i32(n), bB, i32(0), i32(n), i32(1), pBT, i32(bb))
    e = cl.enqueue_nd_range_kernel(q, pack, (ba + bb,), (1,)); e.wait(); return (e.profile.end - e.profile.start) / 1e6
def run(k, bt, tsm, tsn, rtsm, rtsn):
    k.set_args(i32(n), i32(n), i32(n), pA, bt, bC)
    e = cl.enqueue_nd_range_kernel(q, k, (n // tsm * rtsm, n // tsn * rtsn), (rtsm, rtsn)); e.wait(); return (e.profile.end - e.profile.start) / 1e6
want = (A.reshape(n, n).T.astype(np.float64) @ B.reshape(n, n).T.astype(np.float64))  # column-major views: A_cm = A.T
res = {"panels: pack both": [], "panels: kernel": [], "hybrid 16x32: pack A": [], "hybrid 16x32: kernel": [], "hybrid 16x16: kernel": []}
for r in range(reps):
    res["panels: pack both"].append(do_pack(True)); res["panels: kernel"].append(run(panels, pBT, 16, 32, 1, 2))
    q.finish(); Cp = C.reshape(n, n).T.copy()
    res["hybrid 16x32: pack A"].append(do_pack(False)); res["hybrid 16x32: kernel"].append(run(hyb, bB, 16, 32, 1, 2))
    q.finish(); Ch = C.reshape(n, n).T.copy()
    do_pack(False); res["hybrid 16x16: kernel"].append(run(hyb8, bB, 16, 16, 1, 2))
    q.finish(); Ch8 = C.reshape(n, n).T.copy()
for name, ts in res.items(): print(f"{n}^3 {name}: median {statistics.median(ts):.2f} ms, min {min(ts):.2f}")
for nm, X in (("panels", Cp), ("hybrid", Ch), ("hybrid8", Ch8)): print(nm, "max err", float(np.abs(X - want).max()))
