"""How near the memory's bandwidth the BLAS helpers move a matrix: pack_copy and pack_transpose
(blas_helpers.cl) on square SIZEs, pack_transpose with each block side and rows of work-items
given (TILE x ROWS), each result checked against NumPy; printed per size and kernel: the median
of REPS launches' device time and the bytes read and written per second.
    python scripts/transpose_bandwidth.py DEVICE BACKEND REPS SIZES TILExROWS...
    e.g. H100 cuda 20 2048,4096 16x16 32x8 32x32"""

import statistics
import sys

import numpy as np

from clgemm.configs.launch import HELPERS_FILE
from clgemm.library import gemm as api


def timed(be, knl, gsize, lsize, args, reps: int) -> float:
    be.launch(knl, gsize, lsize, args)
    return statistics.median(be.launch(knl, gsize, lsize, args) for _ in range(reps))


def main() -> None:
    device, backend_name, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
    sizes = [int(s) for s in sys.argv[4].split(",")]
    shapes = [tuple(int(v) for v in t.split("x")) for t in sys.argv[5:]]
    be = api.backend_for(device, backend_name)
    print(f"# {be.device.name} ({be.name}): median of {reps} launches")
    rng = np.random.default_rng(0)
    for n in sizes:
        host = rng.standard_normal((n, n), dtype=np.float32)  # column-major n x n: host.T
        x, out = be.to_device(host), be.alloc(n * n)
        gb = 2 * 4 * n * n / 1e9
        copy = be.program(HELPERS_FILE, {"PACK_TILE": 16}, "pack_copy")
        up = -(-n // 16) * 16
        ms = timed(be, copy, (up, up), (16, 16), [n, n, n, n, x, 0, n, out], reps)
        same = np.array_equal(be.to_host(out, n * n), host.reshape(-1))
        print(f"{n}^2 pack_copy 16x16: {ms * 1e3:.1f} us, {gb / ms * 1e3:.0f} GB/s, "
              f"{'checked' if same else 'WRONG'}", flush=True)
        for tile, rows in shapes:
            knl = be.program(HELPERS_FILE, {"PACK_TILE": tile, "PACK_ROWS": rows},
                             "pack_transpose")
            be.fill(out, float("nan"), n * n)
            gsize = (-(-n // tile) * tile, -(-n // tile) * rows)
            ms = timed(be, knl, gsize, (tile, rows), [n, n, n, n, x, 0, n, out], reps)
            same = np.array_equal(be.to_host(out, n * n), host.T.reshape(-1))
            print(f"{n}^2 pack_transpose {tile}x{rows}: {ms * 1e3:.1f} us, "
                  f"{gb / ms * 1e3:.0f} GB/s, {'checked' if same else 'WRONG'}", flush=True)


if __name__ == "__main__":
    main()
