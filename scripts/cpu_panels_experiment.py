"""Does reading A and B from contiguous panels speed up the CPU form of rung 9?

Rung 9's fastest configurations on PoCL read both operands straight from global memory: a
work-item holds a 16x16 block of C as sixteen float16 sums and, at each k, loads 16 rows of A
(column-major, so consecutive k are M floats apart) and 16 columns of B^T (N floats apart). This
script measures the same arithmetic once on those strided layouts and once on panels, where the
16 rows of A (columns of B) a work-item needs are stored contiguously over k, as a packing pass
would leave them. Both read the same values in the same order; only the addresses differ.

    .venv/bin/python scripts/cpu_panels_experiment.py [--sizes 1024,2048] [--repeats 5]

Prints one line per size and layout with GFLOP/s (median of the repeats, device events) and the
relative error against a float64 product; the packing pass itself is not timed.
"""

from __future__ import annotations

import argparse
import datetime
import platform

import numpy as np
import pyopencl as cl

from clgemm.backends import select_device

SOURCE = """
// One work-item: rows m0..m0+15 and columns n0..n0+15 of C, with A(m, k) and BT(n, k) read
// through the layout macros below.
#if PANELS
  // panel p of A holds rows 16p..16p+15 for every k: A(p, k) at ((p*K + k) * 16)
  #define A_AT(k) (A + ((size_t)(m0 / 16) * K + (k)) * 16)
  #define B_AT(k) (BT + ((size_t)(n0 / 16) * K + (k)) * 16)
#else
  #define A_AT(k) (A + (size_t)(k) * M + m0)
  #define B_AT(k) (BT + (size_t)(k) * N + n0)
#endif
__kernel __attribute__((reqd_work_group_size(1, 1, 1)))
void outer(const int M, const int N, const int K, const __global float* restrict A,
           const __global float* restrict BT, __global float* C) {
    const int m0 = 16 * get_global_id(0), n0 = 16 * get_global_id(1);
    float16 acc[16];
    for (int j = 0; j < 16; j++) acc[j] = (float16)(0.0f);
    for (int k = 0; k < K; k++) {
        const float16 a = vload16(0, A_AT(k));
        const __global float* b = B_AT(k);
        for (int j = 0; j < 16; j++) acc[j] += a * b[j];
    }
    for (int j = 0; j < 16; j++) vstore16(acc[j], 0, C + (size_t)(n0 + j) * M + m0);
}
"""


def panels(x_colmajor_rows_by_k: np.ndarray) -> np.ndarray:
    """(R, K) -> panels of 16 rows, each contiguous over k: shape (R/16, K, 16), flattened."""
    r, k = x_colmajor_rows_by_k.shape
    return np.ascontiguousarray(x_colmajor_rows_by_k.reshape(r // 16, 16, k).transpose(0, 2, 1))


def run(ctx: cl.Context, queue: cl.CommandQueue, n: int, use_panels: bool,
        repeats: int) -> tuple[float, float]:
    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, n), dtype=np.float32)        # A as M x K
    b = rng.standard_normal((n, n), dtype=np.float32)        # B as K x N
    # Column-major A is a.T in memory order; BT (N x K column-major) is b in row-major order.
    a_mem = panels(a) if use_panels else np.asfortranarray(a).ravel(order="K")
    bt_rows = b.T                                            # rows n, columns k
    b_mem = panels(bt_rows) if use_panels else np.ascontiguousarray(b).ravel()
    mf = cl.mem_flags
    da = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a_mem)
    db = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b_mem)
    c = np.full(n * n, np.nan, np.float32)
    dc = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=c)
    prg = cl.Program(ctx, SOURCE).build(options=[f"-DPANELS={int(use_panels)}"])
    knl = prg.outer
    args = (np.int32(n), np.int32(n), np.int32(n), da, db, dc)
    times = []
    for i in range(repeats + 1):
        ev = knl(queue, (n // 16, n // 16), (1, 1), *args)
        ev.wait()
        if i:
            times.append((ev.profile.end - ev.profile.start) * 1e-9)
    cl.enqueue_copy(queue, c, dc).wait()
    got = c.reshape(n, n).T                                  # column-major C
    ref = a.astype(np.float64) @ b.astype(np.float64)
    err = float(np.linalg.norm(got - ref) / np.linalg.norm(ref))
    return 2.0 * n ** 3 / float(np.median(times)) / 1e9, err


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1024,2048")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--device", default=None, help="as for clgemm (default: first CPU device)")
    args = ap.parse_args()
    info = select_device(args.device)
    ctx = cl.Context([info.handle])
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    print(f"# {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}, {info.name} "
          f"({info.platform}, driver {info.driver_version}), pyopencl {cl.VERSION_TEXT}, "
          f"host {platform.machine()}")
    for n in (int(s) for s in args.sizes.split(",")):
        for use_panels in (False, True):
            gflops, err = run(ctx, queue, n, use_panels, args.repeats)
            layout = "panels" if use_panels else "strided"
            print(f"{n}^3  {layout:8s} {gflops:7.1f} GFLOP/s  rel. error {err:.1e}", flush=True)


if __name__ == "__main__":
    main()
