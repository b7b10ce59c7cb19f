"""Whether gemm() gives the right answer on device arrays that start off a 16-byte boundary:
a contiguous view one float into its allocation, on the CUDA path (CuPy) and through OpenCL
(a pyopencl array with an offset), with the tiled kernel at a size it reads in place. Prints
one line per case: the backend, the start's offset in bytes, the largest error against float64
or the error raised.

    python3 scripts/misaligned_views.py DEVICE_NAME_PART
"""

from __future__ import annotations

import sys

import numpy as np

import clgemm


def check(name: str, a, b, want: np.ndarray, to_host, skip: int) -> None:
    try:
        got = to_host(clgemm.gemm(a, b))
        print(f"{name}: start +{4 * skip} bytes: max error {np.abs(got - want).max():.2e}")
    except Exception as exc:  # the point is to see what a user sees
        print(f"{name}: start +{4 * skip} bytes: {type(exc).__name__}: {exc}"[:300])


def main() -> None:
    n = 1024
    rng = np.random.default_rng(1)
    ha, hb = (rng.random((n, n), dtype=np.float32) for _ in range(2))
    want = ha.astype(np.float64) @ hb
    for skip in (0, 1, 2):
        try:
            import cupy as cp
            flat_a, flat_b = cp.zeros(n * n + 8, cp.float32), cp.zeros(n * n + 8, cp.float32)
            a = flat_a[skip:skip + n * n].reshape(n, n)
            b = flat_b[skip:skip + n * n].reshape(n, n)
            a[...], b[...] = cp.asarray(ha), cp.asarray(hb)
            check("cuda", a, b, want, cp.asnumpy, skip)
            cp.cuda.Device().synchronize()
        except ImportError:
            pass
        import pyopencl as cl
        import pyopencl.array as cla
        dev = [d for p in cl.get_platforms() for d in p.get_devices()
               if sys.argv[1].lower() in d.name.lower()][0]
        ctx = cl.Context([dev])
        queue = cl.CommandQueue(ctx)
        fa = cla.zeros(queue, n * n + 8, np.float32)
        fb = cla.zeros(queue, n * n + 8, np.float32)
        a, b = fa[skip:skip + n * n].reshape(n, n), fb[skip:skip + n * n].reshape(n, n)
        a.set(ha), b.set(hb)
        check(f"opencl {dev.name}", a, b, want, lambda x: x.get(), skip)


if __name__ == "__main__":
    main()
