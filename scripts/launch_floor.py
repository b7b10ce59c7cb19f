"""How much host time one launch costs from Python, by each way a backend offers to queue it,
for the kernel a repeated gemm() call runs: what a hot path can reach without a compiled
extension. Usage: python scripts/launch_floor.py DEVICE BACKEND M N K [CALLS]

Every way queues the same kernel with the same arguments on the same queue or stream; the time
is the host's per launch (queued, not waited for), then the device drained once. On OpenCL the
arrays are made as `bench --call` makes them, on a queue that does not profile, as a user's is
made (QUEUE=plain does the same), or with QUEUE=profiling on the backend's own queue, which
profiles its launches."""

import ctypes
import ctypes.util
import os
import sys
import time

import numpy as np
from bound_launch import bound_launch

import clgemm
from clgemm.library import gemm as api
from clgemm.measure.call_bench import Side

dev, backend_name, m, n, k = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:6])
calls = int(sys.argv[6]) if len(sys.argv) > 6 else 2000
be = api.backend_for(dev, backend_name)
side = Side(be, "device")
put, sync = side.put, side.sync
if backend_name == "opencl" and os.environ.get("QUEUE") == "profiling":
    import pyopencl.array as cla
    put = lambda host: cla.to_device(be.queue, host)  # noqa: E731
    backend_name = "opencl-profiling-queue"
rng = np.random.default_rng(0)
a = put(rng.standard_normal((m, k), dtype=np.float32))
b = put(rng.standard_normal((k, n), dtype=np.float32))
c = put(np.zeros((m, n), np.float32))


def timed(label, fn):
    for _ in range(20):
        fn()
    sync()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    host = time.perf_counter() - t0
    sync()
    drained = time.perf_counter() - t0
    print(f"{backend_name} {m}x{n}x{k} {label:<44} host {host / calls * 1e6:6.1f} us, "
          f"drained {drained / calls * 1e6:6.1f} us per call", flush=True)


timed("gemm(a, b, c)", lambda: clgemm.gemm(a, b, c))
hot, launch, args = bound_launch(a, b, c)
if hot is None:
    sys.exit("the call is more than one launch: this script measures one")
slots = hot.program.slots[0]
knl, gsize, lsize = launch.kernel, launch.global_size, launch.local_size
queue = hot.kind.queue_for(be, [("a", a), ("b", b), ("c", c)])
ready = hot.program.ready[0]
buffers = [args[i] for i, _ in slots]
timed("the call's prepared launch", lambda: ready(buffers, queue, []))
timed("backend.enqueue, every argument given", lambda: be.enqueue(knl, gsize, lsize, args, queue))
timed("an empty Python function", lambda: None)

if backend_name == "cuda":
    import cupy
    grid = tuple(g // l for g, l in zip(gsize, lsize)) + (1,) * (3 - len(gsize))
    block = tuple(lsize) + (1,) * (3 - len(lsize))
    conv = {int: np.int32, float: np.float32}
    cargs = tuple(conv.get(type(v), lambda v: v)(v) for v in args)
    timed("RawKernel(grid, block, prepared tuple)", lambda: knl(grid, block, cargs))
    ptrs = tuple(np.uint64(v.data.ptr) if isinstance(v, cupy.ndarray) else v for v in cargs)
    timed("RawKernel, pointers as np.uint64", lambda: knl(grid, block, ptrs))
    values = [ctypes.c_uint64(v.data.ptr) if isinstance(v, cupy.ndarray)
              else ctypes.c_int32(int(v)) if isinstance(v, np.integer)
              else ctypes.c_float(float(v)) for v in cargs]
    params = (ctypes.c_void_p * len(values))(*[ctypes.addressof(v) for v in values])
    params_ptr = ctypes.addressof(params)
    func = knl.kernel.ptr if hasattr(knl, "kernel") else knl.ptr
    launch_kernel = cupy.cuda.driver.launchKernel

    def driver_launch():
        stream = cupy.cuda.get_current_stream().ptr
        launch_kernel(func, *grid, *block, 0, stream, params_ptr, 0)
    timed("driver.launchKernel, prepared ctypes params", driver_launch)

    slot_values = [values[i] for i, _ in slots]
    slot_arrays = [args[i] for i, _ in slots]

    def driver_launch_set():
        for value, array in zip(slot_values, slot_arrays):
            value.value = array.data.ptr
        driver_launch()
    timed("  the same, three pointers set per call", driver_launch_set)
    timed("cupy.matmul(a, b, out=c)", lambda: cupy.matmul(a, b, out=c))
else:
    import pyopencl as cl
    from pyopencl import _cl
    queue.finish()
    be.enqueue(knl, gsize, lsize, args, queue)
    g, lo = tuple(gsize), tuple(lsize)
    timed("enqueue_nd_range_kernel, arguments set", lambda: cl.enqueue_nd_range_kernel(
        queue, knl, g, lo))
    timed("_cl.enqueue_nd_range_kernel", lambda: _cl.enqueue_nd_range_kernel(queue, knl, g, lo))
    done = [_cl.enqueue_nd_range_kernel(queue, knl, g, lo) for _ in range(12)]
    queue.finish()
    timed("  the same, waiting for 12 finished launches", lambda: _cl.enqueue_nd_range_kernel(
        queue, knl, g, lo, wait_for=done))
    timed("  the same, waiting for one finished launch", lambda: _cl.enqueue_nd_range_kernel(
        queue, knl, g, lo, wait_for=done[:1]))

    def gemm_one_event():
        del c.events[:-1]
        clgemm.gemm(a, b, c)
    timed("gemm(a, b, c), C's events cut to one first", gemm_one_event)
    print(f"  events held by A, B, C after gemm(): {len(a.events)}, {len(b.events)}, "
          f"{len(c.events)}")
    bufs = [(i, args[i]) for i, _ in slots]

    def set_and_enqueue():
        for i, buf in bufs:
            knl.set_arg(i, buf)
        _cl.enqueue_nd_range_kernel(queue, knl, g, lo)
    timed("  the same, three buffers set per call", set_and_enqueue)
    # The OpenCL call itself, without pyopencl: through ctypes and the system's ICD loader
    # (handles are the vendor's, whichever loader made them).
    from clgemm.backends.opencl.prepared import no_event_enqueue
    enq = no_event_enqueue()  # the library's own binding, as a repeated chain queues through it
    lib = ctypes.CDLL(ctypes.util.find_library("OpenCL") or "libOpenCL.so.1")
    release = lib.clReleaseEvent
    release.argtypes = [ctypes.c_void_p]
    gws, lws = (ctypes.c_size_t * len(g))(*g), (ctypes.c_size_t * len(lo))(*lo)
    qptr, kptr, event = queue.int_ptr, knl.int_ptr, ctypes.c_void_p()
    timed("clEnqueueNDRangeKernel by ctypes, no event", lambda: enq(
        qptr, kptr, len(g), None, gws, lws, 0, None, None))

    def with_event():
        enq(qptr, kptr, len(g), None, gws, lws, 0, None, ctypes.byref(event))
        release(event)
    timed("  the same, its event made and released", with_event)

    def as_pyopencl():
        enq(qptr, kptr, len(g), None, gws, lws, 0, None, ctypes.byref(event))
        return cl.Event.from_int_ptr(event.value, retain=False)
    timed("  the same, its event handed to pyopencl", as_pyopencl)
    try:
        import pyclblast
    except ImportError:
        pyclblast = None
    if pyclblast is not None:
        timed("pyclblast.gemm", lambda: pyclblast.gemm(a, b, c, queue=queue))
