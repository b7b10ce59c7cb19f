"""One call of the skinny kernel at its defaults through gemm_buffers, as the first case of
tests/test_skinny.py makes it (F order, alpha 1.5, beta 0), checked against float64: run it
under Oclgrind to look for data races and reads of uninitialised memory in the kernel itself.
    PYOPENCL_BUILD_OPTIONS=-cl-opt-disable PYOPENCL_NO_CACHE=1 oclgrind --data-races \
        --uninitialized --local-mem-size 65536 --log LOG python scripts/skinny_oclgrind.py M N K"""
import sys

import numpy as np
import pyopencl as cl

import clgemm
from clgemm.library import gemm as api
from clgemm.rungs.skinny import SKINNY

m, n, k = map(int, sys.argv[1:4])
be = api.backend_for("Oclgrind", "opencl")
rng = np.random.default_rng(0)
a = rng.standard_normal((m, k), dtype=np.float32)
b = rng.standard_normal((k, n), dtype=np.float32)
c = np.full((m, n), np.nan, np.float32)
mf = cl.mem_flags
bufs = [cl.Buffer(be.context, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=x.ravel(order="F"))
        for x in (a, b, c)]
clgemm.gemm_buffers(m, n, k, *bufs, alpha=1.5, beta=0.0, lda=m, ldb=k, ldc=m, order="F",
                    backend=be, rung=SKINNY.number, params=SKINNY.resolve({}))
be.synchronize()
got = np.empty(m * n, np.float32)
cl.enqueue_copy(be.queue, got, bufs[2])
be.queue.finish()
want = 1.5 * (a.astype(np.float64) @ b.astype(np.float64))
print(f"{m}x{n}x{k}: max error {np.abs(got.reshape((n, m)).T - want).max():.2e}, "
      f"largest value {np.abs(want).max():.1f}")
