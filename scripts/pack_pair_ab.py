"""The panels of both operands packed in one launch (`pack_panels_pair`, this tree) against one
launch per operand (`pack_panels_of`, from the blas_helpers.cl of an older package), in turns on
one queue, for a C-ordered call's operands (A read as it lies, B transposed) at each size; both
results compared float for float. Usage from the repository root:
    python scripts/pack_pair_ab.py DEVICE OLD_HELPERS_CL PANEL SIZE [SIZE...]"""

import statistics
import sys
import time

import numpy as np
import pyopencl as cl

from clgemm.core.kernel_sources import kernel_source
from clgemm.library import gemm as api
from clgemm.configs.launch import PANEL_RUN

dev, old_file, panel = sys.argv[1], sys.argv[2], int(sys.argv[3])
be = api.backend_for(dev, "opencl")
ctx, q = be.context, be.queue
new = be.build(kernel_source(be.header(), "blas_helpers.cl"),
               {"PANEL_A": panel, "PANEL_B": panel, "PANEL_RUN": PANEL_RUN}, "pack_panels_pair")
old = be.build(open(old_file).read(), {"PACK_TILE": 16, "PANEL": panel}, "pack_panels_of")
i32 = np.int32
print(f"{be.device.name}, {be.device.compute_units} compute units; panels of {panel} rows, "
      f"{PANEL_RUN} columns per work-item", flush=True)
for n in map(int, sys.argv[4:]):
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((n, n), dtype=np.float32) for _ in range(2))
    mf = cl.mem_flags
    xa, xb = (cl.Buffer(ctx, mf.READ_ONLY | mf.USE_HOST_PTR, hostbuf=x) for x in (a, b))
    outs = [cl.Buffer(ctx, mf.READ_WRITE, 4 * n * n) for _ in range(4)]
    blocks = n // panel * -(-n // PANEL_RUN)

    def pair():
        new.set_args(i32(n), i32(n), i32(n), xa, i32(0), i32(n), i32(0), outs[0], i32(blocks),
                     i32(n), i32(n), i32(n), xb, i32(0), i32(n), i32(1), outs[1], i32(blocks))
        return cl.enqueue_nd_range_kernel(q, new, (2 * blocks,), (1,))

    def two():
        for x, t, out in ((xa, 0, outs[2]), (xb, 1, outs[3])):
            old.set_args(i32(n), i32(n), i32(n), i32(n), x, i32(0), i32(n), i32(t), out)
            event = cl.enqueue_nd_range_kernel(q, old, (n, n), (16, 16))
        return event

    pair().wait()
    two().wait()
    got = [np.empty(n * n, np.float32) for _ in range(4)]
    for g, o in zip(got, outs):
        cl.enqueue_copy(q, g, o)
    same = np.array_equal(got[0], got[2]) and np.array_equal(got[1], got[3])
    times: dict[str, list[float]] = {"one launch": [], "two launches": []}
    for _ in range(60):
        for name, f in (("one launch", pair), ("two launches", two)):
            t0 = time.perf_counter()
            f().wait()
            times[name].append((time.perf_counter() - t0) * 1e3)
    row = "  ".join(f"{k} median {statistics.median(v):.3f} ms (min {min(v):.3f})"
                    for k, v in times.items())
    print(f"{n}x{n}, both operands: {row}; the same panels: {same}", flush=True)
