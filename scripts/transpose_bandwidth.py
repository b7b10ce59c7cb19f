"""How near the memory's bandwidth the BLAS helpers move a matrix: pack_copy, pack_transpose and
the epilogue (blas_helpers.cl, C := 1.5 P - 0.5 C) on square SIZEs, with each block of elements
a work-group covers and its rows of work-items given (TILExROWS: PACK_TILE x PACK_ROWS), each
result checked against NumPy; printed per size, kernel and block: the median of REPS launches'
device time and the bytes read and written per second.
    python scripts/transpose_bandwidth.py DEVICE BACKEND REPS SIZES TILExROWS...
    e.g. H100 cuda 20 2048,4096 16x16 32x8"""

import statistics
import sys

import numpy as np

from clgemm.configs.launch import HELPERS_FILE
from clgemm.library import gemm as api


def timed(be, knl, gsize, lsize, args, reps: int) -> float:
    be.launch(knl, gsize, lsize, args)
    return statistics.median(be.launch(knl, gsize, lsize, args) for _ in range(reps))


def one_size(be, n: int, blocks: list[tuple[int, int]], reps: int, rng) -> None:
    host = rng.standard_normal((n, n), dtype=np.float32)  # column-major n x n: host.T
    c_host = rng.standard_normal((n, n), dtype=np.float32)
    x, out = be.to_device(host), be.alloc(n * n)
    want = {"pack_copy": host.reshape(-1), "pack_transpose": host.T.reshape(-1),
            "epilogue": (np.float32(1.5) * host - np.float32(0.5) * c_host).reshape(-1)}
    for kernel, moved in (("pack_copy", 2), ("pack_transpose", 2), ("epilogue", 3)):
        for tile, rows in blocks:
            knl = be.program(HELPERS_FILE, {"PACK_TILE": tile, "PACK_ROWS": rows}, kernel)
            gsize = (-(-n // tile) * tile, -(-n // tile) * rows)
            if kernel == "epilogue":
                c = be.to_device(c_host)
                args = [n, n, np.float32(1.5), x, n, 1, np.float32(-0.5), c, 0, n, 1]
                c_checked = be.to_device(c_host)  # a fresh C for the checked launch
                be.launch(knl, gsize, (tile, rows), [*args[:7], c_checked, *args[8:]])
                got = be.to_host(c_checked, n * n)
                ms = timed(be, knl, gsize, (tile, rows), args, reps)
            else:
                be.fill(out, float("nan"), n * n)
                ms = timed(be, knl, gsize, (tile, rows), [n, n, n, n, x, 0, n, out], reps)
                got = be.to_host(out, n * n)
            ok = np.allclose(got, want[kernel], rtol=1e-6, atol=1e-6)
            gb = moved * 4 * n * n / 1e9
            print(f"{n}^2 {kernel} {tile}x{rows}: {ms * 1e3:.1f} us, {gb / ms * 1e3:.0f} GB/s, "
                  f"{'checked' if ok else 'WRONG'}", flush=True)


def main() -> None:
    device, backend_name, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
    sizes = [int(s) for s in sys.argv[4].split(",")]
    blocks = [(int(t), int(r)) for t, r in (b.split("x") for b in sys.argv[5:])]
    be = api.backend_for(device, backend_name)
    print(f"# {be.device.name} ({be.name}): median of {reps} launches")
    rng = np.random.default_rng(0)
    for n in sizes:
        one_size(be, n, blocks, reps, rng)


if __name__ == "__main__":
    main()
