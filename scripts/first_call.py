"""The wall time of a process's first gemm() call at a shape, its second, and of the median of
ten more, on device arrays (CuPy on CUDA, pyopencl on OpenCL; NumPy on a CPU), C given; with
`--no-trial` the first call skips the stored configuration's trial (clgemm/library/trial.py),
to show what the trial adds to it. Run each in a process of its own (nothing built before):
    python scripts/first_call.py DEVICE BACKEND MxNxK [--no-trial]"""

import statistics
import sys
import time

import numpy as np

import clgemm
from clgemm.library import gemm as api
from clgemm.library import trial

dev, backend, shape = sys.argv[1], sys.argv[2], sys.argv[3]
if "--no-trial" in sys.argv:
    trial.ENABLED = False
m, n, k = (int(x) for x in shape.split("x"))
be = api.backend_for(dev, backend)
rng = np.random.default_rng(0)
host = [rng.standard_normal(s, dtype=np.float32) for s in ((m, k), (k, n), (m, n))]
if be.device.is_cpu:
    a, b, c = host
    sync = be.synchronize
elif be.name == "cuda":
    import cupy as cp
    a, b, c = (cp.asarray(x) for x in host)
    sync = cp.cuda.Device().synchronize
else:
    import pyopencl.array as cla
    queue = be.plain_queue
    a, b, c = (cla.to_device(queue, x) for x in host)
    sync = queue.finish
sync()


def timed() -> float:
    t0 = time.perf_counter()
    clgemm.gemm(a, b, c)
    sync()
    return (time.perf_counter() - t0) * 1e3


first, second = timed(), timed()
rest = statistics.median(timed() for _ in range(10))
print(f"{be.device.name.strip()} {be.name} {shape} trial={'--no-trial' not in sys.argv}: "
      f"first {first:.1f} ms, second {second:.2f} ms, then {rest:.3f} ms "
      f"({api.choose_kernel(be.device, n, m, k).describe()})", flush=True)
