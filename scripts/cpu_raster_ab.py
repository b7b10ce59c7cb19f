"""The tiled kernel's CPU form with its tiles of C in the launch's order (RASTER=0) and in bands
of 2, 4 and 8 tile rows, in turns, through gemm_buffers with the configuration forced, on one
square size: the kernel's own time by its launch event, ROUNDS rounds. CPUs' tunes leave
RASTER at 0 (a heuristic of the tiled kernel's record); this measures what that leaves.
The configuration is the one the 2-core CPU's plain tune stored at 2048 cubed
(results/pocl/plain-tune-61df43b).
    python scripts/cpu_raster_ab.py DEVICE SIZE ROUNDS"""

import statistics
import sys
import time

import numpy as np
import pyopencl as cl

import clgemm
from clgemm.library import gemm as api

STORED = dict(TSM=16, TSN=16, TSK=32, WPTM=16, WPTN=16, WIDTH=4, VWM=1, VWN=1, CACHE_A=0,
              CACHE_B=0, PANELS=1, LOCKSTEP=0, PIPELINE=0, KSPLIT=1, WARP_M=0, RASTER=0,
              UNROLL_K=0)


def main() -> None:
    device, n, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    be = api.backend_for(device)
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(n * n, dtype=np.float32) for _ in range(2))
    flags = cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR
    bufs = [cl.Buffer(be.context, flags, hostbuf=x) for x in (a, b)]
    c = cl.Buffer(be.context, cl.mem_flags.READ_WRITE, 4 * n * n)
    times: dict[int, list[float]] = {}
    for _ in range(rounds):
        for raster in (0, 2, 4, 8):
            with be.observe() as log:
                clgemm.gemm_buffers(n, n, n, *bufs, c, backend=be, rung=12,
                                    params={**STORED, "RASTER": raster})
            times.setdefault(raster, []).append(dict(log.times())["gemm_tiled"])
            out = np.empty(n * n, np.float32)
            cl.enqueue_copy(be.queue, out, c).wait()
    want = (a.reshape(n, n).T.astype(np.float64) @ b.reshape(n, n).T).T
    print(f"# {be.device.name}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: "
          f"{n}^3, {rounds} rounds in turns, the kernel's ms")
    for raster, ms in times.items():
        print(f"RASTER={raster}  median {statistics.median(ms):.1f}  lowest {min(ms):.1f}  "
              f"rounds {' '.join(f'{x:.0f}' for x in ms)}")
    print(f"last result's max abs error against float64: "
          f"{np.abs(out.reshape(n, n) - want).max():.2e}")


if __name__ == "__main__":
    main()
