"""What a process's floor per call is made of: in one process, rounds of a fixed pure-Python
task, of the repeated call's one launch queued by the driver's own entry point (no event), of
the same with the event pyopencl makes (OpenCL), and of gemm() itself, in turns, each round's
median per call printed. Run as several processes: a floor set by the host's CPU moves the
Python task with it, one set by the driver moves the bare launch.
Usage: python scripts/floor_parts.py DEVICE BACKEND SIZE"""

import ctypes
import statistics
import sys
import time

import numpy as np
from bound_launch import bound_launch
from square_call import square_call

import clgemm

dev, backend_name, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
side, a, b, c = square_call(dev, backend_name, n)
be = side.backend
clgemm.gemm(a, b, c)
side.sync()
hot, launch, args = bound_launch(a, b, c)
if hot is None:
    sys.exit("the call is more than one launch: this script times one")
knl, gsize, lsize = launch.kernel, launch.global_size, launch.local_size
table = {("k", i): i for i in range(64)}


def python_task():
    """Tuples made and hashed, a dict read and attributes looked up, as a hot call does."""
    total = 0
    for i in range(16):
        total += table[("k", i)] + len((a.shape, b.shape, c.shape))
    return total


if backend_name == "cuda":
    import cupy
    grid = tuple(g // lo for g, lo in zip(gsize, lsize)) + (1,) * (3 - len(gsize))
    block = tuple(lsize) + (1,) * (3 - len(lsize))
    values = [ctypes.c_uint64(v.data.ptr) if isinstance(v, cupy.ndarray)
              else ctypes.c_int32(int(v)) if isinstance(v, (int, np.integer))
              else ctypes.c_float(float(v)) for v in args]
    params = (ctypes.c_void_p * len(values))(*[ctypes.addressof(v) for v in values])
    func, launch_kernel = knl.kernel.ptr if hasattr(knl, "kernel") else knl.ptr, \
        cupy.cuda.driver.launchKernel
    stream = cupy.cuda.get_current_stream().ptr
    params_ptr = ctypes.addressof(params)
    bare = {"launch, no event": lambda: launch_kernel(func, *grid, *block, 0, stream,
                                                       params_ptr, 0)}
else:
    import pyopencl as cl

    from clgemm.backends.opencl.prepared import no_event_enqueue
    queue = hot.kind.queue_for(be, [("a", a), ("b", b), ("c", c)])
    be.enqueue(knl, gsize, lsize, args, queue)
    enq = no_event_enqueue()
    g, lo = tuple(gsize), tuple(lsize)
    gws, lws = (ctypes.c_size_t * len(g))(*g), (ctypes.c_size_t * len(lo))(*lo)
    qptr, kptr = queue.int_ptr, knl.int_ptr
    bare = {"launch, no event": lambda: enq(qptr, kptr, len(g), None, gws, lws, 0, None, None),
            "launch, pyopencl event": lambda: cl.enqueue_nd_range_kernel(queue, knl, g, lo)}

ways = {"python task": python_task, **bare, "gemm()": lambda: clgemm.gemm(a, b, c)}
rounds: dict[str, list[float]] = {w: [] for w in ways}
for _ in range(7):
    for way, fn in ways.items():
        for _ in range(50):
            fn()
        side.sync()
        t0 = time.perf_counter()
        for _ in range(300):
            fn()
        rounds[way].append((time.perf_counter() - t0) / 300 * 1e6)
        side.sync()
print(f"{backend_name} {n}^3: " + "; ".join(
    f"{way} {statistics.median(r):.2f}" for way, r in rounds.items()) + " us", flush=True)
