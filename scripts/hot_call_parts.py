"""Where a repeated gemm() call's host time goes, part by part, on a 64 cubed product of device
arrays: the whole call, then each piece of its hot path alone, then the call and its hot path
with the launch replaced by a function that does nothing (what Python costs beside the launch).
Usage: python scripts/hot_call_parts.py DEVICE BACKEND"""

import sys
import time

import numpy as np

import clgemm
from clgemm.backends.registry import array_signature
from clgemm.library import gemm as api
from clgemm.measure.call_bench import Side

dev, bename = sys.argv[1], sys.argv[2]
be = api.backend_for(dev, bename)
side = Side(be, "device")
rng = np.random.default_rng(0)
a = side.put(rng.standard_normal((64, 64), dtype=np.float32))
b = side.put(rng.standard_normal((64, 64), dtype=np.float32))
c = side.put(np.zeros((64, 64), np.float32))
clgemm.gemm(a, b, c)
clgemm.gemm(a, b, c)
be.synchronize()
hot = next(iter(api.CACHE.hot.values()))
kind = hot.kind


def timed(label, fn, calls=20000):
    for _ in range(200):
        fn()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    print(f"{bename} {label:34s} {(time.perf_counter() - t0) / calls * 1e6:6.2f} us", flush=True)


timed("gemm (real launch)", lambda: clgemm.gemm(a, b, c), 3000)
be.synchronize()
timed("array_signature x3", lambda: (array_signature(a), array_signature(b), array_signature(c)))
timed("_call_key", lambda: api._call_key(a, b, c, 1.0, 0.0, False, False, None, None))
timed("kernel_arg x3", lambda: (kind.kernel_arg(a), kind.kernel_arg(b), kind.kernel_arg(c)))
timed("allocation x3 (_may_share)", lambda: hot._may_share(a, b, c))
timed("events x3", lambda: (kind.events(a), kind.events(b), kind.events(c)))
timed("be.lock", lambda: be.lock)
active = be.already_active()
if active is not None:
    timed("already_active()", active)
lock = be.lock


def locked():
    with lock:
        pass


timed("with be.lock", locked)
timed("CACHE.current()", api.CACHE.current)
key = api._call_key(a, b, c, 1.0, 0.0, False, False, None, None)
timed("hash of the key", lambda: hash(key))
timed("CACHE.hot.get(key)", lambda: api.CACHE.hot.get(key))
for name, part in (("x.shape", lambda: a.shape), ("x.strides", lambda: a.strides),
                   ("x.dtype.char", lambda: a.dtype.char), ("type(x)", lambda: type(a))):
    timed(name, part)
if bename == "cuda":
    import cupy
    timed("x.data.ptr", lambda: a.data.ptr)
    timed("x.data.device_id", lambda: a.data.device_id)
    timed("x.data.mem", lambda: a.data.mem)
    timed("get_current_stream()", cupy.cuda.get_current_stream)
    timed("get_current_stream().ptr", lambda: cupy.cuda.get_current_stream().ptr)
    timed("runtime.getDevice()", cupy.cuda.runtime.getDevice)
else:
    timed("x.context.int_ptr", lambda: a.context.int_ptr)
    timed("x.queue.int_ptr", lambda: a.queue.int_ptr)
    timed("x.base_data.int_ptr", lambda: a.base_data.int_ptr)
ready = hot.program.ready[0]
slots = hot.slot_index
bound = (b, a, c) if hot.swap else (a, b, c)
bufs = [kind.kernel_arg(bound[i]) for i in slots]
queue = hot.queue
timed("the prepared launch", lambda: ready(bufs, queue, []), 3000)
be.synchronize()


class Nothing:
    def __call__(self, buffers, queue, wait_for):
        return None


object.__setattr__(hot, "one_launch", Nothing())
object.__setattr__(hot, "quick", hot._quick_with(hot._one_launch()))
timed("gemm, launch faked", lambda: clgemm.gemm(a, b, c))
timed("quick, launch faked", lambda: hot.quick(a, b, c, None))
